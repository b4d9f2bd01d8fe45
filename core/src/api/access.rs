use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::access::Role;

/// `POST /auth/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
}

/// A workspace as the caller sees it, with the caller's role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MyWorkspace {
    pub id: String,
    pub name: String,
    pub role: Role,
}

/// `GET /me`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    pub id: String,
    pub username: String,
    pub admin: bool,
    pub workspaces: Vec<MyWorkspace>,
}

impl Me {
    /// The caller's role in a workspace, if any (admins act as owners everywhere).
    pub fn role_in(&self, workspace_id: &str) -> Option<Role> {
        self.workspaces.iter().find(|w| w.id == workspace_id).map(|w| w.role)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateToken {
    pub name: String,
}

/// The create answer: the only time the token itself is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedToken {
    pub id: String,
    pub name: String,
    pub token: String,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateUser {
    pub username: String,
    pub password: String,
    #[serde(default)]
    pub admin: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct User {
    pub id: String,
    pub username: String,
    pub admin: bool,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Member {
    pub user_id: String,
    pub username: String,
    pub role: Role,
}

/// `PUT /workspaces/{ws}/members/{user_id}`: adds the user or changes the role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PutMember {
    pub role: Role,
}

/// Who did something to a task: recorded on every task event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Actor {
    User { id: String, username: String },
    Automation { id: String },
    Merger,
    System,
}

impl Actor {
    /// The admin token's actor: a person with the token, named for it.
    pub fn admin_token() -> Actor {
        Actor::User {
            id: ADMIN_TOKEN_ACTOR_ID.into(),
            username: ADMIN_TOKEN_ACTOR_ID.into(),
        }
    }

    /// A short name for the task page ("alice", "automation", "merger", "system").
    pub fn display_name(&self) -> &str {
        match self {
            Actor::User { username, .. } => username,
            Actor::Automation { .. } => "automation",
            Actor::Merger => "merger",
            Actor::System => "system",
        }
    }
}

/// The id and name events record for `KANDEV_ADMIN_TOKEN`.
pub const ADMIN_TOKEN_ACTOR_ID: &str = "admin-token";

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "kandev_session";
/// The prefix of every API token.
pub const TOKEN_PREFIX: &str = "kdv_";
