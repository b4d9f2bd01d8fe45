//! `github_ci`: conclusions, check names, head branches and repositories
//! (exact, with the workspace id), with the never-fires hint.

use kandev_core::editor::exact_repos_never_fire;
use leptos::prelude::*;
use serde_json::Value;

use super::PanelProps;
use super::list_input::ListInput;
use crate::components::automations::RepoSelector;
use crate::i18n::t;

const CONCLUSIONS: [&str; 3] = ["success", "failure", "cancelled"];

fn conclusion_label(value: &str) -> String {
    match value {
        "success" => t("automations-ci-success"),
        "failure" => t("automations-ci-failure"),
        _ => t("automations-ci-cancelled"),
    }
}

#[component]
pub fn CiPanel(props: PanelProps, workspace_id: Signal<String>) -> impl IntoView {
    let repos = Signal::derive(move || props.repos());
    view! {
        <div class="panel ci-panel">
            <fieldset>
                <legend>{move || t("automations-ci-conclusions-label")}</legend>
                {CONCLUSIONS.into_iter().map(|value| {
                    let id = format!("ci-{value}");
                    let for_id = id.clone();
                    view! {
                        <label class="check" for=for_id>
                            <input type="checkbox" id=id
                                prop:checked=move || props.list("conclusions").iter().any(|c| c == value)
                                on:change=move |ev| {
                                    let mut list: Vec<String> = props.list("conclusions").into_iter().filter(|c| c != value).collect();
                                    if event_target_checked(&ev) { list.push(value.to_string()); }
                                    props.set("conclusions", Value::Array(list.into_iter().map(Value::String).collect()));
                                }/>
                            {move || conclusion_label(value)}
                        </label>
                    }
                }).collect_view()}
            </fieldset>
            <ListInput props=props key="check_names" id="ci-check-names" label=Signal::derive(|| t("automations-check-names-label")) placeholder="build, test, lint"/>
            <ListInput props=props key="branches" id="ci-branches" label=Signal::derive(|| t("automations-ci-branches-label")) placeholder="main, release/*"/>
            <RepoSelector all_repos=None repos=repos on_repos=Callback::new(move |l| props.set_repos(l))
                workspace_id=Some(workspace_id) allow_orgs=false/>
            <Show when=move || exact_repos_never_fire(&repos.get())>
                <p class="warning" role="status">{move || t("automations-exact-repos-never-fire")}</p>
            </Show>
        </div>
    }
}
