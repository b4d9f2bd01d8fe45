//! The automations home, across the caller's workspaces: the agenda of
//! upcoming scheduled runs (by the scheduler's own rule) and one feed of
//! recent runs merged from every workspace.

use std::cmp::Reverse;

#[cfg(feature = "zones")]
use chrono::{DateTime, Utc};

use crate::api::Run;
#[cfg(feature = "zones")]
use crate::api::{AgendaEntry, Automation};
#[cfg(feature = "zones")]
use crate::trigger::TriggerType;

/// The next `limit` scheduled runs of every enabled scheduled trigger of
/// every enabled automation, soonest first. Invalid schedules have no runs
/// (the scheduler skips them too).
#[cfg(feature = "zones")]
pub fn agenda(automations: &[Automation], now: DateTime<Utc>, limit: usize) -> Vec<AgendaEntry> {
    let mut out: Vec<AgendaEntry> = automations
        .iter()
        .filter(|a| a.enabled)
        .flat_map(|a| {
            a.triggers
                .iter()
                .filter(|t| t.enabled && t.trigger_type == TriggerType::Scheduled)
                .flat_map(move |t| {
                    let cfg = crate::trigger::config::parse_scheduled(&t.config.to_string()).unwrap_or_default();
                    crate::cron::upcoming(&cfg.cron_expression, &cfg.timezone, now, limit)
                        .into_iter()
                        .map(move |at| AgendaEntry {
                            automation_id: a.id.clone(),
                            automation_name: a.name.clone(),
                            workspace_id: a.workspace_id.clone(),
                            trigger_id: t.id.clone(),
                            at,
                        })
                })
        })
        .collect();
    out.sort_by(|x, y| (x.at, &x.automation_name, &x.trigger_id).cmp(&(y.at, &y.automation_name, &y.trigger_id)));
    out.truncate(limit);
    out
}

/// One feed from each workspace's newest runs: newest first, `limit` long.
pub fn newest_runs(per_workspace: Vec<Vec<Run>>, limit: usize) -> Vec<Run> {
    let mut all: Vec<Run> = per_workspace.into_iter().flatten().collect();
    all.sort_by_key(|r| Reverse((r.created_at, r.id.clone())));
    all.truncate(limit);
    all
}

/// The feed's filter: by workspace, automation and status ("" = any).
pub fn run_matches(run: &Run, workspace_id: &str, automation_id: &str, status: &str) -> bool {
    (workspace_id.is_empty() || run.workspace_id.as_deref() == Some(workspace_id))
        && (automation_id.is_empty() || run.automation_id == automation_id)
        && (status.is_empty() || run.status.as_str() == status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Automation, Trigger};
    use crate::run_status::RunStatus;
    use crate::trigger::TriggerType;
    use chrono::{DateTime, TimeZone, Utc};
    use serde_json::json;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).single().expect("time")
    }

    fn trigger(id: &str, ty: TriggerType, config: serde_json::Value, enabled: bool) -> Trigger {
        Trigger {
            id: id.into(),
            automation_id: String::new(),
            trigger_type: ty,
            config,
            enabled,
            last_evaluated_at: None,
            created_at: at(0, 0),
            updated_at: at(0, 0),
        }
    }

    fn automation(id: &str, ws: &str, enabled: bool, triggers: Vec<Trigger>) -> Automation {
        Automation {
            id: id.into(),
            workspace_id: ws.into(),
            name: format!("auto {id}"),
            description: String::new(),
            prompt: String::new(),
            task_title_template: String::new(),
            agent_profile_id: String::new(),
            executor_profile_id: String::new(),
            repository_ids: vec![],
            no_repository: false,
            enabled,
            max_concurrent_runs: 1,
            last_triggered_at: None,
            created_at: at(0, 0),
            updated_at: at(0, 0),
            triggers,
        }
    }

    fn run(id: &str, ws: &str, created: DateTime<Utc>) -> Run {
        Run {
            id: id.into(),
            automation_id: format!("a-{ws}"),
            trigger_id: String::new(),
            trigger_type: "scheduled".into(),
            task_id: String::new(),
            status: RunStatus::Succeeded,
            dedup_key: String::new(),
            trigger_data: json!({}),
            error_message: String::new(),
            summary: String::new(),
            session_id: String::new(),
            automation_name: None,
            workspace_id: Some(ws.into()),
            created_at: created,
        }
    }

    #[test]
    #[cfg(feature = "zones")]
    fn agenda_merges_enabled_schedules_soonest_first() {
        let hourly = json!({"cron_expression": "@hourly", "timezone": "UTC"});
        let half = json!({"cron_expression": "30 * * * *", "timezone": "UTC"});
        let list = [
            automation(
                "a",
                "w1",
                true,
                vec![trigger("t1", TriggerType::Scheduled, hourly.clone(), true)],
            ),
            automation("b", "w2", true, vec![trigger("t2", TriggerType::Scheduled, half, true)]),
            // disabled automation, disabled trigger, other type, invalid schedule: no runs
            automation(
                "c",
                "w1",
                false,
                vec![trigger("t3", TriggerType::Scheduled, hourly.clone(), true)],
            ),
            automation(
                "d",
                "w1",
                true,
                vec![trigger("t4", TriggerType::Scheduled, hourly, false)],
            ),
            automation(
                "e",
                "w1",
                true,
                vec![trigger("t5", TriggerType::Webhook, json!({}), true)],
            ),
            automation(
                "f",
                "w1",
                true,
                vec![trigger(
                    "t6",
                    TriggerType::Scheduled,
                    json!({"cron_expression": "nope"}),
                    true,
                )],
            ),
        ];
        let got: Vec<_> = agenda(&list, at(10, 10), 3)
            .into_iter()
            .map(|e| (e.trigger_id, e.workspace_id, e.at))
            .collect();
        assert_eq!(
            got,
            [
                ("t2".to_string(), "w2".to_string(), at(10, 30)),
                ("t1".to_string(), "w1".to_string(), at(11, 0)),
                ("t2".to_string(), "w2".to_string(), at(11, 30)),
            ]
        );
    }

    #[test]
    fn the_feed_is_newest_first_across_workspaces_and_filterable() {
        let feed = newest_runs(
            vec![
                vec![run("r3", "w1", at(9, 0)), run("r1", "w1", at(7, 0))],
                vec![run("r2", "w2", at(8, 0))],
            ],
            2,
        );
        assert_eq!(feed.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r3", "r2"]);
        assert!(run_matches(&feed[1], "w2", "", ""));
        assert!(!run_matches(&feed[1], "w1", "", ""));
        assert!(run_matches(&feed[1], "", "a-w2", "succeeded"));
        assert!(!run_matches(&feed[1], "", "", "failed"));
    }
}
