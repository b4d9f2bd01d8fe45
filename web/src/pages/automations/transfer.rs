//! Export and import of a workspace's automations as YAML: the import shows
//! the server's dry-run diff and writes only when the user applies it.

use kandev_core::portable::{ImportAction, ImportResult};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::api;
use crate::components::toast;
use crate::i18n::{t, ta};

/// A picked file and the diff the server would apply.
#[derive(Clone)]
struct Pending {
    file: String,
    yaml: String,
    diff: ImportResult,
}

async fn read_file(ev: &leptos::ev::Event) -> Option<(String, String)> {
    let input: web_sys::HtmlInputElement = ev.target()?.dyn_into().ok()?;
    let file = input.files()?.get(0)?;
    // Picking the same file again must fire `change` again.
    input.set_value("");
    let text = JsFuture::from(file.text()).await.ok()?.as_string()?;
    Some((file.name(), text))
}

fn action_text(action: &ImportAction, fields: &[String]) -> String {
    match action {
        ImportAction::Create => t("automations-import-action-create"),
        ImportAction::Update => ta("automations-import-action-update", &[("fields", fields.join(", "))]),
        ImportAction::Unchanged => t("automations-import-action-unchanged"),
    }
}

#[component]
pub fn Transfer(ws: Signal<String>, reload: RwSignal<u64>) -> impl IntoView {
    let pending = RwSignal::new(None::<Pending>);
    let refused = RwSignal::new(None::<String>);
    let on_pick = move |ev: leptos::ev::Event| {
        spawn_local(async move {
            let Some((file, yaml)) = read_file(&ev).await else {
                return;
            };
            refused.set(None);
            match api::import_automations(&ws.get_untracked(), yaml.clone(), true).await {
                Ok(diff) => pending.set(Some(Pending { file, yaml, diff })),
                Err(e) => {
                    pending.set(None);
                    refused.set(Some(e.to_string()));
                }
            }
        });
    };
    let apply = move |_| {
        let Some(p) = pending.get_untracked() else { return };
        spawn_local(async move {
            match api::import_automations(&ws.get_untracked(), p.yaml, false).await {
                Ok(done) => {
                    let count = |a: ImportAction| done.changes.iter().filter(|c| c.action == a).count().to_string();
                    toast(
                        ta(
                            "automations-toast-imported",
                            &[
                                ("created", count(ImportAction::Create)),
                                ("updated", count(ImportAction::Update)),
                            ],
                        ),
                        false,
                    );
                    pending.set(None);
                }
                Err(e) => refused.set(Some(e.to_string())),
            }
            reload.update(|n| *n += 1);
        });
    };
    view! {
        <div class="row transfer">
            <a class="btn" id="export-automations" download="kandev-automations.yaml"
                href=move || format!("/api/v1/workspaces/{}/automations/export", ws.get())>
                {move || t("automations-export")}
            </a>
            <label class="btn" for="import-automations">{move || t("automations-import")}</label>
            <input type="file" id="import-automations" class="sr-only" accept=".yaml,.yml,application/yaml,text/yaml" on:change=on_pick/>
        </div>
        {move || refused.get().map(|reason| view! {
            <p class="error" role="alert" id="import-refused">{ta("automations-import-refused", &[("reason", reason)])}</p>
        })}
        {move || pending.get().map(|p| view! {
            <section class="card import-preview" id="import-preview" aria-labelledby="import-title">
                <h2 id="import-title">{ta("automations-import-title", &[("file", p.file.clone())])}</h2>
                <p class="help">{t("automations-import-help")}</p>
                <ul class="plain">
                    {p.diff.changes.iter().map(|c| view! {
                        <li class="import-change" data-action=format!("{:?}", c.action).to_ascii_lowercase()>
                            <strong>{c.name.clone()}</strong> " — " {action_text(&c.action, &c.fields)}
                        </li>
                    }).collect_view()}
                </ul>
                <div class="row">
                    <button type="button" class="btn" on:click=move |_| pending.set(None)>{t("cancel")}</button>
                    <button type="button" class="btn btn-primary" id="import-apply" on:click=apply>{t("automations-import-apply")}</button>
                </div>
            </section>
        })}
    }
}
