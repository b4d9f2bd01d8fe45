//! A card on the board, with its linked pull requests. The board hands each
//! card its own links, so a change to one PR redraws one card.

use kandev_core::api::{Task, TaskPr};
use leptos::prelude::*;
use leptos_router::components::A;

use crate::i18n::{t, ta};

#[component]
pub fn TaskCard(task: Task, #[prop(into)] prs: Signal<Vec<TaskPr>>) -> impl IntoView {
    let href = format!("/w/{}/tasks/{}", task.workspace_id, task.id);
    let archived = task.archived_at.is_some();
    view! {
        <article class="task-card" data-task-id=task.id.clone()>
            <A href=href>{task.title.clone()}</A>
            {archived.then(|| view! { <span class="badge badge-muted">{move || t("task-archived-note")}</span> })}
            <div class="badges">
                {move || prs.get().into_iter().map(|pr| {
                    let state_class = format!("badge pr-{}", pr.state);
                    let number = pr.pr_number.to_string();
                    let state = pr.state.clone();
                    let checks = pr.checks_state.clone();
                    view! {
                        <span class=state_class>{move || ta("task-pr-badge", &[("number", number.clone()), ("state", state.clone())])}</span>
                        {(!checks.is_empty()).then(|| {
                            let c = checks.clone();
                            view! { <span class=format!("badge checks-{c}")>{move || ta("task-checks-badge", &[("state", checks.clone())])}</span> }
                        })}
                    }
                }).collect_view()}
            </div>
        </article>
    }
}
