//! Where a merge's CI wait comes from: the task, else its repository, else
//! its workspace, else the server default — each bounded to 1–1440 minutes.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kandev_server::clock::ManualClock;
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::{approve_in, fast, last_of, simulator, wait_status, waiting_for_checks};
use crate::support::Db;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ci_wait_comes_from_the_repository_then_the_workspace_and_is_bounded() {
    let gh = simulator().await;
    let clock = Arc::new(ManualClock::new(at("2026-03-08T12:00:00Z")));
    let app = fast(&gh, Db::Sqlite).clock(clock.clone()).start().await;
    let ws = app.workspace_with_repo("W").await;
    let repo = app.get(&format!("/api/v1/workspaces/{ws}/repositories")).await.body[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let repo_url = format!("/api/v1/workspaces/{ws}/repositories/{repo}");
    let settings = format!("/api/v1/github/workspace-settings?workspace_id={ws}");

    // Out of bounds: refused, and nothing written.
    for bad in [0, 1441, -5] {
        let r = app.patch(&repo_url, json!({"ci_wait_timeout_minutes": bad})).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.body);
        let r = app.put(&settings, json!({"ci_wait_timeout_minutes": bad})).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.body);
    }
    assert_eq!(
        app.get(&format!("/api/v1/workspaces/{ws}/repositories")).await.body[0]["ci_wait_timeout_minutes"],
        json!(null)
    );
    // A repository of another workspace is not found through this one.
    let other = app.workspace_with_repo("Other").await;
    let r = app
        .patch(
            &format!("/api/v1/workspaces/{other}/repositories/{repo}"),
            json!({"ci_wait_timeout_minutes": 5}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    let r = app.put(&settings, json!({"ci_wait_timeout_minutes": 3})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["ci_wait_timeout_minutes"], 3);
    let r = app.patch(&repo_url, json!({"ci_wait_timeout_minutes": 2})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["ci_wait_timeout_minutes"], 2);

    // The repository's two minutes win over the workspace's three.
    let (n, sha) = gh.open("Slow CI");
    gh.sim
        .set_check_run("acme", "api", &sha, "e2e", "queued", None)
        .unwrap();
    let t = approve_in(&app, &ws, n, "").await;
    waiting_for_checks(&app, &t).await;
    clock.advance(chrono::Duration::seconds(121));
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "checks still pending after 2 min: e2e"
    );

    // Cleared, the workspace's three minutes apply.
    let r = app.patch(&repo_url, json!({"ci_wait_timeout_minutes": null})).await;
    assert_eq!(r.body["ci_wait_timeout_minutes"], json!(null), "{}", r.body);
    let (n, sha) = gh.open("Slower CI");
    gh.sim
        .set_check_run("acme", "api", &sha, "e2e", "queued", None)
        .unwrap();
    let t = approve_in(&app, &ws, n, "").await;
    waiting_for_checks(&app, &t).await;
    clock.advance(chrono::Duration::seconds(121));
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        app.task_json(&t).await["status"],
        "running",
        "2 min is inside the workspace's 3"
    );
    clock.advance(chrono::Duration::seconds(60));
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "checks still pending after 3 min: e2e"
    );
    app.stop().await;
}
