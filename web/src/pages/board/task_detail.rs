//! `/w/{ws}/tasks/{id}`: everything about one task, and what can be done
//! with it (moves by the board rules, review hand-off, approve, reject,
//! archive, links, comments).

use kandev_core::access::Level;
use kandev_core::api::{
    Actor, Comment, CreateComment, LinkPrRequest, PatchTask, ReviewRequest, Task, TaskEvent, TaskPr, first_reads,
};
use kandev_core::board::{TaskStatus, check_move, task_bound_pr};
use kandev_core::merger::{Said, short};
use kandev_core::task_pr::reviewed_head;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;
use serde_json::{Value, json};

use super::task_actions::{ManageTask, ReviewBar, act};
use crate::api;
use crate::components::{Layout, toast};
use crate::i18n::{said, t, ta};
use crate::live::use_live;
use crate::session::can;
use crate::time::relative;

/// What the merger said in an event, in the reader's language; the English
/// `field` where the event carries no sentence (an agent's own summary, an
/// event written by an older version).
fn merger_text(payload: &Value, field: &str) -> String {
    payload
        .get("said")
        .and_then(|v| serde_json::from_value::<Said>(v.clone()).ok())
        .map(|s| said(&s))
        .unwrap_or_else(|| {
            payload
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
}

fn event_text(e: &TaskEvent) -> String {
    let p = &e.payload;
    let s = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let status = |k: &str| t(&format!("status-{}", s(k)));
    let key = format!("event-{}", e.kind);
    match e.kind.as_str() {
        "status_changed" => ta(&key, &[("from", status("from")), ("to", status("to"))]),
        "rejected" => ta(&key, &[("reason", s("reason"))]),
        "merge_requested" | "merged" => ta(&key, &[("pr", s("pr_url"))]),
        "merge_progress" => ta(&key, &[("detail", merger_text(p, "detail"))]),
        "completed" => ta(&key, &[("summary", merger_text(p, "summary"))]),
        "blocked" => ta(&key, &[("reason", merger_text(p, "reason"))]),
        _ => t(&key),
    }
}

/// Who approved the current review: the person behind the latest approval.
fn approved_by(events: &[TaskEvent]) -> Option<String> {
    events
        .iter()
        .rev()
        .find(|e| matches!(e.kind.as_str(), "approved" | "merge_requested"))
        .and_then(|e| match &e.actor {
            Actor::User { username, .. } => Some(username.clone()),
            _ => None,
        })
}

/// The latest event that starts or ends a merge.
fn last_merge_event(events: &[TaskEvent]) -> Option<&TaskEvent> {
    events.iter().rev().find(|e| {
        matches!(
            e.kind.as_str(),
            "merge_requested" | "merge_cancelled" | "completed" | "blocked"
        )
    })
}

/// The merger's latest word while it works ("Waiting for checks: 2 of 3 green").
fn merge_progress(events: &[TaskEvent]) -> Option<String> {
    let last = events
        .iter()
        .rev()
        .take_while(|e| e.kind != "merge_requested")
        .find(|e| e.kind == "merge_progress")?;
    Some(ta(
        "task-merge-progress",
        &[("detail", merger_text(&last.payload, "detail"))],
    ))
}

/// Reads a linked PR from GitHub again, now, instead of at the next sweep.
#[component]
fn RefreshPr(pr: TaskPr, reload: RwSignal<u64>) -> impl IntoView {
    let busy = RwSignal::new(false);
    view! {
        <button class="btn btn-link refresh-pr" disabled=move || busy.get() on:click=move |_| {
            let body = LinkPrRequest {
                owner: Some(pr.owner.clone()),
                repo: Some(pr.repo.clone()),
                pr_number: Some(pr.pr_number),
                ..Default::default()
            };
            let task = pr.task_id.clone();
            busy.set(true);
            spawn_local(async move {
                match api::post::<_, TaskPr>(&format!("/api/v1/tasks/{task}/prs"), &body).await {
                    Ok(_) => toast(t("task-refresh-pr-done"), false),
                    Err(e) => toast(e.to_string(), true),
                }
                busy.set(false);
                reload.update(|n| *n += 1);
            });
        }>{move || t("task-refresh-pr")}</button>
    }
}

/// Whether the merger holds the task now (cancel-merge is offered).
fn merging(task: &Task, events: &[TaskEvent]) -> bool {
    task.status == TaskStatus::Running && last_merge_event(events).is_some_and(|e| e.kind == "merge_requested")
}

/// The head Approve names: the one this page shows for the PR the approval
/// acts on, bound by the same rule the server applies.
fn approval_head(events: &[TaskEvent], comments: &[Comment], links: &[TaskPr]) -> Option<String> {
    reviewed_head(links, task_bound_pr(events, comments).as_ref())
}

/// The merger's state as the events tell it: merging, or its last outcome.
fn merge_outcome(task: &Task, events: &[TaskEvent]) -> Option<String> {
    let last = last_merge_event(events)?;
    let text = |field: &str| merger_text(&last.payload, field);
    match last.kind.as_str() {
        "merge_requested" if task.status == TaskStatus::Running => Some(t("task-merging")),
        "completed" => Some(ta("task-merged-outcome", &[("summary", text("summary"))])),
        "blocked" => Some(ta("task-blocked-outcome", &[("reason", text("reason"))])),
        _ => None,
    }
}

#[component]
pub fn TaskDetail() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let id = Signal::derive(move || params.with(|p| p.get("id").unwrap_or_default()));
    let tick = use_live();
    let reload = RwSignal::new(0u64);
    let task = LocalResource::new(move || {
        let (id, _, _) = (id.get(), tick.get(), reload.get());
        async move { api::get::<Task>(&first_reads::task(&id)).await }
    });
    let events = LocalResource::new(move || {
        let (id, _, _) = (id.get(), tick.get(), reload.get());
        async move { api::get::<Vec<TaskEvent>>(&first_reads::task_events(&id)).await }
    });
    let comments = LocalResource::new(move || {
        let (id, _, _) = (id.get(), tick.get(), reload.get());
        async move { api::get::<Vec<Comment>>(&first_reads::task_comments(&id)).await }
    });
    let prs = LocalResource::new(move || {
        let (id, _, _) = (id.get(), tick.get(), reload.get());
        async move { api::task_prs(&id).await }
    });
    let sessions = LocalResource::new(move || {
        let (id, _, _) = (id.get(), tick.get(), reload.get());
        async move { api::sessions(&id).await }
    });

    let move_to = RwSignal::new(String::new());
    let comment = RwSignal::new(String::new());
    let pr_url = RwSignal::new(String::new());
    let review_summary = RwSignal::new(String::new());
    let review_pr = RwSignal::new(String::new());
    // Viewers see the task; the controls are for those whose role may change it.
    let writable = can(ws, Level::Write);

    view! {
        <Layout ws=ws>
            <div class="page">
                <A href=move || format!("/w/{}", ws.get())>{move || t("task-back")}</A>
                {move || match task.get() {
                    None => view! { <p>{t("loading")}</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                    Some(Ok(task)) => {
                        let status = task.status;
                        let tid = task.id.clone();
                        let archived = task.archived_at.is_some();
                        let targets: Vec<TaskStatus> = TaskStatus::ALL.into_iter().filter(|s| *s != status && check_move(status, *s).is_ok()).collect();
                        let all_events = events.get().and_then(Result::ok).unwrap_or_default();
                        let outcome = merge_outcome(&task, &all_events);
                        let merging = merging(&task, &all_events);
                        let approver = approved_by(&all_events);
                        let writable = writable.get();
                        let progress = merging.then(|| merge_progress(&all_events)).flatten();
                        view! {
                            <h1>{task.title.clone()}</h1>
                            <p class="status-line">
                                <span class=format!("badge status-{}", status.as_str())>{t(&format!("status-{}", status.as_str()))}</span>
                                {archived.then(|| view! { <span class="badge badge-muted">{t("task-archived-note")}</span> })}
                                {outcome.map(|o| view! { <span class="outcome" role="status">{o}</span> })}
                                {progress.map(|p| view! { <span class="muted" id="merge-progress">{p}</span> })}
                                {approver.map(|u| view! { <span class="muted" id="approved-by">{ta("task-approved-by", &[("user", u)])}</span> })}
                            </p>
                            <section class="card">
                                <h2>{t("task-description")}</h2>
                                <p class="pre">{if task.description.is_empty() { t("task-no-description") } else { task.description.clone() }}</p>
                            </section>
                            {(writable && merging).then(|| {
                                let c = tid.clone();
                                view! {
                                    <section class="card actions">
                                        <button class="btn btn-danger" id="cancel-merge" on:click=move |_| {
                                            let c = c.clone();
                                            act(reload, async move { api::post::<_, Task>(&format!("/api/v1/tasks/{c}/cancel-merge"), &json!({})).await.map(|_| ()) });
                                        }>{t("task-cancel-merge")}</button>
                                    </section>
                                }
                            })}
                            {(writable && !merging).then(|| view! {
                            <section class="card actions">
                                {(!targets.is_empty()).then(|| {
                                    let tid = tid.clone();
                                    view! {
                                        <form class="row wrap" on:submit=move |ev: leptos::ev::SubmitEvent| {
                                            ev.prevent_default();
                                            let Some(to) = TaskStatus::parse(&move_to.get()) else { return };
                                            let tid = tid.clone();
                                            act(reload, async move {
                                                api::patch::<_, Task>(&format!("/api/v1/tasks/{tid}"), &PatchTask { status: Some(to), ..Default::default() }).await.map(|_| ())
                                            });
                                        }>
                                            <label for="move-to">{t("task-move-label")}</label>
                                            <select id="move-to" on:change=move |ev| move_to.set(event_target_value(&ev))>
                                                <option value="">"—"</option>
                                                {targets.iter().map(|s| view! { <option value=s.as_str()>{t(&format!("status-{}", s.as_str()))}</option> }).collect_view()}
                                            </select>
                                            <button class="btn" type="submit">{t("task-move")}</button>
                                        </form>
                                    }
                                })}
                                {(status != TaskStatus::HumanReview && status != TaskStatus::Done).then(|| {
                                    let tid = tid.clone();
                                    view! {
                                        <form class="stack" on:submit=move |ev: leptos::ev::SubmitEvent| {
                                            ev.prevent_default();
                                            let body = ReviewRequest {
                                                summary: Some(review_summary.get()).filter(|s| !s.is_empty()),
                                                pr_url: Some(review_pr.get()).filter(|s| !s.is_empty()),
                                            };
                                            let tid = tid.clone();
                                            act(reload, async move { api::post::<_, Task>(&format!("/api/v1/tasks/{tid}/review"), &body).await.map(|_| ()) });
                                        }>
                                            <label for="review-summary">{t("task-review-summary-label")}</label>
                                            <input id="review-summary" prop:value=move || review_summary.get() on:input=move |ev| review_summary.set(event_target_value(&ev))/>
                                            <label for="review-pr">{t("task-review-pr-label")}</label>
                                            <input id="review-pr" type="url" prop:value=move || review_pr.get() on:input=move |ev| review_pr.set(event_target_value(&ev))/>
                                            <button class="btn" type="submit">{t("task-review")}</button>
                                        </form>
                                    }
                                })}
                            </section>
                            })}
                            {(writable && !merging && status == TaskStatus::HumanReview).then(|| view! { <ReviewBar task_id=tid.clone() head=Signal::derive(move || approval_head(&events.get()?.ok()?, &comments.get()?.ok()?, &prs.get()?.ok()?)) reload=reload/> })}
                            <section class="card">
                                <h2>{t("task-prs")}</h2>
                                {move || {
                                    let list: Vec<TaskPr> = prs.get().and_then(Result::ok).unwrap_or_default();
                                    if list.is_empty() { view! { <p class="muted">{t("task-prs-none")}</p> }.into_any() } else {
                                        view! { <ul class="plain">{list.into_iter().map(|p| view! {
                                            <li class="task-pr"><a href=p.pr_url.clone() target="_blank" rel="noopener">{format!("{}/{}#{}", p.owner, p.repo, p.pr_number)}</a>
                                                " " {p.pr_title.clone()} " "
                                                {(!p.head_sha.is_empty()).then(|| { let head = short(&p.head_sha).to_string(); view! { <code class="muted head-sha">{head}</code> " " } })}
                                                <span class=format!("badge pr-{}", p.state)>{t(&format!("pr-state-{}", p.state))}</span>
                                                {(!p.checks_state.is_empty()).then(|| view! { <span class=format!("badge checks-{}", p.checks_state)>{ta("task-checks-badge", &[("state", t(&format!("checks-state-{}", p.checks_state)))])}</span> })}
                                                {writable.then(|| view! { <RefreshPr pr=p.clone() reload=reload/> })}
                                            </li>
                                        }).collect_view()}</ul> }.into_any()
                                    }
                                }}
                                {writable.then(|| {
                                    let tid = tid.clone();
                                    view! {
                                        <form class="row wrap" on:submit=move |ev: leptos::ev::SubmitEvent| {
                                            ev.prevent_default();
                                            let body = LinkPrRequest { url: Some(pr_url.get()), ..Default::default() };
                                            let tid = tid.clone();
                                            act(reload, async move {
                                                let r = api::post::<_, TaskPr>(&format!("/api/v1/tasks/{tid}/prs"), &body).await.map(|_| ());
                                                if r.is_ok() { pr_url.set(String::new()); }
                                                r
                                            });
                                        }>
                                            <label for="link-pr">{t("task-link-pr-label")}</label>
                                            <input id="link-pr" class="grow" type="url" required prop:value=move || pr_url.get() on:input=move |ev| pr_url.set(event_target_value(&ev))/>
                                            <button class="btn" type="submit">{t("task-link-pr")}</button>
                                        </form>
                                    }
                                })}
                            </section>
                            <section class="card">
                                <h2>{t("task-sessions")}</h2>
                                {move || {
                                    let list = sessions.get().and_then(Result::ok).unwrap_or_default();
                                    if list.is_empty() {
                                        return view! { <p class="muted empty" id="sessions-empty">{t("task-sessions-none")}</p> }.into_any();
                                    }
                                    view! { <ul class="plain">{list.into_iter().map(|s| {
                                        let href = format!("/w/{}/runs/{}", ws.get_untracked(), s.task_id);
                                        let state = t(&format!("session-state-{}", s.state.to_ascii_lowercase()));
                                        view! { <li>{ta("session-state", &[("state", state)])} " " <A href=href>{t("task-open-transcript")}</A></li> }
                                    }).collect_view()}</ul> }.into_any()
                                }}
                            </section>
                            <section class="card">
                                <h2>{t("task-comments")}</h2>
                                <ul class="plain">
                                    {move || comments.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|c| view! {
                                        <li><span class="muted">{c.author.clone()} " · " {relative(c.created_at)}</span><p class="pre">{c.body.clone()}</p></li>
                                    }).collect_view()}
                                </ul>
                                {writable.then(|| {
                                    let tid = tid.clone();
                                    view! {
                                        <form class="stack" on:submit=move |ev: leptos::ev::SubmitEvent| {
                                            ev.prevent_default();
                                            let body = CreateComment { body: comment.get() };
                                            let tid = tid.clone();
                                            act(reload, async move {
                                                let r = api::post::<_, Comment>(&format!("/api/v1/tasks/{tid}/comments"), &body).await.map(|_| ());
                                                if r.is_ok() { comment.set(String::new()); }
                                                r
                                            });
                                        }>
                                            <label for="new-comment">{t("task-comment-label")}</label>
                                            <textarea id="new-comment" required prop:value=move || comment.get() on:input=move |ev| comment.set(event_target_value(&ev))></textarea>
                                            <button class="btn" type="submit">{t("task-comment-add")}</button>
                                        </form>
                                    }
                                })}
                            </section>
                            {writable.then(|| view! { <ManageTask task_id=tid.clone() title=task.title.clone() archived=archived ws=ws reload=reload/> })}
                            <section class="card">
                                <h2>{t("task-events")}</h2>
                                <ol class="plain events">
                                    {move || events.get().and_then(Result::ok).unwrap_or_default().into_iter().rev().map(|e| view! {
                                        <li data-kind=e.kind.clone()><span class="muted">{relative(e.created_at)}</span> " " {event_text(&e)}
                                            <span class="muted actor">{ta("event-by", &[("who", e.actor.display_name().to_string())])}</span></li>
                                    }).collect_view()}
                                </ol>
                            </section>
                        }.into_any()
                    }
                }}
            </div>
        </Layout>
    }
}
