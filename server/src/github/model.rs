//! GitHub's REST shapes, the fields Kandev reads. Unknown fields are ignored
//! and absent ones default, as GitHub adds fields over time.

use kandev_core::checks::{Check, ListedRun, Requirement, current_runs};
use serde::{Deserialize, Deserializer, Serialize};

/// A field GitHub documents as nullable (a deleted account's `user`, a check
/// run's `html_url`, a deleted fork's `repo`): `null` reads as empty, so one
/// such item never makes a whole list unreadable.
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct User {
    #[serde(default, deserialize_with = "nullable")]
    pub login: String,
}

/// A repository as a PR's head or base names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoRef {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub full_name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitRef {
    #[serde(rename = "ref", default, deserialize_with = "nullable")]
    pub branch: String,
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
    /// `owner:branch`; a fork's head names the fork's owner.
    #[serde(default, deserialize_with = "nullable")]
    pub label: String,
    /// `None` when the head's repository (a fork) was deleted.
    #[serde(default)]
    pub repo: Option<RepoRef>,
}

impl GitRef {
    /// The head's repository as `owner/name`, if GitHub still knows it.
    pub fn repo_full_name(&self) -> Option<&str> {
        self.repo
            .as_ref()
            .map(|r| r.full_name.as_str())
            .filter(|f| f.contains('/'))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Label {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
}

/// `GET /repos/{owner}/{repo}/pulls/{number}`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: i64,
    /// The GraphQL id (mutations such as enqueuing name the PR by it).
    #[serde(default, deserialize_with = "nullable")]
    pub node_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    #[serde(default, deserialize_with = "nullable")]
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub html_url: String,
    #[serde(default, deserialize_with = "nullable")]
    pub user: User,
    #[serde(default, deserialize_with = "nullable")]
    pub head: GitRef,
    #[serde(default, deserialize_with = "nullable")]
    pub base: GitRef,
    #[serde(default, deserialize_with = "nullable")]
    pub draft: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub merged: bool,
    #[serde(default)]
    pub merged_at: Option<String>,
    #[serde(default)]
    pub closed_at: Option<String>,
    /// Compared with a delivery's, to tell a read that lags it.
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub mergeable: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    pub mergeable_state: String,
    /// "Allow edits from maintainers" (`None`: not said, taken as allowed).
    #[serde(default)]
    pub maintainer_can_modify: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    pub additions: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub deletions: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub requested_reviewers: Vec<User>,
    #[serde(default, deserialize_with = "nullable")]
    pub labels: Vec<Label>,
    /// Review comments on the diff: none means no review threads to count.
    #[serde(default, deserialize_with = "nullable")]
    pub review_comments: i64,
}

/// `GET /repos/{owner}/{repo}/compare/{base}...{head}`: the files, and the
/// merge base's tree (a diff the files cannot state is read from trees).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Left out when GitHub could not compute the diff.
    #[serde(default)]
    pub files: Option<Vec<DiffEntry>>,
    #[serde(default, deserialize_with = "nullable")]
    pub merge_base_commit: CommitRef,
}

/// A commit as compare names it: its tree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitRef {
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
    #[serde(default, deserialize_with = "nullable")]
    pub commit: CommitTree,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitTree {
    #[serde(default, deserialize_with = "nullable")]
    pub tree: ObjectRef,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectRef {
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
}

/// `GET /repos/{owner}/{repo}/git/trees/{sha}?recursive=1`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitTree {
    #[serde(default, deserialize_with = "nullable")]
    pub tree: Vec<GitTreeEntry>,
    #[serde(default, deserialize_with = "nullable")]
    pub truncated: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitTreeEntry {
    #[serde(default, deserialize_with = "nullable")]
    pub path: String,
    #[serde(default, deserialize_with = "nullable")]
    pub mode: String,
    #[serde(default, rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
}

impl GitTree {
    pub fn core(&self) -> kandev_core::merger::Tree {
        kandev_core::merger::Tree {
            entries: self
                .tree
                .iter()
                .map(|e| kandev_core::merger::TreeEntry {
                    path: e.path.clone(),
                    mode: e.mode.clone(),
                    kind: e.kind.clone(),
                    sha: e.sha.clone(),
                })
                .collect(),
            truncated: self.truncated,
        }
    }
}

/// One file of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiffEntry {
    #[serde(default, deserialize_with = "nullable")]
    pub filename: String,
    #[serde(default, deserialize_with = "nullable")]
    pub previous_filename: String,
    #[serde(default, deserialize_with = "nullable")]
    pub status: String,
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
}

impl DiffEntry {
    pub fn core(&self) -> kandev_core::merger::DiffFile {
        kandev_core::merger::DiffFile {
            filename: self.filename.clone(),
            previous_filename: self.previous_filename.clone(),
            status: self.status.clone(),
            sha: self.sha.clone(),
        }
    }
}

/// `GET /repos/{owner}/{repo}/pulls/{number}/reviews`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Review {
    #[serde(default, deserialize_with = "nullable")]
    pub id: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub user: User,
    /// `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, `DISMISSED` or `PENDING`.
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckRun {
    #[serde(default, deserialize_with = "nullable")]
    pub id: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// `queued`, `in_progress` or `completed`.
    #[serde(default, deserialize_with = "nullable")]
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub html_url: String,
    /// The app that reported it: two apps' runs of one name are two checks.
    #[serde(default, deserialize_with = "nullable")]
    pub app: AppRef,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppRef {
    #[serde(default, deserialize_with = "nullable")]
    pub id: i64,
}

impl CheckRuns {
    /// The checks that count: GitHub lists a re-run's superseded runs too.
    pub fn current(&self) -> Vec<Check> {
        current_runs(self.check_runs.iter().map(|r| ListedRun {
            id: r.id,
            app: r.app.id,
            name: &r.name,
            status: &r.status,
            conclusion: r.conclusion.as_deref(),
            url: &r.html_url,
        }))
    }
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/check-runs`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckRuns {
    #[serde(default, deserialize_with = "nullable")]
    pub total_count: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub check_runs: Vec<CheckRun>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitStatus {
    #[serde(default, deserialize_with = "nullable")]
    pub context: String,
    /// `pending`, `success`, `failure` or `error`.
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    #[serde(default)]
    pub target_url: Option<String>,
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/status`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CombinedStatus {
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
    #[serde(default, deserialize_with = "nullable")]
    pub total_count: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub statuses: Vec<CommitStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequiredCheck {
    #[serde(default, deserialize_with = "nullable")]
    pub context: String,
    /// Classic protection's pin to one GitHub App (null or -1: any source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<i64>,
    /// A ruleset's pin to one GitHub App (absent: any source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integration_id: Option<i64>,
}

impl RequiredCheck {
    pub fn requirement(&self) -> Requirement {
        Requirement::new(&self.context, self.app_id.or(self.integration_id))
    }
}

/// `GET /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequiredStatusChecks {
    #[serde(default, deserialize_with = "nullable")]
    pub strict: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub contexts: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub checks: Vec<RequiredCheck>,
}

impl RequiredStatusChecks {
    /// The required checks: `checks` with their app pins, then any name only
    /// the older `contexts` field lists (GitHub lists each in both).
    pub fn requirements(&self) -> Vec<Requirement> {
        let mut all: Vec<Requirement> = vec![];
        for c in self.checks.iter().map(RequiredCheck::requirement) {
            if !all.contains(&c) {
                all.push(c);
            }
        }
        for name in &self.contexts {
            if !self.checks.iter().any(|c| &c.context == name) && !all.iter().any(|r| &r.name == name) {
                all.push(Requirement::from(name.as_str()));
            }
        }
        all
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
    #[serde(default, deserialize_with = "nullable")]
    pub merged: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub sha: String,
    #[serde(default, deserialize_with = "nullable")]
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssuePullRequestLink {
    #[serde(default, deserialize_with = "nullable")]
    pub html_url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssueItem {
    pub number: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub title: String,
    #[serde(default, deserialize_with = "nullable")]
    pub html_url: String,
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    #[serde(default, deserialize_with = "nullable")]
    pub user: User,
    /// `https://api.github.com/repos/{owner}/{repo}`
    #[serde(default, deserialize_with = "nullable")]
    pub repository_url: String,
    #[serde(default)]
    pub pull_request: Option<IssuePullRequestLink>,
}

/// `GET /search/issues`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssueSearch {
    #[serde(default, deserialize_with = "nullable")]
    pub total_count: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub incomplete_results: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub items: Vec<IssueItem>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoItem {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub full_name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub owner: User,
    #[serde(default, deserialize_with = "nullable")]
    pub private: bool,
}

/// `GET /search/repositories`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoSearchResult {
    #[serde(default, deserialize_with = "nullable")]
    pub total_count: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub items: Vec<RepoItem>,
}

/// `GET /user/orgs` items.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrgItem {
    #[serde(default, deserialize_with = "nullable")]
    pub login: String,
}

/// One active rule of `GET /repos/{owner}/{repo}/rules/branches/{branch}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub parameters: RuleParameters,
}

/// The parameters Kandev reads, of the rule kinds it heeds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleParameters {
    #[serde(default, deserialize_with = "nullable")]
    pub required_status_checks: Vec<RequiredCheck>,
    #[serde(default, deserialize_with = "nullable")]
    pub required_approving_review_count: u32,
    #[serde(default, deserialize_with = "nullable")]
    pub required_review_thread_resolution: bool,
    /// A `pull_request` rule's merge methods (`None`: any).
    #[serde(default)]
    pub allowed_merge_methods: Option<Vec<String>>,
    #[serde(default, deserialize_with = "nullable")]
    pub require_last_push_approval: bool,
    /// A `required_deployments` rule's environments.
    #[serde(default, deserialize_with = "nullable")]
    pub required_deployment_environments: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub require_code_owner_review: bool,
}

impl Rule {
    pub fn core(&self) -> kandev_core::merger::Rule {
        kandev_core::merger::Rule {
            kind: self.kind.clone(),
            required_checks: self
                .parameters
                .required_status_checks
                .iter()
                .map(RequiredCheck::requirement)
                .collect(),
            required_approvals: self.parameters.required_approving_review_count,
            thread_resolution: self.parameters.required_review_thread_resolution,
            allowed_merge_methods: self.parameters.allowed_merge_methods.clone(),
            last_push_approval: self.parameters.require_last_push_approval,
            required_deployments: self.parameters.required_deployment_environments.clone(),
            code_owner_review: self.parameters.require_code_owner_review,
        }
    }
}

/// A GraphQL answer: `data`, or `errors` (GitHub answers 200 for both).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GraphqlAnswer<T> {
    pub data: Option<T>,
    #[serde(default, deserialize_with = "nullable")]
    pub errors: Vec<GraphqlError>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct GraphqlError {
    #[serde(default, deserialize_with = "nullable")]
    pub message: String,
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub kind: String,
}

/// The merge gate's GraphQL read of one PR.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GateData {
    pub repository: Option<GateRepository>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct GateRepository {
    #[serde(rename = "pullRequest")]
    pub pull_request: Option<GatePull>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct GatePull {
    #[serde(default, deserialize_with = "nullable")]
    pub id: String,
    /// `OPEN`, `CLOSED` or `MERGED`.
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    #[serde(default, deserialize_with = "nullable")]
    pub merged: bool,
    #[serde(rename = "reviewDecision", default)]
    pub review_decision: Option<String>,
    #[serde(rename = "reviewThreads", default, deserialize_with = "nullable")]
    pub review_threads: Threads,
    #[serde(rename = "mergeQueueEntry", default)]
    pub merge_queue_entry: Option<QueueEntry>,
    #[serde(rename = "timelineItems", default, deserialize_with = "nullable")]
    pub timeline_items: Timeline,
    #[serde(rename = "reviewRequests", default, deserialize_with = "nullable")]
    pub review_requests: ReviewRequests,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ReviewRequests {
    #[serde(default, deserialize_with = "nullable")]
    pub nodes: Vec<ReviewRequest>,
}

/// A review asked of someone; `asCodeOwner` when CODEOWNERS asked it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ReviewRequest {
    #[serde(rename = "asCodeOwner", default, deserialize_with = "nullable")]
    pub as_code_owner: bool,
    #[serde(rename = "requestedReviewer", default, deserialize_with = "nullable")]
    pub requested_reviewer: Reviewer,
}

/// A user (`login`) or a team (`combinedSlug`, `org/team`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Reviewer {
    #[serde(default, deserialize_with = "nullable")]
    pub login: String,
    #[serde(rename = "combinedSlug", default, deserialize_with = "nullable")]
    pub combined_slug: String,
}

impl GatePull {
    /// The code owners a review is still asked of, as `@login` or `@org/team`.
    pub fn code_owners_asked(&self) -> Vec<String> {
        self.review_requests
            .nodes
            .iter()
            .filter(|r| r.as_code_owner)
            .map(|r| &r.requested_reviewer)
            .map(|who| {
                if who.login.is_empty() {
                    &who.combined_slug
                } else {
                    &who.login
                }
            })
            .filter(|name| !name.is_empty())
            .map(|name| format!("@{name}"))
            .collect()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Threads {
    #[serde(rename = "totalCount", default, deserialize_with = "nullable")]
    pub total_count: u32,
    #[serde(default, deserialize_with = "nullable")]
    pub nodes: Vec<Thread>,
    #[serde(rename = "pageInfo", default, deserialize_with = "nullable")]
    pub page_info: PageInfo,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Thread {
    #[serde(rename = "isResolved", default, deserialize_with = "nullable")]
    pub is_resolved: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PageInfo {
    #[serde(rename = "hasNextPage", default, deserialize_with = "nullable")]
    pub has_next_page: bool,
    #[serde(rename = "endCursor", default)]
    pub end_cursor: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct QueueEntry {
    #[serde(default, deserialize_with = "nullable")]
    pub id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub position: u32,
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Timeline {
    #[serde(default, deserialize_with = "nullable")]
    pub nodes: Vec<TimelineItem>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct TimelineItem {
    #[serde(default)]
    pub reason: Option<String>,
}

/// The payload of `enqueuePullRequest` / `dequeuePullRequest`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct QueueMutation {
    #[serde(rename = "enqueuePullRequest", default)]
    pub enqueue: Option<QueuePayload>,
    #[serde(rename = "dequeuePullRequest", default)]
    pub dequeue: Option<QueuePayload>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct QueuePayload {
    #[serde(rename = "mergeQueueEntry", default)]
    pub merge_queue_entry: Option<QueueEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_owners_asked_are_users_and_teams_that_codeowners_asked() {
        let body = r#"{"reviewRequests": {"nodes": [
            {"asCodeOwner": true, "requestedReviewer": {"__typename": "User", "login": "lead"}},
            {"asCodeOwner": true, "requestedReviewer": {"__typename": "Team", "combinedSlug": "acme/core"}},
            {"asCodeOwner": false, "requestedReviewer": {"__typename": "User", "login": "friend"}},
            {"asCodeOwner": true, "requestedReviewer": null}]}}"#;
        let gate: GatePull = serde_json::from_str(body).expect("decodes");
        assert_eq!(gate.code_owners_asked(), ["@lead", "@acme/core"]);
    }

    #[test]
    fn a_review_by_a_deleted_account_decodes_with_the_rest_of_the_list() {
        let body = r#"[{"id":1,"user":null,"state":"APPROVED"},
                       {"id":2,"user":{"login":"octo"},"state":"COMMENTED"}]"#;
        let reviews: Vec<Review> = serde_json::from_str(body).expect("decodes");
        assert_eq!(reviews.len(), 2);
        assert_eq!(reviews[0].user.login, "");
        assert_eq!(reviews[1].user.login, "octo");
    }

    #[test]
    fn a_check_run_without_html_url_decodes_with_the_rest_of_the_list() {
        let body = r#"{"total_count":2,"check_runs":[
            {"id":1,"name":"build","status":"completed","conclusion":"success","html_url":null},
            {"id":2,"name":"lint","status":"queued","conclusion":null}]}"#;
        let runs: CheckRuns = serde_json::from_str(body).expect("decodes");
        assert_eq!(runs.check_runs.len(), 2);
        assert_eq!(runs.check_runs[0].html_url, "");
        assert_eq!(runs.check_runs[1].conclusion, None);
    }

    #[test]
    fn a_fork_head_names_its_own_repository_and_a_deleted_fork_names_none() {
        let fork = r#"{"number":5,"head":{"ref":"fix","sha":"abc","label":"alice:fix",
            "repo":{"name":"api","full_name":"alice/api"}},"base":{"ref":"main","sha":"def"}}"#;
        let pr: PullRequest = serde_json::from_str(fork).expect("decodes");
        assert_eq!(pr.head.repo_full_name(), Some("alice/api"));
        assert_eq!(pr.head.label, "alice:fix");
        let gone = r#"{"number":5,"user":null,"head":{"ref":"fix","sha":"abc","repo":null}}"#;
        let pr: PullRequest = serde_json::from_str(gone).expect("decodes");
        assert_eq!(pr.head.repo_full_name(), None);
    }
}

/// Classic branch protection's rule for reviews.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RequiredReviews {
    #[serde(default, deserialize_with = "nullable")]
    pub required_approving_review_count: u32,
    #[serde(default, deserialize_with = "nullable")]
    pub require_last_push_approval: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub require_code_owner_reviews: bool,
}

/// `GET /repos/{owner}/{repo}/deployments`: one deployment, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    #[serde(default, deserialize_with = "nullable")]
    pub id: i64,
}

/// `GET …/deployments/{id}/statuses`: one status, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentStatus {
    /// `success`, `failure`, `error`, `inactive`, `in_progress`, `queued`, `pending`.
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
}
