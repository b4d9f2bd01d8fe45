//! `/settings/workspace/{ws}/automations`: every automation of a workspace
//! with its trigger badges, an enabled switch, last triggered, Run now and
//! delete.

use kandev_core::api::{Automation, ManualRunResult, PatchAutomation};
use kandev_core::editor::runs::run_now_toast;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_params_map};
use serde_json::json;

use crate::api;
use crate::components::automations::TriggerBadge;
use crate::components::{Confirm, Icon, IconSvg, Layout, Switch, toast};
use crate::i18n::{t, ta};
use crate::live::use_live;
use crate::time::relative;

use super::runs::outcome_words;
use super::transfer::Transfer;

pub fn run_now(id: String) {
    spawn_local(async move {
        match api::post::<_, ManualRunResult>(&format!("/api/v1/automations/{id}/run"), &json!({})).await {
            Ok(r) => {
                let (msg, reason) = run_now_toast(&r);
                let args: Vec<(&str, String)> = reason.map(|o| ("reason", outcome_words(o))).into_iter().collect();
                toast(ta(msg, &args), false);
            }
            Err(e) if !e.message.is_empty() => toast(e.to_string(), true),
            Err(_) => toast(t("automations-toast-trigger-failed"), true),
        }
    });
}

#[component]
fn Row(
    a: Automation,
    ws: Signal<String>,
    reload: RwSignal<u64>,
    deleting: RwSignal<Option<(String, String)>>,
) -> impl IntoView {
    let navigate = use_navigate();
    let href = format!("/settings/workspace/{}/automations/{}", ws.get_untracked(), a.id);
    let open = href.clone();
    let enabled = RwSignal::new(a.enabled);
    let (id_switch, id_run, id_del) = (a.id.clone(), a.id.clone(), a.id.clone());
    let name = a.name.clone();
    let switch_label = Signal::derive({
        let name = name.clone();
        move || ta("automations-enabled-switch", &[("name", name.clone())])
    });
    view! {
        <tr class="row-link" data-automation-id=a.id.clone()
            on:click=move |ev| {
                // Clicks on the row's own controls do their own thing.
                let inside_control = event_target::<web_sys::Element>(&ev).closest("button, input, a, label").ok().flatten().is_some();
                if !inside_control { navigate(&open, Default::default()); }
            }>
            <td data-label=move || t("automations-column-name")><A href=href>{a.name.clone()}</A></td>
            <td data-label=move || t("automations-column-triggers")>
                <div class="badges">
                    {if a.triggers.is_empty() {
                        view! { <span class="muted">{move || t("automations-triggers-none")}</span> }.into_any()
                    } else {
                        a.triggers.iter().map(|tr| view! { <TriggerBadge trigger_type=tr.trigger_type/> }).collect_view().into_any()
                    }}
                </div>
            </td>
            <td data-label=move || t("automations-column-enabled")>
                <Switch id=format!("enabled-{}", a.id) checked=enabled label=switch_label on_change=move |on| {
                    enabled.set(on);
                    let id = id_switch.clone();
                    spawn_local(async move {
                        let body = PatchAutomation { enabled: Some(on), ..Default::default() };
                        if let Err(e) = api::patch::<_, Automation>(&format!("/api/v1/automations/{id}"), &body).await {
                            enabled.set(!on);
                            toast(e.to_string(), true);
                        }
                        reload.update(|n| *n += 1);
                    });
                }/>
            </td>
            <td data-label=move || t("automations-column-last-triggered")>
                {match a.last_triggered_at { Some(at) => relative(at), None => t("automations-never") }}
            </td>
            <td class="actions">
                <button class="btn icon-btn" title=move || t("automations-run-manually") aria-label=move || t("automations-run-manually")
                    on:click=move |_| run_now(id_run.clone())>
                    <IconSvg icon=Icon::Play/>
                </button>
                <button class="btn icon-btn btn-danger" title=move || t("automations-delete") aria-label=move || t("automations-delete")
                    on:click=move |_| deleting.set(Some((id_del.clone(), name.clone())))>
                    <IconSvg icon=Icon::Trash/>
                </button>
            </td>
        </tr>
    }
}

#[component]
pub fn AutomationsList() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let tick = use_live();
    let reload = RwSignal::new(0u64);
    let list = LocalResource::new(move || {
        let (ws, _, _) = (ws.get(), tick.get(), reload.get());
        async move { api::automations(&ws).await }
    });
    let deleting = RwSignal::new(None::<(String, String)>);
    let confirm_open = RwSignal::new(false);
    // Signals notify on every set, so only the open direction is derived.
    Effect::new(move |_| {
        if deleting.with(Option::is_some) {
            confirm_open.set(true);
        }
    });
    let delete = move || {
        let Some((id, _)) = deleting.get_untracked() else {
            return;
        };
        spawn_local(async move {
            match api::delete(&format!("/api/v1/automations/{id}")).await {
                Ok(()) => toast(t("automations-toast-deleted"), false),
                Err(e) => toast(e.to_string(), true),
            }
            reload.update(|n| *n += 1);
        });
    };
    view! {
        <Layout ws=ws>
            <div class="page">
                <div class="page-head">
                    <div>
                        <h1>{move || t("automations-title")}</h1>
                        <p class="muted">{move || t("automations-description")}</p>
                    </div>
                    <A href=move || format!("/settings/workspace/{}/automations/new", ws.get()) attr:class="btn btn-primary" attr:id="new-automation">
                        {move || t("automations-new")}
                    </A>
                </div>
                <Transfer ws=ws reload=reload/>
                {move || match list.get() {
                    None => view! { <p>{t("loading")}</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                    Some(Ok(items)) if items.is_empty() => view! { <p class="empty">{t("automations-empty")}</p> }.into_any(),
                    Some(Ok(items)) => view! {
                        <table class="table automations-table">
                            <thead><tr>
                                <th scope="col">{t("automations-column-name")}</th>
                                <th scope="col">{t("automations-column-triggers")}</th>
                                <th scope="col">{t("automations-column-enabled")}</th>
                                <th scope="col">{t("automations-column-last-triggered")}</th>
                                <th scope="col"><span class="sr-only">{t("automations-column-actions")}</span></th>
                            </tr></thead>
                            <tbody>
                                {items.into_iter().map(|a| view! { <Row a=a ws=ws reload=reload deleting=deleting/> }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                }}
                <Confirm open=confirm_open
                    title=Signal::derive(move || t("automations-delete-confirm-title"))
                    body=Signal::derive(move || ta("automations-delete-confirm-body", &[("name", deleting.get().map(|d| d.1).unwrap_or_default())]))
                    confirm_label=Signal::derive(move || t("delete"))
                    on_confirm=delete/>
            </div>
        </Layout>
    }
}
