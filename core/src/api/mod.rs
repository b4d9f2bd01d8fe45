//! Request and response types of the HTTP API (v1), shared by server and web.

mod access;
mod agents;
mod automations;
pub mod first_reads;
mod github;
mod live;
mod notifications;
pub mod rfc3339;
mod tasks;
mod workspaces;

pub use access::*;
pub use agents::*;
pub use automations::*;
pub use github::*;
pub use live::*;
pub use notifications::*;
pub use tasks::*;
pub use workspaces::*;

use serde::{Deserialize, Serialize};

pub use crate::registry::{Placeholder, TriggerTypeInfo};
pub use crate::task_pr::TaskPr;

/// The error body: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    pub error: ErrorBody,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        ApiError {
            error: ErrorBody {
                code: code.to_string(),
                message: message.into(),
            },
        }
    }
}

/// Every error `code` the API answers with: the server maps its errors onto
/// these, and the browser has a message for each in every language.
pub const ERROR_CODES: [&str; 15] = [
    "bad_request",
    "unauthenticated",
    "forbidden",
    "csrf",
    "misdirected_request",
    "too_many_attempts",
    "too_many_streams",
    "not_found",
    "method_not_allowed",
    "conflict",
    "payload_too_large",
    "invalid",
    "upstream_error",
    "unavailable",
    "internal",
];

#[cfg(test)]
mod tests;
