//! A card on the board, with its linked pull requests and a "move to" menu
//! offering only the moves the board rules allow. The board hands each card
//! its own links, so a change to one PR redraws one card.

use kandev_core::api::{PatchTask, Task, TaskPr};
use kandev_core::board::{TaskStatus, check_move};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;

use crate::api;
use crate::components::toast;
use crate::i18n::{t, ta};

/// The quick move: a native select, so keyboards and screen readers work.
#[component]
fn MoveMenu(task: Task) -> impl IntoView {
    let targets: Vec<TaskStatus> = TaskStatus::ALL
        .into_iter()
        .filter(|s| *s != task.status && check_move(task.status, *s).is_ok())
        .collect();
    let (id, title) = (task.id.clone(), task.title.clone());
    (!targets.is_empty()).then(|| view! {
        <select class="move-card" aria-label=move || ta("board-move-card", &[("title", title.clone())])
            on:change=move |ev| {
                let Some(to) = TaskStatus::parse(&event_target_value(&ev)) else { return };
                let id = id.clone();
                spawn_local(async move {
                    let body = PatchTask { status: Some(to), ..Default::default() };
                    // The live notice redraws the board; only failures need saying.
                    if let Err(e) = api::patch::<_, Task>(&format!("/api/v1/tasks/{id}"), &body).await {
                        toast(e.to_string(), true);
                    }
                });
            }>
            <option value="" selected>{move || t("task-move-label")}</option>
            {targets.into_iter().map(|s| view! { <option value=s.as_str()>{move || t(&format!("status-{}", s.as_str()))}</option> }).collect_view()}
        </select>
    })
}

#[component]
pub fn TaskCard(task: Task, #[prop(into)] prs: Signal<Vec<TaskPr>>, writable: Signal<bool>) -> impl IntoView {
    let href = format!("/w/{}/tasks/{}", task.workspace_id, task.id);
    let archived = task.archived_at.is_some();
    let movable = (!archived).then(|| task.clone());
    view! {
        <article class="task-card" data-task-id=task.id.clone()>
            <A href=href>{task.title.clone()}</A>
            {move || writable.get().then(|| movable.clone().map(|task| view! { <MoveMenu task=task/> }))}
            {archived.then(|| view! { <span class="badge badge-muted">{move || t("task-archived-note")}</span> })}
            <div class="badges">
                {move || prs.get().into_iter().map(|pr| {
                    let state_class = format!("badge pr-{}", pr.state);
                    let number = pr.pr_number.to_string();
                    let state = format!("pr-state-{}", pr.state);
                    let checks = pr.checks_state.clone();
                    view! {
                        <span class=state_class>{move || ta("task-pr-badge", &[("number", number.clone()), ("state", t(&state))])}</span>
                        {(!checks.is_empty()).then(|| {
                            let c = checks.clone();
                            view! { <span class=format!("badge checks-{c}")>{move || ta("task-checks-badge", &[("state", t(&format!("checks-state-{}", checks)))])}</span> }
                        })}
                    }
                }).collect_view()}
            </div>
        </article>
    }
}
