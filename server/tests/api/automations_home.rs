//! The automations home's agenda and feed: across the caller's workspaces,
//! and only theirs.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use kandev_server::clock::ManualClock;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Db, Spawn, TestApp};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).expect("time").to_utc()
}

async fn scheduled(app: &TestApp, ws: &str, name: &str, cron: &str) -> String {
    let a = app
        .automation(
            ws,
            json!({"name": name, "prompt": "e2e:message(\"hi\")",
                   "triggers": [{"type": "scheduled", "config": {"cron_expression": cron, "timezone": "UTC"}}]}),
        )
        .await;
    a["id"].as_str().expect("id").to_string()
}

fn entries(body: &Value) -> Vec<(String, String)> {
    body.as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            (
                e["automation_name"].as_str().unwrap_or_default().to_string(),
                e["at"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

async fn agenda_and_feed_cover_the_callers_workspaces_only(db: Db) {
    let clock = Arc::new(ManualClock::new(at("2026-03-08T12:10:00Z")));
    let app = Spawn::new(db).clock(clock).start().await;
    let (mine, theirs) = (
        app.workspace_with_repo("Mine").await,
        app.workspace_with_repo("Theirs").await,
    );
    let half = scheduled(&app, &mine, "half past", "30 * * * *").await;
    let hourly = scheduled(&app, &theirs, "on the hour", "@hourly").await;
    let alice = app.person("alice", false).await;
    app.add_member(&mine, &alice, "viewer").await;

    let as_alice = |path: &'static str| app.request_as(Some(&alice), Method::GET, path, None);
    let r = as_alice("/api/v1/automation-agenda?limit=3").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        entries(&r.body),
        [
            ("half past".to_string(), "2026-03-08T12:30:00Z".to_string()),
            ("half past".to_string(), "2026-03-08T13:30:00Z".to_string()),
            ("half past".to_string(), "2026-03-08T14:30:00Z".to_string()),
        ]
    );
    assert_eq!(r.body[0]["workspace_id"], mine.as_str());
    let r = app.get("/api/v1/automation-agenda?limit=3").await;
    assert_eq!(
        entries(&r.body).into_iter().map(|e| e.0).collect::<Vec<_>>(),
        ["half past", "on the hour", "half past"],
        "the admin sees every workspace's schedules, soonest first"
    );
    for bad in ["0", "101", "x"] {
        let r = app.get(&format!("/api/v1/automation-agenda?limit={bad}")).await;
        assert!(r.status.is_client_error(), "{bad}: {}", r.status);
    }

    for a in [&half, &hourly] {
        let r = app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
        assert_eq!(r.body["triggered"], true, "{}", r.body);
    }
    let r = as_alice("/api/v1/automation-runs").await;
    assert_eq!(r.status, StatusCode::OK);
    let runs = r.body.as_array().expect("runs").clone();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["automation_id"], half.as_str());
    assert_eq!(runs[0]["workspace_id"], mine.as_str());
    assert_eq!(runs[0]["automation_name"], "half past");
    let all = app.get("/api/v1/automation-runs?limit=10").await.body;
    let ws_of: Vec<_> = all
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["workspace_id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(ws_of.len(), 2);
    assert!(ws_of.contains(&mine) && ws_of.contains(&theirs), "{ws_of:?}");
    let r = app.get("/api/v1/automation-runs?limit=1").await;
    assert_eq!(r.body.as_array().map(Vec::len), Some(1));
    let r = app
        .request_as(None, Method::GET, "/api/v1/automation-agenda", None)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

crate::on_both_databases!(agenda_and_feed_cover_the_callers_workspaces_only);
