use reqwest::StatusCode;
use serde_json::json;

use crate::on_both_databases;
use crate::support::{Db, spawn_app};

async fn workspaces_and_repositories_round_trip(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("Acme").await;
    let r = app.get(&format!("/api/v1/workspaces/{ws}")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["name"], "Acme");
    assert!(r.body["created_at"].as_str().unwrap().ends_with('Z'));
    let list = app.get("/api/v1/workspaces").await;
    assert_eq!(list.body.as_array().unwrap().len(), 1);

    let repo = app
        .post(
            &format!("/api/v1/workspaces/{ws}/repositories"),
            json!({"owner": "acme", "name": "api"}),
        )
        .await;
    assert_eq!(repo.status, StatusCode::CREATED);
    assert_eq!(repo.body["default_branch"], "main");
    assert_eq!(repo.body["provider"], "github");
    assert_eq!(repo.body["workspace_id"], ws);
    let repos = app.get(&format!("/api/v1/workspaces/{ws}/repositories")).await;
    assert_eq!(repos.body.as_array().unwrap().len(), 1);
    app.stop().await;
}
on_both_databases!(workspaces_and_repositories_round_trip);

async fn bad_workspace_and_repository_input_is_refused_and_writes_nothing(db: Db) {
    let app = spawn_app(db).await;
    let r = app.post("/api/v1/workspaces", json!({"name": "   "})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.error_code(), "invalid");
    let r = app.post("/api/v1/workspaces", json!({"nom": "x"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "bad_request");
    assert_eq!(app.count("workspaces").await, 0);

    let ws = app.workspace("W").await;
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/repositories"),
            json!({"owner": "", "name": "api"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/repositories"),
            json!({"owner": "a/b", "name": "api"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(
            "/api/v1/workspaces/nope/repositories",
            json!({"owner": "a", "name": "b"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(app.count("repositories").await, 0);
    let r = app.get("/api/v1/workspaces/nope").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code(), "not_found");
    app.stop().await;
}
on_both_databases!(bad_workspace_and_repository_input_is_refused_and_writes_nothing);
