//! A faithful stand-in for GitHub, shared by the tests, the browser suite and
//! demo mode: a loopback HTTP server with GitHub's REST and GraphQL shapes
//! and semantics (stale-`sha` merges refused with 409, unmergeable PRs with
//! 405, ETags and 304s, rate limits, pagination), as unkind as GitHub (slow,
//! update-branch landing later, mergeability unknown after every push, faults
//! per repository), with protection, rulesets, reviews and merge queues, a
//! control interface to script the world, and signed webhook deliveries.

mod api;
pub mod check_apps;
pub mod compare;
mod control;
pub mod deployments;
mod gql_parse;
mod gql_pull;
mod graphql;
mod moves;
mod pull_list;
mod rest;
mod rules;
pub mod shapes;
pub mod state;
mod tick;
mod trees;
mod webhooks;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use chrono::Utc;
use serde::{Deserialize, Serialize};

use check_apps::{CheckReport, SimRequired};
use compare::DiffChange;
pub use state::{AutoCi, Counters, Faults, MergeSettings, RepoFault, SimPr, SimRuleset, Timing};
use state::{SimRepo, SimReview, SimState, SimStatus, SimThread, key};

#[derive(Clone)]
pub struct Simulator {
    state: Arc<Mutex<SimState>>,
    http: reqwest::Client,
}

/// A pull request to open.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NewPr {
    pub title: String,
    #[serde(default)]
    pub head: Option<String>,
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub author: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub labels: Vec<String>,
    /// `owner/name` of the fork the head branch lives in; absent: the base repository.
    #[serde(default)]
    pub head_repo: Option<String>,
    /// The fork's author did not allow edits from maintainers.
    #[serde(default)]
    pub maintainers_locked_out: bool,
}

/// Changes to a pull request's simulated facts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PrPatch {
    pub title: Option<String>,
    pub draft: Option<bool>,
    pub behind: Option<bool>,
    pub conflict: Option<bool>,
    pub mergeable_known: Option<bool>,
    pub additions: Option<i64>,
    pub requested_reviewers: Option<Vec<String>>,
    /// Its base changes the PR's own files: a branch update merges them
    /// (cleanly), so the updated head's diff is not the reviewed one.
    pub base_touches_files: Option<bool>,
}

/// What a simulator call failed on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SimError(pub String);

pub type SimResult<T> = Result<T, SimError>;

fn missing(what: &str) -> SimError {
    SimError(format!("no such {what}"))
}

impl Default for Simulator {
    fn default() -> Self {
        crate::tls::install_crypto_provider();
        Simulator {
            state: Arc::default(),
            http: reqwest::Client::new(),
        }
    }
}

impl Simulator {
    pub fn new() -> Self {
        Simulator::default()
    }

    fn lock(&self) -> MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The REST API at `/` and the control interface at `/_sim`.
    pub fn router(&self) -> Router {
        rest::router(self.clone()).merge(control::router(self.clone()))
    }

    /// Serves on `listen` (e.g. `127.0.0.1:0`) and keeps the world moving
    /// (branch updates landing, CI, merge queues); returns the bound address.
    pub async fn serve(&self, listen: &str) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let router = self.router();
        let world = self.clone();
        let task = tokio::spawn(async move {
            let ticking = async move {
                let mut every = tokio::time::interval(tick::TICK);
                loop {
                    every.tick().await;
                    world.tick();
                }
            };
            tokio::select! {
                _ = axum::serve(listener, router) => {}
                _ = ticking => {}
            }
        });
        Ok((addr, task))
    }

    pub fn add_repo(&self, owner: &str, name: &str, private: bool) {
        let mut s = self.lock();
        let id = s.next_id();
        s.repos.entry(key(owner, name)).or_insert_with(|| SimRepo {
            id,
            owner: owner.to_string(),
            name: name.to_string(),
            private,
            default_branch: "main".into(),
            ..Default::default()
        });
    }

    pub fn add_org(&self, login: &str) {
        let mut s = self.lock();
        if !s.orgs.iter().any(|o| o == login) {
            s.orgs.push(login.to_string());
        }
    }

    pub fn open_pr(&self, owner: &str, name: &str, new: NewPr) -> SimResult<(i64, String)> {
        let mut s = self.lock();
        let sha = s.new_sha();
        let id = s.next_id();
        let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
        let number = repo.prs.keys().next_back().copied().unwrap_or(0) + 1;
        let now = Utc::now();
        let pr = SimPr {
            id,
            number,
            created_at: Some(now),
            updated_at: Some(now),
            title: new.title,
            body: new.body.unwrap_or_default(),
            author: new.author.unwrap_or_else(|| "octocat".into()),
            head_ref: new.head.unwrap_or_else(|| format!("feature-{number}")),
            head_sha: sha.clone(),
            base_ref: new.base.unwrap_or_else(|| repo.default_branch.clone()),
            state: "open".into(),
            draft: new.draft,
            mergeable_known: true,
            labels: new.labels,
            head_repo: new.head_repo,
            maintainers_locked_out: new.maintainers_locked_out,
            additions: 10,
            deletions: 2,
            ..Default::default()
        };
        let head_ref = pr.head_ref.clone();
        repo.prs.insert(number, pr);
        s.first_diff(owner, name, &head_ref, &sha);
        s.start_ci(owner, name, &sha);
        Ok((number, sha))
    }

    pub fn pr(&self, owner: &str, name: &str, number: i64) -> Option<SimPr> {
        self.lock().repo(owner, name)?.prs.get(&number).cloned()
    }

    /// Merges as a person would on github.com (no checks), then notifies.
    pub fn merge_pr(&self, owner: &str, name: &str, number: i64) -> SimResult<()> {
        let payload = {
            let mut s = self.lock();
            let sha = s.new_sha();
            let pr = s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
            if pr.state != "open" {
                return Err(SimError("the pull request is not open".into()));
            }
            s.close_merged(owner, name, number, sha, "merge");
            webhooks::pull_request(&s, owner, name, number, "closed")
        };
        self.deliver("pull_request", payload);
        Ok(())
    }

    pub fn close_pr(&self, owner: &str, name: &str, number: i64) -> SimResult<()> {
        let payload = {
            let mut s = self.lock();
            s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
            s.close_unmerged(owner, name, number)
        };
        self.deliver("pull_request", payload);
        Ok(())
    }

    /// Pushes a new commit to the PR's head branch (one more file in its
    /// diff); returns its sha.
    pub fn push(&self, owner: &str, name: &str, number: i64) -> SimResult<String> {
        self.move_head(owner, name, number, DiffChange::AddFile, None)
    }

    /// [`push`](Self::push) by `pusher` rather than the PR's author (a
    /// collaborator pushing to its branch).
    pub fn push_as(&self, owner: &str, name: &str, number: i64, pusher: &str) -> SimResult<String> {
        self.move_head(owner, name, number, DiffChange::AddFile, Some(pusher))
    }

    /// Force-pushes the PR's changes rebased onto its base: a new head with
    /// the very same diff; returns its sha.
    pub fn rebase(&self, owner: &str, name: &str, number: i64) -> SimResult<String> {
        self.move_head(owner, name, number, DiffChange::Same, None)
    }

    /// Pushes a commit that only makes the PR's first file executable;
    /// returns its sha.
    pub fn chmod(&self, owner: &str, name: &str, number: i64) -> SimResult<String> {
        self.move_head(owner, name, number, DiffChange::Chmod, None)
    }

    /// A new head pushed by `pusher` (the PR's author when `None`).
    fn move_head(
        &self,
        owner: &str,
        name: &str,
        number: i64,
        change: DiffChange,
        pusher: Option<&str>,
    ) -> SimResult<String> {
        let (sha, pr_payload, push_payload) = {
            let mut s = self.lock();
            let sha = s.new_sha();
            let pr = s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
            let before = pr.head_sha.clone();
            let branch = pr.head_ref.clone();
            let pusher = pusher.map_or_else(|| pr.author.clone(), str::to_string);
            s.carry_diff(owner, name, &before, &sha, change);
            s.head_moved(owner, name, number, sha.clone(), &pusher);
            (
                sha.clone(),
                webhooks::pull_request(&s, owner, name, number, "synchronize"),
                webhooks::push(&s, owner, name, &branch, &before, &sha),
            )
        };
        self.deliver("pull_request", pr_payload);
        self.deliver("push", push_payload);
        Ok(sha)
    }

    /// Adds `files` files to the PR's current diff (GitHub lists 300 of a
    /// comparison at most).
    pub fn widen_diff(&self, owner: &str, name: &str, number: i64, files: usize) -> SimResult<()> {
        let mut s = self.lock();
        let head = s
            .pr_mut(owner, name, number)
            .ok_or_else(|| missing("pull request"))?
            .head_sha
            .clone();
        for _ in 0..files {
            s.carry_diff(owner, name, &head, &head, DiffChange::AddFile);
        }
        Ok(())
    }

    /// From now on compare's answers fall short as `quirk` says.
    pub fn compare_quirk(&self, owner: &str, name: &str, quirk: compare::CompareQuirk) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name)
            .ok_or_else(|| missing("repository"))?
            .compare_quirk = Some(quirk);
        Ok(())
    }

    /// Cuts the repository's recursive trees past `entries` (GitHub's cut
    /// is 100,000 entries or 7 MB).
    pub fn limit_trees(&self, owner: &str, name: &str, entries: usize) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?.tree_limit = Some(entries);
        Ok(())
    }

    pub fn patch_pr(&self, owner: &str, name: &str, number: i64, patch: PrPatch) -> SimResult<()> {
        let mut s = self.lock();
        let pr = s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
        // Edits GitHub records on the PR itself move `updated_at`; background
        // mergeability (behind, conflict, known) does not.
        if patch.title.is_some()
            || patch.draft.is_some()
            || patch.additions.is_some()
            || patch.requested_reviewers.is_some()
        {
            pr.updated_at = Some(Utc::now());
        }
        if let Some(v) = patch.title {
            pr.title = v;
        }
        if let Some(v) = patch.draft {
            pr.draft = v;
        }
        if let Some(v) = patch.behind {
            pr.behind = v;
        }
        if let Some(v) = patch.conflict {
            pr.conflict = v;
        }
        if let Some(v) = patch.base_touches_files {
            pr.base_touches_files = v;
        }
        if let Some(v) = patch.mergeable_known {
            pr.mergeable_known = v;
        }
        if let Some(v) = patch.additions {
            pr.additions = v;
        }
        if let Some(v) = patch.requested_reviewers {
            pr.requested_reviewers = v;
        }
        Ok(())
    }

    pub fn add_review(&self, owner: &str, name: &str, number: i64, user: &str, state: &str) -> SimResult<()> {
        let payload = {
            let mut s = self.lock();
            let id = s.next_id();
            let pr = s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
            pr.reviews.push(SimReview {
                id,
                user: user.to_string(),
                state: state.to_string(),
            });
            pr.updated_at = Some(Utc::now());
            webhooks::review(&s, owner, name, number, user, state)
        };
        self.deliver("pull_request_review", payload);
        Ok(())
    }

    /// Adds (or replaces, by name) GitHub Actions' check run on a commit.
    pub fn set_check_run(
        &self,
        owner: &str,
        name: &str,
        sha: &str,
        check: &str,
        status: &str,
        conclusion: Option<&str>,
    ) -> SimResult<i64> {
        self.report_check_run(owner, name, sha, &CheckReport::new(check, status, conclusion))
    }

    /// An app reports a check run. A re-run is listed beside the superseded
    /// run, as GitHub lists both; otherwise it replaces that app's run.
    pub fn report_check_run(&self, owner: &str, name: &str, sha: &str, report: &CheckReport) -> SimResult<i64> {
        let (id, payload) = {
            let mut s = self.lock();
            let id = s.next_id();
            let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
            if report.rerun {
                repo.add_check_run(sha, id, report, None);
            } else {
                repo.put_check_run(sha, id, report);
            }
            let branch = repo
                .prs
                .values()
                .find(|p| p.head_sha == sha)
                .map(|p| p.head_ref.clone())
                .unwrap_or_default();
            (
                id,
                (report.status == "completed")
                    .then(|| webhooks::check_run(&s, owner, name, sha, &branch, id))
                    .flatten(),
            )
        };
        if let Some(p) = payload {
            self.deliver("check_run", Some(p));
        }
        Ok(id)
    }

    pub fn set_status(&self, owner: &str, name: &str, sha: &str, context: &str, state: &str) -> SimResult<()> {
        let mut s = self.lock();
        let id = s.next_id();
        let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
        let list = repo.statuses.entry(sha.to_string()).or_default();
        list.retain(|x| x.context != context);
        list.push(SimStatus {
            id,
            created_at: Some(Utc::now()),
            context: context.to_string(),
            state: state.to_string(),
            target_url: format!("https://ci.example/{owner}/{name}/{context}"),
        });
        Ok(())
    }

    /// Classic protection's required checks, by name: any source counts.
    pub fn set_required_checks(&self, owner: &str, name: &str, required: Option<Vec<String>>) -> SimResult<()> {
        let required = required.map(|names| names.iter().map(|n| SimRequired::from(n.as_str())).collect());
        self.protect_with_checks(owner, name, required)
    }

    /// Classic protection's required checks, each optionally pinned to an app.
    pub fn protect_with_checks(&self, owner: &str, name: &str, required: Option<Vec<SimRequired>>) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name)
            .ok_or_else(|| missing("repository"))?
            .required_checks = required;
        Ok(())
    }

    /// Classic protection's "Require branches to be up to date before
    /// merging" (`strict`): from now on a move of the base puts every other
    /// open PR into it behind.
    pub fn require_up_to_date(&self, owner: &str, name: &str, strict: bool) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?.strict = strict;
        Ok(())
    }

    /// Classic protection's "Require signed commits".
    pub fn require_signed_commits(&self, owner: &str, name: &str, on: bool) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name)
            .ok_or_else(|| missing("repository"))?
            .signed_commits = on;
        Ok(())
    }

    /// Classic branch protection's required approving reviews.
    pub fn set_required_approvals(&self, owner: &str, name: &str, count: u32) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name)
            .ok_or_else(|| missing("repository"))?
            .required_approvals = count;
        Ok(())
    }

    /// Classic protection's review rule beyond its count: approving the most
    /// recent push, and a review from the code owners `owners` (CODEOWNERS
    /// naming them for every file; none: not required).
    pub fn protect_reviews(&self, owner: &str, name: &str, last_push: bool, owners: &[&str]) -> SimResult<()> {
        let mut s = self.lock();
        let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
        repo.protection_last_push_approval = last_push;
        repo.protection_code_owner_review = !owners.is_empty();
        repo.code_owners = owners.iter().map(|o| o.to_string()).collect();
        Ok(())
    }

    /// Adds a ruleset on the default branch; returns its id.
    pub fn add_ruleset(&self, owner: &str, name: &str, mut ruleset: SimRuleset) -> SimResult<i64> {
        let mut s = self.lock();
        let id = s.next_id();
        ruleset.id = id;
        s.repo_mut(owner, name)
            .ok_or_else(|| missing("repository"))?
            .rulesets
            .push(ruleset);
        Ok(id)
    }

    /// Removes protection and rulesets: the branch requires nothing.
    pub fn clear_rules(&self, owner: &str, name: &str) -> SimResult<()> {
        let mut s = self.lock();
        let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
        repo.rulesets.clear();
        repo.required_checks = None;
        repo.required_approvals = 0;
        repo.protection_last_push_approval = false;
        repo.protection_code_owner_review = false;
        Ok(())
    }

    /// The repository's merge-button settings, in `PATCH /repos`' shape:
    /// a method set to `false` is refused; one left out keeps its setting.
    pub fn set_merge_settings(&self, owner: &str, name: &str, settings: MergeSettings) -> SimResult<()> {
        let mut s = self.lock();
        let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
        for (method, allow) in [
            ("merge", settings.allow_merge_commit),
            ("squash", settings.allow_squash_merge),
            ("rebase", settings.allow_rebase_merge),
        ] {
            match allow {
                Some(true) => repo.forbidden_methods.retain(|m| m != method),
                Some(false) if !repo.forbidden_methods.iter().any(|m| m == method) => {
                    repo.forbidden_methods.push(method.to_string())
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Opens a review thread on a PR; returns its id.
    pub fn add_thread(&self, owner: &str, name: &str, number: i64, path: &str) -> SimResult<i64> {
        let mut s = self.lock();
        let id = s.next_id();
        let pr = s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
        pr.threads.push(SimThread {
            id,
            path: path.to_string(),
            resolved: false,
        });
        // A new conversation is a comment on the PR; resolving one is not.
        pr.updated_at = Some(Utc::now());
        Ok(id)
    }

    pub fn resolve_thread(&self, owner: &str, name: &str, number: i64, id: i64) -> SimResult<()> {
        let mut s = self.lock();
        let pr = s.pr_mut(owner, name, number).ok_or_else(|| missing("pull request"))?;
        let t = pr
            .threads
            .iter_mut()
            .find(|t| t.id == id)
            .ok_or_else(|| missing("thread"))?;
        t.resolved = true;
        Ok(())
    }

    /// CI that reports on every new commit of the repository.
    pub fn set_auto_ci(&self, owner: &str, name: &str, ci: Option<AutoCi>) -> SimResult<()> {
        let mut s = self.lock();
        s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?.auto_ci = ci;
        Ok(())
    }

    pub fn set_timing(&self, timing: Timing) {
        self.lock().timing = timing;
    }

    /// Time passes: every lagging read catches up with what happened (a
    /// test whose premise is a change made long ago).
    pub fn catch_up_reads(&self) {
        let mut s = self.lock();
        for repo in s.repos.values_mut() {
            for pr in repo.prs.values_mut() {
                pr.read_as = None;
            }
        }
    }

    /// Injects (or, with `None`, clears) a fault on one repository's requests.
    pub fn set_repo_fault(&self, owner: &str, name: &str, fault: Option<RepoFault>) {
        let mut s = self.lock();
        match fault {
            Some(f) => {
                s.repo_faults.insert(key(owner, name), f);
            }
            None => {
                s.repo_faults.remove(&key(owner, name));
            }
        }
    }

    /// The fault still set on one repository's requests (a counted one is
    /// gone once its failures are spent).
    pub fn repo_fault(&self, owner: &str, name: &str) -> Option<RepoFault> {
        self.lock().repo_faults.get(&key(owner, name)).cloned()
    }

    /// Sends signed deliveries for every later change to `url`.
    pub fn set_webhook(&self, url: &str, secret: &str) {
        self.lock().webhook = Some((url.to_string(), secret.to_string()));
    }

    pub fn set_faults(&self, faults: Faults) {
        self.lock().faults = faults;
    }

    /// Sets the core budget: `remaining` requests until `reset_in_secs` from now.
    pub fn set_rate_limit(&self, remaining: i64, reset_in_secs: i64) {
        let mut s = self.lock();
        s.remaining = remaining;
        s.reset = Utc::now().timestamp() + reset_in_secs;
    }

    /// GraphQL's budget, in points.
    pub fn set_graphql_budget(&self, remaining: i64, reset_in_secs: i64) {
        let mut s = self.lock();
        s.gql_remaining = remaining;
        s.gql_reset = Utc::now().timestamp() + reset_in_secs;
    }

    pub fn counters(&self) -> Counters {
        self.lock().counters.clone()
    }

    pub fn reset_counters(&self) {
        self.lock().counters = Counters::default();
    }
}
