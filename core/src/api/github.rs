use serde::{Deserialize, Serialize};

use crate::trigger::config::RepoFilter;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Org {
    pub login: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Orgs {
    pub orgs: Vec<Org>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RepoHit {
    pub owner: String,
    pub name: String,
    pub private: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RepoSearch {
    pub repos: Vec<RepoHit>,
}

/// Which repositories a workspace's selectors offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RepoScopeMode {
    #[default]
    All,
    Orgs,
    Repos,
}

/// A workspace's GitHub settings: which repositories selectors offer, and how
/// the merger merges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GithubWorkspaceSettings {
    #[serde(default)]
    pub repo_scope_mode: RepoScopeMode,
    #[serde(default)]
    pub repo_scope_orgs: Vec<String>,
    #[serde(default, deserialize_with = "crate::lenient::objects")]
    pub repo_scope_repos: Vec<RepoFilter>,
    /// `squash` (default), `merge` or `rebase`.
    #[serde(default = "default_merge_method")]
    pub merge_method: String,
    /// Delete the head branch after merging (default on).
    #[serde(default = "default_true")]
    pub delete_branch: bool,
    /// Minutes a merge waits for CI and reviews in this workspace (1–1440);
    /// `null`: the server's default.
    #[serde(default, deserialize_with = "crate::lenient::opt_whole")]
    pub ci_wait_timeout_minutes: Option<i64>,
}

fn default_merge_method() -> String {
    "squash".into()
}

fn default_true() -> bool {
    true
}

impl Default for GithubWorkspaceSettings {
    fn default() -> Self {
        GithubWorkspaceSettings {
            repo_scope_mode: RepoScopeMode::All,
            repo_scope_orgs: vec![],
            repo_scope_repos: vec![],
            merge_method: default_merge_method(),
            delete_branch: true,
            ci_wait_timeout_minutes: None,
        }
    }
}

/// Merge methods GitHub accepts.
pub const MERGE_METHODS: [&str; 3] = ["squash", "merge", "rebase"];

impl GithubWorkspaceSettings {
    /// Whether an organisation is offered under this scope.
    pub fn allows_org(&self, login: &str) -> bool {
        match self.repo_scope_mode {
            RepoScopeMode::All => true,
            RepoScopeMode::Orgs => self.repo_scope_orgs.iter().any(|o| o.eq_ignore_ascii_case(login)),
            RepoScopeMode::Repos => self
                .repo_scope_repos
                .iter()
                .any(|r| r.owner.eq_ignore_ascii_case(login)),
        }
    }

    /// Whether a repository is offered under this scope.
    pub fn allows_repo(&self, owner: &str, name: &str) -> bool {
        match self.repo_scope_mode {
            RepoScopeMode::All => true,
            RepoScopeMode::Orgs => self.allows_org(owner),
            RepoScopeMode::Repos => self
                .repo_scope_repos
                .iter()
                .any(|r| r.owner.eq_ignore_ascii_case(owner) && r.name.eq_ignore_ascii_case(name)),
        }
    }

    /// Organisation badges render unless the scope is a repository list.
    pub fn shows_org_badges(&self) -> bool {
        self.repo_scope_mode != RepoScopeMode::Repos
    }
}
