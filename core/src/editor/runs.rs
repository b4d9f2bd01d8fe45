//! The editor's run log: outcome text, status badge variants and filter chips.

use crate::api::{ManualRunResult, Run};
use crate::run_status::RunStatus;

/// Badge styles of the run log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadgeVariant {
    Neutral,
    Filled,
    Destructive,
    Outline,
}

pub fn badge(status: RunStatus) -> BadgeVariant {
    match status {
        RunStatus::Triggered | RunStatus::TaskCreated => BadgeVariant::Neutral,
        RunStatus::Succeeded => BadgeVariant::Filled,
        RunStatus::Failed => BadgeVariant::Destructive,
        RunStatus::Skipped | RunStatus::Archived | RunStatus::Cancelled => BadgeVariant::Outline,
    }
}

/// The outcome column: the error, else the summary, else `-`; `true` when it
/// is an error (shown in red).
pub fn outcome(run: &Run) -> (String, bool) {
    if !run.error_message.is_empty() {
        (run.error_message.clone(), true)
    } else if !run.summary.is_empty() {
        (run.summary.clone(), false)
    } else {
        ("-".into(), false)
    }
}

/// A filter chip: `None` is "All".
pub type Filter = Option<RunStatus>;

/// The chip a status counts under ("Running" covers triggered and started).
pub fn chip_of(status: RunStatus) -> RunStatus {
    if status == RunStatus::Triggered {
        RunStatus::TaskCreated
    } else {
        status
    }
}

/// The chips to show, in order, with their counts; a chip shows only when
/// its count is above zero. "All" always leads.
pub fn chips(runs: &[Run]) -> Vec<(Filter, usize)> {
    let mut out = vec![(None, runs.len())];
    for s in [
        RunStatus::TaskCreated,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Skipped,
        RunStatus::Archived,
        RunStatus::Cancelled,
    ] {
        let n = runs.iter().filter(|r| chip_of(r.status) == s).count();
        if n > 0 {
            out.push((Some(s), n));
        }
    }
    out
}

pub fn passes(filter: Filter, run: &Run) -> bool {
    filter.is_none_or(|s| chip_of(run.status) == s)
}

/// Skipped rows have no task and are inert.
pub fn opens_task(run: &Run) -> Option<&str> {
    (run.status != RunStatus::Skipped && !run.task_id.is_empty()).then_some(run.task_id.as_str())
}

/// The toast after "Run now": a Fluent id and its arguments, and whether it
/// reports a skip (info) rather than a start (success).
pub fn run_now_toast(result: &ManualRunResult) -> (&'static str, Vec<(&'static str, String)>) {
    if !result.skipped {
        ("automations-toast-triggered", vec![])
    } else if result.reason.trim().is_empty() {
        ("automations-toast-skipped-running", vec![])
    } else {
        ("automations-toast-skipped", vec![("reason", result.reason.clone())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use serde_json::Value;

    fn run(status: RunStatus, error: &str, summary: &str) -> Run {
        Run {
            id: "r".into(),
            automation_id: "a".into(),
            trigger_id: "t".into(),
            trigger_type: "manual".into(),
            task_id: if status == RunStatus::Skipped {
                String::new()
            } else {
                "task".into()
            },
            status,
            dedup_key: String::new(),
            trigger_data: Value::Null,
            error_message: error.into(),
            summary: summary.into(),
            session_id: String::new(),
            automation_name: None,
            workspace_id: None,
            created_at: DateTime::default(),
        }
    }

    #[test]
    fn outcome_prefers_error_then_summary_then_dash() {
        assert_eq!(outcome(&run(RunStatus::Failed, "boom", "s")), ("boom".into(), true));
        assert_eq!(outcome(&run(RunStatus::Succeeded, "", "done")), ("done".into(), false));
        assert_eq!(outcome(&run(RunStatus::Succeeded, "", "")), ("-".into(), false));
    }

    #[test]
    fn chips_show_only_statuses_present() {
        let runs = [
            run(RunStatus::Succeeded, "", ""),
            run(RunStatus::Succeeded, "", ""),
            run(RunStatus::Triggered, "", ""),
            run(RunStatus::Skipped, "", ""),
        ];
        assert_eq!(
            chips(&runs),
            vec![
                (None, 4),
                (Some(RunStatus::TaskCreated), 1),
                (Some(RunStatus::Succeeded), 2),
                (Some(RunStatus::Skipped), 1)
            ]
        );
        assert!(passes(Some(RunStatus::TaskCreated), &runs[2]));
        assert!(!passes(Some(RunStatus::Failed), &runs[0]));
        assert_eq!(opens_task(&runs[3]), None);
        assert_eq!(opens_task(&runs[0]), Some("task"));
    }

    #[test]
    fn run_now_toasts_name_the_skip_reason() {
        let r = |skipped: bool, reason: &str| ManualRunResult {
            triggered: !skipped,
            skipped,
            reason: reason.into(),
        };
        assert_eq!(run_now_toast(&r(false, "")).0, "automations-toast-triggered");
        assert_eq!(run_now_toast(&r(true, "")).0, "automations-toast-skipped-running");
        assert_eq!(
            run_now_toast(&r(true, "disabled")),
            ("automations-toast-skipped", vec![("reason", "disabled".to_string())])
        );
    }

    #[test]
    fn badge_variants_follow_the_run_log_table() {
        assert_eq!(badge(RunStatus::TaskCreated), BadgeVariant::Neutral);
        assert_eq!(badge(RunStatus::Succeeded), BadgeVariant::Filled);
        assert_eq!(badge(RunStatus::Failed), BadgeVariant::Destructive);
        assert_eq!(badge(RunStatus::Cancelled), BadgeVariant::Outline);
    }
}
