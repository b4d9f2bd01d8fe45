//! "None — no repository": an automation's runs start with no checkout, the
//! choice never contradicts a repository list (its YAML round trip is in
//! `automations_yaml`).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::on_both_databases;
use crate::support::{Db, TestApp, spawn_app};

/// Creates a "None" automation in `ws`, runs it by hand and returns the run
/// task once its turn has succeeded.
async fn run_with_none(app: &TestApp, ws: &str) -> Value {
    let a = app
        .automation(
            ws,
            json!({"name": "Tidy", "prompt": "e2e:message(\"ok\")", "no_repository": true,
                   "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    assert_eq!(
        (a["no_repository"].clone(), a["repository_ids"].clone()),
        (json!(true), json!([]))
    );
    let id = a["id"].as_str().unwrap();
    app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    let run = app.wait_for_run_status(id, "succeeded").await;
    app.task_json(&run.task_id).await
}

/// The workspace has a repository, so "Auto" would take it: "None" must not.
async fn none_runs_start_with_no_checkout(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace_with_repo("W").await;
    let task = run_with_none(&app, &ws).await;
    assert_eq!(task["repository_id"], json!(null), "{task}");
    assert_eq!(task["base_branch"], "", "{task}");
    app.stop().await;
}
on_both_databases!(none_runs_start_with_no_checkout);

/// A workspace with no repository at all: "Auto" fails the firing, "None" runs.
async fn none_runs_where_the_workspace_has_no_repository(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let task = run_with_none(&app, &ws).await;
    assert_eq!(task["repository_id"], json!(null), "{task}");
    app.stop().await;
}
on_both_databases!(none_runs_where_the_workspace_has_no_repository);

async fn asking_for_none_and_a_repository_at_once_is_refused_and_writes_nothing(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let r = app.repository(&ws, "acme", "api").await;
    let refused = app
        .post(
            &format!("/api/v1/workspaces/{ws}/automations"),
            json!({"name": "x", "no_repository": true, "repository_ids": [r]}),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(
        refused
            .body
            .to_string()
            .contains(kandev_core::repository_choice::BOTH_CHOSEN),
        "{}",
        refused.body
    );
    assert_eq!(app.count("automations").await, 0);
    let a = app.automation(&ws, json!({"name": "x", "repository_ids": [r]})).await;
    let id = a["id"].as_str().unwrap();
    let refused = app
        .patch(
            &format!("/api/v1/automations/{id}"),
            json!({"no_repository": true, "repository_ids": [r], "name": "renamed"}),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    let now = app.get(&format!("/api/v1/automations/{id}")).await.body;
    assert_eq!(
        (now["name"].clone(), now["repository_ids"].clone()),
        (json!("x"), json!([r]))
    );
    assert_eq!(now["no_repository"], false);
    app.stop().await;
}
on_both_databases!(asking_for_none_and_a_repository_at_once_is_refused_and_writes_nothing);

/// Each choice replaces the other, so the stored pair never contradicts itself.
async fn choosing_none_clears_the_list_and_listing_clears_none(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let r1 = app.repository(&ws, "acme", "api").await;
    let r2 = app.repository(&ws, "acme", "web").await;
    let a = app
        .automation(&ws, json!({"name": "x", "repository_ids": [r1, r2]}))
        .await;
    assert_eq!(
        a["repository_ids"],
        json!([r1, r2]),
        "several repositories keep their order"
    );
    let id = a["id"].as_str().unwrap();
    let path = format!("/api/v1/automations/{id}");
    let none = app.patch(&path, json!({"no_repository": true})).await.body;
    assert_eq!(
        (none["no_repository"].clone(), none["repository_ids"].clone()),
        (json!(true), json!([]))
    );
    let listed = app.patch(&path, json!({"repository_ids": [r2]})).await.body;
    assert_eq!(
        (listed["no_repository"].clone(), listed["repository_ids"].clone()),
        (json!(false), json!([r2]))
    );
    app.stop().await;
}
on_both_databases!(choosing_none_clears_the_list_and_listing_clears_none);
