//! `/automations/{id}`: one automation to read and act on — Run now, its
//! triggers in words, the latest run's conversation with a reply composer,
//! its runs and its evaluations. Editing lives in the editor.

use kandev_core::api::{Run, Session};
use kandev_core::editor::runs::opens_task;
use kandev_core::editor::summary;
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::list::run_now;
use super::runs::{RecentEvaluations, RecentRuns};
use crate::api;
use crate::components::automations::TriggerBadge;
use crate::components::{Icon, IconSvg, Layout, ReplyComposer};
use crate::i18n::{t, ta};
use crate::live::use_live;

/// The newest run that has a task to talk to.
fn latest_with_task(runs: &[Run]) -> Option<Run> {
    runs.iter().find(|r| opens_task(r).is_some()).cloned()
}

#[component]
fn LatestConversation(ws: Signal<String>, run: Signal<Option<Run>>) -> impl IntoView {
    let tick = use_live();
    let sent = RwSignal::new(0u64);
    let sessions = LocalResource::new(move || {
        let (task, _, _) = (
            run.with(|r| r.as_ref().map(|r| r.task_id.clone())),
            tick.get(),
            sent.get(),
        );
        async move {
            match task {
                Some(task) => api::sessions(&task).await.unwrap_or_default(),
                None => vec![],
            }
        }
    });
    let last = Signal::derive(move || sessions.get().and_then(|l: Vec<Session>| l.last().cloned()));
    view! {
        {move || match run.get() {
            None => view! {
                <section class="card">
                    <h2>{t("automation-page-conversation")}</h2>
                    <p class="muted">{t("automation-page-conversation-empty")}</p>
                </section>
            }.into_any(),
            Some(r) => {
                let href = format!("/w/{}/runs/{}", ws.get_untracked(), r.task_id);
                let said = if r.summary.is_empty() { t("automation-page-no-reply-yet") } else { r.summary.clone() };
                view! {
                    <section class="card" id="latest-run">
                        <h2>{t("automation-page-conversation")}</h2>
                        <p class="pre">{said}</p>
                        <A href=href attr:class="btn">{t("task-open-transcript")}</A>
                    </section>
                }.into_any()
            }
        }}
        <Show when=move || run.with(Option::is_some)>
            <ReplyComposer session=last on_sent=Callback::new(move |()| sent.update(|n| *n += 1))/>
        </Show>
    }
}

#[component]
pub fn AutomationPage() -> impl IntoView {
    let params = use_params_map();
    let id = Signal::derive(move || params.with(|p| p.get("id").unwrap_or_default()));
    let tick = use_live();
    let automation = LocalResource::new(move || {
        let (id, _) = (id.get(), tick.get());
        async move { api::automation(&id).await }
    });
    let ws = Signal::derive(move || {
        automation
            .get()
            .and_then(Result::ok)
            .map(|a| a.workspace_id)
            .unwrap_or_default()
    });
    // The runs table below reads them; the latest conversation follows its reads.
    let runs = RwSignal::new(Vec::<Run>::new());
    let latest = Signal::derive(move || runs.with(|l| latest_with_task(l)));
    view! {
        <Layout ws=ws>
            <div class="page">
                <A href="/automations">{move || t("automation-page-back")}</A>
                {move || match automation.get() {
                    None => view! { <p>{t("loading")}</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                    Some(Ok(a)) => {
                        let edit = format!("/settings/workspace/{}/automations/{}", a.workspace_id, a.id);
                        let run_id = a.id.clone();
                        let state = if a.enabled { t("automation-page-enabled") } else { t("automation-page-disabled") };
                        view! {
                            <div class="page-head">
                                <div>
                                    <h1 id="automation-name">{a.name.clone()}</h1>
                                    <p class="muted">{state}</p>
                                    {(!a.description.is_empty()).then(|| view! { <p>{a.description.clone()}</p> })}
                                </div>
                                <div class="row wrap">
                                    <button type="button" class="btn btn-primary" id="run-now" on:click=move |_| run_now(run_id.clone())>
                                        <IconSvg icon=Icon::Play/> " " {t("automations-run-manually")}
                                    </button>
                                    <A href=edit attr:class="btn" attr:id="edit-automation">{t("automation-page-edit")}</A>
                                </div>
                            </div>
                            <section class="card" aria-labelledby="triggers-title">
                                <h2 id="triggers-title">{t("automations-column-triggers")}</h2>
                                {if a.triggers.is_empty() {
                                    view! { <p class="muted">{t("automations-triggers-none")}</p> }.into_any()
                                } else {
                                    view! {
                                        <ul class="plain trigger-words">
                                            {a.triggers.iter().map(|tr| {
                                                let words = summary(tr.trigger_type, &tr.config);
                                                let off = (!tr.enabled).then(|| view! { <span class="muted">{format!(" ({})", t("automation-page-trigger-off"))}</span> });
                                                view! {
                                                    <li data-trigger-type=tr.trigger_type.as_str()>
                                                        <TriggerBadge trigger_type=tr.trigger_type/> " " {ta(words.id, &words.args)} {off}
                                                    </li>
                                                }
                                            }).collect_view()}
                                        </ul>
                                    }.into_any()
                                }}
                            </section>
                        }.into_any()
                    }
                }}
                <LatestConversation ws=ws run=latest/>
                {move || (!id.get().is_empty()).then(|| view! {
                    <RecentRuns automation_id=id.get() ws=ws seen=runs.write_only()/>
                    <RecentEvaluations automation_id=id.get()/>
                })}
            </div>
        </Layout>
    }
}
