//! The contract's bounds: refused at the API with nothing written, and
//! survived where a stored value is used — the scheduler and the merger log a
//! bad row and go on, and GitHub URLs keep hostile names in their segment.

use std::time::Duration;

use kandev_server::github_sim::NewPr;
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::{approve_with_pr, fast, simulator};
use crate::logs::capture;
use crate::support::{Db, Spawn, eventually, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_bounds_values_answer_422_and_write_nothing() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let long = "x".repeat(501);
    let schedule =
        |expr: &str| json!({"name": "S", "triggers": [{"type": "scheduled", "config": {"cron_expression": expr}}]});
    let refused = [
        schedule("@every 5000000000h"),
        schedule("@every 0s"),
        schedule("@every 367d"),
        schedule("@every 8785h"),
        schedule("0 0 30 2 *"),
        json!({"name": "A", "max_concurrent_runs": 101}),
        json!({"name": long}),
        json!({"name": "A", "prompt": "p".repeat(64 * 1024 + 1)}),
        json!({"name": "A", "task_title_template": long}),
    ];
    for body in refused {
        let r = app
            .post(&format!("/api/v1/workspaces/{ws}/automations"), body.clone())
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "invalid");
    }
    assert_eq!(app.count("automations").await, 0, "nothing half-written");
    let a = app.automation(&ws, json!({"name": "A"})).await;
    let id = a["id"].as_str().unwrap();
    for patch in [
        json!({"max_concurrent_runs": 0}),
        json!({"max_concurrent_runs": 101}),
        json!({"name": "x".repeat(501)}),
    ] {
        let r = app.patch(&format!("/api/v1/automations/{id}"), patch.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{patch}");
    }
    assert_eq!(
        app.get(&format!("/api/v1/automations/{id}")).await.body["max_concurrent_runs"],
        1
    );
    for limit in ["0", "501", "-1"] {
        let r = app.get(&format!("/api/v1/automations/{id}/runs?limit={limit}")).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "limit {limit}");
    }
    assert_eq!(
        app.get(&format!("/api/v1/automations/{id}/runs?limit=500"))
            .await
            .status,
        StatusCode::OK
    );
    let r = app.post("/api/v1/workspaces", json!({"name": long})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(&format!("/api/v1/workspaces/{ws}/tasks"), json!({"title": long}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/tasks"),
            json!({"title": "é".repeat(500)}),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::CREATED,
        "500 characters fit, whatever their bytes"
    );
    app.stop().await;
}

// A current-thread runtime: every spawned loop logs where `capture` listens.
#[tokio::test]
async fn a_stored_schedule_out_of_bounds_is_logged_and_skipped_and_the_scheduler_keeps_firing() {
    let (logs, _guard) = capture();
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| s.scheduler_interval = Duration::from_millis(100))
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let scheduled = |name: &str, expr: &str| {
        json!({"name": name, "max_concurrent_runs": 100, "prompt": "hello",
               "triggers": [{"type": "scheduled", "config": {"cron_expression": expr}}]})
    };
    let bad = app.automation(&ws, scheduled("bad", "@every 1h")).await;
    let bad_trigger = bad["triggers"][0]["id"].as_str().unwrap().to_string();
    // Written by an older version, before the bounds: straight into the table.
    app.exec(&format!(
        "UPDATE automation_triggers SET config = '{{\"cron_expression\":\"@every 5000000000h\"}}' WHERE id = '{bad_trigger}'"
    ))
    .await;
    // And a row whose time no reader can parse.
    let broken = app.automation(&ws, scheduled("broken", "@every 1s")).await;
    let broken_trigger = broken["triggers"][0]["id"].as_str().unwrap().to_string();
    app.exec(&format!(
        "UPDATE automation_triggers SET created_at = 'yesterday' WHERE id = '{broken_trigger}'"
    ))
    .await;
    eventually("the bad rows to be logged", Duration::from_secs(10), || async {
        !logs
            .at("WARN", &["stored schedule is invalid; trigger skipped", &bad_trigger])
            .is_empty()
            && !logs
                .at("WARN", &["unreadable trigger row skipped", &broken_trigger])
                .is_empty()
    })
    .await;
    // The loop goes on: schedules saved afterwards fire, tick after tick.
    for name in ["good", "better"] {
        let good = app.automation(&ws, scheduled(name, "@every 1s")).await;
        app.wait_for_runs(good["id"].as_str().unwrap(), 1).await;
    }
    assert!(app.runs_of(bad["id"].as_str().unwrap()).await.is_empty());
    assert!(app.runs_of(broken["id"].as_str().unwrap()).await.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_ci_wait_comment_is_ignored_and_the_merge_goes_on() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Ship");
    gh.green_build(&sha);
    let app = fast(&gh, Db::Sqlite).start().await;
    let huge = "ci_wait_timeout_minutes=99999999999999999999999 and ci_wait_timeout_minutes=5000000000";
    let t = approve_with_pr(&app, n, huge).await;
    eventually("the merge to finish", Duration::from_secs(20), || async {
        app.task_json(&t).await["status"] == "done"
    })
    .await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_named_with_hash_deletes_exactly_that_branch() {
    let gh = simulator().await;
    // A PR whose branch is "fix" and one whose branch is "fix#1": unencoded,
    // the second's delete would reach the first's branch.
    let open = |branch: &str| {
        let pr = NewPr {
            title: branch.into(),
            head: Some(branch.into()),
            ..Default::default()
        };
        gh.sim.open_pr("acme", "api", pr).unwrap()
    };
    open("fix");
    let (n, sha) = open("fix#1");
    gh.green_build(&sha);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually("the merge to finish", Duration::from_secs(20), || async {
        app.task_json(&t).await["status"] == "done"
    })
    .await;
    assert!(
        gh.sim.pr("acme", "api", n).unwrap().head_branch_deleted,
        "fix#1 deleted"
    );
    assert!(
        !gh.sim.pr("acme", "api", 1).unwrap().head_branch_deleted,
        "fix untouched"
    );
    app.stop().await;
}
