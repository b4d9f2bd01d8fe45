//! `/settings/tokens`: the signed-in user's API tokens. A new token is shown
//! once, with a copy button; revoking one stops it at once.

use kandev_core::api::{CreateToken, CreatedToken, TokenInfo};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::components::{Layout, toast};
use crate::i18n::{t, ta};
use crate::time::relative;

#[component]
pub fn Tokens() -> impl IntoView {
    let reload = RwSignal::new(0u64);
    let tokens = LocalResource::new(move || {
        reload.get();
        async move { api::get::<Vec<TokenInfo>>("/api/v1/tokens").await }
    });
    let name = RwSignal::new(String::new());
    let created = RwSignal::new(None::<CreatedToken>);
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = CreateToken {
            name: name.get_untracked(),
        };
        spawn_local(async move {
            match api::post::<_, CreatedToken>("/api/v1/tokens", &body).await {
                Ok(c) => {
                    created.set(Some(c));
                    name.set(String::new());
                    reload.update(|n| *n += 1);
                }
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let copy = move |_| {
        let Some(token) = created.get_untracked().map(|c| c.token) else {
            return;
        };
        if let Some(w) = web_sys::window() {
            let _ = w.navigator().clipboard().write_text(&token);
            toast(t("tokens-copied"), false);
        }
    };
    let revoke = move |id: String| {
        spawn_local(async move {
            match api::delete(&format!("/api/v1/tokens/{}", api::enc(&id))).await {
                Ok(()) => reload.update(|n| *n += 1),
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let ws = Signal::derive(String::new);
    view! {
        <Layout ws=ws>
            <div class="page narrow">
                <h1>{move || t("tokens-title")}</h1>
                <p class="help">{move || t("tokens-help")}</p>
                <form class="row wrap card" on:submit=create>
                    <label for="token-name">{move || t("tokens-name-label")}</label>
                    <input id="token-name" class="grow" required maxlength="500"
                        prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
                    <button id="token-create" class="btn btn-primary" type="submit">{move || t("tokens-create")}</button>
                </form>
                {move || created.get().map(|c| view! {
                    <section class="card" role="status" id="token-created">
                        <p>{t("tokens-created-once")}</p>
                        <p><code id="new-token" class="token">{c.token.clone()}</code></p>
                        <button id="token-copy" class="btn" on:click=copy>{t("tokens-copy")}</button>
                    </section>
                })}
                <section class="card">
                    {move || match tokens.get() {
                        None => view! { <p>{t("loading")}</p> }.into_any(),
                        Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                        Some(Ok(list)) if list.is_empty() => view! { <p class="muted">{t("tokens-none")}</p> }.into_any(),
                        Some(Ok(list)) => view! {
                            <ul class="plain tokens">
                                {list.into_iter().map(|tok| {
                                    let id = tok.id.clone();
                                    let used = tok.last_used_at.map(relative).unwrap_or_else(|| t("tokens-never-used"));
                                    view! {
                                        <li class="row wrap" data-token-id=tok.id.clone()>
                                            <strong>{tok.name.clone()}</strong>
                                            <span class="muted">{ta("tokens-meta", &[("created", relative(tok.created_at)), ("used", used)])}</span>
                                            <button class="btn btn-danger token-revoke" on:click=move |_| revoke(id.clone())>{t("tokens-revoke")}</button>
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.into_any(),
                    }}
                </section>
            </div>
        </Layout>
    }
}
