//! The page frame: skip link, header with navigation, workspace and
//! language pickers, the toasts, the workspace's live stream, and the page.

use leptos::prelude::*;
use leptos_router::hooks::{use_location, use_navigate};

use kandev_core::access::Level;
use leptos::task::spawn_local;

use super::nav::{Section, section};
use super::toast::ToastRegion;
use crate::api;
use crate::i18n::{LOCALE_NAMES, set_locale, t, use_locale};
use crate::live::follow;
use crate::session::{can, refresh, use_me};

/// Ends the session and goes to the sign-in page.
fn sign_out() {
    spawn_local(async move {
        let _ = api::post::<_, serde_json::Value>("/api/v1/auth/logout", &serde_json::json!({})).await;
        if let Some(w) = web_sys::window() {
            let _ = w.location().set_href("/login");
        }
    });
}

#[component]
pub fn Layout(#[prop(into)] ws: Signal<String>, children: Children) -> impl IntoView {
    let workspaces = LocalResource::new(api::workspaces);
    let navigate = use_navigate();
    let locale = use_locale();
    let me = use_me();
    let owner = can(ws, Level::Manage);
    let path = use_location().pathname;
    // The router's links are current for every path beneath them; ours for their section only.
    let current = move |s: Section| (section(&path.get()) == Some(s)).then_some("page");
    // Every workspace page follows its live stream.
    Effect::new(move |_| {
        let ws = ws.get();
        if !ws.is_empty() {
            follow(ws);
        }
    });
    // A workspace the session does not know yet (just created): learn its role.
    Effect::new(move |_| {
        let ws = ws.get();
        let known = me.with(|m| {
            m.as_ref()
                .is_none_or(|m| ws.is_empty() || m.admin || m.role_in(&ws).is_some())
        });
        if !known {
            refresh();
        }
    });
    view! {
        <a class="skip" href="#main">{move || t("skip-to-content")}</a>
        <header class="top">
            <span class="brand">{move || t("app-name")}</span>
            <nav aria-label=move || t("nav-main")>
                <a href=move || format!("/w/{}", ws.get()) aria-current=move || current(Section::Board)>{move || t("nav-board")}</a>
                <a href="/automations" aria-current=move || current(Section::Automations)>{move || t("nav-automations")}</a>
                <Show when=move || owner.get() && !ws.get().is_empty()>
                    <a href=move || format!("/w/{}/members", ws.get()) aria-current=move || current(Section::Members)>{move || t("nav-members")}</a>
                </Show>
                <Show when=move || !ws.get().is_empty()>
                    <a href=move || format!("/w/{}/notifications", ws.get()) aria-current=move || current(Section::Notifications)>{move || t("nav-notifications")}</a>
                </Show>
                <a href="/settings/tokens" aria-current=move || current(Section::Tokens)>{move || t("nav-tokens")}</a>
            </nav>
            <div class="pickers">
                <label for="workspace-picker" class="sr-only">{move || t("workspace-label")}</label>
                <select id="workspace-picker" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    navigate(&format!("/w/{v}"), Default::default());
                }>
                    {move || workspaces.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|w| {
                        let selected = w.id == ws.get();
                        view! { <option value=w.id.clone() selected=selected>{w.name.clone()}</option> }
                    }).collect_view()}
                </select>
                <label for="language-picker" class="sr-only">{move || t("language-label")}</label>
                <select id="language-picker" on:change=move |ev| set_locale(&event_target_value(&ev))>
                    {LOCALE_NAMES.iter().map(|l| {
                        let l = l.to_string();
                        let value = l.clone();
                        let key = format!("lang-{l}");
                        view! { <option value=value selected=move || locale.get() == l>{move || t(&key)}</option> }
                    }).collect_view()}
                </select>
                <span class="signed-in" id="signed-in-user">{move || me.with(|m| m.as_ref().map(|m| m.username.clone()).unwrap_or_default())}</span>
                <button id="sign-out" class="btn btn-link" on:click=move |_| sign_out()>{move || t("sign-out")}</button>
            </div>
        </header>
        <main id="main" tabindex="-1">{children()}</main>
        <ToastRegion/>
    }
}
