//! Stores a session's transcript from ACP `session/update` notifications.
//! Consecutive chunks of one kind are joined into one message.

use agent_client_protocol::v1::schema::{ContentBlock, SessionUpdate, ToolCallContent};
use kandev_core::api::{LIVE_SESSION_UPDATED, TranscriptMessage};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::clock::Clock;
use crate::live::LiveHub;
use crate::store::Store;

pub struct TranscriptWriter {
    store: Store,
    live: LiveHub,
    clock: std::sync::Arc<dyn Clock>,
    session_id: String,
    workspace_id: String,
    /// A message or thought still being streamed: (kind, text).
    pending: Mutex<Option<(&'static str, String)>>,
}

fn block_text(b: &ContentBlock) -> String {
    match b {
        ContentBlock::Text(t) => t.text.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn tool_content_text(content: &[ToolCallContent]) -> String {
    content
        .iter()
        .map(|c| match c {
            ToolCallContent::Content(inner) => block_text(&inner.content),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl TranscriptWriter {
    pub fn new(
        store: Store,
        live: LiveHub,
        clock: std::sync::Arc<dyn Clock>,
        session_id: &str,
        workspace_id: &str,
    ) -> Self {
        TranscriptWriter {
            store,
            live,
            clock,
            session_id: session_id.to_string(),
            workspace_id: workspace_id.to_string(),
            pending: Mutex::new(None),
        }
    }

    pub async fn write(&self, role: &str, kind: &str, content: String, tool: Option<Value>) {
        let m = TranscriptMessage {
            role: role.into(),
            kind: kind.into(),
            content,
            tool,
            created_at: self.clock.now(),
        };
        if let Err(e) = self.store.add_message(&self.session_id, &m).await {
            tracing::warn!(session_id = %self.session_id, error = %e, "could not store a transcript message");
        }
        self.live
            .notify(&self.workspace_id, LIVE_SESSION_UPDATED, &self.session_id);
    }

    /// Writes the message still being streamed, if any.
    pub async fn flush(&self) {
        let pending = self.pending.lock().await.take();
        if let Some((kind, text)) = pending {
            self.write("agent", kind, text, None).await;
        }
    }

    pub async fn update(&self, update: SessionUpdate) {
        let chunk = match &update {
            SessionUpdate::AgentMessageChunk(c) => Some(("message", block_text(&c.content))),
            SessionUpdate::AgentThoughtChunk(c) => Some(("thought", block_text(&c.content))),
            _ => None,
        };
        if let Some((kind, text)) = chunk {
            let mut pending = self.pending.lock().await;
            match pending.as_mut() {
                Some((k, buf)) if *k == kind => buf.push_str(&text),
                _ => {
                    let previous = pending.replace((kind, text));
                    drop(pending);
                    if let Some((k, t)) = previous {
                        self.write("agent", k, t, None).await;
                    }
                }
            }
            return;
        }
        self.flush().await;
        match update {
            SessionUpdate::ToolCall(call) => {
                let tool = json!({"id": call.tool_call_id.to_string(), "name": call.name, "title": call.title, "input": call.raw_input});
                self.write("agent", "tool_call", call.title.clone(), Some(tool)).await;
            }
            SessionUpdate::ToolCallUpdate(u) => {
                let status = u.fields.status.map(|s| serde_json::to_value(s).unwrap_or(Value::Null));
                let is_final = status
                    .as_ref()
                    .and_then(Value::as_str)
                    .is_some_and(|s| s == "completed" || s == "failed");
                if !is_final {
                    return;
                }
                let text = u
                    .fields
                    .content
                    .as_deref()
                    .map(tool_content_text)
                    .filter(|t| !t.is_empty())
                    .or_else(|| u.fields.raw_output.as_ref().map(Value::to_string))
                    .unwrap_or_default();
                let tool = json!({"id": u.tool_call_id.to_string(), "status": status, "output": u.fields.raw_output});
                self.write("agent", "tool_result", text, Some(tool)).await;
            }
            SessionUpdate::Plan(p) => {
                self.write("agent", "plan", serde_json::to_string(&p).unwrap_or_default(), None)
                    .await;
            }
            _ => {}
        }
    }
}
