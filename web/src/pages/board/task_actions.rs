//! The task page's actions, in order of weight: the review bar (Approve
//! first; Reject asks for its reason in a dialog), then archive and delete
//! apart from it, delete confirmed first.

use std::future::Future;

use kandev_core::api::{ApproveRequest, ApproveResponse, RejectRequest, Task};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_navigate;
use serde_json::{Value, json};

use crate::api::{self, ApiResult};
use crate::components::{Confirm, toast};
use crate::i18n::{t, ta};

/// Runs an action, reports its failure, and refreshes the page.
pub fn act(reload: RwSignal<u64>, fut: impl Future<Output = ApiResult<()>> + 'static) {
    spawn_local(async move {
        if let Err(e) = fut.await {
            toast(e.to_string(), true);
        }
        reload.update(|n| *n += 1);
    });
}

#[component]
pub fn ReviewBar(
    task_id: String,
    /// The PR head the page shows, which the approval names.
    head: Signal<Option<String>>,
    reload: RwSignal<u64>,
) -> impl IntoView {
    let rejecting = RwSignal::new(false);
    let reason = RwSignal::new(String::new());
    let (a, r) = (task_id.clone(), task_id);
    let reject = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (r, body) = (r.clone(), RejectRequest { reason: reason.get() });
        rejecting.set(false);
        act(reload, async move {
            api::post::<_, Task>(&format!("/api/v1/tasks/{r}/reject"), &body)
                .await
                .map(|_| ())
        });
    };
    view! {
        <section class="card review-bar" aria-label=move || t("task-review-bar")>
            <p class="help">{move || t("task-review-bar-help")}</p>
            <div class="row wrap">
                <button class="btn btn-primary" id="approve" on:click=move |_| {
                    let (a, body) = (a.clone(), ApproveRequest { head_sha: head.get_untracked(), ..Default::default() });
                    act(reload, async move {
                        api::post::<_, ApproveResponse>(&format!("/api/v1/tasks/{a}/approve"), &body).await.map(|_| ())
                    });
                }>{move || t("task-approve")}</button>
                <button class="btn" id="reject" on:click=move |_| rejecting.set(true)>{move || t("task-reject")}</button>
            </div>
            <Show when=move || rejecting.get()>
                <div class="overlay">
                    <form class="dialog" role="dialog" aria-modal="true" aria-labelledby="reject-title" on:submit=reject.clone()>
                        <h2 id="reject-title">{move || t("task-reject-dialog-title")}</h2>
                        <label for="reject-reason">{move || t("task-reject-reason-label")}</label>
                        <textarea id="reject-reason" required prop:value=move || reason.get()
                            on:input=move |ev| reason.set(event_target_value(&ev))></textarea>
                        <div class="row">
                            <button type="button" class="btn" on:click=move |_| rejecting.set(false)>{move || t("cancel")}</button>
                            <button type="submit" class="btn btn-primary" id="reject-confirm">{move || t("task-reject")}</button>
                        </div>
                    </form>
                </div>
            </Show>
        </section>
    }
}

/// Archive (or restore) and delete, kept away from the everyday actions.
#[component]
pub fn ManageTask(
    task_id: String,
    title: String,
    archived: bool,
    ws: Signal<String>,
    reload: RwSignal<u64>,
) -> impl IntoView {
    let confirm = RwSignal::new(false);
    let navigate = use_navigate();
    let (archive_id, delete_id) = (task_id.clone(), task_id);
    let path = if archived { "unarchive" } else { "archive" };
    let delete = move || {
        let (tid, navigate, ws) = (delete_id.clone(), navigate.clone(), ws.get_untracked());
        spawn_local(async move {
            match api::delete(&format!("/api/v1/tasks/{tid}")).await {
                Ok(()) => navigate(&format!("/w/{ws}"), Default::default()),
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    view! {
        <section class="card manage-task">
            <div class="row wrap">
                <button class="btn" id="archive-task" on:click=move |_| {
                    let tid = archive_id.clone();
                    act(reload, async move {
                        api::post::<_, Value>(&format!("/api/v1/tasks/{tid}/{path}"), &json!({})).await.map(|_| ())
                    });
                }>{move || if archived { t("task-unarchive") } else { t("task-archive") }}</button>
                <button class="btn btn-danger" id="delete-task" on:click=move |_| confirm.set(true)>{move || t("task-delete")}</button>
            </div>
            <Confirm open=confirm
                title=Signal::derive(move || t("task-delete-confirm-title"))
                body=Signal::derive(move || ta("task-delete-confirm-body", &[("title", title.clone())]))
                confirm_label=Signal::derive(move || t("task-delete"))
                on_confirm=delete/>
        </section>
    }
}
