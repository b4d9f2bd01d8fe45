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

/// What the outcome column says: a message of ours (a Fluent id and its
/// arguments, so it reads in the UI's language) or text from elsewhere (an
/// agent's summary or error), shown as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutcomeText {
    Message(&'static str, Vec<(&'static str, String)>),
    Verbatim(String),
}

/// A run's error or skip reason: the server's own texts (contract strings in
/// `firing`) become messages; anything else (an agent's words) is verbatim.
pub fn explain(text: &str) -> OutcomeText {
    use crate::firing::*;
    let id = match text {
        FAIL_NO_REPOSITORY => "run-error-no-repository",
        FAIL_AUTOMATION_NOT_FOUND => "run-error-automation-not-found",
        FAIL_TASK_NOT_CREATED => "run-error-task-not-created",
        FAIL_NO_RUNTIME => "run-error-no-runtime",
        SKIP_AUTOMATION_MISSING => "run-error-automation-missing",
        SKIP_AUTOMATION_DISABLED => "run-error-automation-disabled",
        SKIP_ALREADY_FIRED => "run-error-already-fired",
        _ => {
            return match parse_cap_reason(text) {
                Some(max) => OutcomeText::Message("run-error-cap-reached", vec![("max", max.to_string())]),
                None => OutcomeText::Verbatim(text.to_string()),
            };
        }
    };
    OutcomeText::Message(id, vec![])
}

/// The outcome column: the error, else the summary, else `-`; `true` when it
/// is an error (shown in red).
pub fn outcome(run: &Run) -> (OutcomeText, bool) {
    if !run.error_message.is_empty() {
        (explain(&run.error_message), true)
    } else if !run.summary.is_empty() {
        (OutcomeText::Verbatim(run.summary.clone()), false)
    } else {
        (OutcomeText::Verbatim("-".into()), false)
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

/// The toast after "Run now": a Fluent id and its arguments (a skip's
/// `reason`, to be [`explain`]ed into the UI's language).
pub fn run_now_toast(result: &ManualRunResult) -> (&'static str, Option<OutcomeText>) {
    if !result.skipped {
        ("automations-toast-triggered", None)
    } else if result.reason.trim().is_empty() {
        ("automations-toast-skipped-running", None)
    } else {
        ("automations-toast-skipped", Some(explain(&result.reason)))
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

    fn verbatim(s: &str) -> OutcomeText {
        OutcomeText::Verbatim(s.into())
    }

    #[test]
    fn outcome_prefers_error_then_summary_then_dash() {
        assert_eq!(outcome(&run(RunStatus::Failed, "boom", "s")), (verbatim("boom"), true));
        assert_eq!(
            outcome(&run(RunStatus::Succeeded, "", "done")),
            (verbatim("done"), false)
        );
        assert_eq!(outcome(&run(RunStatus::Succeeded, "", "")), (verbatim("-"), false));
    }

    #[test]
    fn the_servers_own_run_texts_become_messages_and_an_agents_stay_verbatim() {
        use crate::firing::*;
        let message = |id| OutcomeText::Message(id, vec![]);
        assert_eq!(explain(FAIL_NO_REPOSITORY), message("run-error-no-repository"));
        assert_eq!(
            explain(FAIL_AUTOMATION_NOT_FOUND),
            message("run-error-automation-not-found")
        );
        assert_eq!(explain(FAIL_TASK_NOT_CREATED), message("run-error-task-not-created"));
        assert_eq!(explain(FAIL_NO_RUNTIME), message("run-error-no-runtime"));
        assert_eq!(
            explain(SKIP_AUTOMATION_MISSING),
            message("run-error-automation-missing")
        );
        assert_eq!(
            explain(SKIP_AUTOMATION_DISABLED),
            message("run-error-automation-disabled")
        );
        assert_eq!(explain(SKIP_ALREADY_FIRED), message("run-error-already-fired"));
        assert_eq!(
            explain(&cap_reason(3)),
            OutcomeText::Message("run-error-cap-reached", vec![("max", "3".into())])
        );
        assert_eq!(
            explain("max_concurrent_runs=x reached"),
            verbatim("max_concurrent_runs=x reached")
        );
        assert_eq!(
            explain("the agent exited with status 2"),
            verbatim("the agent exited with status 2")
        );
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
        assert_eq!(run_now_toast(&r(false, "")), ("automations-toast-triggered", None));
        assert_eq!(run_now_toast(&r(true, "")), ("automations-toast-skipped-running", None));
        assert_eq!(
            run_now_toast(&r(true, crate::firing::SKIP_AUTOMATION_DISABLED)),
            (
                "automations-toast-skipped",
                Some(OutcomeText::Message("run-error-automation-disabled", vec![]))
            )
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
