//! `/w/{ws}`: columns by status, live-updated. Two reads fill the board (the
//! tasks, and every PR link at once); a live notice refetches only what it
//! names — the task list for a task, one card's links for a PR — and cards
//! are keyed, so unchanged ones are not rebuilt.

use std::collections::HashMap;

use kandev_core::access::Level;
use kandev_core::api::{CreateTask, LIVE_RESYNC, LIVE_TASK_PR_UPDATED, LIVE_TASK_UPDATED, Task, TaskPr};
use kandev_core::board::{TaskStatus, move_targets};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;

use super::repositories::Repositories;
use super::task_card::{Dragging, TaskCard, move_task};
use crate::api;
use crate::components::{Layout, toast};
use crate::i18n::t;
use crate::live::use_notice;
use crate::session::can;

#[component]
pub fn Board() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let archived = RwSignal::new(false);
    let notice = use_notice();
    let task_tick = RwSignal::new(0u64);
    let pr_tick = RwSignal::new(0u64);
    let tasks = LocalResource::new(move || {
        let (ws, archived, _) = (ws.get(), archived.get(), task_tick.get());
        async move { api::tasks(&ws, archived).await }
    });
    let all_prs = LocalResource::new(move || {
        let (ws, archived, _) = (ws.get(), archived.get(), pr_tick.get());
        async move { api::board_prs(&ws, archived).await }
    });
    // The cards are shown: the task page's code can come while the board idles.
    Effect::new(move |_| {
        if let Some(Ok(_)) = tasks.get() {
            crate::routes::prefetch_task_page();
        }
    });
    // Task id → its links: filled by the one read, then patched card by card.
    let prs = RwSignal::new(HashMap::<String, Vec<TaskPr>>::new());
    Effect::new(move |_| {
        if let Some(Ok(list)) = all_prs.get() {
            let mut by_task: HashMap<String, Vec<TaskPr>> = HashMap::new();
            for pr in list {
                by_task.entry(pr.task_id.clone()).or_default().push(pr);
            }
            prs.set(by_task);
        }
    });
    Effect::new(move |_| {
        let Some(n) = notice.get() else { return };
        match n.kind.as_str() {
            LIVE_TASK_UPDATED => task_tick.update(|t| *t += 1),
            LIVE_TASK_PR_UPDATED if !n.id.is_empty() => {
                spawn_local(async move {
                    if let Ok(list) = api::task_prs(&n.id).await {
                        prs.update(|m| {
                            m.insert(n.id, list);
                        });
                    }
                });
            }
            // The stream lost notices: read everything again.
            LIVE_RESYNC => {
                task_tick.update(|t| *t += 1);
                pr_tick.update(|t| *t += 1);
            }
            _ => {}
        }
    });
    let title = RwSignal::new(String::new());
    let writable = can(ws, Level::Write);
    // The column a phone shows.
    let shown = RwSignal::new(TaskStatus::Todo);
    let dragging: Dragging = RwSignal::new(None);
    // A column accepts the dragged card when the board rules allow the move.
    let accepts =
        move |to: TaskStatus| dragging.with(|d| d.as_ref().is_some_and(|(_, from)| move_targets(*from).contains(&to)));
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = CreateTask {
            title: title.get(),
            description: None,
            status: None,
            repository_id: None,
        };
        let ws = ws.get_untracked();
        spawn_local(async move {
            match api::post::<_, Task>(&format!("/api/v1/workspaces/{ws}/tasks"), &body).await {
                Ok(_) => {
                    title.set(String::new());
                    tasks.refetch();
                }
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    view! {
        <Layout ws=ws>
            <div class="page">
                <div class="page-head">
                    <h1>{move || t("board-title")}</h1>
                    <label class="inline">
                        <input type="checkbox" id="show-archived" prop:checked=move || archived.get()
                            on:change=move |ev| archived.set(event_target_checked(&ev))/>
                        {move || t("board-show-archived")}
                    </label>
                </div>
                <Show when=move || writable.get()>
                    <form class="row wrap" on:submit=add>
                        <label for="new-task-title" class="sr-only">{move || t("board-task-title-label")}</label>
                        <input id="new-task-title" class="grow" required placeholder=move || t("board-new-task")
                            prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev))/>
                        <button class="btn btn-primary" type="submit">{move || t("board-add")}</button>
                    </form>
                </Show>
                // Phones show one column at a time; wider screens hide this.
                <nav class="column-switcher" aria-label=move || t("board-columns-label")>
                    {TaskStatus::ALL.into_iter().map(|status| {
                        let count = move || tasks.with(|l| l.as_ref().and_then(|r| r.as_ref().ok()).map_or(0, |l| l.iter().filter(|x| x.status == status).count()));
                        view! {
                            <button type="button" class="chip" data-status=status.as_str()
                                aria-pressed=move || (shown.get() == status).to_string()
                                on:click=move |_| shown.set(status)>
                                {move || t(&format!("status-{}", status.as_str()))} " " <span class="count">{count}</span>
                            </button>
                        }
                    }).collect_view()}
                </nav>
                <div class="columns">
                    {TaskStatus::ALL.into_iter().map(|status| {
                        let label_id = format!("status-{}", status.as_str());
                        let heading_id = format!("column-{}", status.as_str());
                        let heading = heading_id.clone();
                        view! {
                            <section class="column" class:shown=move || shown.get() == status aria-labelledby=heading_id data-status=status.as_str()
                                class:drop-ok=move || accepts(status)
                                on:dragover=move |ev| if accepts(status) { ev.prevent_default() }
                                on:drop=move |ev| {
                                    ev.prevent_default();
                                    if let Some((id, _)) = dragging.get_untracked().filter(|_| accepts(status)) {
                                        move_task(id, status);
                                    }
                                    dragging.set(None);
                                }>
                                <h2 id=heading>{move || t(&label_id)}</h2>
                                {
                                    let column = Memo::new(move |_| {
                                        tasks.get().and_then(Result::ok).unwrap_or_default()
                                            .into_iter().filter(|x| x.status == status).collect::<Vec<Task>>()
                                    });
                                    view! {
                                        <Show when=move || !column.with(Vec::is_empty)
                                            fallback=|| view! { <p class="muted">{t("board-empty-column")}</p> }>
                                            <For each=move || column.get() key=|task| (task.id.clone(), task.updated_at) let:task>
                                                {
                                                    let id = task.id.clone();
                                                    let mine = Memo::new(move |_| prs.with(|m| m.get(&id).cloned().unwrap_or_default()));
                                                    view! { <TaskCard task=task prs=mine writable=writable dragging=dragging/> }
                                                }
                                            </For>
                                        </Show>
                                    }
                                }
                            </section>
                        }
                    }).collect_view()}
                </div>
                <Repositories ws=ws/>
            </div>
        </Layout>
    }
}
