//! The reply composer: a follow-up prompt to a session's agent, which
//! continues the same conversation. Open only while the session waits.

use kandev_core::api::Session;
use kandev_core::resume::{ReplyState, reply_state};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::json;

use super::toast;
use crate::api;
use crate::i18n::t;

#[component]
pub fn ReplyComposer(
    #[prop(into)] session: Signal<Option<Session>>,
    /// Called after a reply is accepted (the caller refetches).
    on_sent: Callback<()>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let sending = RwSignal::new(false);
    let state = move || session.with(|s| s.as_ref().map(|s| reply_state(&s.state)));
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Some(id) = session.with_untracked(|s| s.as_ref().map(|s| s.id.clone())) else {
            return;
        };
        let body = json!({"text": text.get_untracked()});
        sending.set(true);
        spawn_local(async move {
            match api::post::<_, serde_json::Value>(&format!("/api/v1/sessions/{id}/prompt"), &body).await {
                Ok(_) => {
                    text.set(String::new());
                    toast(t("reply-sent"), false);
                    on_sent.run(());
                }
                Err(e) => toast(e.to_string(), true),
            }
            sending.set(false);
        });
    };
    view! {
        <section class="card reply" aria-labelledby="reply-title">
            <h2 id="reply-title">{move || t("reply-title")}</h2>
            {move || match state() {
                None => view! { <p class="muted">{t("reply-no-session")}</p> }.into_any(),
                Some(ReplyState::Busy) => view! { <p class="muted" role="status">{t("reply-busy")}</p> }.into_any(),
                Some(ReplyState::Closed) => view! { <p class="muted">{t("reply-closed")}</p> }.into_any(),
                Some(ReplyState::Open) => view! {
                    <form class="stack" on:submit=submit>
                        <label for="reply-text">{t("reply-label")}</label>
                        <p class="help">{t("reply-help")}</p>
                        <textarea id="reply-text" rows="3" required prop:value=move || text.get()
                            on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                        <div class="row">
                            <button type="submit" class="btn btn-primary" id="reply-send"
                                disabled=move || sending.get() || text.with(|t| t.trim().is_empty())>{t("reply-send")}</button>
                        </div>
                    </form>
                }.into_any(),
            }}
        </section>
    }
}
