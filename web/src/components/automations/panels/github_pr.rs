//! `github_pr`: events, repositories, base branches, authors, labels and
//! drafts. Its selector gets no workspace id, so it stays inert (spec).

use kandev_core::editor::{read_all_repos, set_all_repos};
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;
use serde_json::{Value, json};

use super::PanelProps;
use super::list_input::ListInput;
use crate::components::Switch;
use crate::components::automations::RepoSelector;
use crate::i18n::t;

#[component]
pub fn GithubPrPanel(props: PanelProps) -> impl IntoView {
    let config = props.config;
    let all_repos = Signal::derive(move || config.with(|c| read_all_repos(TriggerType::GithubPr, c)));
    let repos = Signal::derive(move || props.repos());
    let opened = move || props.list("events").iter().any(|e| e == "opened");
    let drafts =
        Signal::derive(move || config.with(|c| c.get("exclude_draft").and_then(Value::as_bool).unwrap_or(false)));
    view! {
        <div class="panel pr-panel">
            <fieldset>
                <legend>{move || t("automations-events-label")}</legend>
                <label class="check" for="pr-event-opened" title=move || t("automations-pr-event-opened-tooltip")>
                    <input type="checkbox" id="pr-event-opened" prop:checked=opened
                        on:change=move |ev| props.set("events", if event_target_checked(&ev) { json!(["opened"]) } else { json!([]) })/>
                    {move || t("automations-pr-event-opened")}
                </label>
            </fieldset>
            <RepoSelector all_repos=Some(all_repos) repos=repos
                on_all_repos=Callback::new(move |on| props.on_config.run(set_all_repos(&config.get_untracked(), on)))
                on_repos=Callback::new(move |l| props.set_repos(l))
                workspace_id={None::<Signal<String>>} allow_orgs=false/>
            <ListInput props=props key="branches" id="pr-branches" label=Signal::derive(|| t("automations-base-branches-label")) placeholder="main, develop"/>
            <ListInput props=props key="authors" id="pr-authors" label=Signal::derive(|| t("automations-authors-label")) placeholder="alice, bob"/>
            <ListInput props=props key="labels" id="pr-labels" label=Signal::derive(|| t("automations-labels-label")) placeholder="automerge, bug"/>
            <label class="switch-row" for="pr-exclude-draft">
                <Switch id="pr-exclude-draft" checked=drafts label=Signal::derive(|| t("automations-exclude-drafts"))
                    on_change=move |on| props.set("exclude_draft", Value::Bool(on))/>
                <span>{move || t("automations-exclude-drafts")}</span>
            </label>
        </div>
    }
}
