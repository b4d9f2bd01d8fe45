//! An agent session's MCP token: minted for one turn, stored only as its
//! SHA-256. An agent runs as the server's OS user and can read the database
//! file; neither what it finds there nor a token from an ended turn opens
//! another session's tools.

use std::time::Duration;

use kandev_server::access::credentials::hash_secret;
use serde_json::{Value, json};

use crate::support::{Db, TestApp, eventually, spawn_app};

/// Waits for `look` to find something, at most 30 s.
async fn found<T, F, Fut>(what: &str, mut look: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = look().await {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn session_of(app: &TestApp, task_id: &str) -> Value {
    app.get(&format!("/api/v1/tasks/{task_id}/sessions")).await.body[0].clone()
}

/// The MCP URLs the agent said it was given, one per turn, oldest first.
async fn said_urls(app: &TestApp, sid: &str) -> Vec<String> {
    let r = app.get(&format!("/api/v1/sessions/{sid}/messages")).await;
    r.body
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "agent")
        .filter_map(|m| m["content"].as_str()?.strip_prefix("mcp=").map(str::to_string))
        .collect()
}

/// Says the agent's MCP URL as a message of its own (a thinking chunk ends
/// it, so it is in the transcript while the turn goes on), then runs `then`.
fn saying_url(then: &str) -> String {
    format!("e2e:mcp_url()\ne2e:thinking(\"holding\")\n{then}")
}

/// Runs an automation by hand whose agent says its MCP URL and then follows
/// `then`; returns the run task, the session, and the URL.
async fn run_saying_url(app: &TestApp, then: &str) -> (String, String, String) {
    let ws = app.workspace_with_repo("W").await;
    let body = json!({"name": "tokens", "prompt": saying_url(then),
                      "triggers": [{"type": "webhook", "config": {}}]});
    let a = app.automation(&ws, body).await["id"].as_str().expect("id").to_string();
    app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
    let task_id = found("the run task", || async {
        let runs = app.runs_of(&a).await;
        runs.first().map(|r| r.task_id.clone()).filter(|t| !t.is_empty())
    })
    .await;
    let sid = found("the session", || async {
        session_of(app, &task_id).await["id"].as_str().map(str::to_string)
    })
    .await;
    let url = found("the agent to say its MCP URL", || async {
        said_urls(app, &sid).await.first().cloned()
    })
    .await;
    (task_id, sid, url)
}

async fn get_task(url: &str, task_id: &str) -> Result<String, String> {
    kandev_server::mock_agent::mcp_call::call(url, "get_task", json!({"task_id": task_id})).await
}

async fn status_of(app: &TestApp, url: &str) -> reqwest::StatusCode {
    app.client
        .post(url)
        .json(&json!({}))
        .send()
        .await
        .expect("reaches the server")
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_read_from_the_database_opens_no_tool_while_its_turn_runs() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid, url) = run_saying_url(&app, "e2e:delay(4000)").await;
    assert_eq!(session_of(&app, &task_id).await["state"], "RUNNING");
    let stored = sqlx::query("SELECT token_hash FROM agent_sessions WHERE id = $1")
        .bind(&sid)
        .fetch_one(app.services().store.pool())
        .await
        .expect("the session row");
    let stored: String = sqlx::Row::try_get(&stored, "token_hash").expect("token_hash");
    let from_database = format!("{}/mcp/{stored}", app.base);
    assert!(get_task(&from_database, &task_id).await.is_err());
    assert_eq!(status_of(&app, &from_database).await, reqwest::StatusCode::NOT_FOUND);
    // The turn's own token works at this very moment: the refusal is the digest's.
    assert!(get_task(&url, &task_id).await.is_ok());
    let token = url.rsplit('/').next().expect("a token in the URL");
    assert_eq!(stored, hash_secret(token), "only the digest is stored");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_turn_s_token_opens_nothing_even_while_the_next_turn_runs() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid, first) = run_saying_url(&app, "e2e:message(\"done\")").await;
    eventually("the turn to end", Duration::from_secs(30), || async {
        session_of(&app, &task_id).await["state"] == "WAITING_FOR_INPUT"
    })
    .await;
    assert_eq!(status_of(&app, &first).await, reqwest::StatusCode::UNAUTHORIZED);
    let r = app
        .post(
            &format!("/api/v1/sessions/{sid}/prompt"),
            json!({"text": saying_url("e2e:delay(4000)")}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::ACCEPTED, "{}", r.body);
    let second = found("the reply's turn to say its URL", || async {
        said_urls(&app, &sid).await.get(1).cloned()
    })
    .await;
    assert_ne!(first, second, "each turn is given a token of its own");
    assert!(get_task(&second, &task_id).await.is_ok());
    assert_eq!(status_of(&app, &first).await, reqwest::StatusCode::NOT_FOUND);
    assert!(get_task(&first, &task_id).await.is_err());
    app.stop().await;
}
