//! `/automations`: the automations home across every workspace the caller
//! can read — the agenda of upcoming scheduled runs and one feed of recent
//! runs, filterable by workspace, automation and status.

use kandev_core::agenda::run_matches;
use kandev_core::api::Run;
use kandev_core::editor::runs::{badge, chip_of, opens_task, outcome};
use kandev_core::run_status::RunStatus;
use leptos::prelude::*;
use leptos_router::components::A;

use super::runs::{outcome_words, status_label, variant_class};
use crate::api;
use crate::components::Layout;
use crate::i18n::{t, use_locale};
use crate::session::use_me;
use crate::time::{format_in_zone, local_zone, relative};

/// The statuses the feed's filter offers, in the editor's chip order.
const STATUSES: [RunStatus; 5] = [
    RunStatus::TaskCreated,
    RunStatus::Succeeded,
    RunStatus::Failed,
    RunStatus::Skipped,
    RunStatus::Archived,
];

#[component]
fn FeedRow(r: Run, ws_name: String) -> impl IntoView {
    let (text, is_error) = outcome(&r);
    let ws = r.workspace_id.clone().unwrap_or_default();
    let open = opens_task(&r).map(|task| format!("/w/{ws}/runs/{task}"));
    let name = r.automation_name.clone().unwrap_or_default();
    view! {
        <li class="feed-row" data-run-id=r.id.clone() data-status=r.status.as_str()>
            <span class=variant_class(badge(r.status))>{status_label(r.status)}</span> " "
            <A href=format!("/automations/{}", r.automation_id)>{name}</A>
            <span class="muted">{format!(" · {ws_name} · {}", relative(r.created_at))}</span>
            <p class:error=is_error>{outcome_words(text)}</p>
            {open.map(|href| view! { <A href=href attr:class="btn">{t("automations-open-run")}</A> })}
        </li>
    }
}

#[component]
pub fn AutomationsOverview() -> impl IntoView {
    let me = use_me();
    let lang = use_locale();
    let reload = RwSignal::new(0u64);
    let feed = LocalResource::new(move || {
        reload.get();
        api::all_runs()
    });
    let agenda = LocalResource::new(move || {
        reload.get();
        api::agenda()
    });
    let (ws_filter, auto_filter, status_filter) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    let workspaces = move || me.with(|m| m.as_ref().map(|m| m.workspaces.clone()).unwrap_or_default());
    let ws_name = move |id: &str| {
        me.with(|m| {
            m.as_ref()
                .and_then(|m| m.workspaces.iter().find(|w| w.id == id).map(|w| w.name.clone()))
                .unwrap_or_default()
        })
    };
    // The frame's links follow the chosen workspace, else the first.
    let frame_ws = Signal::derive(move || {
        let chosen = ws_filter.get();
        if chosen.is_empty() {
            workspaces().first().map(|w| w.id.clone()).unwrap_or_default()
        } else {
            chosen
        }
    });
    let runs = move || feed.get().and_then(Result::ok).unwrap_or_default();
    // Automations named in the feed, for its filter.
    let automations = move || {
        let mut seen: Vec<(String, String)> = vec![];
        for r in runs() {
            if !seen.iter().any(|(id, _)| *id == r.automation_id) {
                seen.push((r.automation_id.clone(), r.automation_name.clone().unwrap_or_default()));
            }
        }
        seen
    };
    let shown = move || {
        let (ws, auto, status) = (ws_filter.get(), auto_filter.get(), status_filter.get());
        runs()
            .into_iter()
            .filter(|r| {
                let as_chip = Run {
                    status: chip_of(r.status),
                    ..r.clone()
                };
                run_matches(&as_chip, &ws, &auto, &status)
            })
            .collect::<Vec<_>>()
    };
    view! {
        <Layout ws=frame_ws>
            <div class="page">
                <div class="page-head">
                    <div>
                        <h1>{move || t("automations-home-title")}</h1>
                        <p class="muted">{move || t("automations-home-lead")}</p>
                    </div>
                    <button type="button" class="btn" on:click=move |_| reload.update(|n| *n += 1)>{move || t("automations-refresh")}</button>
                </div>
                <div class="row wrap filters" role="group" aria-label=move || t("automations-home-filters")>
                    <label for="filter-workspace">{move || t("workspace-label")}</label>
                    <select id="filter-workspace" on:change=move |ev| ws_filter.set(event_target_value(&ev))>
                        <option value="">{move || t("automations-home-all-workspaces")}</option>
                        {move || workspaces().into_iter().map(|w| view! { <option value=w.id.clone()>{w.name.clone()}</option> }).collect_view()}
                    </select>
                    <label for="filter-automation">{move || t("automations-home-automation")}</label>
                    <select id="filter-automation" on:change=move |ev| auto_filter.set(event_target_value(&ev))>
                        <option value="">{move || t("automations-home-all-automations")}</option>
                        {move || automations().into_iter().map(|(id, name)| view! { <option value=id>{name}</option> }).collect_view()}
                    </select>
                    <label for="filter-status">{move || t("automations-runs-column-status")}</label>
                    <select id="filter-status" on:change=move |ev| status_filter.set(event_target_value(&ev))>
                        <option value="">{move || t("automations-runs-filter-all")}</option>
                        {STATUSES.iter().map(|s| view! { <option value=s.as_str()>{move || status_label(*s)}</option> }).collect_view()}
                    </select>
                </div>
                <div class="home-grid">
                    <section class="card" aria-labelledby="agenda-title">
                        <h2 id="agenda-title">{move || t("automations-home-agenda")}</h2>
                        <ul class="plain agenda" id="agenda">
                            {move || {
                                let ws = ws_filter.get();
                                let list: Vec<_> = agenda.get().and_then(Result::ok).unwrap_or_default()
                                    .into_iter().filter(|e| ws.is_empty() || e.workspace_id == ws).collect();
                                if list.is_empty() {
                                    return view! { <li class="muted">{t("automations-home-agenda-empty")}</li> }.into_any();
                                }
                                list.into_iter().map(|e| view! {
                                    <li class="agenda-row" data-automation-id=e.automation_id.clone()>
                                        <time datetime=e.at.to_rfc3339()>{format_in_zone(e.at, &local_zone(), &lang.get())}</time> " "
                                        <A href=format!("/automations/{}", e.automation_id)>{e.automation_name.clone()}</A>
                                        <span class="muted">{format!(" · {}", ws_name(&e.workspace_id))}</span>
                                    </li>
                                }).collect_view().into_any()
                            }}
                        </ul>
                    </section>
                    <section class="card" aria-labelledby="feed-title">
                        <h2 id="feed-title">{move || t("automations-home-feed")}</h2>
                        <ul class="plain feed" id="feed">
                            {move || {
                                let list = shown();
                                if list.is_empty() {
                                    return view! { <li class="muted">{t("automations-home-feed-empty")}</li> }.into_any();
                                }
                                list.into_iter().map(|r| {
                                    let name = ws_name(r.workspace_id.as_deref().unwrap_or_default());
                                    view! { <FeedRow r=r ws_name=name/> }
                                }).collect_view().into_any()
                            }}
                        </ul>
                    </section>
                </div>
                <section class="card" aria-labelledby="manage-title">
                    <h2 id="manage-title">{move || t("automations-home-manage")}</h2>
                    <ul class="plain">
                        {move || workspaces().into_iter().map(|w| view! {
                            <li><A href=format!("/settings/workspace/{}/automations", w.id)>{w.name.clone()}</A></li>
                        }).collect_view()}
                    </ul>
                </section>
            </div>
        </Layout>
    }
}
