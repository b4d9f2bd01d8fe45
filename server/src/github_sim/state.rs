//! The simulator's world: repositories, pull requests, reviews, check runs and
//! commit statuses, branch protection, the rate-limit budget and counters.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimCheckRun {
    pub id: i64,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub html_url: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimStatus {
    pub context: String,
    pub state: String,
    pub target_url: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimReview {
    pub id: i64,
    pub user: String,
    pub state: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimPr {
    pub number: i64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub head_ref: String,
    pub head_sha: String,
    pub base_ref: String,
    /// `open` or `closed`.
    pub state: String,
    pub merged: bool,
    pub merged_at: Option<DateTime<Utc>>,
    pub closed_at: Option<DateTime<Utc>>,
    pub merge_method: Option<String>,
    pub merge_commit_sha: Option<String>,
    pub draft: bool,
    /// The base branch moved on: update-branch brings the head up to date.
    pub behind: bool,
    /// Head and base conflict: update-branch and merge both fail.
    pub conflict: bool,
    /// GitHub's background mergeability: `None` while it is being computed.
    pub mergeable_known: bool,
    pub labels: Vec<String>,
    pub requested_reviewers: Vec<String>,
    pub additions: i64,
    pub deletions: i64,
    pub reviews: Vec<SimReview>,
    pub head_branch_deleted: bool,
    /// `owner/name` of the fork holding the head branch (`None`: this repository).
    pub head_repo: Option<String>,
    /// Merges accepted for this PR (a 5xx after a merge must not add a second).
    pub merge_count: i64,
    pub update_branch_count: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimRepo {
    pub owner: String,
    pub name: String,
    pub private: bool,
    pub default_branch: String,
    pub required_checks: Option<Vec<String>>,
    pub prs: BTreeMap<i64, SimPr>,
    pub check_runs: HashMap<String, Vec<SimCheckRun>>,
    pub statuses: HashMap<String, Vec<SimStatus>>,
}

/// Request counters, for tests and benchmarks.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counters {
    /// Every REST request (control calls excluded).
    pub requests: u64,
    /// Requests that spent rate limit (everything but 304s).
    pub rate_limited: u64,
    /// 304 Not Modified answers.
    pub not_modified: u64,
    pub merges: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Faults {
    /// Answer the next merge with a 502 after performing it.
    pub merge_error_after_merge: bool,
    /// The token was revoked: every request answers 401 "Bad credentials".
    pub revoked_token: bool,
    /// The next this many requests answer 502 (GitHub having a bad minute).
    pub server_errors: u32,
}

pub struct SimState {
    pub repos: HashMap<(String, String), SimRepo>,
    pub orgs: Vec<String>,
    pub counters: Counters,
    pub limit: i64,
    pub remaining: i64,
    pub reset: i64,
    pub faults: Faults,
    pub webhook: Option<(String, String)>,
    next_id: i64,
}

impl Default for SimState {
    fn default() -> Self {
        SimState {
            repos: HashMap::new(),
            orgs: vec![],
            counters: Counters::default(),
            limit: 5000,
            remaining: 5000,
            reset: Utc::now().timestamp() + 3600,
            faults: Faults::default(),
            webhook: None,
            next_id: 1000,
        }
    }
}

pub fn key(owner: &str, name: &str) -> (String, String) {
    (owner.to_lowercase(), name.to_lowercase())
}

fn ts(t: Option<DateTime<Utc>>) -> Value {
    t.map(|t| json!(t.to_rfc3339_opts(SecondsFormat::Secs, true)))
        .unwrap_or(Value::Null)
}

impl SimState {
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn new_sha(&mut self) -> String {
        let n = self.next_id();
        format!("{:040x}", (n as u128) * 0x9e37_79b9_7f4a_7c15_u128)
    }

    pub fn repo(&self, owner: &str, name: &str) -> Option<&SimRepo> {
        self.repos.get(&key(owner, name))
    }

    pub fn repo_mut(&mut self, owner: &str, name: &str) -> Option<&mut SimRepo> {
        self.repos.get_mut(&key(owner, name))
    }

    pub fn pr_mut(&mut self, owner: &str, name: &str, number: i64) -> Option<&mut SimPr> {
        self.repo_mut(owner, name)?.prs.get_mut(&number)
    }
}

impl SimRepo {
    /// The checks of a commit as GitHub's rollup sees them (latest per name).
    fn latest_checks(&self, sha: &str) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = vec![];
        let mut push = |name: &str, verdict: &'static str| match out.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = verdict,
            None => out.push((name.to_string(), verdict)),
        };
        for run in self.check_runs.get(sha).into_iter().flatten() {
            let verdict = if run.status != "completed" {
                "pending"
            } else {
                match run.conclusion.as_deref() {
                    Some("success" | "neutral" | "skipped") => "success",
                    _ => "failure",
                }
            };
            push(&run.name, verdict);
        }
        for s in self.statuses.get(sha).into_iter().flatten() {
            let verdict = match s.state.as_str() {
                "success" => "success",
                "pending" => "pending",
                _ => "failure",
            };
            push(&s.context, verdict);
        }
        out
    }

    /// Whether the required checks of a commit pass (all checks when none are required).
    pub fn required_green(&self, sha: &str) -> Result<(), String> {
        let checks = self.latest_checks(sha);
        match &self.required_checks {
            Some(required) => {
                for name in required {
                    match checks.iter().find(|(n, _)| n == name) {
                        Some((_, "success")) => {}
                        Some(_) => return Err(format!("Required status check \"{name}\" is failing or pending.")),
                        None => return Err(format!("Required status check \"{name}\" is expected.")),
                    }
                }
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// GitHub's `mergeable_state` for a PR.
    pub fn mergeable_state(&self, pr: &SimPr) -> &'static str {
        if pr.state != "open" {
            return "unknown";
        }
        if !pr.mergeable_known {
            return "unknown";
        }
        if pr.draft {
            return "draft";
        }
        if pr.conflict {
            return "dirty";
        }
        if pr.behind {
            return "behind";
        }
        if self.required_green(&pr.head_sha).is_err() {
            return "blocked";
        }
        if self.latest_checks(&pr.head_sha).iter().any(|(_, v)| *v != "success") {
            return "unstable";
        }
        "clean"
    }

    /// A PR's head: a fork's head names the fork's owner and repository.
    fn head_json(&self, pr: &SimPr) -> Value {
        let full = pr
            .head_repo
            .clone()
            .unwrap_or_else(|| format!("{}/{}", self.owner, self.name));
        let (owner, name) = full.split_once('/').unwrap_or((&self.owner, &self.name));
        json!({"ref": pr.head_ref, "sha": pr.head_sha, "label": format!("{owner}:{}", pr.head_ref),
               "repo": {"name": name, "full_name": full, "fork": pr.head_repo.is_some(), "owner": {"login": owner}}})
    }

    pub fn pull_json(&self, pr: &SimPr) -> Value {
        let html_url = format!("https://github.com/{}/{}/pull/{}", self.owner, self.name, pr.number);
        json!({
            "url": format!("https://api.github.com/repos/{}/{}/pulls/{}", self.owner, self.name, pr.number),
            "id": pr.number * 1000 + 7,
            "number": pr.number,
            "state": pr.state,
            "locked": false,
            "title": pr.title,
            "body": pr.body,
            "html_url": html_url,
            "user": {"login": pr.author, "type": "User"},
            "labels": pr.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>(),
            "requested_reviewers": pr.requested_reviewers.iter().map(|l| json!({"login": l})).collect::<Vec<_>>(),
            "head": self.head_json(pr),
            "base": {"ref": pr.base_ref, "label": format!("{}:{}", self.owner, pr.base_ref),
                     "repo": {"name": self.name, "full_name": format!("{}/{}", self.owner, self.name)}},
            "draft": pr.draft,
            "merged": pr.merged,
            "merged_at": ts(pr.merged_at),
            "closed_at": ts(pr.closed_at),
            "merge_commit_sha": pr.merge_commit_sha,
            "mergeable": if pr.state == "open" && pr.mergeable_known { json!(!pr.conflict) } else { Value::Null },
            "mergeable_state": self.mergeable_state(pr),
            "additions": pr.additions,
            "deletions": pr.deletions,
            "changed_files": 1,
            "commits": 1,
        })
    }
}
