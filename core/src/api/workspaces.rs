use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Workspace {
    pub id: String,
    pub name: String,
    #[serde(deserialize_with = "crate::api::rfc3339::de")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspace {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Repository {
    pub id: String,
    pub workspace_id: String,
    pub provider: String,
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    pub local_path: String,
    /// Minutes a merge of this repository's PRs waits for CI and reviews
    /// (1–1440); `null`: the workspace's setting applies.
    #[serde(default)]
    pub ci_wait_timeout_minutes: Option<i64>,
}

/// `PATCH /workspaces/{ws}/repositories/{id}`: the settings a repository
/// carries. An absent field is left alone; `null` clears it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateRepository {
    #[serde(default, deserialize_with = "crate::lenient::patch_whole")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub ci_wait_timeout_minutes: Option<Option<i64>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateRepository {
    pub owner: String,
    pub name: String,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub local_path: Option<String>,
    #[serde(default, deserialize_with = "crate::lenient::opt_whole")]
    pub ci_wait_timeout_minutes: Option<i64>,
}
