//! The spec's "Agent behavior" scenarios through the real path:
//! orchestrator → ACP → `kandev mock-agent` → MCP over HTTP → backend.

use serde_json::json;

use crate::engine::{ARCHIVE_PROMPT, Form, merged_pr};
use crate::support::{Db, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_agent_archives_the_id_it_is_given() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "Ship it").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    assert!(
        app.task_json(&target).await["archived_at"].is_string(),
        "target archived"
    );
    let sessions = app.get(&format!("/api/v1/tasks/{}/sessions", run.task_id)).await;
    let sid = sessions.body[0]["id"].as_str().unwrap().to_string();
    let transcript = app.get(&format!("/api/v1/sessions/{sid}/messages")).await.body;
    let call = transcript
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["kind"] == "tool_call")
        .expect("tool call");
    assert_eq!(call["tool"]["name"], "archive_task_kandev");
    assert_eq!(call["tool"]["input"], json!({"task_id": target}));
    app.stop().await;
}
