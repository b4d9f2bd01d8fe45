//! A workspace's repositories: list and add, and each one's CI wait.

use kandev_core::api::{CreateRepository, Repository, UpdateRepository};
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
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    // Blank clears the repository's wait (the workspace's applies).
    let set_wait = move |id: String, raw: String| {
        let minutes = match raw.trim() {
            "" => None,
            s => match s
                .parse::<i64>()
                .map_err(|_| ())
                .and_then(|m| kandev_core::bounds::ci_wait_minutes(m).map_err(|_| ()))
            {
                Ok(m) => Some(m),
                Err(()) => return toast(t("repo-ci-wait-invalid"), true),
            },
        };
        let ws = ws.get_untracked();
        spawn_local(async move {
            let body = UpdateRepository {
                ci_wait_timeout_minutes: Some(minutes),
            };
            match api::patch::<_, Repository>(&format!("/api/v1/workspaces/{ws}/repositories/{id}"), &body).await {
                Ok(_) => {
                    toast(t("repo-ci-wait-saved"), false);
                    repos.refetch();
                }
                Err(e) => toast(e.to_string(), true),
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
                        list.into_iter().map(|r| {
                            let input = format!("ci-wait-{}", r.id);
                            let id = r.id.clone();
                            view! {
                                <li class="row wrap repository">
                                    <span class="grow">{format!("{}/{} ({})", r.owner, r.name, r.default_branch)}</span>
                                    <label for=input.clone()>{t("repo-ci-wait-label")}</label>
                                    <input id=input class="ci-wait" type="number" min="1" max="1440" inputmode="numeric"
                                        placeholder=t("repo-ci-wait-inherit")
                                        prop:value=r.ci_wait_timeout_minutes.map(|m| m.to_string()).unwrap_or_default()
                                        on:change=move |ev| set_wait(id.clone(), event_target_value(&ev))/>
                                </li>
                            }
                        }).collect_view().into_any()
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
