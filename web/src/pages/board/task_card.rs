//! A card on the board, with its linked pull requests, a "move to" menu and
//! drag and drop, both offering only the moves the board rules allow. The
//! board hands each card its own links, so a change to one PR redraws one card.

use kandev_core::api::{PatchTask, Task, TaskPr};
use kandev_core::board::{TaskStatus, move_targets};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;

use crate::api;
use crate::components::toast;
use crate::i18n::{t, ta};

/// The card being dragged: its id and status (a drop target cannot read the
/// drag's data until the drop, but must say during the drag if it accepts).
pub type Dragging = RwSignal<Option<(String, TaskStatus)>>;

/// Moves a card; the live notice redraws the board, so only failures are said.
pub fn move_task(id: String, to: TaskStatus) {
    spawn_local(async move {
        let body = PatchTask {
            status: Some(to),
            ..Default::default()
        };
        if let Err(e) = api::patch::<_, Task>(&format!("/api/v1/tasks/{id}"), &body).await {
            toast(e.to_string(), true);
        }
    });
}

/// The quick move and drag and drop's keyboard path: a native select, so
/// keyboards and screen readers work.
#[component]
fn MoveMenu(task: Task) -> impl IntoView {
    let targets = move_targets(task.status);
    let (id, title) = (task.id.clone(), task.title.clone());
    (!targets.is_empty()).then(|| view! {
        <select class="move-card" aria-label=move || ta("board-move-card", &[("title", title.clone())])
            on:change=move |ev| {
                let Some(to) = TaskStatus::parse(&event_target_value(&ev)) else { return };
                move_task(id.clone(), to);
            }>
            <option value="" selected>{move || t("task-move-label")}</option>
            {targets.into_iter().map(|s| view! { <option value=s.as_str()>{move || t(&format!("status-{}", s.as_str()))}</option> }).collect_view()}
        </select>
    })
}

#[component]
pub fn TaskCard(
    task: Task,
    #[prop(into)] prs: Signal<Vec<TaskPr>>,
    writable: Signal<bool>,
    dragging: Dragging,
) -> impl IntoView {
    let href = format!("/w/{}/tasks/{}", task.workspace_id, task.id);
    let archived = task.archived_at.is_some();
    let movable = (!archived).then(|| task.clone());
    let draggable = move || writable.get() && !archived && !move_targets(task.status).is_empty();
    let (drag_id, status) = (task.id.clone(), task.status);
    let me = task.id.clone();
    view! {
        <article class="task-card" data-task-id=task.id.clone() draggable=move || draggable().to_string()
            class:dragging=move || dragging.with(|d| d.as_ref().is_some_and(|(id, _)| *id == me))
            on:dragstart=move |ev| {
                if let Some(dt) = ev.data_transfer() {
                    let _ = dt.set_data("text/plain", &drag_id);
                    dt.set_effect_allowed("move");
                }
                dragging.set(Some((drag_id.clone(), status)));
            }
            on:dragend=move |_| dragging.set(None)>
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
