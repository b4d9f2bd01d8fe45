//! The evaluation trace stays bounded: each automation keeps its newest few
//! hundred records however many events it sees, and lists them newest first.

use kandev_core::gate::{Gate, Outcome};
use kandev_server::automation::evaluations::{EventNote, TriggerNote};
use kandev_server::store::evaluations::KEEP_PER_AUTOMATION;
use serde_json::json;

use crate::on_both_databases;
use crate::support::{Db, spawn_app};

async fn a_busy_automation_keeps_only_its_newest_evaluations(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "Busy", "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}}]}),
        )
        .await;
    let (automation, trigger) = (
        a["id"].as_str().expect("id").to_string(),
        a["triggers"][0]["id"].as_str().expect("trigger").to_string(),
    );
    let recorder = app.services().automation.recorder();
    let start = chrono::Utc::now();
    // Five rounds, each written before the next: the table sees every one.
    for round in 0..5 {
        for i in 0..200 {
            let n = round * 200 + i;
            recorder.record(
                EventNote {
                    trigger_type: "github_pr_merged".into(),
                    event_subject: "github.task_pr.updated".into(),
                    summary: format!("event {n}"),
                    at: start + chrono::Duration::milliseconds(n),
                },
                vec![TriggerNote {
                    automation_id: automation.clone(),
                    trigger_id: trigger.clone(),
                    outcome: Outcome::Stopped,
                    gate: Some(Gate::Config),
                }],
            );
        }
        recorder.flush().await;
    }
    let rows = app.count("automation_evaluations").await;
    assert!(
        (KEEP_PER_AUTOMATION..=KEEP_PER_AUTOMATION * 3 / 2).contains(&rows),
        "1,000 evaluations leave a few hundred rows, not {rows}"
    );
    let r = app
        .get(&format!("/api/v1/automations/{automation}/evaluations?limit=500"))
        .await;
    let list = r.body.as_array().expect("list");
    assert_eq!(list[0]["summary"], "event 999", "newest first");
    assert_eq!(list[0]["gate"], "config");
    assert!(list.len() as i64 >= KEEP_PER_AUTOMATION);
    // Each round spans several multi-row INSERTs: every row keeps its own values.
    for (i, e) in list.iter().enumerate() {
        assert_eq!(e["summary"], format!("event {}", 999 - i), "row {i}");
        assert_eq!(e["trigger_id"], trigger.as_str(), "row {i}");
        assert_eq!(e["outcome"], "stopped", "row {i}");
    }
    app.stop().await;
}
on_both_databases!(a_busy_automation_keeps_only_its_newest_evaluations);
