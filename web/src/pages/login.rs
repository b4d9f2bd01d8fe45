//! `/login`: the sign-in form. On success the browser holds the session
//! cookie and goes back where it was sent from (`?next=`), or to the board.

use kandev_core::api::{LoginRequest, Me};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_query_map;

use crate::api;
use crate::i18n::{t, ta};
use crate::session::use_me;

/// Only a path on this site: an open redirect would hand the session page to anyone.
fn safe_next(next: Option<String>) -> String {
    next.filter(|n| n.starts_with('/') && !n.starts_with("//") && !n.starts_with("/\\"))
        .unwrap_or_else(|| "/".into())
}

#[component]
pub fn Login() -> impl IntoView {
    let query = use_query_map();
    let username = RwSignal::new(query.with_untracked(|q| q.get("username").unwrap_or_default()));
    let password = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let me = use_me();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        error.set(None);
        let body = LoginRequest {
            username: username.get_untracked(),
            password: password.get_untracked(),
        };
        let next = safe_next(query.with_untracked(|q| q.get("next")));
        spawn_local(async move {
            match api::post::<_, Me>("/api/v1/auth/login", &body).await {
                Ok(m) => {
                    me.set(Some(m));
                    // A full load: every page starts over with the session.
                    if let Some(w) = web_sys::window() {
                        let _ = w.location().set_href(&next);
                    }
                }
                Err(e) => {
                    password.set(String::new());
                    error.set(Some(match e.status {
                        401 => t("login-failed"),
                        429 => ta("login-throttled", &[("detail", e.to_string())]),
                        _ => e.to_string(),
                    }));
                    busy.set(false);
                }
            }
        });
    };
    view! {
        <main id="main" class="page narrow login">
            <h1>{move || t("app-name")}</h1>
            <form class="stack card" on:submit=submit>
                <h2>{move || t("login-title")}</h2>
                <label for="login-username">{move || t("login-username")}</label>
                <input id="login-username" name="username" autocomplete="username" required
                    prop:value=move || username.get() on:input=move |ev| username.set(event_target_value(&ev))/>
                <label for="login-password">{move || t("login-password")}</label>
                <input id="login-password" name="password" type="password" autocomplete="current-password" required
                    prop:value=move || password.get() on:input=move |ev| password.set(event_target_value(&ev))/>
                <button id="login-submit" class="btn btn-primary" type="submit" disabled=move || busy.get()>{move || t("login-submit")}</button>
                {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            </form>
        </main>
    }
}
