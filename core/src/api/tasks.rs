use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::board::{PrRef, TaskStatus};

/// Where a task came from. Run tasks (`automation_run`) are hidden from the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    User,
    AutomationRun,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::User => "user",
            Origin::AutomationRun => "automation_run",
        }
    }

    pub fn parse(s: &str) -> Option<Origin> {
        match s {
            "user" => Some(Origin::User),
            "automation_run" => Some(Origin::AutomationRun),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Task {
    pub id: String,
    pub workspace_id: String,
    pub title: String,
    pub description: String,
    pub status: TaskStatus,
    pub origin: Origin,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub archived_at: Option<DateTime<Utc>>,
    pub repository_id: Option<String>,
    pub base_branch: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: Value,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub updated_at: DateTime<Utc>,
}

/// Metadata keys run tasks carry.
pub const META_AUTOMATION_ID: &str = "automation_id";
pub const META_AUTOMATION_NAME: &str = "automation_name";
pub const META_TRIGGER_ID: &str = "trigger_id";
pub const META_TRIGGER_TYPE: &str = "trigger_type";
pub const META_AGENT_PROFILE_ID: &str = "agent_profile_id";
pub const META_EXECUTOR_PROFILE_ID: &str = "executor_profile_id";
/// The validated event target of a `github_pr_merged` run: the only task its
/// agent may archive.
pub const META_TARGET_TASK_ID: &str = "automation_target_task_id";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTask {
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub status: Option<TaskStatus>,
    #[serde(default)]
    pub repository_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchTask {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub status: Option<TaskStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ArchiveResult {
    pub success: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub already_archived: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Comment {
    pub id: String,
    pub task_id: String,
    pub body: String,
    pub author: String,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateComment {
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskEvent {
    pub id: String,
    pub task_id: String,
    pub kind: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub payload: Value,
    /// Who caused it.
    pub actor: super::Actor,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

/// Task event kinds.
pub const EVENT_CREATED: &str = "created";
pub const EVENT_STATUS_CHANGED: &str = "status_changed";
pub const EVENT_REVIEW_REQUESTED: &str = "review_requested";
pub const EVENT_APPROVED: &str = "approved";
pub const EVENT_REJECTED: &str = "rejected";
pub const EVENT_MERGE_REQUESTED: &str = "merge_requested";
pub const EVENT_MERGE_CANCELLED: &str = "merge_cancelled";
pub const EVENT_MERGE_PROGRESS: &str = "merge_progress";
pub const EVENT_MERGED: &str = "merged";
pub const EVENT_COMPLETED: &str = "completed";
pub const EVENT_BLOCKED: &str = "blocked";
pub const EVENT_ARCHIVED: &str = "archived";
pub const EVENT_UNARCHIVED: &str = "unarchived";

/// `review_requested` payload: the PR bound as structured data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReviewHandoff {
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub pr: Option<PrRef>,
    #[serde(default)]
    pub pr_url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub pr_url: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApproveRequest {
    #[serde(default)]
    pub reason: Option<String>,
    /// The PR head the person reviewed (a full commit SHA): the merger then
    /// merges only that code, or a head with the very same diff.
    #[serde(default)]
    pub head_sha: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApproveResponse {
    /// `done` or `merge_triggered`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RejectRequest {
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Session {
    pub id: String,
    pub task_id: String,
    pub state: String,
    pub stop_reason: String,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub started_at: DateTime<Utc>,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub ended_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TranscriptMessage {
    /// `user`, `agent` or `system`.
    pub role: String,
    /// `message`, `thought`, `tool_call`, `tool_result` or `error`.
    pub kind: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub tool: Option<Value>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

/// `POST /tasks/{id}/prs`: a URL, or owner/repo/number.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LinkPrRequest {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub pr_number: Option<i64>,
}

/// A recent linked PR for the editor's live preview, with what the preview
/// needs to run the backend's gates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskPrPreview {
    #[serde(flatten)]
    pub pr: crate::task_pr::TaskPr,
    /// The task's current workspace (authoritative, unlike the row's).
    pub task_workspace_id: String,
    pub task_title: String,
    pub task_is_automation_run: bool,
}

impl TaskPrPreview {
    /// The task as the server resolved it, for the preview's gates 6–7.
    pub fn origin(&self) -> crate::merged::TaskOrigin {
        crate::merged::TaskOrigin {
            workspace_id: self.task_workspace_id.clone(),
            is_automation_run: self.task_is_automation_run,
        }
    }
}
