//! The "Pull request merged" trigger's decisions: the per-event gates (1–7),
//! the per-trigger gates (8–11), the dedup key and the six-key trigger data.

use std::collections::HashSet;

use chrono::SecondsFormat;
use serde_json::{Map, Value, json};

use crate::gate::Gate;
use crate::task_pr::TaskPr;
use crate::trigger::config::GithubPrMergedConfig;
use crate::trigger::matching::{merged_base_branch_matches, merged_repo_matches};

/// What the task-origin lookup answers about the event's task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOrigin {
    pub workspace_id: String,
    pub is_automation_run: bool,
}

/// Gates 2–5, on the normalised row (gate 1 is normalisation itself).
pub fn check_event(pr: &TaskPr) -> Result<(), Gate> {
    if pr.task_id.is_empty() {
        return Err(Gate::TaskId);
    }
    if !pr.is_merged() {
        return Err(Gate::MergedState);
    }
    if pr.owner.is_empty() || pr.repo.is_empty() {
        return Err(Gate::RepoIdentity);
    }
    if pr.pr_number <= 0 {
        return Err(Gate::PrNumber);
    }
    Ok(())
}

/// Gates 6–7, on the lookup's answer. `None` means the task did not resolve.
pub fn check_origin(origin: Option<&TaskOrigin>) -> Result<&TaskOrigin, Gate> {
    let origin = origin.ok_or(Gate::TaskResolvable)?;
    if origin.is_automation_run {
        return Err(Gate::NotAutomationRun);
    }
    Ok(origin)
}

/// Gates 8–10 for one trigger. The lookup's workspace is authoritative; the
/// row's `workspace_id` has no vote. Both workspaces must be non-empty.
pub fn check_trigger(
    task_workspace: &str,
    automation_workspace: &str,
    cfg: &GithubPrMergedConfig,
    pr: &TaskPr,
) -> Result<(), Gate> {
    if task_workspace.is_empty() || automation_workspace.is_empty() || task_workspace != automation_workspace {
        return Err(Gate::Workspace);
    }
    if !merged_repo_matches(cfg, &pr.owner, &pr.repo) {
        return Err(Gate::Repository);
    }
    if !merged_base_branch_matches(&cfg.base_branches, &pr.base_branch) {
        return Err(Gate::BaseBranch);
    }
    Ok(())
}

/// `pr_merged:<task_id>:<lower owner>/<lower repo>#<pr_number>`.
pub fn dedup_key(pr: &TaskPr) -> String {
    format!(
        "pr_merged:{}:{}/{}#{}",
        pr.task_id,
        pr.owner.to_lowercase(),
        pr.repo.to_lowercase(),
        pr.pr_number
    )
}

/// The trigger data: exactly `task_id, repo, pr_number, pr_url, base_branch,
/// merged_at`. No prose (title, body, author, head branch) ever enters it.
pub fn trigger_data(pr: &TaskPr) -> Value {
    let merged_at = pr
        .merged_at
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default();
    let mut map = Map::new();
    map.insert("task_id".into(), json!(pr.task_id));
    map.insert("repo".into(), json!(pr.full_repo()));
    map.insert("pr_number".into(), json!(pr.pr_number));
    map.insert("pr_url".into(), json!(pr.pr_url));
    map.insert("base_branch".into(), json!(pr.base_branch));
    map.insert("merged_at".into(), json!(merged_at));
    Value::Object(map)
}

/// Gate 11: the per-event set of `(automation_id, dedup_key)` pairs already
/// handed to `fire_trigger`. Created per event, never shared, never persisted;
/// a pair stays in the set even when its firing errors.
#[derive(Debug, Default)]
pub struct FiredSet {
    pairs: HashSet<(String, String)>,
}

impl FiredSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the pair; `false` when it was already there (the trigger is skipped).
    pub fn admit(&mut self, automation_id: &str, dedup_key: &str) -> bool {
        self.pairs.insert((automation_id.to_string(), dedup_key.to_string()))
    }
}

#[cfg(test)]
mod tests;
