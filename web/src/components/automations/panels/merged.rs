//! The "Pull request merged" panel: "All repositories" (absent reads off;
//! checking clears the list), the repository selector with the workspace id,
//! the base-branch input stored verbatim, the dead-configuration warning and
//! the "Would this fire?" preview.

use kandev_core::editor::{join_list, merged_config_is_dead, read_all_repos, set_all_repos, split_base_branches};
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;
use serde_json::Value;

use super::PanelProps;
use super::preview::MergedPreview;
use crate::components::automations::RepoSelector;
use crate::i18n::t;

#[component]
pub fn MergedPanel(props: PanelProps, workspace_id: Signal<String>) -> impl IntoView {
    let config = props.config;
    let all_repos = Signal::derive(move || config.with(|c| read_all_repos(TriggerType::GithubPrMerged, c)));
    let repos = Signal::derive(move || props.repos());
    let dead = Signal::derive(move || config.with(merged_config_is_dead));
    view! {
        <div class="panel merged-panel">
            <RepoSelector
                all_repos=Some(all_repos)
                repos=repos
                on_all_repos=Callback::new(move |on| props.on_config.run(set_all_repos(&config.get_untracked(), on)))
                on_repos=Callback::new(move |list| props.set_repos(list))
                workspace_id=Some(workspace_id)
                allow_orgs=true/>
            <div class="field">
                <label for="base-branches">{move || t("automations-base-branches-label")}</label>
                <input id="base-branches" type="text" placeholder="main, release/*" autocomplete="off"
                    prop:value=move || join_list(&props.list("base_branches"))
                    on:input=move |ev| {
                        let list: Vec<Value> = split_base_branches(&event_target_value(&ev)).into_iter().map(Value::String).collect();
                        props.set("base_branches", Value::Array(list));
                    }/>
            </div>
            <Show when=move || dead.get()>
                <p class="warning" id="never-fires-warning" role="status">{move || t("automations-pr-merged-never-fires")}</p>
            </Show>
            <MergedPreview config=config workspace_id=workspace_id/>
        </div>
    }
}
