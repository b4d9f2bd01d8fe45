//! The in-memory trigger index stays coherent: a trigger created, edited,
//! disabled or deleted is seen by the very next event — in the process that
//! wrote it and in another replica on the same database.

use serde_json::json;

use crate::engine::{Form, merged_pr};
use crate::support::{Db, Spawn, TestApp, spawn_app};

/// Publishes a merged event for a fresh PR number on `app` and returns how
/// many runs the automation has once `app` has settled.
async fn event(app: &TestApp, writer: &TestApp, automation: &str, task: &str, number: i64) -> usize {
    app.publish_pr(&merged_pr(task, "acme", "api", number), Form::Typed)
        .await;
    app.settle().await;
    writer.runs_of(automation).await.len()
}

async fn trigger_changes_are_seen_by_the_next_event(writer: &TestApp, reader: &TestApp) {
    let ws = writer.workspace_with_repo("W").await;
    let task = writer.task(&ws, "target").await;
    // The reader builds its index before any automation exists.
    let automation = writer
        .merged_automation(&ws, json!({"all_repos": true}), "Nothing to do.", 100)
        .await;
    let trigger = writer.get(&format!("/api/v1/automations/{automation}")).await.body["triggers"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        event(reader, writer, &automation, &task, 1).await,
        1,
        "a created trigger fires at once"
    );

    let path = format!("/api/v1/automation-triggers/{trigger}");
    let r = writer.patch(&path, json!({"enabled": false})).await;
    assert!(r.status.is_success(), "{}", r.body);
    assert_eq!(
        event(reader, writer, &automation, &task, 2).await,
        1,
        "a disabled trigger is skipped at once"
    );

    let r = writer
        .patch(
            &path,
            json!({"enabled": true, "config": {"all_repos": false, "repos": [{"owner": "acme", "name": "web"}]}}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    assert_eq!(
        event(reader, writer, &automation, &task, 3).await,
        1,
        "an edited config applies at once"
    );

    let r = writer.patch(&path, json!({"config": {"all_repos": true}})).await;
    assert!(r.status.is_success(), "{}", r.body);
    assert_eq!(event(reader, writer, &automation, &task, 4).await, 2);

    assert!(writer.delete(&path).await.status.is_success());
    assert_eq!(
        event(reader, writer, &automation, &task, 5).await,
        2,
        "a deleted trigger is gone at once"
    );

    let r = writer
        .patch(&format!("/api/v1/automations/{automation}"), json!({"enabled": false}))
        .await;
    assert!(r.status.is_success(), "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trigger_change_is_seen_by_the_next_event_in_the_same_process() {
    let app = spawn_app(Db::Sqlite).await;
    trigger_changes_are_seen_by_the_next_event(&app, &app).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trigger_change_is_seen_by_the_next_event_on_another_replica() {
    let writer = spawn_app(Db::Postgres).await;
    let url = writer.database_url.clone();
    let reader = Spawn::new(Db::Postgres)
        .settings(move |s| s.database_url = url)
        .start()
        .await;
    trigger_changes_are_seen_by_the_next_event(&writer, &reader).await;
    reader.stop().await;
    writer.stop().await;
}
