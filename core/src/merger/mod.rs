//! The post-approve merger's decisions, as a pure function of what GitHub
//! says right now. The worker re-reads the PR before every decision, so a
//! re-run after a crash or restart is always safe.

mod approval;
mod branch;
mod diff_modes;
mod method;
mod read_back;
mod refusal;
mod requirements;
mod retry;
mod said;
mod tree_diff;

use chrono::{DateTime, Duration, Utc};

use crate::checks::{Awaited, Check, CiVerdict};

pub use approval::{
    COMPARE_FILE_CAP, DIFF_UNREAD, DiffFile, approved_head, bind, listed, needs_approved_diff, needs_diff, pin, settle,
};
#[cfg(feature = "digests")]
pub use approval::{diff_digest, diff_digest_before_modes};
pub use branch::{KeepBranch, branch_home, fork_locked, may_delete};
pub use diff_modes::{Digests, mode_dirs};
pub use method::{merge_method, refused_method, restrict};
pub use read_back::{MergeCall, ReadBack, read_back};
pub use refusal::{BASE_MOVED_RETRIES, Refusal, after_refusal};
pub use requirements::{
    BranchRules, Facts, ProtectionReviews, Rule, branch_rules, missing_reviews, required_checks, undeployed,
    unresolved_threads,
};
pub use retry::{kept_failing, retry_delay};
pub use said::{Arg, Said, examples as said_examples, joiner};
#[cfg(feature = "digests")]
pub use tree_diff::tree_digest;
pub use tree_diff::{Tree, TreeChange, TreeEntry, tree_changes};

/// What the merger read about the PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrSnapshot {
    pub number: i64,
    /// `open` or `closed`.
    pub state: String,
    pub merged: bool,
    pub draft: bool,
    pub head_sha: String,
    /// GitHub's `mergeable_state`: clean, blocked, behind, dirty, unstable, has_hooks, draft, unknown.
    pub mergeable_state: String,
    /// The head branch lives in a fork that does not let maintainers edit
    /// it ([`fork_locked`]): only its author can bring it up to date.
    pub fork_locked: bool,
}

/// What the merger remembers between decisions (persisted with the job).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobState {
    /// When the current wait (for checks, mergeability, an update, reviews or
    /// the queue) began.
    pub wait_started_at: Option<DateTime<Utc>>,
    /// The head the current wait is for; a new head restarts the wait.
    pub waiting_on_sha: String,
    /// How many times this job brought the branch up to date.
    pub branch_updates: u32,
    /// The head an accepted update-branch will replace: while GitHub still
    /// shows it, the update has not landed yet.
    pub update_from_sha: String,
    /// The PR was put in its base branch's merge queue.
    pub queued: bool,
    /// The head the approval stands for (named by the approval or bound at
    /// the first read, moved only to a head with the same diff), and that
    /// diff's digest (empty: too large to compare; [`DIFF_UNREAD`]: not read yet).
    pub approved_sha: String,
    pub approved_diff: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub timeout_minutes: u64,
}

/// A branch that falls behind its base (strict protection, and the base
/// moved: another PR merged) is brought up to date this many times, then
/// the job blocks: each update costs a CI run, and a base that busy wants
/// the merge queue.
pub const MAX_BRANCH_UPDATES: u32 = 5;

/// The next thing to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Complete(Said),
    Block(Said),
    /// Keep polling: what is awaited (checks by name, mergeability, reviews,
    /// the branch update, the queue).
    Wait(Vec<Said>),
    UpdateBranch {
        expected_head_sha: String,
    },
    Merge {
        sha: String,
    },
    /// The branch requires GitHub's merge queue: enqueue, pinned to the head.
    Enqueue {
        sha: String,
    },
}

/// How long a merge waits for CI and reviews, in minutes: the task's own
/// `ci_wait_timeout_minutes=` wins, then the repository's setting, then the
/// workspace's, then the server default. Stored values are pulled into
/// 1–1440 whatever wrote them.
pub fn ci_wait_minutes(task: Option<u64>, repository: Option<i64>, workspace: Option<i64>, default: i64) -> u64 {
    let stored = |m: i64| crate::bounds::stored_ci_wait_minutes(m) as u64;
    task.map(|m| stored(i64::try_from(m).unwrap_or(i64::MAX)))
        .or(repository.map(stored))
        .or(workspace.map(stored))
        .unwrap_or_else(|| stored(default))
}

pub fn merged_summary(number: i64) -> Said {
    Said::new("merged").with("number", number)
}

/// The summary when GitHub's merge queue did the merging for a queued job.
pub fn queue_merged_summary(number: i64) -> Said {
    Said::new("queue-merged").with("number", number)
}

/// A check by name, with its link when it has one.
fn check(c: &Check) -> Said {
    if c.url.trim().is_empty() {
        Said::new("check").with("name", &c.name)
    } else {
        Said::new("check-link").with("name", &c.name).with("url", &c.url)
    }
}

/// A required check still awaited; when another source reported its name,
/// which app's report counts.
fn awaited_said(a: &Awaited) -> Said {
    match a.only_app {
        Some(app) => Said::new("check-only-app").with("name", &a.name).with("app", app),
        None => Said::new("check").with("name", &a.name),
    }
}

/// The block reason for failing required checks: every one, with its link.
pub fn ci_failing(failed: &[Check]) -> Said {
    Said::new("ci-failing").list("checks", failed.iter().map(check).collect())
}

/// Starts or continues the wait for `sha`; a new head restarts it.
pub fn waiting(job: &JobState, sha: &str, now: DateTime<Utc>) -> JobState {
    let mut next = job.clone();
    if next.wait_started_at.is_none() || next.waiting_on_sha != sha {
        next.wait_started_at = Some(now);
        next.waiting_on_sha = sha.to_string();
    }
    next
}

/// After GitHub accepted an update of `head`: wait (afresh) for it to land.
pub fn update_requested(job: &JobState, head: &str, now: DateTime<Utc>) -> JobState {
    JobState {
        wait_started_at: Some(now),
        waiting_on_sha: head.to_string(),
        branch_updates: job.branch_updates.saturating_add(1),
        update_from_sha: head.to_string(),
        ..job.clone()
    }
}

/// After GitHub put `head` in the merge queue: follow the entry (afresh).
pub fn enqueued(job: &JobState, head: &str, now: DateTime<Utc>) -> JobState {
    JobState {
        wait_started_at: Some(now),
        waiting_on_sha: head.to_string(),
        queued: true,
        ..job.clone()
    }
}

fn expired(job: &JobState, sha: &str, policy: &Policy, now: DateTime<Utc>) -> bool {
    job.waiting_on_sha == sha
        && job.wait_started_at.is_some_and(|t| {
            // Checked: an absurd timeout means "never", not a panic.
            let limit = i64::try_from(policy.timeout_minutes)
                .ok()
                .and_then(Duration::try_minutes);
            limit.is_some_and(|limit| now.signed_duration_since(t) >= limit)
        })
}

/// Waits for `what`, or blocks with `reason` once the wait has lasted the timeout.
fn wait_or_block(
    what: Vec<Said>,
    reason: impl FnOnce() -> Said,
    pr: &PrSnapshot,
    job: &JobState,
    policy: &Policy,
    now: DateTime<Utc>,
) -> Step {
    if expired(job, &pr.head_sha, policy, now) {
        Step::Block(reason())
    } else {
        Step::Wait(what)
    }
}

/// A SHA's first seven characters, never cut inside a character (GitHub's
/// text is untrusted).
pub fn short(sha: &str) -> &str {
    sha.char_indices().nth(7).map_or(sha, |(at, _)| &sha[..at])
}

/// One decision. Order: merged, closed, a head other than the approved one,
/// a queued PR's entry, draft, failing
/// required checks, conflict, behind (update, up to `MAX_BRANCH_UPDATES`
/// times, and wait for the update to land), pending checks or unknown
/// mergeability, missing reviews (each wait bounded by the timeout), then
/// merge — or enqueue where the branch requires the merge queue — with the
/// head SHA pinned.
pub fn decide(
    pr: &PrSnapshot,
    ci: &CiVerdict,
    facts: &Facts,
    job: &JobState,
    policy: &Policy,
    now: DateTime<Utc>,
) -> Step {
    let minutes = policy.timeout_minutes;
    if pr.merged {
        // A queued job's PR is merged by the queue it was put in.
        return Step::Complete(if job.queued {
            queue_merged_summary(pr.number)
        } else {
            Said::new("already-merged")
        });
    }
    if pr.state != "open" {
        return Step::Block(Said::new("closed-unmerged"));
    }
    // Nobody approved this code: `bind` moved the binding to every head
    // whose diff is the approved one.
    if !job.approved_sha.is_empty() && job.approved_sha != pr.head_sha {
        return Step::Block(
            Said::new(if job.approved_diff.is_empty() {
                "changed-too-large"
            } else {
                "changed-after-approval"
            })
            .with("approved", short(&job.approved_sha))
            .with("head", short(&pr.head_sha)),
        );
    }
    if job.queued {
        return match facts.queue_position {
            Some(p) => wait_or_block(
                vec![Said::new("queue-position").with("position", p)],
                || Said::new("queue-timeout").with("minutes", minutes).with("position", p),
                pr,
                job,
                policy,
                now,
            ),
            None => Step::Block(
                match facts.dequeued_reason.as_deref().filter(|r| !r.trim().is_empty()) {
                    Some(reason) => Said::new("dequeued").with("reason", reason),
                    None => Said::new("dequeued-silently"),
                },
            ),
        };
    }
    if pr.draft || pr.mergeable_state == "draft" {
        return Step::Block(Said::new("draft"));
    }
    if let CiVerdict::Failed(failed) = ci {
        return Step::Block(ci_failing(failed));
    }
    if pr.mergeable_state == "dirty" {
        return Step::Block(Said::new("conflict"));
    }
    // An accepted update shows the old head (still behind) until it lands.
    if !job.update_from_sha.is_empty() && job.update_from_sha == pr.head_sha {
        return wait_or_block(
            vec![Said::new("awaiting-update")],
            || Said::new("update-timeout").with("minutes", minutes),
            pr,
            job,
            policy,
            now,
        );
    }
    if pr.mergeable_state == "behind" {
        return if pr.fork_locked {
            Step::Block(Said::new("fork-locked"))
        } else if job.branch_updates >= MAX_BRANCH_UPDATES {
            Step::Block(Said::new("fell-behind-again").with("count", job.branch_updates))
        } else {
            Step::UpdateBranch {
                expected_head_sha: pr.head_sha.clone(),
            }
        };
    }
    let pending: Vec<Said> = match ci {
        CiVerdict::Pending(awaited) => awaited.iter().map(awaited_said).collect(),
        _ if pr.mergeable_state == "unknown" || pr.mergeable_state.is_empty() => vec![Said::new("mergeability")],
        _ => vec![],
    };
    if !pending.is_empty() {
        let all = pending.clone();
        return wait_or_block(
            pending,
            || {
                Said::new("checks-timeout")
                    .with("minutes", minutes)
                    .list("pending", all)
            },
            pr,
            job,
            policy,
            now,
        );
    }
    if pr.mergeable_state == "blocked" {
        let missing = missing_reviews(facts);
        let deployments: Vec<Said> = facts
            .undeployed
            .iter()
            .map(|env| Said::new("deployment").with("environment", env))
            .collect();
        let mut what: Vec<Said> = missing
            .iter()
            .map(|m| Said::new("reviews").list("missing", m.clone()))
            .collect();
        what.extend(deployments.iter().cloned());
        if what.is_empty() {
            what.push(Said::new("reviews-unnamed"));
        }
        return wait_or_block(
            what,
            || match (missing, deployments.is_empty()) {
                (Some(m), true) => Said::new("reviews-timeout").with("minutes", minutes).list("missing", m),
                (None, true) => Said::new("blocked-timeout").with("minutes", minutes),
                (m, false) => Said::new("requirements-timeout")
                    .with("minutes", minutes)
                    .list("missing", m.into_iter().flatten().chain(deployments).collect()),
            },
            pr,
            job,
            policy,
            now,
        );
    }
    let sha = pr.head_sha.clone();
    if facts.merge_queue {
        Step::Enqueue { sha }
    } else {
        Step::Merge { sha }
    }
}

#[cfg(test)]
mod tests;
