//! `/w/{ws}/runs/{task}`: a (run) task's transcript — every session's
//! messages, thoughts, tool calls and their results — live-updated.

use kandev_core::api::{Session, Task, TranscriptMessage, first_reads};
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;
use serde_json::Value;

use crate::api;
use crate::components::{Layout, ReplyComposer};
use crate::i18n::{t, ta};
use crate::live::use_live;
use crate::time::relative;

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[component]
fn Message(m: TranscriptMessage) -> impl IntoView {
    let who = match (m.role.as_str(), m.kind.as_str()) {
        (_, "thought") => t("transcript-thought"),
        (_, "tool_call") => {
            let name = m
                .tool
                .as_ref()
                .and_then(|t| t.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            ta("transcript-tool-call", &[("name", name.to_string())])
        }
        (_, "tool_result") => t("transcript-tool-result"),
        ("user", _) => t("transcript-user"),
        _ => t("transcript-agent"),
    };
    let detail = m.tool.as_ref().map(|tool| {
        let body = tool
            .get("input")
            .or_else(|| tool.get("output"))
            .map(pretty)
            .unwrap_or_default();
        (!body.is_empty() && body != "null").then(|| view! { <pre class="tool-json">{body}</pre> })
    });
    view! {
        <li class=format!("msg msg-{} msg-{}", m.role, m.kind) data-kind=m.kind.clone()>
            <div class="msg-head"><strong>{who}</strong> <span class="muted">{relative(m.created_at)}</span></div>
            <p class="pre">{m.content.clone()}</p>
            {detail}
        </li>
    }
}

#[component]
fn SessionTranscript(session: Session) -> impl IntoView {
    let tick = use_live();
    let id = session.id.clone();
    let messages = LocalResource::new(move || {
        let (id, _) = (id.clone(), tick.get());
        async move { api::messages(&id).await }
    });
    view! {
        <section class="card">
            <h2>{ta("session-state", &[("state", t(&format!("session-state-{}", session.state.to_ascii_lowercase())))])}</h2>
            <ol class="plain transcript">
                {move || {
                    let list = messages.get().and_then(Result::ok).unwrap_or_default();
                    if list.is_empty() {
                        view! { <li class="muted">{t("transcript-empty")}</li> }.into_any()
                    } else {
                        list.into_iter().map(|m| view! { <Message m=m/> }).collect_view().into_any()
                    }
                }}
            </ol>
        </section>
    }
}

#[component]
pub fn RunView() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let id = Signal::derive(move || params.with(|p| p.get("id").unwrap_or_default()));
    let tick = use_live();
    let sent = RwSignal::new(0u64);
    let task = LocalResource::new(move || {
        let id = id.get();
        async move { api::get::<Task>(&first_reads::task(&id)).await }
    });
    let sessions = LocalResource::new(move || {
        let (id, _, _) = (id.get(), tick.get(), sent.get());
        async move { api::sessions(&id).await }
    });
    // A reply continues the newest session.
    let last = Signal::derive(move || sessions.get().and_then(Result::ok).and_then(|l| l.last().cloned()));
    // Sessions keyed by id and state, so a live tick does not rebuild them.
    let keyed = move || sessions.get().and_then(Result::ok).unwrap_or_default();
    view! {
        <Layout ws=ws>
            <div class="page">
                <A href=move || format!("/w/{}/tasks/{}", ws.get(), id.get())>{move || t("task-back")}</A>
                <h1>{move || t("run-view-title")}</h1>
                <p class="lead">{move || task.get().and_then(Result::ok).map(|t| t.title).unwrap_or_default()}</p>
                <For each=keyed key=|s| (s.id.clone(), s.state.clone()) let:session>
                    <SessionTranscript session=session/>
                </For>
                <Show when=move || sessions.get().and_then(Result::ok).is_some_and(|l| l.is_empty())>
                    <p class="muted">{move || t("transcript-empty")}</p>
                </Show>
                <ReplyComposer session=last on_sent=Callback::new(move |()| sent.update(|n| *n += 1))/>
            </div>
        </Layout>
    }
}
