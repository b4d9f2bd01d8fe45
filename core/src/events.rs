//! Bus events: subjects, typed payloads and the one normaliser every consumer
//! uses, so the in-process (typed) and NATS (JSON) forms decode identically.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::lenient::null_as_default;
use crate::task_pr::TaskPr;

pub const TASK_PR_UPDATED: &str = "github.task_pr.updated";
pub const AUTOMATION_TRIGGERED: &str = "automation.triggered";
pub const PUSH_RECEIVED: &str = "github.push_received";
pub const CHECK_RUN_COMPLETED: &str = "github.check_run_completed";

pub const SOURCE_GITHUB: &str = "github";
pub const SOURCE_AUTOMATION: &str = "automation_service";

/// A push to a branch, published by the GitHub webhook receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushReceived {
    /// Workspaces that hold this repository.
    #[serde(default, deserialize_with = "null_as_default")]
    pub workspace_ids: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub owner: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub repo: String,
    /// Without the `refs/heads/` prefix.
    #[serde(default, deserialize_with = "null_as_default")]
    pub branch: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub sha: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pusher_login: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub message: String,
}

/// A completed check run, published by the GitHub webhook receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckRunCompleted {
    #[serde(default, deserialize_with = "null_as_default")]
    pub workspace_ids: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub owner: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub repo: String,
    /// The check suite's head branch.
    #[serde(default, deserialize_with = "null_as_default")]
    pub branch: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub sha: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub check_name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub conclusion: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub check_run_id: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub html_url: String,
}

/// `automation.triggered`: a firing admitted by `fire_trigger`, for the orchestrator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AutomationTriggered {
    #[serde(default, deserialize_with = "null_as_default")]
    pub automation_id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub trigger_id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub trigger_type: String,
    #[serde(default)]
    pub trigger_data: serde_json::Value,
    #[serde(default, deserialize_with = "null_as_default")]
    pub dedup_key: String,
}

/// Event data as a bus delivers it: typed in-process, JSON over NATS.
// Payloads are built once per publish and moved, so variant size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    TaskPr(TaskPr),
    Push(PushReceived),
    CheckRun(CheckRunCompleted),
    AutomationTriggered(AutomationTriggered),
    /// Anything else the server publishes (live updates), kept as JSON.
    Other(serde_json::Value),
    /// A payload that arrived as JSON (the NATS wire form).
    Json(serde_json::Value),
}

impl Payload {
    /// The JSON form, as NATS carries it.
    pub fn to_json(&self) -> serde_json::Value {
        let encoded = match self {
            Payload::TaskPr(v) => serde_json::to_value(v),
            Payload::Push(v) => serde_json::to_value(v),
            Payload::CheckRun(v) => serde_json::to_value(v),
            Payload::AutomationTriggered(v) => serde_json::to_value(v),
            Payload::Other(v) | Payload::Json(v) => Ok(v.clone()),
        };
        encoded.unwrap_or(serde_json::Value::Null)
    }
}

/// Why a payload could not be normalised. Consumers ignore such events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("payload is not of the expected kind")]
    WrongKind,
    #[error("payload is not a JSON object")]
    NotAnObject,
    #[error("malformed payload: {0}")]
    Malformed(String),
}

/// Decodes a payload into one typed value, from either bus form. Fails closed:
/// a JSON payload must be an object whose fields have the right types.
pub trait FromPayload: Sized + DeserializeOwned + Clone {
    fn typed(p: &Payload) -> Option<&Self>;

    fn from_payload(p: &Payload) -> Result<Self, PayloadError> {
        if let Some(v) = Self::typed(p) {
            return Ok(v.clone());
        }
        match p {
            Payload::Json(v) => {
                if !v.is_object() {
                    return Err(PayloadError::NotAnObject);
                }
                serde_json::from_value(v.clone()).map_err(|e| PayloadError::Malformed(e.to_string()))
            }
            _ => Err(PayloadError::WrongKind),
        }
    }
}

impl FromPayload for TaskPr {
    fn typed(p: &Payload) -> Option<&Self> {
        match p {
            Payload::TaskPr(v) => Some(v),
            _ => None,
        }
    }
}

impl FromPayload for PushReceived {
    fn typed(p: &Payload) -> Option<&Self> {
        match p {
            Payload::Push(v) => Some(v),
            _ => None,
        }
    }
}

impl FromPayload for CheckRunCompleted {
    fn typed(p: &Payload) -> Option<&Self> {
        match p {
            Payload::CheckRun(v) => Some(v),
            _ => None,
        }
    }
}

impl FromPayload for AutomationTriggered {
    fn typed(p: &Payload) -> Option<&Self> {
        match p {
            Payload::AutomationTriggered(v) => Some(v),
            _ => None,
        }
    }
}

/// The bus envelope. Over NATS the whole envelope travels as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: String,
    pub subject: String,
    pub source: String,
    pub timestamp: DateTime<Utc>,
    pub data: Payload,
}

#[derive(Serialize, Deserialize)]
struct WireEvent {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    subject: String,
    source: String,
    timestamp: DateTime<Utc>,
    data: serde_json::Value,
}

impl Event {
    /// Encodes the envelope for the wire.
    pub fn to_wire(&self) -> Vec<u8> {
        let wire = WireEvent {
            id: self.id.clone(),
            kind: self.subject.clone(),
            subject: self.subject.clone(),
            source: self.source.clone(),
            timestamp: self.timestamp,
            data: self.data.to_json(),
        };
        serde_json::to_vec(&wire).unwrap_or_default()
    }

    /// Decodes a wire envelope; the data stays JSON for the consumer to normalise.
    pub fn from_wire(bytes: &[u8]) -> Result<Event, PayloadError> {
        let wire: WireEvent = serde_json::from_slice(bytes).map_err(|e| PayloadError::Malformed(e.to_string()))?;
        Ok(Event {
            id: wire.id,
            subject: wire.subject,
            source: wire.source,
            timestamp: wire.timestamp,
            data: Payload::Json(wire.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> TaskPr {
        TaskPr {
            task_id: "t1".into(),
            owner: "acme".into(),
            repo: "api".into(),
            pr_number: 7,
            state: "merged".into(),
            merged_at: Some(
                DateTime::parse_from_rfc3339("2026-03-08T13:00:00+01:00")
                    .unwrap()
                    .with_timezone(&Utc),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn typed_and_wire_forms_normalise_to_the_same_value() {
        let typed = Payload::TaskPr(sample());
        let event = Event {
            id: "e".into(),
            subject: TASK_PR_UPDATED.into(),
            source: SOURCE_GITHUB.into(),
            timestamp: Utc::now_fixed(),
            data: typed.clone(),
        };
        let wire = Event::from_wire(&event.to_wire()).unwrap();
        assert!(matches!(wire.data, Payload::Json(_)));
        assert_eq!(
            TaskPr::from_payload(&typed).unwrap(),
            TaskPr::from_payload(&wire.data).unwrap()
        );
    }

    #[test]
    fn malformed_json_fails_closed() {
        for bad in [
            json!(null),
            json!([1]),
            json!("x"),
            json!({"pr_number": "seven"}),
            json!({"task_id": 5}),
        ] {
            assert!(TaskPr::from_payload(&Payload::Json(bad.clone())).is_err(), "{bad}");
        }
        assert_eq!(
            TaskPr::from_payload(&Payload::Push(PushReceived::default())),
            Err(PayloadError::WrongKind)
        );
    }

    #[test]
    fn offsets_are_converted_to_utc() {
        let p = TaskPr::from_payload(&Payload::Json(json!({"merged_at": "2026-03-08T13:00:00+01:00"}))).unwrap();
        assert_eq!(p.merged_at.unwrap().to_rfc3339(), "2026-03-08T12:00:00+00:00");
    }

    trait Fixed {
        fn now_fixed() -> DateTime<Utc>;
    }
    impl Fixed for Utc {
        fn now_fixed() -> DateTime<Utc> {
            DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z")
                .unwrap()
                .with_timezone(&Utc)
        }
    }
}
