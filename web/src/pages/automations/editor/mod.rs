//! `/settings/workspace/{ws}/automations/{id|new}`: the automation editor,
//! top to bottom: name, When, Then, Configuration, Settings, Recent runs and
//! evaluations; a sticky save bar.

mod configuration;
mod form;
mod save;
mod then;
mod when;

use kandev_core::editor::{can_save, prompt_after_condition_change};
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_params_map};

use super::runs::{RecentEvaluations, RecentRuns};
use crate::api;
use crate::components::automations::panels::webhook_url;
use crate::components::{Confirm, Layout, toast};
use crate::i18n::{t, ta};
use configuration::{ConfigurationSection, SettingsSection};
use form::Form;
use save::{Saved, save};
use then::ThenSection;
use when::WhenSection;

#[component]
pub fn AutomationEditor() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let id = Signal::derive(move || params.with(|p| p.get("id").unwrap_or_default()));
    view! {
        <Layout ws=ws>
            {move || {
                let id = id.get();
                if id == "new" {
                    view! { <EditorForm ws=ws initial=None/> }.into_any()
                } else {
                    let loaded = LocalResource::new(move || {
                        let id = id.clone();
                        async move { api::automation(&id).await }
                    });
                    view! {
                        <Suspense fallback=move || view! { <p class="page">{t("loading")}</p> }>
                            {move || loaded.get().map(|r| match r {
                                Ok(a) => view! { <EditorForm ws=ws initial=Some(a)/> }.into_any(),
                                Err(e) => view! { <p class="page error" role="alert">{e.to_string()}</p> }.into_any(),
                            })}
                        </Suspense>
                    }.into_any()
                }
            }}
        </Layout>
    }
}

#[component]
fn EditorForm(ws: Signal<String>, initial: Option<kandev_core::api::Automation>) -> impl IntoView {
    let form = Form::new(ws);
    if let Some(a) = &initial {
        form.load(a);
    }
    // The prompt follows a condition change only while it is still a default.
    Effect::new(move |previous: Option<Option<TriggerType>>| {
        let now = form.condition.get();
        if let Some(before) = previous
            && before != now
            && let Some(p) = prompt_after_condition_change(&form.prompt.get_untracked(), now)
        {
            form.prompt.set(p);
        }
        now
    });
    let navigate = use_navigate();
    let busy = RwSignal::new(false);
    let created_webhook = RwSignal::new(None::<(String, String)>);
    let webhook_dialog = RwSignal::new(false);
    let list_href = move || format!("/settings/workspace/{}/automations", ws.get());
    let on_save = {
        let navigate = navigate.clone();
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            if !can_save(&form.name.get_untracked()) || busy.get_untracked() {
                return;
            }
            busy.set(true);
            let navigate = navigate.clone();
            spawn_local(async move {
                match save(form).await {
                    Ok(Saved::Created {
                        id,
                        webhook_secret: Some(secret),
                    }) => {
                        created_webhook.set(Some((id, secret)));
                        webhook_dialog.set(true);
                    }
                    Ok(Saved::Created { .. }) => {
                        toast(t("automations-toast-created"), false);
                        navigate(
                            &format!("/settings/workspace/{}/automations", ws.get_untracked()),
                            Default::default(),
                        );
                    }
                    Ok(Saved::Updated) => toast(t("automations-toast-saved"), false),
                    Err(e) => toast(ta("automations-toast-save-failed", &[("error", e.to_string())]), true),
                }
                busy.set(false);
            });
        }
    };
    let confirm_delete = RwSignal::new(false);
    let delete = {
        let navigate = navigate.clone();
        move || {
            let Some(id) = form.saved_id().get_untracked() else {
                return;
            };
            let navigate = navigate.clone();
            spawn_local(async move {
                match api::delete(&format!("/api/v1/automations/{id}")).await {
                    Ok(()) => {
                        toast(t("automations-toast-deleted"), false);
                        navigate(
                            &format!("/settings/workspace/{}/automations", ws.get_untracked()),
                            Default::default(),
                        );
                    }
                    Err(e) => toast(e.to_string(), true),
                }
            });
        }
    };
    let close_webhook = {
        let navigate = navigate.clone();
        move |_| {
            webhook_dialog.set(false);
            if let Some((id, _)) = created_webhook.get_untracked() {
                navigate(
                    &format!("/settings/workspace/{}/automations/{id}", ws.get_untracked()),
                    Default::default(),
                );
            }
        }
    };
    let saved_id = form.saved_id();
    view! {
        <form class="page editor" on:submit=on_save novalidate>
            <A href=list_href>{move || t("automations-back-to-list")}</A>
            <h1>{move || if saved_id.get().is_some() { form.name.get() } else { t("automations-new") }}</h1>
            <section class="card section">
                <div class="field">
                    <label for="automation-name">{move || t("automations-name-label")}<span aria-hidden="true">" *"</span></label>
                    <input id="automation-name" type="text" required autocomplete="off" aria-describedby="automation-name-help"
                        placeholder=move || t("automations-name-placeholder")
                        prop:value=move || form.name.get() on:input=move |ev| form.name.set(event_target_value(&ev))/>
                    <p class="help" id="automation-name-help">{move || t("automations-name-help")}</p>
                </div>
            </section>
            <WhenSection form=form/>
            <ThenSection form=form/>
            <ConfigurationSection form=form/>
            <SettingsSection form=form/>
            {move || saved_id.get().map(|id| view! {
                <RecentRuns automation_id=id.clone() ws=ws/>
                <RecentEvaluations automation_id=id/>
                <button type="button" class="btn btn-danger" id="delete-automation" on:click=move |_| confirm_delete.set(true)>
                    {t("automations-delete-automation")}
                </button>
            })}
            <div class="save-bar" role="region" aria-label=move || t("save")>
                <Show when=move || !can_save(&form.name.get())>
                    <span class="muted" id="save-blocked">{move || t("automations-complete-required-fields")}</span>
                </Show>
                <button type="submit" class="btn btn-primary" id="save-automation" disabled=move || !can_save(&form.name.get()) || busy.get()>
                    {move || t("automations-save")}
                </button>
            </div>
            <Confirm open=confirm_delete title=Signal::derive(|| t("automations-delete-confirm-title"))
                body=Signal::derive(move || ta("automations-delete-confirm-body", &[("name", form.name.get())]))
                confirm_label=Signal::derive(|| t("delete")) on_confirm=delete/>
            <Show when=move || webhook_dialog.get()>
                <div class="overlay">
                    <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="webhook-created-title">
                        <h2 id="webhook-created-title">{move || t("automations-webhook-created-title")}</h2>
                        <p>{move || t("automations-webhook-created-body")}</p>
                        <label for="created-webhook-url">{move || t("automations-webhook-url-label")}</label>
                        <input id="created-webhook-url" class="mono" readonly prop:value=move || created_webhook.get().map(|(id, _)| webhook_url(&id)).unwrap_or_default()/>
                        <label for="created-webhook-secret">{move || t("automations-webhook-secret-label")}</label>
                        <input id="created-webhook-secret" class="mono" readonly prop:value=move || created_webhook.get().map(|(_, s)| s).unwrap_or_default()/>
                        <div class="row"><button type="button" class="btn btn-primary" on:click=close_webhook.clone()>{move || t("close")}</button></div>
                    </div>
                </div>
            </Show>
        </form>
    }
}
