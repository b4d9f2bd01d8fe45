//! The merger's read-back after a merge call GitHub refused or whose answer
//! was lost: the rule and its waits are `kandev_core::merger::read_back`'s.

use kandev_core::merger::{MergeCall, ReadBack, Said, merged_summary, read_back};
use kandev_core::read_lag::reread_delay;

use super::Merger;
use super::job::End;
use crate::store::MergerJob;
use kandev_core::api::Task;

impl Merger {
    /// Reads the PR back after a merge call that was refused or whose answer
    /// was lost, until a read shows it merged or closed or core's waits are
    /// spent; then `otherwise` stands. `method`: the one the call asked for.
    pub(super) async fn read_back(
        &self,
        task: &Task,
        job: &MergerJob,
        settings: &kandev_core::api::GithubWorkspaceSettings,
        method: &str,
        call: MergeCall,
        otherwise: Said,
    ) -> End {
        for attempt in 0.. {
            let wait = match self.github.client().pull(&job.owner, &job.repo, job.pr_number).await {
                Ok(after) => match read_back(call, after.merged || after.merged_at.is_some(), &after.state, attempt) {
                    ReadBack::Merged => {
                        self.merged(task, &after, settings, method, "").await;
                        return End::Done(merged_summary(job.pr_number));
                    }
                    ReadBack::Complete(said) => return End::Done(said),
                    ReadBack::Block(said) => return End::Blocked(said),
                    ReadBack::Open { wait } => wait,
                },
                Err(e) => {
                    tracing::info!(task_id = %task.id, error = %e, "could not read the PR back after its merge call");
                    reread_delay(attempt)
                }
            };
            let Some(wait) = wait else { break };
            tokio::select! {
                _ = self.shutdown.cancelled() => return End::Suspended,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        End::Blocked(otherwise)
    }
}
