//! `archive_task_kandev` with the target binding: a `github_pr_merged` run
//! may archive only its persisted event target. Checked before any mutation.

use kandev_core::TriggerType;
use kandev_core::access::Level;
use kandev_core::api::{META_TARGET_TASK_ID, META_TRIGGER_TYPE, Origin, Task};

use super::McpCaller;
use super::scope::{Refusal, Scope, actor};
use crate::board::BoardService;
use crate::error::ServiceError;
use crate::store::Store;

pub const ARCHIVE_TASK_ID_REQUIRED: &str = "task_id is required";
pub const ARCHIVE_NOT_BOUND: &str = "archive target is not bound to this automation run";
pub const ARCHIVE_CALLER_UNRESOLVED: &str = "archive caller task cannot be resolved";
pub const ARCHIVE_FAILED: &str = "Failed to archive task";

/// Whether the caller task is bound by the merged trigger's target rule.
fn bound_target(caller: &Task) -> Option<Result<String, ()>> {
    let is_merged_run = caller.origin == Origin::AutomationRun
        && caller.metadata.get(META_TRIGGER_TYPE).and_then(|v| v.as_str())
            == Some(TriggerType::GithubPrMerged.as_str());
    if !is_merged_run {
        return None;
    }
    // A missing, empty or non-string target fails closed.
    Some(
        caller
            .metadata
            .get(META_TARGET_TASK_ID)
            .and_then(|v| v.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .ok_or(()),
    )
}

/// Returns the tool's JSON text, or the tool error message. The binding is
/// checked first (its refusal is pinned); then a task outside the caller's
/// reach fails exactly as a missing one.
pub async fn archive(
    store: &Store,
    board: &BoardService,
    scope: &Scope,
    caller: &McpCaller,
    task_id: &str,
) -> Result<String, String> {
    let task_id = task_id.trim();
    if task_id.is_empty() {
        return Err(ARCHIVE_TASK_ID_REQUIRED.into());
    }
    if let McpCaller::Session { task_id: caller_id, .. } = caller {
        let caller_task = store
            .get_task(caller_id)
            .await
            .map_err(|_| ARCHIVE_CALLER_UNRESOLVED.to_string())?;
        match bound_target(&caller_task) {
            Some(Ok(target)) if target == task_id => {}
            Some(_) => {
                tracing::warn!(caller = %caller_id, requested = %task_id, "archive refused: not this run's bound target");
                return Err(ARCHIVE_NOT_BOUND.into());
            }
            None => {}
        }
    }
    match scope.task(caller, task_id, Level::Write).await {
        Ok(_) => {}
        Err(Refusal::Hidden) => return Err(ARCHIVE_FAILED.into()),
        Err(r) => return Err(r.message("task")),
    }
    match board.archive(task_id, &actor(caller)).await {
        Ok(result) => Ok(serde_json::to_string_pretty(&result).unwrap_or_default()),
        Err(ServiceError::NotFound(_)) => Err(ARCHIVE_FAILED.into()),
        Err(e) => {
            tracing::warn!(task_id, error = %e, "archive failed");
            Err(ARCHIVE_FAILED.into())
        }
    }
}
