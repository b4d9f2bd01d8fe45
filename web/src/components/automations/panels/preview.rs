//! "Would this fire?": the workspace's recent merged linked PRs, each run
//! through the backend's own gates (core) against the config being edited.

use kandev_core::editor::preview_merged;
use leptos::prelude::*;
use serde_json::Value;

use crate::api;
use crate::i18n::{t, ta};

#[component]
pub fn MergedPreview(config: Signal<Value>, workspace_id: Signal<String>) -> impl IntoView {
    let prs = LocalResource::new(move || {
        let ws = workspace_id.get();
        async move { api::merged_prs(&ws).await.unwrap_or_default() }
    });
    view! {
        <section class="preview" aria-labelledby="preview-title">
            <h4 id="preview-title">{move || t("automations-preview-title")}</h4>
            <p class="help">{move || t("automations-preview-help")}</p>
            <ul class="plain preview-list">
                {move || {
                    let list = prs.get().unwrap_or_default();
                    if list.is_empty() {
                        return view! { <li class="muted">{t("automations-preview-empty")}</li> }.into_any();
                    }
                    let ws = workspace_id.get();
                    list.into_iter().map(|p| {
                        let verdict = config.with(|c| preview_merged(&p.pr, Some(&p.origin()), &ws, c));
                        let (class, text) = match verdict {
                            Ok(()) => ("ok", t("automations-preview-would-fire")),
                            Err(gate) => ("stop", ta("automations-preview-stopped", &[("gate", t(&gate.message_id()))])),
                        };
                        view! {
                            <li class=format!("preview-item {class}") data-verdict=class>
                                <span class="mono">{format!("{}/{}#{}", p.pr.owner, p.pr.repo, p.pr.pr_number)}</span>
                                " " <span>{p.task_title.clone()}</span>
                                <span class=format!("verdict {class}")>{text}</span>
                                {p.task_is_automation_run.then(|| view! { <span class="muted">{t("automations-preview-run-task")}</span> })}
                            </li>
                        }
                    }).collect_view().into_any()
                }}
            </ul>
        </section>
    }
}
