//! Turn finalisation: the run's status is the outcome of the agent's turn,
//! never of what the agent did with its tools.

use kandev_core::api::Origin;
use kandev_core::run_status::{RunStatus, worktrees_to_reclaim};

use super::Orchestrator;

/// How an agent turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    /// The prompt returned cleanly (`end_turn`, or any reason but error/cancel).
    Succeeded,
    Cancelled(String),
    Failed(String),
    /// Stopped because this replica no longer holds the run's lease (another
    /// took it, or it ran out unrenewed): the run is not this turn's to end.
    HandedOver,
}

/// Said of a turn stopped because its replica no longer holds its run.
pub const HANDED_OVER: &str = "this replica no longer holds the run's lease";

impl Orchestrator {
    /// Called by the agent runtime when a turn of a task's session ends.
    pub async fn finish_turn(&self, task_id: &str, outcome: TurnOutcome) {
        let Ok(task) = self.store.get_task(task_id).await else {
            return;
        };
        if task.origin != Origin::AutomationRun {
            return;
        }
        // A turn whose run moved to another replica (this one stalled, or
        // could not renew) is not what the run ends with: the resumed one is.
        // Its lease, if still this replica's, is let go, so the run is resumed.
        let lease = crate::coord::lease::run(task_id);
        if outcome == TurnOutcome::HandedOver {
            self.leases.release(&lease).await;
            tracing::warn!(task_id, "{HANDED_OVER}: its turn's outcome is not the run's");
            return;
        }
        if !self.leases.confirm(&lease).await {
            tracing::warn!(task_id, ?outcome, "{HANDED_OVER}: its turn's outcome is not the run's");
            return;
        }
        match outcome {
            TurnOutcome::Succeeded => self.mark_run(task_id, RunStatus::Succeeded, "").await,
            TurnOutcome::Cancelled(m) => {
                let m = if m.is_empty() { "cancelled".to_string() } else { m };
                self.mark_run(task_id, RunStatus::Failed, &m).await
            }
            TurnOutcome::Failed(m) => {
                let m = if m.is_empty() { "agent failed".to_string() } else { m };
                self.mark_run(task_id, RunStatus::Failed, &m).await
            }
            TurnOutcome::HandedOver => {}
        }
    }

    /// `MarkRunFailedByTaskID`: flips the task's newest `task_created` row to
    /// `failed`. The row keeps its dedup key, so the firing is not retried.
    pub async fn mark_run_failed_by_task_id(&self, task_id: &str, error: &str) {
        self.mark_run(task_id, RunStatus::Failed, error).await;
    }

    pub(super) async fn mark_run(&self, task_id: &str, status: RunStatus, error: &str) {
        let ended = self
            .store
            .mark_run_terminal_by_task(task_id, status, error, self.clock.now())
            .await;
        // Only now that the run reads as ended: a run still open without its
        // lease is what recovery resumes, which would start it again.
        self.leases.release(&crate::coord::lease::run(task_id)).await;
        match ended {
            Ok(Some(automation_id)) => {
                self.metrics.run(status.as_str());
                if let Ok(Some(run)) = self.store.run_for_task(task_id).await {
                    self.notify_run(&automation_id, &run.id).await;
                }
                self.apply_retention(&automation_id).await;
            }
            Ok(None) => {}
            Err(e) => tracing::error!(task_id, error = %e, "could not finalise the run"),
        }
    }

    /// Keeps the worktrees of the ten newest terminal runs; older ones go.
    async fn apply_retention(&self, automation_id: &str) {
        let Some(runtime) = self.runtime() else { return };
        let candidates = match self.store.retention_candidates(automation_id).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(automation_id, error = %e, "retention could not list runs");
                return;
            }
        };
        for task_id in worktrees_to_reclaim(&candidates) {
            // Re-checked just before removal: a session may have started meanwhile.
            let busy = self
                .store
                .list_sessions(&task_id)
                .await
                .map(|s| s.iter().any(|s| s.state == "STARTING" || s.state == "RUNNING"));
            if busy.unwrap_or(true) {
                continue;
            }
            match runtime.reclaim_worktree(&task_id).await {
                Ok(()) => {
                    if let Err(e) = self.store.clear_worktree(&task_id).await {
                        tracing::warn!(task_id, error = %e, "could not record a reclaimed worktree");
                    }
                }
                Err(e) => tracing::warn!(task_id, error = %e, "could not reclaim a run worktree"),
            }
        }
    }
}
