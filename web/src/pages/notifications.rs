//! `/w/{ws}/notifications`: where a workspace's notifications go (owners add,
//! test and remove targets) and the delivery log everyone in it can read.

use kandev_core::access::Level;
use kandev_core::api::{CreateNotificationTarget, NotificationDelivery, NotificationTarget};
use kandev_core::notify::{EVENTS, TargetKind};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use serde_json::{Value, json};

use crate::api;
use crate::components::{Layout, toast};
use crate::i18n::{t, ta};
use crate::session::can;
use crate::time::relative;

/// How often the log is read again while the page is open.
const REFRESH_MS: u64 = 2000;

fn event_label(e: &str) -> String {
    t(&format!("notify-event-{}", e.replace('.', "-")))
}

/// The last attempt in words: the status the target answered, or the error.
fn last_attempt(d: &NotificationDelivery) -> String {
    match d.attempts.last() {
        None => t("notify-not-tried"),
        Some(a) => match a.status_code {
            Some(code) => ta("notify-answered", &[("code", code.to_string())]),
            None => a.error.clone(),
        },
    }
}

#[component]
pub fn Notifications() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let owner = can(ws, Level::Manage);
    let reload = RwSignal::new(0u64);
    let targets = LocalResource::new(move || {
        let (ws, _, owner) = (ws.get(), reload.get(), owner.get());
        async move {
            if !owner {
                return Ok(vec![]);
            }
            api::get::<Vec<NotificationTarget>>(&format!("/api/v1/workspaces/{ws}/notification-targets")).await
        }
    });
    let tick = RwSignal::new(0u64);
    let log = LocalResource::new(move || {
        let (ws, _, _) = (ws.get(), reload.get(), tick.get());
        async move {
            api::get::<Vec<NotificationDelivery>>(&format!("/api/v1/workspaces/{ws}/notification-deliveries")).await
        }
    });
    // Deliveries move on without a live event: read the log again now and then.
    if let Ok(handle) = set_interval_with_handle(
        move || tick.update(|n| *n += 1),
        std::time::Duration::from_millis(REFRESH_MS),
    ) {
        on_cleanup(move || handle.clear());
    }

    let kind = RwSignal::new(TargetKind::Webhook);
    let url = RwSignal::new(String::new());
    let secret = RwSignal::new(String::new());
    let chosen = RwSignal::new(EVENTS.iter().map(|e| e.to_string()).collect::<Vec<_>>());
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = CreateNotificationTarget {
            kind: kind.get_untracked(),
            url: url.get_untracked(),
            events: chosen.get_untracked(),
            secret: Some(secret.get_untracked()).filter(|s| !s.is_empty()),
        };
        let ws = ws.get_untracked();
        spawn_local(async move {
            match api::post::<_, NotificationTarget>(&format!("/api/v1/workspaces/{ws}/notification-targets"), &body)
                .await
            {
                Ok(_) => {
                    url.set(String::new());
                    secret.set(String::new());
                    reload.update(|n| *n += 1);
                    toast(t("notify-added"), false);
                }
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let test = move |id: String| {
        let ws = ws.get_untracked();
        spawn_local(async move {
            let path = format!("/api/v1/workspaces/{ws}/notification-targets/{id}/test");
            match api::post::<_, Value>(&path, &json!({})).await {
                Ok(_) => {
                    toast(t("notify-test-sent"), false);
                    reload.update(|n| *n += 1);
                }
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let remove = move |id: String| {
        let ws = ws.get_untracked();
        spawn_local(async move {
            match api::delete(&format!("/api/v1/workspaces/{ws}/notification-targets/{id}")).await {
                Ok(()) => reload.update(|n| *n += 1),
                Err(e) => toast(e.to_string(), true),
            }
        });
    };

    view! {
        <Layout ws=ws>
            <div class="page narrow">
                <h1>{move || t("notify-title")}</h1>
                <Show when=move || owner.get()>
                    <section class="card">
                        <h2>{move || t("notify-targets")}</h2>
                        {move || match targets.get() {
                            None => view! { <p>{t("loading")}</p> }.into_any(),
                            Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                            Some(Ok(list)) if list.is_empty() => view! { <p class="muted">{t("notify-no-targets")}</p> }.into_any(),
                            Some(Ok(list)) => view! {
                                <ul class="plain targets">
                                    {list.into_iter().map(|target| {
                                        let (a, b) = (target.id.clone(), target.id.clone());
                                        let events = target.events.iter().map(|e| event_label(e)).collect::<Vec<_>>().join(", ");
                                        view! {
                                            <li class="row wrap notification-target" data-kind=target.kind.as_str()>
                                                <span class="badge">{t(&format!("notify-kind-{}", target.kind.as_str()))}</span>
                                                <span class="grow break">{target.url.clone()}<br/><small class="muted">{events}</small></span>
                                                <button class="btn target-test" on:click=move |_| test(a.clone())>{t("notify-send-test")}</button>
                                                <button class="btn btn-danger target-remove" on:click=move |_| remove(b.clone())>{t("notify-remove")}</button>
                                            </li>
                                        }
                                    }).collect_view()}
                                </ul>
                            }.into_any(),
                        }}
                    </section>
                </Show>
                <section class="card">
                    <h2>{move || t("notify-log")}</h2>
                    {move || match log.get() {
                        None => view! { <p>{t("loading")}</p> }.into_any(),
                        Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                        Some(Ok(list)) if list.is_empty() => view! { <p class="muted">{t("notify-log-empty")}</p> }.into_any(),
                        Some(Ok(list)) => view! {
                            <ul class="plain deliveries">
                                {list.into_iter().map(|d| {
                                    let last = last_attempt(&d);
                                    let tries = ta("notify-attempts", &[("count", d.attempts.len().to_string())]);
                                    view! {
                                        <li class="row wrap delivery" data-event=d.event.clone() data-status=d.status.clone()>
                                            <span class=format!("badge delivery-{}", d.status)>{t(&format!("notify-status-{}", d.status))}</span>
                                            <strong class="grow">{event_label(&d.event)}</strong>
                                            <span class="muted">{tries}" · "{last}</span>
                                            <time class="muted" datetime=d.created_at.to_rfc3339()>{relative(d.created_at)}</time>
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.into_any(),
                    }}
                </section>
                <Show when=move || owner.get()>
                    <form class="card stack" on:submit=add>
                        <h2>{move || t("notify-add-title")}</h2>
                        <label for="target-kind">{move || t("notify-kind-label")}</label>
                        <select id="target-kind" on:change=move |ev| {
                            if let Some(k) = TargetKind::parse(&event_target_value(&ev)) { kind.set(k) }
                        }>
                            {[TargetKind::Webhook, TargetKind::Slack].into_iter().map(|k| view! {
                                <option value=k.as_str() selected=move || kind.get() == k>{move || t(&format!("notify-kind-{}", k.as_str()))}</option>
                            }).collect_view()}
                        </select>
                        <label for="target-url">{move || t("notify-url-label")}</label>
                        <input id="target-url" type="url" required placeholder="https://" prop:value=move || url.get()
                            on:input=move |ev| url.set(event_target_value(&ev))/>
                        <Show when=move || kind.get() == TargetKind::Webhook>
                            <label for="target-secret">{move || t("notify-secret-label")}</label>
                            <input id="target-secret" type="password" autocomplete="new-password" prop:value=move || secret.get()
                                on:input=move |ev| secret.set(event_target_value(&ev))/>
                        </Show>
                        <fieldset class="stack">
                            <legend>{move || t("notify-events-label")}</legend>
                            {EVENTS.into_iter().map(|e| {
                                let id = format!("notify-on-{}", e.replace('.', "-"));
                                view! {
                                    <label class="check">
                                        <input type="checkbox" id=id prop:checked=move || chosen.get().iter().any(|c| c == e)
                                            on:change=move |ev| {
                                                let on = event_target_checked(&ev);
                                                chosen.update(|list| {
                                                    list.retain(|c| c != e);
                                                    if on { list.push(e.to_string()) }
                                                });
                                            }/>
                                        {move || event_label(e)}
                                    </label>
                                }
                            }).collect_view()}
                        </fieldset>
                        <button id="target-add" class="btn btn-primary" type="submit">{move || t("notify-add")}</button>
                    </form>
                </Show>
            </div>
        </Layout>
    }
}
