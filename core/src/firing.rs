//! The firing path's rules: admission reasons, the concurrency cap, which run
//! rows carry a dedup key, and the orchestrator's prompt/title resolution.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::interpolate::interpolate;
use crate::registry;
use crate::text::truncate_title;
use crate::trigger::{FiringType, TriggerType};

/// Skip reasons and failure texts: exact contract strings.
pub const SKIP_AUTOMATION_MISSING: &str = "automation no longer exists";
pub const SKIP_AUTOMATION_DISABLED: &str = "automation is disabled";
pub const SKIP_ALREADY_FIRED: &str = "this trigger has already fired";
pub const FAIL_AUTOMATION_NOT_FOUND: &str = "automation not found";
pub const FAIL_NO_REPOSITORY: &str = "no repository available — add a repository to the workspace";
/// The run row's text when the task could not be written: the database's own
/// error goes to the server log only, never to the run page or a notification.
pub const FAIL_TASK_NOT_CREATED: &str = "the run task could not be created — the server log has the cause";

/// A run's failure when this server has no agent runtime to start it on.
pub const FAIL_NO_RUNTIME: &str = "no agent runtime is configured";

/// `max_concurrent_runs=<N> reached`.
pub fn cap_reason(max: i64) -> String {
    format!("max_concurrent_runs={max} reached")
}

/// The `N` of a [`cap_reason`], when `text` is one.
pub fn parse_cap_reason(text: &str) -> Option<i64> {
    text.strip_prefix("max_concurrent_runs=")?
        .strip_suffix(" reached")?
        .parse()
        .ok()
}

/// The cap applies when `max > 0` and the open runs have reached it.
pub fn cap_reached(max_concurrent_runs: i64, open_runs: i64) -> bool {
    max_concurrent_runs > 0 && open_runs >= max_concurrent_runs
}

/// `max_concurrent_runs` on create: `<= 0` becomes 1.
pub fn clamp_max_concurrent_runs_on_create(requested: Option<i64>) -> i64 {
    match requested {
        Some(n) if n > 0 => n,
        _ => 1,
    }
}

/// The kind of run row being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunRow {
    /// `task_created`, written once the task exists.
    TaskCreated,
    /// `skipped` for the concurrency cap.
    CapSkipped,
    /// `failed` before any task existed.
    PreTaskFailed,
}

/// The dedup key a run row stores. For `github_pr_merged` only a row that
/// created a task carries the key, so a capped or pre-task-failed firing does
/// not consume it; every other type writes its key on every row.
pub fn row_dedup_key(trigger_type: &str, key: &str, row: RunRow) -> String {
    let merged = trigger_type == TriggerType::GithubPrMerged.as_str();
    if merged && row != RunRow::TaskCreated {
        String::new()
    } else {
        key.to_string()
    }
}

/// The run task's prompt: the interpolated prompt, or a fallback naming the
/// automation and the firing type when that is empty.
pub fn resolve_prompt(
    template: &str,
    automation_name: &str,
    firing_type: &str,
    data: &Value,
    now: DateTime<Utc>,
) -> String {
    let prompt = interpolate(template, firing_type, data, now);
    if prompt.is_empty() {
        format!("Automation '{automation_name}' triggered by {firing_type}")
    } else {
        prompt
    }
}

/// The run task's title: the first non-empty of the title template, the
/// registry default (none for `manual`) and `[Auto] <name>`, each interpolated,
/// then truncated to 60 characters.
pub fn resolve_title(
    template: &str,
    automation_name: &str,
    firing_type: &str,
    data: &Value,
    now: DateTime<Utc>,
) -> String {
    let registry_default = FiringType::parse(firing_type)
        .and_then(FiringType::trigger_type)
        .map(|t| registry::entry(t).default_task_title)
        .unwrap_or("");
    let fallback = format!("[Auto] {automation_name}");
    let title = [template, registry_default, fallback.as_str()]
        .into_iter()
        .map(|t| interpolate(t, firing_type, data, now))
        .find(|t| !t.is_empty())
        .unwrap_or_else(|| fallback.clone());
    truncate_title(&title)
}

/// Trigger data of a manual run.
pub fn manual_data() -> Value {
    serde_json::json!({"source": "manual"})
}

/// The failure text when an automation run hits a permission prompt.
pub fn permission_refused(title: &str) -> String {
    format!("Permission required: {title} — automation runs cannot answer prompts")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn cap_rules() {
        assert!(!cap_reached(0, 100));
        assert!(cap_reached(1, 1));
        assert!(!cap_reached(2, 1));
        assert_eq!(cap_reason(1), "max_concurrent_runs=1 reached");
        assert_eq!(clamp_max_concurrent_runs_on_create(Some(0)), 1);
        assert_eq!(clamp_max_concurrent_runs_on_create(Some(-5)), 1);
        assert_eq!(clamp_max_concurrent_runs_on_create(None), 1);
        assert_eq!(clamp_max_concurrent_runs_on_create(Some(3)), 3);
    }

    #[test]
    fn merged_rows_keep_the_key_only_when_a_task_was_created() {
        let t = "github_pr_merged";
        assert_eq!(row_dedup_key(t, "k", RunRow::TaskCreated), "k");
        assert_eq!(row_dedup_key(t, "k", RunRow::CapSkipped), "");
        assert_eq!(row_dedup_key(t, "k", RunRow::PreTaskFailed), "");
    }

    #[test]
    fn other_types_write_their_key_on_every_row() {
        for t in [
            "github_push",
            "github_ci",
            "github_pr",
            "scheduled",
            "webhook",
            "manual",
        ] {
            for row in [RunRow::TaskCreated, RunRow::CapSkipped, RunRow::PreTaskFailed] {
                assert_eq!(row_dedup_key(t, "k", row), "k", "{t} {row:?}");
            }
        }
    }

    #[test]
    fn prompt_falls_back_when_empty() {
        assert_eq!(
            resolve_prompt("", "Nightly", "manual", &json!({}), now()),
            "Automation 'Nightly' triggered by manual"
        );
        assert_eq!(
            resolve_prompt("{{data.missing}}", "N", "webhook", &json!({}), now()),
            "Automation 'N' triggered by webhook"
        );
        assert_eq!(
            resolve_prompt("hi {{data.x}}", "N", "webhook", &json!({"x": 1}), now()),
            "hi 1"
        );
    }

    #[test]
    fn title_resolution_order_and_truncation() {
        let data = json!({"repo": "acme/api", "pr_number": 7});
        assert_eq!(
            resolve_title("", "N", "github_pr_merged", &data, now()),
            "[Auto] PR merged — acme/api#7"
        );
        assert_eq!(
            resolve_title("Custom {{data.repo}}", "N", "github_pr_merged", &data, now()),
            "Custom acme/api"
        );
        assert_eq!(
            resolve_title("", "Nightly", "manual", &json!({}), now()),
            "[Auto] Nightly"
        );
        assert_eq!(
            resolve_title("{{data.none}}", "Nightly", "scheduled", &json!({}), now()),
            "[Auto] Nightly"
        );
        let long = "x".repeat(80);
        assert_eq!(
            resolve_title(&long, "N", "manual", &json!({}), now()).chars().count(),
            60
        );
    }
}
