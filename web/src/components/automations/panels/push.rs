//! `github_push`: repositories (exact, with the workspace id) and branch
//! patterns, with the never-fires hint the original lacked.

use kandev_core::editor::exact_repos_never_fire;
use leptos::prelude::*;

use super::PanelProps;
use super::list_input::ListInput;
use crate::components::automations::RepoSelector;
use crate::i18n::t;

#[component]
pub fn PushPanel(props: PanelProps, workspace_id: Signal<String>) -> impl IntoView {
    let repos = Signal::derive(move || props.repos());
    view! {
        <div class="panel push-panel">
            <RepoSelector all_repos=None repos=repos on_repos=Callback::new(move |l| props.set_repos(l))
                workspace_id=Some(workspace_id) allow_orgs=false/>
            <ListInput props=props key="branches" id="push-branches" label=Signal::derive(|| t("automations-branch-patterns-label")) placeholder="main, release/*"/>
            <p class="help">{move || t("automations-push-help")}</p>
            <Show when=move || exact_repos_never_fire(&repos.get())>
                <p class="warning" role="status">{move || t("automations-exact-repos-never-fire")}</p>
            </Show>
        </div>
    }
}
