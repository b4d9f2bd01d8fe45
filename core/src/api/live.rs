//! Live updates: what `GET /workspaces/{ws}/stream` sends, and the form in
//! which replicas share them, so a browser on one replica sees what another
//! changed.

use serde::{Deserialize, Serialize};

/// A live update on `GET /workspaces/{ws}/stream`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveUpdate {
    /// `task.updated`, `task_pr.updated`, `automation_run.updated` or `session.updated`.
    pub kind: String,
    pub id: String,
}

pub const LIVE_TASK_UPDATED: &str = "task.updated";
pub const LIVE_TASK_PR_UPDATED: &str = "task_pr.updated";
pub const LIVE_RUN_UPDATED: &str = "automation_run.updated";
pub const LIVE_SESSION_UPDATED: &str = "session.updated";
/// The stream may have missed notices: the page reads everything again. It
/// names no resource, and replicas never share it (each sends its own).
pub const LIVE_RESYNC: &str = "resync";

impl LiveUpdate {
    pub fn resync() -> LiveUpdate {
        LiveUpdate {
            kind: LIVE_RESYNC.to_string(),
            id: String::new(),
        }
    }
}

/// Every kind a live update may have.
pub const LIVE_KINDS: [&str; 4] = [
    LIVE_TASK_UPDATED,
    LIVE_TASK_PR_UPDATED,
    LIVE_RUN_UPDATED,
    LIVE_SESSION_UPDATED,
];

/// The longest workspace or resource id a shared update may name (ids are
/// UUIDs; the margin is for ids made elsewhere).
const MAX_SHARED_ID: usize = 128;

/// A live update as one replica sends it to the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedLiveUpdate {
    pub workspace_id: String,
    #[serde(flatten)]
    pub update: LiveUpdate,
}

impl SharedLiveUpdate {
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads an update another replica sent, or `None` for anything else: a
    /// kind outside [`LIVE_KINDS`], or an id that is empty, too long or holds
    /// a control character (a line break would end a server-sent event early).
    pub fn decode(body: &[u8]) -> Option<SharedLiveUpdate> {
        let shared: SharedLiveUpdate = serde_json::from_slice(body).ok()?;
        let id_ok = |s: &str| !s.is_empty() && s.len() <= MAX_SHARED_ID && !s.chars().any(char::is_control);
        (LIVE_KINDS.contains(&shared.update.kind.as_str()) && id_ok(&shared.workspace_id) && id_ok(&shared.update.id))
            .then_some(shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(kind: &str, ws: &str, id: &str) -> SharedLiveUpdate {
        SharedLiveUpdate {
            workspace_id: ws.into(),
            update: LiveUpdate {
                kind: kind.into(),
                id: id.into(),
            },
        }
    }

    #[test]
    fn every_kind_of_update_crosses_to_another_replica_unchanged() {
        for kind in LIVE_KINDS {
            let sent = shared(kind, "ws-1", "task-1");
            assert_eq!(SharedLiveUpdate::decode(&sent.encode()), Some(sent));
        }
    }

    #[test]
    fn a_shared_update_is_flat_json_naming_its_workspace() {
        let body = shared(LIVE_TASK_UPDATED, "w", "t").encode();
        let value: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(
            value,
            serde_json::json!({"workspace_id": "w", "kind": "task.updated", "id": "t"})
        );
    }

    #[test]
    fn an_unknown_kind_or_unsafe_id_from_the_bus_is_dropped() {
        let long = "x".repeat(MAX_SHARED_ID + 1);
        for bad in [
            shared("task.deleted", "w", "t"),
            // A replica resyncs its own browsers; another cannot make it.
            shared(LIVE_RESYNC, "w", "t"),
            shared(LIVE_TASK_UPDATED, "", "t"),
            shared(LIVE_TASK_UPDATED, "w", ""),
            shared(LIVE_TASK_UPDATED, "w", "t\nevent: resync"),
            shared(LIVE_TASK_UPDATED, "w\r", "t"),
            shared(LIVE_TASK_UPDATED, &long, "t"),
            shared(LIVE_TASK_UPDATED, "w", &long),
        ] {
            assert_eq!(SharedLiveUpdate::decode(&bad.encode()), None, "{bad:?}");
        }
        for junk in [&b""[..], b"null", b"{}", b"{\"workspace_id\":\"w\"}", b"\xff\xfe"] {
            assert_eq!(SharedLiveUpdate::decode(junk), None);
        }
    }
}
