//! GitHub's REST shapes, the fields Kandev reads. Unknown fields are ignored
//! and absent ones default, as GitHub adds fields over time.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct User {
    #[serde(default)]
    pub login: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitRef {
    #[serde(rename = "ref", default)]
    pub branch: String,
    #[serde(default)]
    pub sha: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Label {
    #[serde(default)]
    pub name: String,
}

/// `GET /repos/{owner}/{repo}/pulls/{number}`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: i64,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: String,
    #[serde(default)]
    pub user: User,
    #[serde(default)]
    pub head: GitRef,
    #[serde(default)]
    pub base: GitRef,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub merged: bool,
    #[serde(default)]
    pub merged_at: Option<String>,
    #[serde(default)]
    pub closed_at: Option<String>,
    #[serde(default)]
    pub mergeable: Option<bool>,
    #[serde(default)]
    pub mergeable_state: String,
    #[serde(default)]
    pub additions: i64,
    #[serde(default)]
    pub deletions: i64,
    #[serde(default)]
    pub requested_reviewers: Vec<User>,
    #[serde(default)]
    pub labels: Vec<Label>,
}

/// `GET /repos/{owner}/{repo}/pulls/{number}/reviews`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Review {
    #[serde(default)]
    pub id: i64,
    #[serde(default)]
    pub user: User,
    /// `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, `DISMISSED` or `PENDING`.
    #[serde(default)]
    pub state: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckRun {
    #[serde(default)]
    pub id: i64,
    #[serde(default)]
    pub name: String,
    /// `queued`, `in_progress` or `completed`.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub html_url: String,
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/check-runs`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckRuns {
    #[serde(default)]
    pub total_count: i64,
    #[serde(default)]
    pub check_runs: Vec<CheckRun>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitStatus {
    #[serde(default)]
    pub context: String,
    /// `pending`, `success`, `failure` or `error`.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub target_url: Option<String>,
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/status`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CombinedStatus {
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub sha: String,
    #[serde(default)]
    pub total_count: i64,
    #[serde(default)]
    pub statuses: Vec<CommitStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequiredCheck {
    #[serde(default)]
    pub context: String,
}

/// `GET /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequiredStatusChecks {
    #[serde(default)]
    pub strict: bool,
    #[serde(default)]
    pub contexts: Vec<String>,
    #[serde(default)]
    pub checks: Vec<RequiredCheck>,
}

impl RequiredStatusChecks {
    /// The required check names, from either field.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.contexts.clone();
        for c in &self.checks {
            if !names.contains(&c.context) {
                names.push(c.context.clone());
            }
        }
        names
    }
}

/// `PUT /repos/{owner}/{repo}/pulls/{number}/merge`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeRequest {
    pub merge_method: String,
    pub sha: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeResponse {
    #[serde(default)]
    pub merged: bool,
    #[serde(default)]
    pub sha: String,
    #[serde(default)]
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssuePullRequestLink {
    #[serde(default)]
    pub html_url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssueItem {
    pub number: i64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub html_url: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub user: User,
    /// `https://api.github.com/repos/{owner}/{repo}`
    #[serde(default)]
    pub repository_url: String,
    #[serde(default)]
    pub pull_request: Option<IssuePullRequestLink>,
}

/// `GET /search/issues`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssueSearch {
    #[serde(default)]
    pub total_count: i64,
    #[serde(default)]
    pub incomplete_results: bool,
    #[serde(default)]
    pub items: Vec<IssueItem>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoItem {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub full_name: String,
    #[serde(default)]
    pub owner: User,
    #[serde(default)]
    pub private: bool,
}

/// `GET /search/repositories`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoSearchResult {
    #[serde(default)]
    pub total_count: i64,
    #[serde(default)]
    pub items: Vec<RepoItem>,
}

/// `GET /user/orgs` items.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrgItem {
    #[serde(default)]
    pub login: String,
}
