use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gate::{Gate, Outcome};
use crate::run_status::RunStatus;
use crate::trigger::TriggerType;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Trigger {
    pub id: String,
    pub automation_id: String,
    #[serde(rename = "type")]
    pub trigger_type: TriggerType,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub config: Value,
    pub enabled: bool,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub last_evaluated_at: Option<DateTime<Utc>>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Automation {
    pub id: String,
    pub workspace_id: String,
    pub name: String,
    pub description: String,
    pub prompt: String,
    pub task_title_template: String,
    pub agent_profile_id: String,
    pub executor_profile_id: String,
    pub repository_ids: Vec<String>,
    /// "None — no repository": runs get no checkout (`github_pr` excepted).
    #[serde(default)]
    pub no_repository: bool,
    pub enabled: bool,
    pub max_concurrent_runs: i64,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub last_triggered_at: Option<DateTime<Utc>>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub updated_at: DateTime<Utc>,
    pub triggers: Vec<Trigger>,
}

/// The create response: the automation plus its webhook secret, shown only here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedAutomation {
    #[serde(flatten)]
    pub automation: Automation,
    pub webhook_secret: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewTrigger {
    #[serde(rename = "type")]
    pub trigger_type: TriggerType,
    #[serde(default = "empty_object")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub config: Value,
    #[serde(default)]
    pub enabled: Option<bool>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateAutomation {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub task_title_template: Option<String>,
    #[serde(default)]
    pub agent_profile_id: Option<String>,
    #[serde(default)]
    pub executor_profile_id: Option<String>,
    #[serde(default)]
    pub repository_ids: Option<Vec<String>>,
    /// `true` with a non-empty `repository_ids` is refused.
    #[serde(default)]
    pub no_repository: Option<bool>,
    #[serde(default)]
    pub max_concurrent_runs: Option<i64>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "crate::lenient::opt_objects")]
    pub triggers: Option<Vec<NewTrigger>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchAutomation {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub task_title_template: Option<String>,
    #[serde(default)]
    pub agent_profile_id: Option<String>,
    #[serde(default)]
    pub executor_profile_id: Option<String>,
    /// Absent means unchanged; `[]` clears. Listing some clears `no_repository`.
    #[serde(default)]
    pub repository_ids: Option<Vec<String>>,
    /// `true` clears `repository_ids`; with a non-empty list it is refused.
    #[serde(default)]
    pub no_repository: Option<bool>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub max_concurrent_runs: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchTrigger {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub config: Option<Value>,
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `POST /automations/{id}/run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ManualRunResult {
    pub triggered: bool,
    pub skipped: bool,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Run {
    pub id: String,
    pub automation_id: String,
    pub trigger_id: String,
    pub trigger_type: String,
    /// Blank when the task is gone or the row was born terminal.
    pub task_id: String,
    pub status: RunStatus,
    pub dedup_key: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub trigger_data: Value,
    pub error_message: String,
    pub summary: String,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automation_name: Option<String>,
    /// Set in the cross-workspace feed, where a run's workspace is not implied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

/// One upcoming scheduled run on the automations home's agenda.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgendaEntry {
    pub automation_id: String,
    pub automation_name: String,
    pub workspace_id: String,
    pub trigger_id: String,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub at: DateTime<Utc>,
}

/// A schedule's next runs, computed by the scheduler's own rule. A schedule
/// the scheduler would refuse is an answer too: no runs, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SchedulePreview {
    #[serde(deserialize_with = "crate::api::rfc3339::de_vec")]
    pub runs: Vec<DateTime<Utc>>,
    /// Why the schedule would be refused at save; absent when it is valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One recent evaluation of a trigger: "why didn't it fire?".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Evaluation {
    pub trigger_id: String,
    pub trigger_type: String,
    pub event_subject: String,
    pub summary: String,
    pub outcome: Outcome,
    pub gate: Option<Gate>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookSecret {
    pub webhook_secret: String,
}

/// The inbound webhook's answer: 202 triggered, or 200 skipped with a reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookResult {
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
