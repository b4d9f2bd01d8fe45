//! The other trigger types: scheduled, push, CI, the inbound webhook and the
//! manual run.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use kandev_core::events::{CHECK_RUN_COMPLETED, CheckRunCompleted, PUSH_RECEIVED, Payload, PushReceived};
use kandev_server::app::{BuildOptions, Services, construct};
use kandev_server::automation::scheduler::tick;
use kandev_server::clock::ManualClock;
use kandev_server::config::Settings;
use reqwest::StatusCode;
use serde_json::json;

use crate::engine::{HOLD_PROMPT, quiet};
use std::time::Duration;

use crate::support::{Db, eventually, spawn_app};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// Constructed services with only the orchestrator started, so the test
/// drives the scheduler one tick at a time on its own clock.
async fn scheduled_world(clock: Arc<ManualClock>) -> (tempfile::TempDir, Arc<Services>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::defaults();
    settings.database_url = format!("sqlite://{}/k.db", dir.path().display());
    settings.data_dir = dir.path().join("data");
    let options = BuildOptions {
        clock: Some(clock),
        mock_agent_bin: Some(env!("CARGO_BIN_EXE_kandev").into()),
        wall_clock: None,
    };
    let services = construct(settings, options).await.unwrap();
    services.orchestrator.start().await.unwrap();
    // No HTTP in this world: the agents' MCP calls would go nowhere, and these
    // prompts make none.
    services.runtime.set_base_url("http://127.0.0.1:9".into());
    let now = services.clock.now();
    let w = services.store.create_workspace("W", None, now).await.unwrap();
    let repo = kandev_core::api::Repository {
        id: String::new(),
        workspace_id: w.id.clone(),
        provider: "github".into(),
        owner: "acme".into(),
        name: "api".into(),
        default_branch: "main".into(),
        local_path: String::new(),
        ci_wait_timeout_minutes: None,
    };
    services.store.create_repository(&repo, now).await.unwrap();
    (dir, services, w.id, String::new())
}

async fn scheduled_automation(services: &Services, ws: &str, prompt: &str) -> String {
    use kandev_core::api::{CreateAutomation, NewTrigger};
    let created = services
        .automation
        .create(
            ws,
            CreateAutomation {
                name: "Daily".into(),
                prompt: Some(prompt.into()),
                triggers: Some(vec![NewTrigger {
                    trigger_type: kandev_core::TriggerType::Scheduled,
                    config: json!({"cron_expression": "0 9 * * *", "timezone": "UTC"}),
                    enabled: None,
                }]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    created.automation.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_fires_when_due_once_per_slot_and_a_missed_slot_fires_once() {
    let clock = Arc::new(ManualClock::new(at("2026-03-08T08:00:00Z")));
    let (_dir, services, ws, _) = scheduled_world(clock.clone()).await;
    let a = scheduled_automation(
        &services,
        &ws,
        "e2e:message(\"{{trigger.type}} at {{data.timestamp}}\")",
    )
    .await;
    let runs = || async { services.store.list_run_records(&a).await.unwrap() };

    clock.set(at("2026-03-08T08:59:00Z"));
    tick(&services.automation).await;
    services.orchestrator.wait_idle().await;
    assert!(runs().await.is_empty(), "not due yet");

    clock.set(at("2026-03-08T09:00:05Z"));
    tick(&services.automation).await;
    tick(&services.automation).await;
    services.orchestrator.wait_idle().await;
    let r = runs().await;
    assert_eq!(r.len(), 1, "one firing per slot");
    assert_eq!(
        r[0].dedup_key,
        format!(
            "scheduled:{}:{}",
            r[0].trigger_id,
            at("2026-03-08T09:00:05Z").timestamp() / 60
        )
    );

    // let that run finish so the cap does not interfere
    eventually("the first run to succeed", Duration::from_secs(20), || async {
        runs().await[0].status.as_str() == "succeeded"
    })
    .await;
    // down for three days: the missed slots fire once
    clock.set(at("2026-03-11T12:00:00Z"));
    tick(&services.automation).await;
    clock.set(at("2026-03-11T12:00:30Z"));
    tick(&services.automation).await;
    services.orchestrator.wait_idle().await;
    assert_eq!(runs().await.len(), 2);
    let all = runs().await;
    let prompt = services
        .store
        .get_task(&all[0].task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}: {all:?}"))
        .description;
    assert_eq!(prompt, "e2e:message(\"scheduled at 2026-03-11T12:00:00Z\")");
    services.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capped_schedule_advances_its_anchor_instead_of_retrying() {
    let clock = Arc::new(ManualClock::new(at("2026-03-08T08:00:00Z")));
    let (_dir, services, ws, _) = scheduled_world(clock.clone()).await;
    let a = scheduled_automation(&services, &ws, HOLD_PROMPT).await;
    clock.set(at("2026-03-08T09:00:00Z"));
    tick(&services.automation).await;
    services.orchestrator.wait_idle().await;
    // the next day's slot arrives while the first run is still in flight
    let first = services.store.list_run_records(&a).await.unwrap().remove(0);
    eventually("the first run's agent to run", Duration::from_secs(20), || async {
        let s = services.store.list_sessions(&first.task_id).await.unwrap();
        s.first().is_some_and(|s| s.state == "RUNNING")
    })
    .await;
    clock.set(at("2026-03-09T09:00:00Z"));
    tick(&services.automation).await;
    clock.set(at("2026-03-09T09:00:40Z"));
    tick(&services.automation).await;
    tick(&services.automation).await;
    services.orchestrator.wait_idle().await;
    let runs = services.store.list_run_records(&a).await.unwrap();
    let skipped: Vec<_> = runs.iter().filter(|r| r.status.as_str() == "skipped").collect();
    assert_eq!(skipped.len(), 1, "one cap-skip, no retry storm: {runs:?}");
    let trigger = services.store.list_triggers(&a).await.unwrap().remove(0);
    assert_eq!(
        trigger.last_evaluated_at,
        Some(at("2026-03-09T09:00:00Z")),
        "the cap-skip moved the anchor"
    );
    services.runtime.shutdown().await;
}

fn push(ws: &str, owner: &str, branch: &str, sha: &str) -> PushReceived {
    PushReceived {
        workspace_ids: vec![ws.to_string()],
        owner: owner.into(),
        repo: "api".into(),
        branch: branch.into(),
        sha: sha.into(),
        pusher_login: "alice".into(),
        message: "feat: x".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_matches_exact_repository_workspace_and_branch_and_dedups_per_sha() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "push", "prompt": "e2e:message(\"{{push.repo}} {{push.branch}} {{push.sha}}\")", "max_concurrent_runs": 10,
                   "triggers": [{"type": "github_push", "config": {"repos": [{"owner": "acme", "name": "api"}], "branches": ["release/*"]}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    let bus = &app.services().bus;
    for p in [
        push(&ws, "acme", "main", "s1"),
        push(&ws, "ACME", "release/1", "s2"),
        push("other-ws", "acme", "release/1", "s3"),
    ] {
        bus.publish(PUSH_RECEIVED, "github", Payload::Push(p)).await.unwrap();
    }
    quiet(&app).await;
    assert!(
        app.runs_of(&a).await.is_empty(),
        "branch, case-sensitive repo and workspace all filter"
    );
    bus.publish(
        PUSH_RECEIVED,
        "github",
        Payload::Push(push(&ws, "acme", "release/1", "s4")),
    )
    .await
    .unwrap();
    quiet(&app).await;
    // redelivered once the first firing's row exists
    bus.publish(
        PUSH_RECEIVED,
        "github",
        Payload::Push(push(&ws, "acme", "release/1", "s4")),
    )
    .await
    .unwrap();
    quiet(&app).await;
    let runs = app.runs_of(&a).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].dedup_key, "push:acme/api@release/1@s4");
    assert_eq!(app.run_prompt(&runs[0]).await, "e2e:message(\"acme/api release/1 s4\")");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_matches_conclusion_check_name_and_head_branch_over_json_too() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "ci", "prompt": "e2e:message(\"{{ci.check_name}} {{ci.conclusion}}\")", "max_concurrent_runs": 10,
                   "triggers": [{"type": "github_ci", "config": {"repos": [{"owner": "acme", "name": "api"}], "conclusions": ["failure"],
                                 "check_names": ["build"], "branches": ["feat/*"]}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    let run = |id: i64, name: &str, conclusion: &str, branch: &str| CheckRunCompleted {
        workspace_ids: vec![ws.clone()],
        owner: "acme".into(),
        repo: "api".into(),
        branch: branch.into(),
        sha: "abc".into(),
        check_name: name.into(),
        conclusion: conclusion.into(),
        check_run_id: id,
        html_url: "https://github.com/acme/api/runs/1".into(),
    };
    let bus = &app.services().bus;
    for r in [
        run(1, "build", "success", "feat/x"),
        run(2, "lint", "failure", "feat/x"),
        run(3, "build", "failure", "main"),
    ] {
        bus.publish(CHECK_RUN_COMPLETED, "github", Payload::CheckRun(r))
            .await
            .unwrap();
    }
    // the NATS wire form, decoded by the same normaliser
    let json = serde_json::to_value(run(4, "build", "failure", "feat/x")).unwrap();
    bus.publish(CHECK_RUN_COMPLETED, "github", Payload::Json(json))
        .await
        .unwrap();
    bus.publish(
        CHECK_RUN_COMPLETED,
        "github",
        Payload::Json(json!({"check_run_id": "four"})),
    )
    .await
    .unwrap();
    quiet(&app).await;
    let runs = app.runs_of(&a).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].dedup_key, "ci:acme/api#4");
    assert_eq!(app.run_prompt(&runs[0]).await, "e2e:message(\"build failure\")");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbound_webhook_checks_in_order_and_reports_triggered_or_skipped() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let created = app
        .automation(
            &ws,
            json!({"name": "hook", "prompt": HOLD_PROMPT, "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let (id, secret) = (
        created["id"].as_str().unwrap().to_string(),
        created["webhook_secret"].as_str().unwrap().to_string(),
    );
    let url = format!("{}/api/v1/automations/webhook/{id}", app.base);
    let send = |body: Vec<u8>, header: Option<(&'static str, String)>| {
        let mut req = app.client.post(&url).body(body);
        if let Some((k, v)) = header {
            req = req.header(k, v);
        }
        req.send()
    };
    let missing = app
        .client
        .post(format!("{}/api/v1/automations/webhook/nope", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let r = send(b"{}".to_vec(), Some(("x-webhook-secret", "wrong".into())))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["message"], "invalid webhook secret");
    let r = send(b"{}".to_vec(), None).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let big = vec![b'x'; 1024 * 1024 + 1];
    let r = send(big, Some(("x-webhook-secret", secret.clone()))).await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let body = br#"{"event":"deploy","n":3}"#.to_vec();
    let signature = kandev_server::signature::sign(&secret, &body);
    let r = send(body, Some(("x-hub-signature-256", signature))).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        json!({"status": "triggered"})
    );
    let runs = app.wait_for_runs(&id, 1).await;
    let listed = app.get(&format!("/api/v1/automations/{id}/runs")).await.body;
    assert_eq!(listed[0]["trigger_data"], json!({"event": "deploy", "n": 3}));
    assert_eq!(runs[0].trigger_type, "webhook");
    // while that run holds the one slot, a second delivery is skipped with its reason
    crate::support::eventually(
        "the webhook run to be running",
        std::time::Duration::from_secs(20),
        || async {
            app.get(&format!("/api/v1/tasks/{}/sessions", runs[0].task_id))
                .await
                .body[0]["state"]
                == "RUNNING"
        },
    )
    .await;
    let r = send(b"plain text".to_vec(), Some(("x-webhook-secret", secret.clone())))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        json!({"status": "skipped", "reason": "max_concurrent_runs=1 reached"})
    );
    let listed = app.get(&format!("/api/v1/automations/{id}/runs")).await.body;
    assert_eq!(
        listed[0]["trigger_data"],
        json!({"body": "plain text"}),
        "non-JSON bodies are wrapped"
    );

    let trigger = created["triggers"][0]["id"].as_str().unwrap();
    app.patch(
        &format!("/api/v1/automation-triggers/{trigger}"),
        json!({"enabled": false}),
    )
    .await;
    let r = send(b"{}".to_vec(), Some(("x-webhook-secret", secret.clone())))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap()["error"]["message"],
        "no enabled webhook trigger"
    );
    app.patch(&format!("/api/v1/automations/{id}"), json!({"enabled": false}))
        .await;
    let r = send(b"{}".to_vec(), Some(("x-webhook-secret", secret))).await.unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap()["error"]["message"],
        "automation is disabled"
    );
    app.stop().await;
}
