//! CI checks and reviews: GitHub's two check systems (check runs and commit
//! statuses) folded into one view, with required-check awareness, plus the
//! review summary the PR sync stores.

use serde::{Deserialize, Serialize};

mod latest;
mod verdict;
pub use latest::{ListedRun, current_runs};
pub use verdict::{Awaited, CiVerdict, Required, Requirement, ci_verdict};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Pending,
    Passed,
    /// Neutral or skipped: not a failure, and GitHub lets it satisfy a requirement.
    Neutral,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub status: CheckStatus,
    pub url: String,
    /// The GitHub App that reported it: check runs only. A commit status
    /// names no app, so it never meets a requirement pinned to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<i64>,
}

/// A check run: anything not completed is pending; success passes; neutral
/// and skipped are neutral; every other conclusion (failure, timed_out,
/// cancelled, action_required, stale, …) fails.
pub fn from_check_run(name: &str, status: &str, conclusion: Option<&str>, url: &str) -> Check {
    let status = if status != "completed" {
        CheckStatus::Pending
    } else {
        match conclusion.unwrap_or("") {
            "success" => CheckStatus::Passed,
            "neutral" | "skipped" => CheckStatus::Neutral,
            _ => CheckStatus::Failed,
        }
    };
    Check {
        name: name.to_string(),
        status,
        url: url.to_string(),
        app: None,
    }
}

/// A commit status: pending, success, or failure/error.
pub fn from_commit_status(context: &str, state: &str, url: &str) -> Check {
    let status = match state {
        "success" => CheckStatus::Passed,
        "pending" => CheckStatus::Pending,
        _ => CheckStatus::Failed,
    };
    Check {
        name: context.to_string(),
        status,
        url: url.to_string(),
        app: None,
    }
}

/// The sync's view: `checks_state` plus totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksSummary {
    /// `success`, `failure`, `pending`, or empty when there are no checks.
    pub state: String,
    pub total: i64,
    pub passing: i64,
}

pub fn summarize(checks: &[Check]) -> ChecksSummary {
    let total = checks.len() as i64;
    let passing = checks
        .iter()
        .filter(|c| matches!(c.status, CheckStatus::Passed | CheckStatus::Neutral))
        .count() as i64;
    let state = if checks.iter().any(|c| c.status == CheckStatus::Failed) {
        "failure"
    } else if checks.iter().any(|c| c.status == CheckStatus::Pending) {
        "pending"
    } else if total > 0 {
        "success"
    } else {
        ""
    };
    ChecksSummary {
        state: state.to_string(),
        total,
        passing,
    }
}

/// `review_state` and `review_count` from reviews `(user, state)` in submission
/// order: each reviewer's latest decisive review counts.
pub fn review_summary(reviews: &[(String, String)], requested_reviewers: usize) -> (String, i64) {
    let submitted = reviews.iter().filter(|(_, s)| s != "PENDING").count() as i64;
    let latest = latest_decisive(reviews);
    let state = if latest.iter().any(|(_, s)| *s == "CHANGES_REQUESTED") {
        "changes_requested"
    } else if latest.iter().any(|(_, s)| *s == "APPROVED") {
        "approved"
    } else if requested_reviewers > 0 {
        "review_required"
    } else {
        ""
    };
    (state.to_string(), submitted)
}

/// Each reviewer's latest decisive review (approve, request changes, dismissed).
fn latest_decisive(reviews: &[(String, String)]) -> Vec<(&str, &str)> {
    let mut latest: Vec<(&str, &str)> = vec![];
    for (user, state) in reviews {
        if !matches!(state.as_str(), "APPROVED" | "CHANGES_REQUESTED" | "DISMISSED") {
            continue;
        }
        match latest.iter_mut().find(|(u, _)| u == user) {
            Some(entry) => entry.1 = state,
            None => latest.push((user, state)),
        }
    }
    latest
}

/// Reviewers whose latest decisive review approves.
pub fn approvals(reviews: &[(String, String)]) -> u32 {
    latest_decisive(reviews)
        .iter()
        .filter(|(_, s)| *s == "APPROVED")
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, status: &str, conclusion: Option<&str>) -> Check {
        from_check_run(name, status, conclusion, &format!("https://ci/{name}"))
    }

    #[test]
    fn every_terminal_non_success_conclusion_fails() {
        for c in [
            "failure",
            "timed_out",
            "cancelled",
            "action_required",
            "stale",
            "startup_failure",
        ] {
            assert_eq!(run("x", "completed", Some(c)).status, CheckStatus::Failed, "{c}");
        }
        assert_eq!(run("x", "completed", Some("neutral")).status, CheckStatus::Neutral);
        assert_eq!(run("x", "completed", Some("skipped")).status, CheckStatus::Neutral);
        assert_eq!(run("x", "in_progress", None).status, CheckStatus::Pending);
        assert_eq!(from_commit_status("ci", "error", "").status, CheckStatus::Failed);
        assert_eq!(from_commit_status("ci", "pending", "").status, CheckStatus::Pending);
    }

    #[test]
    fn summary_state_and_totals() {
        assert_eq!(
            summarize(&[]),
            ChecksSummary {
                state: String::new(),
                total: 0,
                passing: 0
            }
        );
        let s = summarize(&[run("a", "completed", Some("success")), run("b", "queued", None)]);
        assert_eq!((s.state.as_str(), s.total, s.passing), ("pending", 2, 1));
        let s = summarize(&[
            run("a", "completed", Some("success")),
            from_commit_status("c", "failure", ""),
        ]);
        assert_eq!(s.state, "failure");
    }

    #[test]
    fn reviews_latest_decisive_state_per_reviewer() {
        let r = |u: &str, s: &str| (u.to_string(), s.to_string());
        assert_eq!(
            review_summary(&[r("a", "CHANGES_REQUESTED"), r("a", "APPROVED")], 0),
            ("approved".into(), 2)
        );
        assert_eq!(
            review_summary(&[r("a", "APPROVED"), r("b", "CHANGES_REQUESTED")], 0).0,
            "changes_requested"
        );
        assert_eq!(review_summary(&[r("a", "COMMENTED")], 1), ("review_required".into(), 1));
        assert_eq!(review_summary(&[], 0), (String::new(), 0));
        assert_eq!(
            approvals(&[r("a", "APPROVED"), r("a", "DISMISSED"), r("b", "APPROVED")]),
            1
        );
    }
}
