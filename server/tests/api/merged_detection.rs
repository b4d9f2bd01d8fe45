//! Spec group "Detection and matching" for the "Pull request merged" trigger,
//! at the engine level (events published straight onto the bus).

use kandev_core::events::Payload;
use serde_json::{Value, json};

use crate::engine::{ARCHIVE_PROMPT, Form, HOLD_PROMPT, merged_pr, quiet};
use crate::on_both_databases;
use crate::support::{Db, Spawn, TestApp, eventually, spawn_app};

fn without_task_id(v: &Value) -> Value {
    let mut v = v.clone();
    v["task_id"] = json!("<task>");
    v
}

async fn merged_run_data(app: &TestApp) -> Value {
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.merged_at = Some(
        chrono::DateTime::parse_from_rfc3339("2026-03-08T13:00:00+01:00")
            .unwrap()
            .into(),
    );
    app.publish_pr(&pr, Form::Typed).await;
    let runs = app.wait_for_runs(&a, 1).await;
    let data = app.get(&format!("/api/v1/automations/{a}/runs")).await.body[0]["trigger_data"].clone();
    assert_eq!(runs[0].dedup_key, format!("pr_merged:{t}:acme/api#7"));
    data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_and_nats_json_deliveries_normalise_to_the_same_trigger_data_and_decision() {
    let memory = spawn_app(Db::Sqlite).await;
    let nats = Spawn::new(Db::Sqlite).nats().start().await;
    assert_eq!(nats.services().bus.kind(), "nats");
    let typed = merged_run_data(&memory).await;
    let over_the_wire = merged_run_data(&nats).await;
    assert_eq!(without_task_id(&typed), without_task_id(&over_the_wire));
    assert_eq!(typed["merged_at"], "2026-03-08T12:00:00Z");
    memory.stop().await;
    nats.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_nats_decoded_object_is_ignored_without_firing() {
    let app = Spawn::new(Db::Sqlite).nats().start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 5)
        .await;
    for bad in [
        json!({"task_id": 5, "state": "merged"}),
        json!(["not", "an", "object"]),
        json!({"pr_number": "7"}),
    ] {
        app.publish_raw(Payload::Json(bad)).await;
    }
    // The same subscription delivers in order: once this sentinel fired, the
    // malformed events before it were evaluated and dropped.
    app.publish_pr(&merged_pr(&t, "acme", "api", 1), Form::Json).await;
    let runs = app.wait_for_runs(&a, 1).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].dedup_key, format!("pr_merged:{t}:acme/api#1"));
    app.stop().await;
}

async fn merged_event_fires_once_with_the_pinned_dedup_key(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let runs = app.wait_for_runs(&a, 1).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].dedup_key, format!("pr_merged:{t}:acme/api#7"));
    assert_eq!(runs[0].trigger_type, "github_pr_merged");
    app.stop().await;
}
on_both_databases!(merged_event_fires_once_with_the_pinned_dedup_key);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_task_prompt_names_the_task_and_the_tool_and_its_title_is_pinned() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": true}),
            kandev_core::registry::GITHUB_PR_MERGED_PROMPT,
            1,
        )
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_runs(&a, 1).await.remove(0);
    let task = app.task_json(&run.task_id).await;
    let prompt = task["description"].as_str().unwrap();
    assert!(prompt.contains(&format!("with task id: {t}\n")), "{prompt}");
    assert!(prompt.contains("archive_task_kandev"));
    assert_eq!(task["title"], "[Auto] PR merged \u{2014} acme/api#7");
    assert_eq!(task["origin"], "automation_run");
    assert_eq!(task["metadata"]["automation_target_task_id"], t);
    app.stop().await;
}

async fn further_event_after_a_created_task_is_deduplicated(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 5)
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    app.publish_pr(&pr, Form::Typed).await;
    app.wait_for_runs(&a, 1).await;
    pr.review_count = 3; // a late review count settles
    app.publish_pr(&pr, Form::Typed).await;
    quiet(&app).await;
    let runs = app.runs_of(&a).await;
    assert_eq!(
        runs.len(),
        1,
        "dedup writes no row: the observable is the absent second run"
    );
    app.stop().await;
}
on_both_databases!(further_event_after_a_created_task_is_deduplicated);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cap_skipped_firing_does_not_consume_the_key() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let (holder, t) = (app.task(&ws, "holder").await, app.task(&ws, "T").await);
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), HOLD_PROMPT, 1)
        .await;
    let first = app.in_flight_run(&a, &holder).await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    let skipped: Vec<_> = app
        .runs_of(&a)
        .await
        .into_iter()
        .filter(|r| r.status.as_str() == "skipped")
        .collect();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].dedup_key, "", "a cap-skip row carries no key for this type");
    // free the slot: the in-flight run's task is archived
    app.post(&format!("/api/v1/tasks/{}/archive", first.task_id), json!({}))
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    let created: Vec<_> = app
        .runs_of(&a)
        .await
        .into_iter()
        .filter(|r| r.dedup_key == format!("pr_merged:{t}:acme/api#7"))
        .collect();
    assert_eq!(created.len(), 1, "the later event was admitted and created a task");
    assert_eq!(created[0].status.as_str(), "task_created");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_task_failed_firing_does_not_consume_the_key() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("No repository yet").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let runs = app.wait_for_runs(&a, 1).await;
    assert_eq!(runs[0].status.as_str(), "failed");
    assert_eq!(runs[0].dedup_key, "");
    let listed = app.get(&format!("/api/v1/automations/{a}/runs")).await;
    assert!(
        listed.body[0]["error_message"]
            .as_str()
            .unwrap()
            .starts_with("no repository available")
    );
    app.repository(&ws, "acme", "api").await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let runs = app.wait_for_runs(&a, 2).await;
    assert!(
        runs.iter().any(|r| r.status.as_str() != "failed"),
        "the later event fired"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_push_cap_skip_still_consumes_its_key() {
    use kandev_core::events::{PUSH_RECEIVED, PushReceived};
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "push", "prompt": HOLD_PROMPT, "max_concurrent_runs": 1,
                   "triggers": [{"type": "github_push", "config": {"repos": [{"owner": "acme", "name": "api"}], "branches": ["main"]}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    let push = |sha: &str| PushReceived {
        workspace_ids: vec![ws.clone()],
        owner: "acme".into(),
        repo: "api".into(),
        branch: "main".into(),
        sha: sha.into(),
        ..Default::default()
    };
    let bus = &app.services().bus;
    bus.publish(PUSH_RECEIVED, "github", Payload::Push(push("aaa")))
        .await
        .unwrap();
    let first = app.wait_for_runs(&a, 1).await.remove(0);
    eventually(
        "the push run's agent to run",
        std::time::Duration::from_secs(20),
        || async { app.get(&format!("/api/v1/tasks/{}/sessions", first.task_id)).await.body[0]["state"] == "RUNNING" },
    )
    .await;
    bus.publish(PUSH_RECEIVED, "github", Payload::Push(push("bbb")))
        .await
        .unwrap();
    quiet(&app).await;
    let skipped: Vec<_> = app
        .runs_of(&a)
        .await
        .into_iter()
        .filter(|r| r.status.as_str() == "skipped")
        .collect();
    assert_eq!(skipped.len(), 1);
    assert_eq!(
        skipped[0].dedup_key, "push:acme/api@main@bbb",
        "other types keep their key on a cap-skip"
    );
    app.post(&format!("/api/v1/tasks/{}/archive", first.task_id), json!({}))
        .await;
    bus.publish(PUSH_RECEIVED, "github", Payload::Push(push("bbb")))
        .await
        .unwrap();
    quiet(&app).await;
    assert_eq!(
        app.runs_of(&a).await.len(),
        2,
        "the redelivered push is still suppressed"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_pr_linked_to_two_tasks_fires_one_run_per_task() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let (t1, t2) = (app.task(&ws, "T1").await, app.task(&ws, "T2").await);
    // The cap is load-bearing here and set explicitly (see the spec).
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 2)
        .await;
    app.publish_pr(&merged_pr(&t1, "acme", "api", 7), Form::Typed).await;
    app.publish_pr(&merged_pr(&t2, "acme", "api", 7), Form::Typed).await;
    let runs = app.wait_for_runs(&a, 2).await;
    let mut keys: Vec<String> = runs.iter().map(|r| r.dedup_key.clone()).collect();
    keys.sort();
    let mut want = vec![
        format!("pr_merged:{t1}:acme/api#7"),
        format!("pr_merged:{t2}:acme/api#7"),
    ];
    want.sort();
    assert_eq!(keys, want);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_event_with_mixed_case_state_fires() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.state = "Merged".into();
    app.publish_pr(&pr, Form::Typed).await;
    assert_eq!(app.wait_for_runs(&a, 1).await.len(), 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_event_with_nil_merged_at_fires_and_renders_empty() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": true}),
            "merged at [{{data.merged_at}}] url [{{data.pr_url}}]",
            1,
        )
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.merged_at = None;
    pr.pr_url = String::new();
    app.publish_pr(&pr, Form::Typed).await;
    let run = app.wait_for_runs(&a, 1).await.remove(0);
    assert_eq!(app.run_prompt(&run).await, "merged at [] url []");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pr_closed_without_merging_does_not_fire() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.state = "closed".into();
    app.publish_pr(&pr, Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty());
    assert!(app.task_json(&t).await["archived_at"].is_null());
    app.stop().await;
}
