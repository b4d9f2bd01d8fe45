//! A workspace's repositories: list and add.

use kandev_core::api::{CreateRepository, Repository};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::components::toast;
use crate::i18n::t;

#[component]
pub fn Repositories(#[prop(into)] ws: Signal<String>) -> impl IntoView {
    let repos = LocalResource::new(move || {
        let ws = ws.get();
        async move { api::repositories(&ws).await }
    });
    let owner = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = CreateRepository {
            owner: owner.get(),
            name: name.get(),
            default_branch: None,
            provider: None,
            local_path: None,
            ci_wait_timeout_minutes: None,
        };
        let ws = ws.get_untracked();
        spawn_local(async move {
            match api::post::<_, Repository>(&format!("/api/v1/workspaces/{ws}/repositories"), &body).await {
                Ok(_) => {
                    owner.set(String::new());
                    name.set(String::new());
                    repos.refetch();
                }
                Err(e) => toast(e.message, true),
            }
        });
    };
    view! {
        <details class="card">
            <summary>{move || t("repo-section")}</summary>
            <ul class="plain">
                {move || {
                    let list = repos.get().and_then(Result::ok).unwrap_or_default();
                    if list.is_empty() {
                        view! { <li class="muted">{t("repo-none")}</li> }.into_any()
                    } else {
                        list.into_iter().map(|r| view! { <li>{format!("{}/{} ({})", r.owner, r.name, r.default_branch)}</li> }).collect_view().into_any()
                    }
                }}
            </ul>
            <form class="row wrap" on:submit=add>
                <label for="repo-owner">{move || t("repo-owner-label")}</label>
                <input id="repo-owner" required prop:value=move || owner.get() on:input=move |ev| owner.set(event_target_value(&ev))/>
                <label for="repo-name">{move || t("repo-name-label")}</label>
                <input id="repo-name" required prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
                <button class="btn" type="submit">{move || t("repo-add")}</button>
            </form>
        </details>
    }
}
