//! The post-approve merger's decisions, as a pure function of what GitHub
//! says right now. The worker re-reads the PR before every decision, so a
//! re-run after a crash or restart is always safe.

use chrono::{DateTime, Duration, Utc};

use crate::checks::CiVerdict;

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
}

/// What the merger remembers between decisions (persisted with the job).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobState {
    /// When the current wait (for checks or mergeability) began.
    pub wait_started_at: Option<DateTime<Utc>>,
    /// The head the current wait is for; a new head restarts the wait.
    pub waiting_on_sha: String,
    /// The branch has been brought up to date once already.
    pub updated_branch: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub timeout_minutes: u64,
}

/// The next thing to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Complete(String),
    Block(String),
    /// Keep polling: checks (named) or mergeability are not settled yet.
    Wait(Vec<String>),
    UpdateBranch {
        expected_head_sha: String,
    },
    Merge {
        sha: String,
    },
}

pub const ALREADY_MERGED: &str = "PR already merged";
pub const CLOSED_UNMERGED: &str = "PR closed without merge";
pub const DRAFT: &str = "PR is draft";
pub const CONFLICT: &str = "merge conflict, manual rebase needed";
pub const UNKNOWN_AFTER_ERROR: &str = "merge state unknown after a GitHub error; check the PR";

/// How long the merger waits before its `attempt`-th retry (from 0) of a
/// GitHub read that failed for a reason that may pass (5xx, timeout, a lost
/// connection): doubling from one second up to `cap`, with `jitter` (in
/// `0.0..1.0`, drawn by the caller) spreading up to a quarter more so
/// replicas and jobs do not retry in step.
pub fn retry_delay(attempt: u32, cap: std::time::Duration, jitter: f64) -> std::time::Duration {
    let base = std::time::Duration::from_secs(1u64 << attempt.min(16)).min(cap);
    base.mul_f64(1.0 + 0.25 * jitter.clamp(0.0, 1.0))
}

/// The block reason when GitHub kept failing for the whole CI wait.
pub fn kept_failing(minutes: u64, last: &str) -> String {
    format!("GitHub kept failing for {minutes} min (last: {last}); check the PR")
}

pub fn merged_summary(number: i64) -> String {
    format!("Merged PR #{number}")
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

/// One decision. Order: merged, closed, draft, failing required check,
/// conflict, behind (update once), pending checks or unknown mergeability
/// (wait up to the timeout), then merge with the head SHA pinned.
pub fn decide(pr: &PrSnapshot, ci: &CiVerdict, job: &JobState, policy: &Policy, now: DateTime<Utc>) -> Step {
    if pr.merged {
        return Step::Complete(ALREADY_MERGED.into());
    }
    if pr.state != "open" {
        return Step::Block(CLOSED_UNMERGED.into());
    }
    if pr.draft || pr.mergeable_state == "draft" {
        return Step::Block(DRAFT.into());
    }
    if let CiVerdict::Failed { name, url } = ci {
        return Step::Block(format!("CI failing: {name} {url}").trim_end().to_string());
    }
    if pr.mergeable_state == "dirty" {
        return Step::Block(CONFLICT.into());
    }
    if pr.mergeable_state == "behind" {
        return if job.updated_branch {
            Step::Block("the branch fell behind its base again after one update; update it and approve again".into())
        } else {
            Step::UpdateBranch {
                expected_head_sha: pr.head_sha.clone(),
            }
        };
    }
    let pending: Vec<String> = match ci {
        CiVerdict::Pending(names) => names.clone(),
        _ if pr.mergeable_state == "unknown" || pr.mergeable_state.is_empty() => vec!["mergeability".into()],
        _ => vec![],
    };
    if !pending.is_empty() {
        if expired(job, &pr.head_sha, policy, now) {
            return Step::Block(format!(
                "checks still pending after {} min: {}",
                policy.timeout_minutes,
                pending.join(", ")
            ));
        }
        return Step::Wait(pending);
    }
    Step::Merge {
        sha: pr.head_sha.clone(),
    }
}

#[cfg(test)]
mod retry_tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn retries_double_up_to_the_cap_with_bounded_jitter() {
        let cap = Duration::from_secs(30);
        assert_eq!(retry_delay(0, cap, 0.0), Duration::from_secs(1));
        assert_eq!(retry_delay(3, cap, 0.0), Duration::from_secs(8));
        assert_eq!(retry_delay(10, cap, 0.0), cap);
        assert_eq!(retry_delay(u32::MAX, cap, 0.0), cap);
        assert_eq!(retry_delay(2, cap, 1.0), Duration::from_secs(5));
        assert_eq!(retry_delay(2, cap, 7.0), Duration::from_secs(5), "jitter is clamped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn pr(state: &str, mergeable_state: &str) -> PrSnapshot {
        PrSnapshot {
            number: 7,
            state: state.into(),
            merged: false,
            draft: false,
            head_sha: "h1".into(),
            mergeable_state: mergeable_state.into(),
        }
    }

    const POLICY: Policy = Policy { timeout_minutes: 10 };

    #[test]
    fn terminal_states_come_first() {
        let now = t("2026-03-08T12:00:00Z");
        let mut merged = pr("closed", "unknown");
        merged.merged = true;
        assert_eq!(
            decide(&merged, &CiVerdict::Green, &JobState::default(), &POLICY, now),
            Step::Complete("PR already merged".into())
        );
        assert_eq!(
            decide(&pr("closed", ""), &CiVerdict::Green, &JobState::default(), &POLICY, now),
            Step::Block("PR closed without merge".into())
        );
        let mut draft = pr("open", "draft");
        draft.draft = true;
        assert_eq!(
            decide(&draft, &CiVerdict::Green, &JobState::default(), &POLICY, now),
            Step::Block("PR is draft".into())
        );
    }

    #[test]
    fn failing_required_check_blocks_naming_it() {
        let failed = CiVerdict::Failed {
            name: "build".into(),
            url: "https://ci/1".into(),
        };
        assert_eq!(
            decide(
                &pr("open", "blocked"),
                &failed,
                &JobState::default(),
                &POLICY,
                t("2026-03-08T12:00:00Z")
            ),
            Step::Block("CI failing: build https://ci/1".into())
        );
    }

    #[test]
    fn conflicts_block_and_behind_updates_once() {
        let now = t("2026-03-08T12:00:00Z");
        assert_eq!(
            decide(
                &pr("open", "dirty"),
                &CiVerdict::Green,
                &JobState::default(),
                &POLICY,
                now
            ),
            Step::Block(CONFLICT.into())
        );
        assert_eq!(
            decide(
                &pr("open", "behind"),
                &CiVerdict::Green,
                &JobState::default(),
                &POLICY,
                now
            ),
            Step::UpdateBranch {
                expected_head_sha: "h1".into()
            }
        );
        let updated = JobState {
            updated_branch: true,
            ..Default::default()
        };
        assert!(matches!(
            decide(&pr("open", "behind"), &CiVerdict::Green, &updated, &POLICY, now),
            Step::Block(_)
        ));
    }

    #[test]
    fn pending_waits_until_the_timeout_then_blocks() {
        let start = t("2026-03-08T12:00:00Z");
        let pending = CiVerdict::Pending(vec!["build".into()]);
        let job = waiting(&JobState::default(), "h1", start);
        assert_eq!(
            decide(
                &pr("open", "blocked"),
                &pending,
                &job,
                &POLICY,
                start + Duration::minutes(9)
            ),
            Step::Wait(vec!["build".into()])
        );
        assert_eq!(
            decide(
                &pr("open", "blocked"),
                &pending,
                &job,
                &POLICY,
                start + Duration::minutes(10)
            ),
            Step::Block("checks still pending after 10 min: build".into())
        );
    }

    #[test]
    fn a_new_head_restarts_the_wait() {
        let start = t("2026-03-08T12:00:00Z");
        let job = waiting(&JobState::default(), "h1", start);
        let later = start + Duration::minutes(30);
        let moved = waiting(&job, "h2", later);
        assert_eq!(moved.wait_started_at, Some(later));
        let mut head2 = pr("open", "blocked");
        head2.head_sha = "h2".into();
        assert!(matches!(
            decide(&head2, &CiVerdict::Pending(vec!["ci".into()]), &moved, &POLICY, later),
            Step::Wait(_)
        ));
        assert_eq!(
            waiting(&moved, "h2", later + Duration::minutes(1)).wait_started_at,
            Some(later),
            "same head keeps its start"
        );
    }

    #[test]
    fn unknown_mergeability_waits_and_green_merges_the_pinned_head() {
        let now = t("2026-03-08T12:00:00Z");
        assert_eq!(
            decide(
                &pr("open", "unknown"),
                &CiVerdict::Green,
                &JobState::default(),
                &POLICY,
                now
            ),
            Step::Wait(vec!["mergeability".into()])
        );
        assert_eq!(
            decide(
                &pr("open", "clean"),
                &CiVerdict::Green,
                &JobState::default(),
                &POLICY,
                now
            ),
            Step::Merge { sha: "h1".into() }
        );
        assert_eq!(
            decide(
                &pr("open", "unstable"),
                &CiVerdict::Green,
                &JobState::default(),
                &POLICY,
                now
            ),
            Step::Merge { sha: "h1".into() },
            "optional checks failing do not block"
        );
        assert_eq!(merged_summary(7), "Merged PR #7");
    }
}
