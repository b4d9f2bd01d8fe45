//! Run recovery: a run whose agent turn lost its replica (no live turn lease)
//! is resumed once — a new agent turn on the same run task, so the same
//! bound target — and finished as `failed` if it is lost again. No run stays
//! open after a restart.

use kandev_core::api::{META_AGENT_PROFILE_ID, META_AUTOMATION_ID, META_EXECUTOR_PROFILE_ID};
use kandev_core::run_status::RunStatus;
use serde_json::Value;

use super::{Orchestrator, RunStart};
use crate::coord::lease;
use crate::store::Orphan;

/// The error a run ends with when its second turn is lost too.
pub const LOST_TWICE: &str = "the agent's session was lost with its replica twice; the run is not resumed again";

impl Orchestrator {
    /// One pass: takes over every orphaned run it can lease, then reopens
    /// the sessions stopped replicas left mid-reply.
    pub async fn recover_orphans(&self) -> usize {
        let orphans = match self.store.orphaned_runs(self.clock.now()).await {
            Ok(o) => o,
            Err(error) => {
                tracing::error!(%error, "could not list orphaned runs");
                return 0;
            }
        };
        let mut taken = 0;
        for o in orphans {
            // Another replica may be taking it at the same moment: one wins.
            if !self.leases.try_hold(&lease::run(&o.task_id)).await {
                continue;
            }
            taken += 1;
            self.recover(o).await;
        }
        taken + self.reopen_orphaned_sessions().await
    }

    async fn recover(&self, o: Orphan) {
        let now = self.clock.now();
        if let Err(error) = self
            .store
            .end_orphaned_sessions(&o.task_id, "its replica stopped during the turn", now)
            .await
        {
            tracing::warn!(task_id = %o.task_id, %error, "could not close the dead sessions");
        }
        if o.recoveries >= 1 {
            tracing::warn!(task_id = %o.task_id, run_id = %o.run_id, "run lost twice; finishing it as failed");
            self.metrics.run_recovered("failed");
            self.mark_run(&o.task_id, RunStatus::Failed, LOST_TWICE).await;
            return;
        }
        if let Err(error) = self.store.note_recovery(&o.run_id).await {
            tracing::error!(run_id = %o.run_id, %error, "could not count the resume; not resuming");
            self.leases.release(&lease::run(&o.task_id)).await;
            return;
        }
        match self.resume(&o).await {
            Ok(()) => {
                tracing::info!(task_id = %o.task_id, run_id = %o.run_id, automation_id = %o.automation_id, "resumed a run whose replica stopped");
                self.metrics.run_recovered("resumed");
            }
            Err(_) if !self.still_holds_run(&o.task_id, "its resumption's failure is not the run's") => {}
            Err(error) => {
                tracing::warn!(task_id = %o.task_id, %error, "could not resume the run");
                self.metrics.run_recovered("failed");
                let message = format!("could not resume the run after its replica stopped: {error}");
                self.mark_run(&o.task_id, RunStatus::Failed, &message).await;
            }
        }
    }

    /// A new turn on the same run task, with the prompt the run was created with.
    async fn resume(&self, o: &Orphan) -> Result<(), String> {
        let task = self.store.get_task(&o.task_id).await.map_err(|e| e.to_string())?;
        let meta = |k: &str| {
            task.metadata
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let repository = match &task.repository_id {
            Some(id) => self.store.get_repository(id).await.ok(),
            None => None,
        };
        let runtime = self.runtime().ok_or(kandev_core::firing::FAIL_NO_RUNTIME)?;
        runtime
            .start_run(RunStart {
                prompt: task.description.clone(),
                agent_profile_id: meta(META_AGENT_PROFILE_ID),
                executor_profile_id: meta(META_EXECUTOR_PROFILE_ID),
                automation_id: meta(META_AUTOMATION_ID),
                repository,
                task,
            })
            .await
            .map(|_| ())
    }
}
