//! `/`: go to the first workspace, or create one.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_navigate;

use crate::api;
use crate::i18n::t;
use kandev_core::api::{CreateWorkspace, Workspace};

#[component]
fn CreateWorkspaceForm() -> impl IntoView {
    let name = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let navigate = use_navigate();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let navigate = navigate.clone();
        let body = CreateWorkspace { name: name.get() };
        spawn_local(async move {
            match api::post::<_, Workspace>("/api/v1/workspaces", &body).await {
                Ok(w) => navigate(&format!("/w/{}", w.id), Default::default()),
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <main id="main" class="page narrow">
            <h1>{move || t("app-name")}</h1>
            <p>{move || t("workspace-none")}</p>
            <form on:submit=submit class="stack">
                <label for="new-workspace-name">{move || t("workspace-name-label")}</label>
                <input id="new-workspace-name" required prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
                <button class="btn btn-primary" type="submit">{move || t("workspace-create")}</button>
                {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            </form>
        </main>
    }
}

/// Sends the visitor to `target(first workspace)`, or offers to create one.
fn first_workspace(target: fn(&str) -> String) -> impl IntoView {
    let workspaces = LocalResource::new(api::workspaces);
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(list)) = workspaces.get()
            && let Some(w) = list.first()
        {
            navigate(&target(&w.id), Default::default());
        }
    });
    move || match workspaces.get() {
        Some(Ok(list)) if list.is_empty() => view! { <CreateWorkspaceForm/> }.into_any(),
        Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
        _ => view! { <p class="page">{t("loading")}</p> }.into_any(),
    }
}

#[component]
pub fn Home() -> impl IntoView {
    first_workspace(|ws| format!("/w/{ws}"))
}

/// `/settings/automations`: the first workspace's automations.
#[component]
pub fn AutomationsHome() -> impl IntoView {
    first_workspace(|ws| format!("/settings/workspace/{ws}/automations"))
}
