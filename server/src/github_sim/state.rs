//! The simulator's world: repositories, pull requests, reviews, check runs and
//! commit statuses, protection and rulesets, merge queues, the rate-limit
//! budget, timing, faults and counters.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::check_apps::{CheckReport, SimRequired};

/// The account the API's token belongs to: it merges, and its branch
/// updates are its pushes.
pub const TOKEN_USER: &str = "kandev-merger";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimCheckRun {
    pub id: i64,
    /// The GitHub App that reported it.
    #[serde(default = "super::check_apps::actions")]
    pub app: i64,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub html_url: String,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimStatus {
    pub id: i64,
    pub context: String,
    pub state: String,
    pub target_url: String,
    pub created_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimReview {
    pub id: i64,
    /// Empty: the reviewer's account was deleted (GitHub answers `user: null`).
    pub user: String,
    pub state: String,
}

/// A review conversation on a PR; unresolved ones can block a merge.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimThread {
    pub id: i64,
    pub path: String,
    pub resolved: bool,
}

/// A PR waiting in its base branch's merge queue.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct QueueEntry {
    pub id: i64,
    pub enqueued_at: Option<DateTime<Utc>>,
    /// The commit the queue tests: head merged onto base (set when the entry
    /// reaches the front).
    pub merge_group_sha: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimPr {
    pub id: i64,
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
    pub created_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
    pub merge_method: Option<String>,
    pub merge_commit_sha: Option<String>,
    pub draft: bool,
    /// The base branch moved on: update-branch brings the head up to date.
    pub behind: bool,
    /// Head and base conflict: update-branch and merge both fail.
    pub conflict: bool,
    /// The base changed the PR's own files (without conflict): an update
    /// merges them, so the updated diff differs from the reviewed one.
    #[serde(default)]
    pub base_touches_files: bool,
    /// GitHub's background mergeability: `false` while it is being computed.
    pub mergeable_known: bool,
    /// After a head change GitHub recomputes mergeability; until then it
    /// answers `mergeable: null`, `mergeable_state: "unknown"`.
    pub mergeable_unknown_until: Option<DateTime<Utc>>,
    /// That recompute is for a base that moved (another PR merged, a push):
    /// a merge before it is done is refused with "Base branch was modified".
    #[serde(default)]
    pub base_moved: bool,
    /// An accepted update-branch that has not landed yet (GitHub answers 202
    /// and moves the head later).
    pub update_lands_at: Option<DateTime<Utc>>,
    pub labels: Vec<String>,
    pub requested_reviewers: Vec<String>,
    pub additions: i64,
    pub deletions: i64,
    pub reviews: Vec<SimReview>,
    pub threads: Vec<SimThread>,
    pub head_branch_deleted: bool,
    /// `owner/name` of the fork holding the head branch (`None`: this repository).
    pub head_repo: Option<String>,
    /// A fork whose author did not allow edits from maintainers.
    #[serde(default)]
    pub maintainers_locked_out: bool,
    /// How many reviews the PR had when its head last moved: only later
    /// ones approve the newest push.
    #[serde(default)]
    pub reviews_at_last_push: usize,
    /// Who pushed the head last: GitHub does not count their own approval
    /// of it under "require approval of the most recent reviewable push".
    #[serde(default)]
    pub last_pusher: String,
    /// Merges accepted for this PR (a 5xx after a merge must not add a second).
    pub merge_count: i64,
    pub update_branch_count: i64,
    pub queue: Option<QueueEntry>,
    /// Why the PR last left the merge queue unmerged.
    pub dequeued_reason: Option<String>,
    pub enqueue_count: i64,
    /// Until this time API reads show this older copy (`Timing::read_lag_ms`).
    pub read_as: Option<(DateTime<Utc>, Box<SimPr>)>,
}

impl SimPr {
    pub fn node_id(&self) -> String {
        format!("PR_kwDOsim{}", self.id)
    }

    /// The PR as an API read sees it now: an older copy while reads lag.
    pub fn as_read(&self) -> &SimPr {
        match &self.read_as {
            Some((until, old)) if Utc::now() < *until => old,
            _ => self,
        }
    }
}

/// A repository ruleset's rules (on the default branch, as most are).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimRuleset {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub required_checks: Vec<SimRequired>,
    #[serde(default)]
    pub required_approvals: u32,
    #[serde(default)]
    pub thread_resolution: bool,
    #[serde(default)]
    pub merge_queue: bool,
    /// A `pull_request` rule's `allowed_merge_methods` (`None`: any).
    #[serde(default)]
    pub allowed_merge_methods: Option<Vec<String>>,
    /// A `required_linear_history` rule: no merge commits.
    #[serde(default)]
    pub linear_history: bool,
    /// `strict_required_status_checks_policy`: the head must be up to date
    /// with the base before it merges.
    #[serde(default)]
    pub strict: bool,
    /// A `required_signatures` rule: GitHub cannot sign a rebase.
    #[serde(default)]
    pub signatures: bool,
    /// A `pull_request` rule's `require_last_push_approval`.
    #[serde(default)]
    pub last_push_approval: bool,
    /// A `required_deployments` rule's environments.
    #[serde(default)]
    pub required_deployments: Vec<String>,
    /// A `pull_request` rule's `require_code_owner_review`.
    #[serde(default)]
    pub code_owner_review: bool,
}

/// A repository's merge-button settings, as `PATCH /repos/{owner}/{repo}`
/// takes them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MergeSettings {
    #[serde(default)]
    pub allow_merge_commit: Option<bool>,
    #[serde(default)]
    pub allow_squash_merge: Option<bool>,
    #[serde(default)]
    pub allow_rebase_merge: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimRepo {
    pub id: i64,
    pub owner: String,
    pub name: String,
    pub private: bool,
    pub default_branch: String,
    /// Classic branch protection: required status checks.
    pub required_checks: Option<Vec<SimRequired>>,
    /// Classic protection's `strict`: "Require branches to be up to date
    /// before merging".
    pub strict: bool,
    /// Classic protection's "Require signed commits" (its endpoint needs
    /// admin rights, so Kandev learns it from the refusal).
    pub signed_commits: bool,
    /// Classic branch protection: required approving reviews.
    pub required_approvals: u32,
    /// Classic protection's "Require approval of the most recent reviewable push".
    #[serde(default)]
    pub protection_last_push_approval: bool,
    /// Classic protection's "Require review from Code Owners".
    #[serde(default)]
    pub protection_code_owner_review: bool,
    /// Who CODEOWNERS names for every file (the sim's one pattern: `*`).
    #[serde(default)]
    pub code_owners: Vec<String>,
    pub rulesets: Vec<SimRuleset>,
    /// Merge methods the repository's settings forbid (`allow_squash_merge:
    /// false`, …); GitHub shows those settings to admins only.
    pub forbidden_methods: Vec<String>,
    pub prs: BTreeMap<i64, SimPr>,
    pub check_runs: HashMap<String, Vec<SimCheckRun>>,
    pub statuses: HashMap<String, Vec<SimStatus>>,
    /// CI that reports on every new commit (head pushes, branch updates,
    /// merge groups) a while after it appears.
    pub auto_ci: Option<AutoCi>,
    /// Deployments, oldest first.
    #[serde(default)]
    pub deployments: Vec<super::deployments::SimDeployment>,
    /// Each commit that was a PR's head: the files it changes against the base.
    #[serde(default)]
    pub diffs: HashMap<String, Vec<super::compare::SimFile>>,
    /// How compare's answers fall short of a whole list, as GitHub's can.
    #[serde(default)]
    pub compare_quirk: Option<super::compare::CompareQuirk>,
    /// Entries past which a recursive tree is cut (`None`: GitHub's 100,000).
    #[serde(default)]
    pub tree_limit: Option<usize>,
}

impl SimRepo {
    /// Adds (or replaces, by app and name) a check run on a commit: the run
    /// reports again, or a re-run inside its suite, which GitHub's lists hide.
    pub fn put_check_run(&mut self, sha: &str, id: i64, report: &CheckReport) {
        let runs = self.check_runs.entry(sha.to_string()).or_default();
        let same = |r: &SimCheckRun| r.name == report.name && r.app == report.app_id;
        let started = runs.iter().find(|r| same(r)).and_then(|r| r.started_at);
        runs.retain(|r| !same(r));
        self.add_check_run(sha, id, report, started);
    }

    /// Adds a check run beside any older one of that check: a new workflow
    /// run on the same commit (a re-run after an edit or a label, a manual
    /// dispatch). GitHub lists the superseded run too, in REST and GraphQL.
    pub fn add_check_run(&mut self, sha: &str, id: i64, report: &CheckReport, started: Option<DateTime<Utc>>) {
        let now = Utc::now();
        let html_url = format!("https://github.com/{}/{}/runs/{id}", self.owner, self.name);
        let completed = report.status == "completed";
        self.check_runs.entry(sha.to_string()).or_default().push(SimCheckRun {
            id,
            app: report.app_id,
            name: report.name.clone(),
            status: report.status.clone(),
            conclusion: report.conclusion.clone(),
            html_url,
            started_at: Some(started.unwrap_or(now)),
            completed_at: completed.then_some(now),
        });
    }
}

/// A repository's CI: these checks complete with `conclusion` after `delay_ms`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AutoCi {
    pub checks: Vec<String>,
    pub conclusion: String,
    #[serde(default)]
    pub delay_ms: u64,
}

/// Request counters, for tests and benchmarks.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counters {
    /// Every REST and GraphQL request (control calls excluded).
    pub requests: u64,
    /// Requests that spent rate limit (everything but 304s).
    pub rate_limited: u64,
    /// 304 Not Modified answers.
    pub not_modified: u64,
    pub merges: u64,
    /// Direct merge calls (`PUT …/merge`), accepted or not.
    pub merge_calls: u64,
    /// GraphQL requests, queries and mutations alike.
    pub graphql: u64,
    /// GraphQL points charged (GitHub's cost of each query).
    #[serde(default)]
    pub graphql_points: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Faults {
    /// Answer the next merge with a 502 after performing it.
    #[serde(default)]
    pub merge_error_after_merge: bool,
    /// The token was revoked: every request answers 401 "Bad credentials".
    #[serde(default)]
    pub revoked_token: bool,
    /// The next this many requests answer 502 (GitHub having a bad minute).
    #[serde(default)]
    pub server_errors: u32,
    /// The next this many GraphQL requests answer 502 (REST still works).
    #[serde(default)]
    pub graphql_errors: u32,
    /// The next this many GraphQL queries time out on GitHub's side: 200
    /// with an `errors` answer and no data, as GitHub does.
    #[serde(default)]
    pub graphql_timeouts: u32,
    /// The next this many merge calls come just after a commit landed on
    /// the base (someone pushed, another PR merged).
    #[serde(default)]
    pub base_moves_before_merge: u32,
    /// The next this many GraphQL mutations hit a secondary rate limit (403,
    /// `retry-after: 1`): GitHub limits writes more strictly than reads.
    #[serde(default)]
    pub mutations_rate_limited: u32,
}

/// A fault on one repository's requests, as GitHub answers them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RepoFault {
    /// The answer: 401, 403, 404, 422, 5xx; 0 answers normally (after `delay_ms`).
    #[serde(default)]
    pub status: u16,
    /// Only requests whose operation is this (`pull`, `reviews`, `check_runs`,
    /// `status`, `merge`, `update_branch`, `rules`, `protection`, `graphql`, …).
    #[serde(default)]
    pub operation: Option<String>,
    /// How many requests it hits; 0: every one until cleared.
    #[serde(default)]
    pub times: u32,
    /// Answer this late (longer than the client waits: a timeout).
    #[serde(default)]
    pub delay_ms: u64,
    /// A secondary rate limit: 403 with `retry-after` seconds.
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// GitHub's message for the answer (default: the status's usual one).
    #[serde(default)]
    pub message: Option<String>,
}

/// How slow and how eventually consistent the simulator is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timing {
    /// Every request waits this long (plus up to as much again, at random).
    pub latency_ms: u64,
    /// An accepted update-branch moves the head this much later.
    pub update_branch_delay_ms: u64,
    /// After a head change `mergeable` is `null` this long.
    pub mergeable_settle_ms: u64,
    /// After a merge, a close or a push, API reads (REST and GraphQL) still
    /// show the PR as it was this long, while the webhook already says what
    /// happened: GitHub's reads can lag its own deliveries.
    #[serde(default)]
    pub read_lag_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            latency_ms: 2,
            update_branch_delay_ms: 800,
            mergeable_settle_ms: 150,
            read_lag_ms: 0,
        }
    }
}

pub struct SimState {
    pub repos: HashMap<(String, String), SimRepo>,
    pub orgs: Vec<String>,
    pub counters: Counters,
    pub limit: i64,
    pub remaining: i64,
    pub reset: i64,
    /// GraphQL's own budget, in points (GitHub keeps it apart from REST's).
    pub gql_limit: i64,
    pub gql_remaining: i64,
    pub gql_reset: i64,
    pub gql_last_cost: i64,
    pub faults: Faults,
    pub repo_faults: HashMap<(String, String), RepoFault>,
    pub timing: Timing,
    pub webhook: Option<(String, String)>,
    /// Old names of moved repositories (lower-cased) and the id they lead to.
    pub moved: HashMap<(String, String), i64>,
    /// Commits waiting for the repository's CI: (owner, name, sha, due).
    pub ci_due: Vec<(String, String, String, DateTime<Utc>)>,
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
            gql_limit: 5000,
            gql_remaining: 5000,
            gql_reset: Utc::now().timestamp() + 3600,
            gql_last_cost: 0,
            faults: Faults::default(),
            repo_faults: HashMap::new(),
            timing: Timing::default(),
            webhook: None,
            moved: HashMap::new(),
            ci_due: vec![],
            next_id: 1000,
        }
    }
}

pub fn key(owner: &str, name: &str) -> (String, String) {
    (owner.to_lowercase(), name.to_lowercase())
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

    /// The key a repository is held under, given any name it has had:
    /// GitHub resolves a moved repository by its id, so a request already
    /// under way when it moves still finds it (new requests under the old
    /// name are redirected first, by `moved_id`).
    fn current_key(&self, owner: &str, name: &str) -> (String, String) {
        let k = key(owner, name);
        match self.moved_id(owner, name).and_then(|id| self.repo_by_id(id)) {
            Some(r) => key(&r.owner, &r.name),
            None => k,
        }
    }

    /// The repository an old name now leads to, if it was moved and no
    /// repository has taken the name since.
    pub fn moved_id(&self, owner: &str, name: &str) -> Option<i64> {
        let k = key(owner, name);
        if self.repos.contains_key(&k) {
            return None;
        }
        self.moved.get(&k).copied()
    }

    pub fn repo_by_id(&self, id: i64) -> Option<&SimRepo> {
        self.repos.values().find(|r| r.id == id)
    }

    pub fn repo(&self, owner: &str, name: &str) -> Option<&SimRepo> {
        self.repos.get(&self.current_key(owner, name))
    }

    pub fn repo_mut(&mut self, owner: &str, name: &str) -> Option<&mut SimRepo> {
        let k = self.current_key(owner, name);
        self.repos.get_mut(&k)
    }

    pub fn pr_mut(&mut self, owner: &str, name: &str, number: i64) -> Option<&mut SimPr> {
        self.repo_mut(owner, name)?.prs.get_mut(&number)
    }

    /// Keeps reads of a PR showing `before` for `read_lag_ms` (the oldest
    /// copy not yet caught up, when changes follow each other quickly).
    pub fn lag_reads(&mut self, owner: &str, name: &str, number: i64, mut before: SimPr) {
        let lag = chrono::Duration::milliseconds(self.timing.read_lag_ms as i64);
        if lag.is_zero() {
            return;
        }
        let Some(pr) = self.pr_mut(owner, name, number) else {
            return;
        };
        let now = Utc::now();
        let old = match pr.read_as.take() {
            Some((until, old)) if now < until => old,
            _ => {
                before.read_as = None;
                Box::new(before)
            }
        };
        pr.read_as = Some((now + lag, old));
    }

    /// A PR's head moved (a push, a landed update): mergeability is
    /// recomputed and the repository's CI, if any, starts on the new commit.
    pub fn head_moved(&mut self, owner: &str, name: &str, number: i64, sha: String, pusher: &str) {
        let now = Utc::now();
        let settle = chrono::Duration::milliseconds(self.timing.mergeable_settle_ms as i64);
        let Some(before) = self.pr_mut(owner, name, number).map(|pr| pr.clone()) else {
            return;
        };
        self.lag_reads(owner, name, number, before);
        let Some(pr) = self.pr_mut(owner, name, number) else {
            return;
        };
        pr.head_sha = sha.clone();
        pr.reviews_at_last_push = pr.reviews.len();
        pr.last_pusher = pusher.to_string();
        pr.updated_at = Some(now);
        pr.mergeable_unknown_until = Some(now + settle);
        pr.base_moved = false;
        // GitHub ejects a queued PR whose head changes.
        if pr.queue.take().is_some() {
            pr.dequeued_reason = Some("The head of the pull request changed".into());
        }
        self.start_ci(owner, name, &sha);
    }

    /// Something landed on `base` (a merge, a push): GitHub recomputes the
    /// mergeability of every open PR into it but `except`, and refuses to
    /// merge one of them until it has.
    pub fn base_moved(&mut self, owner: &str, name: &str, base: &str, except: Option<i64>) {
        let until = Utc::now() + chrono::Duration::milliseconds(self.timing.mergeable_settle_ms as i64);
        let Some(repo) = self.repo_mut(owner, name) else {
            return;
        };
        let strict = repo.up_to_date_required(base);
        for pr in repo.prs.values_mut() {
            if pr.state == "open" && pr.base_ref.eq_ignore_ascii_case(base) && Some(pr.number) != except {
                pr.mergeable_unknown_until = Some(until);
                pr.base_moved = true;
                // Out of date with the new base: only strict protection says so.
                pr.behind |= strict;
            }
        }
    }

    /// Schedules the repository's CI (if it has one) on `sha`.
    pub fn start_ci(&mut self, owner: &str, name: &str, sha: &str) {
        let Some(ci) = self.repo(owner, name).and_then(|r| r.auto_ci.clone()) else {
            return;
        };
        let due = Utc::now() + chrono::Duration::milliseconds(ci.delay_ms as i64);
        self.ci_due
            .push((owner.to_string(), name.to_string(), sha.to_string(), due));
    }
}
