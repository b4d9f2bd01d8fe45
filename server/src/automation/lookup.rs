//! The task-origin lookup: the two facts a merged-PR event needs about its task,
//! answered from the task's own row (never from the PR row's workspace).

use async_trait::async_trait;
use kandev_core::api::Origin;
use kandev_core::merged::TaskOrigin;

use crate::store::Store;

/// `None` means the task could not be resolved — missing, or a failed query.
/// The two present identically and both fail closed; the adapter logs them apart.
#[async_trait]
pub trait TaskOriginLookup: Send + Sync {
    async fn task_workspace_and_automation_origin(&self, task_id: &str) -> Option<TaskOrigin>;
}

pub struct StoreTaskOriginLookup {
    store: Store,
}

impl StoreTaskOriginLookup {
    pub fn new(store: Store) -> Self {
        StoreTaskOriginLookup { store }
    }
}

#[async_trait]
impl TaskOriginLookup for StoreTaskOriginLookup {
    async fn task_workspace_and_automation_origin(&self, task_id: &str) -> Option<TaskOrigin> {
        match self.store.task_workspace_and_origin(task_id).await {
            Ok(Some((workspace_id, origin))) => Some(TaskOrigin {
                workspace_id,
                is_automation_run: origin == Origin::AutomationRun,
            }),
            Ok(None) => {
                tracing::debug!(task_id, "merged-PR task lookup: no such task");
                None
            }
            Err(error) => {
                // Nothing else records that a merge was dropped for a reason
                // that was not the data's fault.
                tracing::warn!(task_id, %error, "merged-PR task lookup failed; the event fails closed");
                None
            }
        }
    }
}
