//! Recent runs (derived statuses, filter chips, outcome, relative time, open,
//! delete, delete all) and Recent evaluations ("why didn't it fire?").

use kandev_core::api::Run;
use kandev_core::editor::runs::{BadgeVariant, Filter, OutcomeText, badge, chips, opens_task, outcome, passes};
use kandev_core::gate::Outcome;
use kandev_core::run_status::RunStatus;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;

use crate::api;
use crate::components::{Confirm, Icon, IconSvg, toast};
use crate::i18n::{t, ta};
use crate::live::use_live;
use crate::time::relative;

/// An outcome in the UI's language (the server's own texts are messages).
pub fn outcome_words(o: OutcomeText) -> String {
    match o {
        OutcomeText::Message(id, args) => ta(id, &args),
        OutcomeText::Verbatim(text) => text,
    }
}

pub fn status_label(s: RunStatus) -> String {
    t(&format!("automations-run-status-{}", s.as_str()))
}

pub fn variant_class(v: BadgeVariant) -> &'static str {
    match v {
        BadgeVariant::Neutral => "badge run-neutral",
        BadgeVariant::Filled => "badge run-filled",
        BadgeVariant::Destructive => "badge run-destructive",
        BadgeVariant::Outline => "badge run-outline",
    }
}

/// The runs table. `seen`, when given, receives every list it reads: the
/// automation page takes its latest conversation from it rather than read
/// the same runs a second time on every live tick.
#[component]
pub fn RecentRuns(
    automation_id: String,
    ws: Signal<String>,
    #[prop(optional)] seen: Option<WriteSignal<Vec<Run>>>,
) -> impl IntoView {
    let tick = use_live();
    let reload = RwSignal::new(0u64);
    let id = automation_id.clone();
    let runs = LocalResource::new(move || {
        let (id, _, _) = (id.clone(), tick.get(), reload.get());
        async move { api::runs(&id).await.unwrap_or_default() }
    });
    if let Some(seen) = seen {
        Effect::new(move |_| {
            if let Some(list) = runs.get() {
                seen.set(list);
            }
        });
    }
    let filter = RwSignal::new(None::<RunStatus>);
    let confirm = RwSignal::new(false);
    let bump = move || reload.update(|n| *n += 1);
    let delete_all = {
        let id = automation_id.clone();
        move || {
            let id = id.clone();
            spawn_local(async move {
                if let Err(e) = api::delete(&format!("/api/v1/automations/{id}/runs")).await {
                    toast(e.to_string(), true);
                }
                bump();
            });
        }
    };
    let list = move || runs.get().unwrap_or_default();
    view! {
        <details class="card section runs" open>
            <summary><h2 id="runs-title">{move || ta("automations-recent-runs", &[("count", list().len().to_string())])}</h2></summary>
            <div class="row wrap">
                <button type="button" class="btn" on:click=move |_| bump()>{move || t("automations-refresh")}</button>
                <button type="button" class="btn btn-danger" id="delete-all-runs" disabled=move || list().is_empty()
                    on:click=move |_| confirm.set(true)>{move || t("automations-delete-all-runs")}</button>
            </div>
            <div class="chips" role="group" aria-label=move || t("automations-runs-filter-label")>
                {move || chips(&list()).into_iter().map(|(f, n): (Filter, usize)| {
                    let label = match f { None => t("automations-runs-filter-all"), Some(s) => status_label(s) };
                    view! {
                        <button type="button" class="chip" aria-pressed=move || (filter.get() == f).to_string()
                            on:click=move |_| filter.set(f)>{format!("{label} ({n})")}</button>
                    }
                }).collect_view()}
            </div>
            {move || {
                let rows: Vec<_> = list().into_iter().filter(|r| passes(filter.get(), r)).collect();
                if rows.is_empty() {
                    return view! { <p class="muted">{t("automations-runs-empty")}</p> }.into_any();
                }
                view! {
                    <table class="table runs-table">
                        <thead><tr>
                            <th scope="col">{t("automations-runs-column-trigger")}</th>
                            <th scope="col">{t("automations-runs-column-status")}</th>
                            <th scope="col">{t("automations-runs-column-outcome")}</th>
                            <th scope="col">{t("automations-runs-column-time")}</th>
                            <th scope="col"><span class="sr-only">{t("automations-column-actions")}</span></th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| {
                                let (text, is_error) = outcome(&r);
                                let open = opens_task(&r).map(|task| format!("/w/{}/runs/{task}", ws.get_untracked()));
                                let rid = r.id.clone();
                                view! {
                                    <tr data-run-id=r.id.clone() data-status=r.status.as_str()>
                                        <td data-label=t("automations-runs-column-trigger")><code>{r.trigger_type.clone()}</code></td>
                                        <td data-label=t("automations-runs-column-status")><span class=variant_class(badge(r.status))>{status_label(r.status)}</span></td>
                                        <td data-label=t("automations-runs-column-outcome") class:error=is_error>{outcome_words(text)}</td>
                                        <td data-label=t("automations-runs-column-time")>{relative(r.created_at)}</td>
                                        <td class="actions">
                                            {open.map(|href| view! { <A href=href attr:class="btn">{t("automations-open-run")}</A> })}
                                            <button type="button" class="btn icon-btn" aria-label=t("automations-delete-run") title=t("automations-delete-run")
                                                on:click=move |_| {
                                                    let rid = rid.clone();
                                                    spawn_local(async move {
                                                        if let Err(e) = api::delete(&format!("/api/v1/automation-runs/{rid}")).await { toast(e.to_string(), true); }
                                                        bump();
                                                    });
                                                }><IconSvg icon=Icon::Trash/></button>
                                        </td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            <Confirm open=confirm title=Signal::derive(|| t("automations-delete-all-runs-title"))
                body=Signal::derive(|| t("automations-delete-all-runs-body"))
                confirm_label=Signal::derive(|| t("automations-delete-all-runs"))
                on_confirm=delete_all/>
        </details>
    }
}

fn outcome_text(o: Outcome, gate: Option<kandev_core::gate::Gate>) -> String {
    match o {
        Outcome::Fired => t("automations-outcome-fired"),
        Outcome::Deduplicated => t("automations-outcome-deduplicated"),
        Outcome::Capped => t("automations-outcome-capped"),
        Outcome::Stopped => ta(
            "automations-outcome-stopped",
            &[("gate", gate.map(|g| t(&g.message_id())).unwrap_or_default())],
        ),
    }
}

#[component]
pub fn RecentEvaluations(automation_id: String) -> impl IntoView {
    let tick = use_live();
    let evaluations = LocalResource::new(move || {
        let (id, _) = (automation_id.clone(), tick.get());
        async move { api::evaluations(&id).await.unwrap_or_default() }
    });
    view! {
        <details class="card section evaluations">
            <summary><h2>{move || t("automations-evaluations-title")}</h2></summary>
            <p class="help">{move || t("automations-evaluations-help")}</p>
            <ul class="plain evaluation-list">
                {move || {
                    let list = evaluations.get().unwrap_or_default();
                    if list.is_empty() {
                        return view! { <li class="muted">{t("automations-evaluations-empty")}</li> }.into_any();
                    }
                    list.into_iter().map(|e| view! {
                        <li data-outcome=e.outcome.as_str()>
                            <span class="muted">{relative(e.at)}</span> " "
                            <code>{e.trigger_type.clone()}</code> " "
                            <span>{if e.summary.is_empty() { e.event_subject.clone() } else { e.summary.clone() }}</span> " "
                            <strong class=format!("outcome-{}", e.outcome.as_str())>{outcome_text(e.outcome, e.gate)}</strong>
                        </li>
                    }).collect_view().into_any()
                }}
            </ul>
        </details>
    }
}
