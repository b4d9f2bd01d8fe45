use reqwest::StatusCode;

use crate::on_both_databases;
use crate::support::{Db, spawn_app};

async fn health_metrics_openapi_and_the_web_app_are_served(db: Db) {
    let app = spawn_app(db).await;
    let r = app.get("/healthz").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["status"], "ok");

    let doc = app.get("/api/v1/openapi.json").await;
    assert_eq!(doc.status, StatusCode::OK);
    let paths = doc.body["paths"].as_object().expect("paths");
    for p in [
        "/api/v1/automation-trigger-types",
        "/api/v1/workspaces/{ws}/automations",
        "/api/v1/tasks/{id}/approve",
    ] {
        assert!(paths.contains_key(p), "openapi lacks {p}");
    }
    assert!(doc.body["components"]["schemas"]["Automation"].is_object());

    let metrics = app.metrics().await;
    assert!(metrics.contains("kandev_http_requests_total"), "{metrics}");

    // client-side routes get the app; unknown API routes get a JSON 404
    let page = app
        .client
        .get(format!("{}/settings/workspace/x/automations", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("<title>Kandev</title>"));
    let r = app.get("/api/v1/nothing-here").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code(), "not_found");
    app.stop().await;
}
on_both_databases!(health_metrics_openapi_and_the_web_app_are_served);

async fn trigger_type_registry_is_served_in_order_with_exact_values(db: Db) {
    let app = spawn_app(db).await;
    let r = app.get("/api/v1/automation-trigger-types").await;
    assert_eq!(r.status, StatusCode::OK);
    let entries = r.body.as_array().expect("array");
    let types: Vec<&str> = entries.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "scheduled",
            "github_pr",
            "github_pr_merged",
            "github_push",
            "github_ci",
            "webhook"
        ]
    );
    let merged = &entries[2];
    assert_eq!(merged["label"], "Pull request merged");
    assert_eq!(
        merged["description"],
        "Triggers when a pull request linked to a task in this workspace is merged. Detected by Kandev's PR poller, so it can lag the merge by up to a minute."
    );
    assert_eq!(merged["category"], "github");
    assert_eq!(merged["enabled"], true);
    assert_eq!(
        merged["default_task_title"],
        "[Auto] PR merged \u{2014} {{data.repo}}#{{data.pr_number}}"
    );
    assert_eq!(
        merged["default_config"],
        serde_json::json!({"all_repos": true, "repos": [], "base_branches": []})
    );
    assert_eq!(
        merged["default_prompt"].as_str().unwrap(),
        kandev_core::registry::GITHUB_PR_MERGED_PROMPT
    );
    assert_eq!(merged["placeholders"].as_array().unwrap().len(), 9);
    assert_eq!(
        merged["placeholders"][0],
        serde_json::json!({"key": "data.task_id", "description": "Id of the task whose pull request merged", "example": "t_01H8XK..."})
    );
    assert_eq!(
        entries[0]["default_config"],
        serde_json::json!({"cron_expression": "0 */6 * * *", "timezone": "UTC"})
    );
    assert_eq!(entries[5]["category"], "webhook");
    app.stop().await;
}
on_both_databases!(trigger_type_registry_is_served_in_order_with_exact_values);
