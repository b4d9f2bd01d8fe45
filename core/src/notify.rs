//! Outbound notifications: which task events become which notification, the
//! bodies sent to a generic webhook and to a Slack-compatible one, target
//! validation, and the retry schedule of a delivery.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::{Actor, EVENT_BLOCKED, EVENT_COMPLETED, EVENT_MERGE_REQUESTED};

pub const MERGE_TRIGGERED: &str = "merge_triggered";
pub const MERGED: &str = "merged";
pub const MERGE_BLOCKED: &str = "merge_blocked";
pub const RUN_FAILED: &str = "automation_run.failed";
/// What "Send test" delivers; never chosen by a target, always sent.
pub const TEST: &str = "test";

/// Every event a target may subscribe to, in the order the editor lists them.
pub const EVENTS: [&str; 4] = [MERGE_TRIGGERED, MERGED, MERGE_BLOCKED, RUN_FAILED];

/// Attempts before a delivery is given up as failed.
pub const MAX_ATTEMPTS: u32 = 6;

/// A generic JSON webhook, signed, or a Slack-compatible incoming webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Webhook,
    Slack,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Webhook => "webhook",
            TargetKind::Slack => "slack",
        }
    }

    pub fn parse(s: &str) -> Option<TargetKind> {
        match s {
            "webhook" => Some(TargetKind::Webhook),
            "slack" => Some(TargetKind::Slack),
            _ => None,
        }
    }
}

/// The notification a task event raises, if any: a merge asked for by
/// anyone, and the merger's own verdicts (a person's "blocked" is not one).
pub fn for_task_event(kind: &str, actor: &Actor) -> Option<&'static str> {
    match (kind, actor) {
        (EVENT_MERGE_REQUESTED, _) => Some(MERGE_TRIGGERED),
        (EVENT_COMPLETED, Actor::Merger) => Some(MERGED),
        (EVENT_BLOCKED, Actor::Merger) => Some(MERGE_BLOCKED),
        _ => None,
    }
}

/// Whether a target subscribed to `event` (the test event reaches every target).
pub fn wants(subscribed: &[String], event: &str) -> bool {
    event == TEST || subscribed.iter().any(|e| e == event)
}

/// Checks a target before it is stored: an http(s) URL with a host, events
/// from [`EVENTS`] (at least one), a secret of sane length.
pub fn validate_target(url: &str, events: &[String], secret: Option<&str>) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .unwrap_or_default();
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') || url.chars().any(crate::schema::url_forbids) {
        return Err("url must be an absolute http or https URL".into());
    }
    if url.chars().count() > 2048 {
        return Err("url must be at most 2048 characters".into());
    }
    if events.is_empty() {
        return Err(format!("events must name at least one of {}", EVENTS.join(", ")));
    }
    if let Some(bad) = events.iter().find(|e| !EVENTS.contains(&e.as_str())) {
        return Err(format!("unknown event {bad:?}; events are {}", EVENTS.join(", ")));
    }
    if secret.is_some_and(|s| s.chars().count() > 256) {
        return Err("secret must be at most 256 characters".into());
    }
    Ok(())
}

/// What a notification is about, as the bodies show it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Subject {
    pub workspace_id: String,
    /// Empty for a run that failed before its task existed.
    pub task_id: String,
    /// The task's title; the automation's name when there is no task.
    pub task_title: String,
    /// The PR URL, the block reason, the run's error: one line of detail.
    pub detail: String,
    /// The event's own payload, passed through.
    pub data: Value,
}

/// The line of detail a task event's payload gives: the block reason, the
/// summary, the error, else the PR URL.
pub fn detail(payload: &Value) -> String {
    ["reason", "summary", "error", "pr_url"]
        .iter()
        .find_map(|k| payload.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .unwrap_or_default()
        .to_string()
}

/// The generic webhook's JSON body.
pub fn webhook_body(event: &str, delivery_id: &str, subject: &Subject, at: DateTime<Utc>) -> Value {
    json!({
        "event": event,
        "delivery_id": delivery_id,
        "occurred_at": at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "workspace_id": subject.workspace_id,
        // A run that failed before its task existed has no task to name.
        "task": (!subject.task_id.is_empty()).then(|| json!({"id": subject.task_id, "title": subject.task_title})),
        "detail": subject.detail,
        "data": subject.data,
    })
}

/// One line a person reads, for Slack's `text` and for logs.
pub fn headline(event: &str, subject: &Subject) -> String {
    let title = &subject.task_title;
    let line = match event {
        MERGE_TRIGGERED => format!("Merge started for “{title}”"),
        MERGED => format!("Merged: “{title}”"),
        MERGE_BLOCKED => format!("Merge blocked for “{title}”"),
        RUN_FAILED => format!("Automation run failed: “{title}”"),
        _ => "Kandev test notification".to_string(),
    };
    if subject.detail.is_empty() {
        line
    } else {
        format!("{line} — {}", subject.detail)
    }
}

/// A Slack-compatible incoming webhook body: `text` plus a section block.
/// Slack's mrkdwn treats `&`, `<` and `>` as markup, so they are escaped.
pub fn slack_body(event: &str, subject: &Subject) -> Value {
    let text = headline(event, subject);
    let escaped = text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    json!({
        "text": text,
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": escaped}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": format!("Kandev · {event}")}]},
        ],
    })
}

/// When attempt `attempts` (1-based, just failed) is retried: 10 s, 30 s,
/// 2 min, 10 min, 30 min; `None` once [`MAX_ATTEMPTS`] are spent.
pub fn retry_at(attempts: u32, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    const WAITS: [i64; 5] = [10, 30, 120, 600, 1800];
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let i = usize::try_from(attempts.saturating_sub(1))
        .unwrap_or(usize::MAX)
        .min(WAITS.len() - 1);
    Some(now + Duration::seconds(WAITS[i]))
}

/// Whether an HTTP status counts as delivered.
pub fn delivered(status: u16) -> bool {
    (200..300).contains(&status)
}

mod address;
#[cfg(test)]
mod tests;

pub use address::public_address;
