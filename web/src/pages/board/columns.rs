//! `/w/{ws}`: columns by status, live-updated.

use kandev_core::access::Level;
use kandev_core::api::{CreateTask, Task};
use kandev_core::board::TaskStatus;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;

use super::repositories::Repositories;
use super::task_card::TaskCard;
use crate::api;
use crate::components::{Layout, toast};
use crate::i18n::t;
use crate::live::use_live;
use crate::session::can;

#[component]
pub fn Board() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let archived = RwSignal::new(false);
    let tick = use_live();
    let tasks = LocalResource::new(move || {
        let (ws, archived, _) = (ws.get(), archived.get(), tick.get());
        async move { api::tasks(&ws, archived).await }
    });
    let title = RwSignal::new(String::new());
    let writable = can(ws, Level::Write);
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
                Err(e) => toast(e.message, true),
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
                <div class="columns">
                    {TaskStatus::ALL.into_iter().map(|status| {
                        let label_id = format!("status-{}", status.as_str());
                        let heading_id = format!("column-{}", status.as_str());
                        let heading = heading_id.clone();
                        view! {
                            <section class="column" aria-labelledby=heading_id data-status=status.as_str()>
                                <h2 id=heading>{move || t(&label_id)}</h2>
                                {move || {
                                    let list: Vec<Task> = tasks.get().and_then(Result::ok).unwrap_or_default()
                                        .into_iter().filter(|x| x.status == status).collect();
                                    if list.is_empty() {
                                        view! { <p class="muted">{t("board-empty-column")}</p> }.into_any()
                                    } else {
                                        list.into_iter().map(|task| view! { <TaskCard task=task/> }).collect_view().into_any()
                                    }
                                }}
                            </section>
                        }
                    }).collect_view()}
                </div>
                <Repositories ws=ws/>
            </div>
        </Layout>
    }
}
