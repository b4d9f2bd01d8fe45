//! Run statuses: the stored lifecycle, read-time derivation, open-run counting
//! and worktree retention.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The task exists and its agent is started or starting ("Running").
    TaskCreated,
    Succeeded,
    Failed,
    /// Concurrency cap only; born terminal with no task.
    Skipped,
    /// Defined for parity, never written.
    Triggered,
    /// Read-time: a `task_created` run whose task is archived.
    Archived,
    /// Read-time: a `task_created` run whose task is gone or whose session was cancelled.
    Cancelled,
}

impl RunStatus {
    pub const ALL: [RunStatus; 7] = [
        RunStatus::TaskCreated,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Skipped,
        RunStatus::Triggered,
        RunStatus::Archived,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::TaskCreated => "task_created",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Skipped => "skipped",
            RunStatus::Triggered => "triggered",
            RunStatus::Archived => "archived",
            RunStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::TaskCreated | RunStatus::Triggered)
    }
}

/// What the read path knows about a run's task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunTaskFacts {
    pub exists: bool,
    pub archived: bool,
    pub primary_session_cancelled: bool,
}

/// Read-time status: only `task_created` rows change. A `succeeded` row whose
/// task is archived later still reads `succeeded`.
pub fn derive_status(stored: RunStatus, task: RunTaskFacts) -> RunStatus {
    if stored != RunStatus::TaskCreated {
        return stored;
    }
    if !task.exists {
        RunStatus::Cancelled
    } else if task.archived {
        RunStatus::Archived
    } else if task.primary_session_cancelled {
        RunStatus::Cancelled
    } else {
        stored
    }
}

/// An open run counts against `max_concurrent_runs`.
pub fn is_open(stored: RunStatus, task: RunTaskFacts) -> bool {
    derive_status(stored, task) == RunStatus::TaskCreated
}

/// The run summary: the first 280 characters of the newest agent message.
pub fn summary_excerpt(message: &str) -> String {
    message.chars().take(280).collect()
}

/// How many newest terminal runs per automation keep their worktree.
pub const KEEP_WORKTREES: usize = 10;
/// At most this many worktrees are reclaimed in one pass.
pub const MAX_RECLAIM: usize = 200;

/// A run as retention sees it, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionCandidate {
    pub run_id: String,
    pub terminal: bool,
    pub has_worktree: bool,
    pub in_use: bool,
}

/// Runs whose worktree may be removed: terminal runs beyond the newest ten,
/// with a live worktree and no session in use.
pub fn worktrees_to_reclaim(newest_first: &[RetentionCandidate]) -> Vec<String> {
    newest_first
        .iter()
        .filter(|c| c.terminal)
        .skip(KEEP_WORKTREES)
        .filter(|c| c.has_worktree && !c.in_use)
        .take(MAX_RECLAIM)
        .map(|c| c.run_id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(exists: bool, archived: bool, cancelled: bool) -> RunTaskFacts {
        RunTaskFacts {
            exists,
            archived,
            primary_session_cancelled: cancelled,
        }
    }

    #[test]
    fn derivation_only_touches_task_created_rows() {
        assert_eq!(
            derive_status(RunStatus::TaskCreated, facts(false, false, false)),
            RunStatus::Cancelled
        );
        assert_eq!(
            derive_status(RunStatus::TaskCreated, facts(true, true, false)),
            RunStatus::Archived
        );
        assert_eq!(
            derive_status(RunStatus::TaskCreated, facts(true, false, true)),
            RunStatus::Cancelled
        );
        assert_eq!(
            derive_status(RunStatus::TaskCreated, facts(true, false, false)),
            RunStatus::TaskCreated
        );
        assert_eq!(
            derive_status(RunStatus::Succeeded, facts(true, true, false)),
            RunStatus::Succeeded
        );
        assert!(is_open(RunStatus::TaskCreated, facts(true, false, false)));
        assert!(!is_open(RunStatus::TaskCreated, facts(true, true, false)));
        assert!(!is_open(RunStatus::Skipped, facts(false, false, false)));
    }

    #[test]
    fn names_round_trip() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn retention_keeps_the_ten_newest_terminal_runs() {
        let runs: Vec<RetentionCandidate> = (0..14)
            .map(|i| RetentionCandidate {
                run_id: format!("r{i}"),
                terminal: i != 0,
                has_worktree: i != 12,
                in_use: i == 13,
            })
            .collect();
        // r0 is not terminal; r1..r10 are kept; r11 reclaimed; r12 has no worktree; r13 in use
        assert_eq!(worktrees_to_reclaim(&runs), vec!["r11".to_string()]);
    }

    #[test]
    fn summary_is_280_characters() {
        assert_eq!(summary_excerpt(&"x".repeat(500)).chars().count(), 280);
        assert_eq!(summary_excerpt("short"), "short");
    }
}
