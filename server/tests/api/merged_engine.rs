//! Spec group "Engine integration" for the merged trigger, plus the
//! evaluation record ("why didn't it fire?").

use std::sync::Arc;

use chrono::{DateTime, Utc};
use kandev_server::clock::ManualClock;
use serde_json::json;

use crate::engine::{Form, HOLD_PROMPT, merged_pr, quiet};
use crate::on_both_databases;
use crate::support::{Db, Spawn, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_run_row_write_deletes_the_task_and_leaves_the_key_unconsumed() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    app.exec(
        "CREATE TRIGGER refuse_run_rows BEFORE INSERT ON automation_runs WHEN NEW.status = 'task_created' \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    )
    .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty(), "no run row of any status");
    assert_eq!(app.count("tasks").await, 1, "the abandoned run task was deleted");
    app.exec("DROP TRIGGER refuse_run_rows").await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let runs = app.wait_for_runs(&a, 1).await;
    assert_eq!(
        runs[0].dedup_key,
        format!("pr_merged:{t}:acme/api#7"),
        "the key was never consumed"
    );
    app.stop().await;
}

async fn at_the_cap_a_second_merge_records_a_skip_naming_the_cap_and_no_task(db: Db) {
    let app = spawn_app(db).await;
    let w = app.workspace_with_repo("W").await;
    let (holder, t) = (app.task(&w, "holder").await, app.task(&w, "T").await);
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), HOLD_PROMPT, 1)
        .await;
    app.in_flight_run(&a, &holder).await;
    let tasks_before = app.count("tasks").await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    let runs = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    let skipped = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "skipped")
        .expect("a skipped row");
    assert_eq!(skipped["error_message"], "max_concurrent_runs=1 reached");
    assert_eq!(skipped["task_id"], "");
    assert_eq!(skipped["dedup_key"], "");
    assert_eq!(app.count("tasks").await, tasks_before, "no task was created");
    app.stop().await;
}
on_both_databases!(at_the_cap_a_second_merge_records_a_skip_naming_the_cap_and_no_task);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_automation_fires_nothing_and_last_triggered_at_stays() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    app.patch(&format!("/api/v1/automations/{a}"), json!({"enabled": false}))
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty());
    assert!(app.get(&format!("/api/v1/automations/{a}")).await.body["last_triggered_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_trigger_config_skips_only_that_trigger() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let broken = app
        .merged_automation(&w, json!({"all_repos": "yes"}), "e2e:message(\"ok\")", 1)
        .await;
    let valid = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    assert_eq!(app.wait_for_runs(&valid, 1).await.len(), 1);
    assert!(app.runs_of(&broken).await.is_empty());
    let evals = app.get(&format!("/api/v1/automations/{broken}/evaluations")).await.body;
    assert_eq!(evals[0]["gate"], "config");
    app.stop().await;
}

fn fixed(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triggers_created_in_the_same_clock_tick_evaluate_in_created_at_then_id_order() {
    let clock = Arc::new(ManualClock::new(fixed("2026-03-08T12:00:00Z")));
    let app = Spawn::new(Db::Sqlite).clock(clock.clone()).start().await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .automation(
            &w,
            json!({"name": "A", "prompt": "e2e:message(\"ok\")", "triggers": [
                {"type": "github_pr_merged", "config": {"all_repos": true}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    // The clock does not move: the second trigger lands in the same tick.
    app.post(
        &format!("/api/v1/automations/{a}/triggers"),
        json!({"type": "github_pr_merged", "config": {"all_repos": true, "base_branches": ["main"]}}),
    )
    .await;
    let listed = app
        .services()
        .store
        .list_enabled_triggers_by_type(kandev_core::TriggerType::GithubPrMerged)
        .await
        .unwrap();
    assert_eq!(listed[0].created_at, listed[1].created_at, "one clock tick");
    assert!(
        listed[0].trigger_id < listed[1].trigger_id,
        "ties break on id ascending"
    );
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let runs = app.wait_for_runs(&a, 1).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].trigger_id, listed[0].trigger_id);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_matching_triggers_on_one_automation_make_one_run_credited_to_the_first() {
    let clock = Arc::new(ManualClock::new(fixed("2026-03-08T12:00:00Z")));
    let app = Spawn::new(Db::Sqlite).clock(clock.clone()).start().await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(
            &w,
            json!({"all_repos": true, "base_branches": []}),
            "e2e:message(\"ok\")",
            5,
        )
        .await;
    clock.advance(chrono::Duration::seconds(1));
    let second = app
        .post(
            &format!("/api/v1/automations/{a}/triggers"),
            json!({"type": "github_pr_merged", "config": {"all_repos": true, "base_branches": ["main"]}}),
        )
        .await;
    let first_id = app.get(&format!("/api/v1/automations/{a}")).await.body["triggers"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(second.body["id"].as_str().unwrap(), first_id);
    // No waiting on the asynchronous run-row write: the fired set does this.
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    let runs = app.runs_of(&a).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].trigger_id, first_id);
    let evals = app.get(&format!("/api/v1/automations/{a}/evaluations")).await.body;
    assert!(
        evals
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["outcome"] == "deduplicated" && e["gate"] == "fired_set"),
        "{evals}"
    );
    app.stop().await;
}

async fn two_automations_each_fire_their_own_run_for_one_event(db: Db) {
    let app = spawn_app(db).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a1 = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"1\")", 1)
        .await;
    let a2 = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"2\")", 1)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let (r1, r2) = (app.wait_for_runs(&a1, 1).await, app.wait_for_runs(&a2, 1).await);
    assert_eq!((r1.len(), r2.len()), (1, 1));
    assert_eq!(r1[0].dedup_key, r2[0].dedup_key, "same key, separate dedup namespaces");
    app.stop().await;
}
on_both_databases!(two_automations_each_fire_their_own_run_for_one_event);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_that_created_a_task_and_then_failed_still_consumes_the_key() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let broken = app
        .post("/api/v1/agent-profiles", json!({"name": "broken", "command": "false"}))
        .await;
    let profile = broken.body["id"].as_str().unwrap();
    let a = app
        .automation(
            &w,
            json!({"name": "A", "agent_profile_id": profile, "max_concurrent_runs": 5,
                   "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let failed = app.wait_for_run_status(&a, "failed").await;
    assert_eq!(
        failed.dedup_key,
        format!("pr_merged:{t}:acme/api#7"),
        "the row keeps its key"
    );
    assert!(!failed.task_id.is_empty());
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert_eq!(app.runs_of(&a).await.len(), 1, "not retried: no second task");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_events_at_the_cap_record_three_keyless_skips() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let (holder, t) = (app.task(&w, "holder").await, app.task(&w, "T").await);
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), HOLD_PROMPT, 1)
        .await;
    app.in_flight_run(&a, &holder).await;
    for reviews in 1..=3 {
        let mut pr = merged_pr(&t, "acme", "api", 7);
        pr.review_count = reviews;
        app.publish_pr(&pr, Form::Typed).await;
    }
    quiet(&app).await;
    let skipped: Vec<_> = app
        .runs_of(&a)
        .await
        .into_iter()
        .filter(|r| r.status.as_str() == "skipped")
        .collect();
    assert_eq!(skipped.len(), 3, "repeats are not collapsed");
    assert!(skipped.iter().all(|r| r.dedup_key.is_empty()));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_trigger_row_on_an_enabled_automation_does_not_fire() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .automation(&w, json!({"name": "A", "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}, "enabled": false}]}))
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluations_say_which_gate_stopped_an_event_and_skip_other_workspaces() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let v = app.workspace_with_repo("V").await;
    let t = app.task(&w, "T").await;
    let other = app.task(&v, "elsewhere").await;
    let a = app
        .merged_automation(
            &w,
            json!({"all_repos": true, "base_branches": ["release/*"]}),
            "e2e:message(\"ok\")",
            1,
        )
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    app.publish_pr(&merged_pr(&other, "acme", "api", 8), Form::Typed).await;
    let mut release = merged_pr(&t, "acme", "api", 9);
    release.base_branch = "release/v2".into();
    app.publish_pr(&release, Form::Typed).await;
    quiet(&app).await;
    let evals = app.get(&format!("/api/v1/automations/{a}/evaluations")).await.body;
    let evals = evals.as_array().unwrap();
    assert_eq!(evals.len(), 2, "the other workspace's merge left no record: {evals:?}");
    let outcomes: Vec<(&str, Option<&str>)> = evals
        .iter()
        .map(|e| (e["outcome"].as_str().unwrap(), e["gate"].as_str()))
        .collect();
    assert!(outcomes.contains(&("stopped", Some("base_branch"))), "{outcomes:?}");
    assert!(outcomes.contains(&("fired", None)), "{outcomes:?}");
    assert!(evals.iter().all(|e| e["event_subject"] == "github.task_pr.updated"));
    app.stop().await;
}
