//! Notification targets and their deliveries (`/workspaces/{ws}/notification-…`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::notify::TargetKind;

/// Where a workspace sends notifications. The secret is never returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationTarget {
    pub id: String,
    pub workspace_id: String,
    pub kind: TargetKind,
    pub url: String,
    /// A subset of `merge_triggered`, `merged`, `merge_blocked`, `automation_run.failed`.
    pub events: Vec<String>,
    /// Webhook targets sign their bodies when a secret is set.
    pub has_secret: bool,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateNotificationTarget {
    pub kind: TargetKind,
    pub url: String,
    pub events: Vec<String>,
    /// HMAC-SHA256 key for `X-Kandev-Signature-256` (webhook targets).
    #[serde(default)]
    pub secret: Option<String>,
}

/// One attempt to deliver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryAttempt {
    pub attempt: i64,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status; `null` when no answer came.
    pub status_code: Option<i64>,
    pub error: String,
}

/// One event for one target, with every attempt so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationDelivery {
    /// Also the `X-Kandev-Delivery` header and the body's `delivery_id`.
    pub id: String,
    pub target_id: String,
    pub event: String,
    pub task_id: String,
    /// `pending`, `delivered` or `failed` (every attempt spent).
    pub status: String,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
    pub attempts: Vec<DeliveryAttempt>,
}

pub const DELIVERY_PENDING: &str = "pending";
pub const DELIVERY_DELIVERED: &str = "delivered";
pub const DELIVERY_FAILED: &str = "failed";
