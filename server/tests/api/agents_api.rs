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

use std::time::Duration;

use crate::engine::HOLD_PROMPT;
use crate::support::{Spawn, TestApp, eventually};

/// The transcript of a run task's first session.
async fn transcript(app: &TestApp, task_id: &str) -> Vec<serde_json::Value> {
    let sessions = app.get(&format!("/api/v1/tasks/{task_id}/sessions")).await;
    let sid = sessions.body[0]["id"].as_str().expect("a session").to_string();
    app.get(&format!("/api/v1/sessions/{sid}/messages"))
        .await
        .body
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn tool_results(t: &[serde_json::Value]) -> Vec<String> {
    t.iter()
        .filter(|m| m["kind"] == "tool_result")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_supplying_another_reachable_task_id_is_rejected_and_nothing_changes() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let bystander = app.task(&ws, "bystander").await;
    let prompt = format!(r#"e2e:mcp:kandev:archive_task_kandev({{"task_id":"{bystander}"}})"#);
    let a = app.merged_automation(&ws, json!({"all_repos": true}), &prompt, 1).await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&target).await["archived_at"].is_null());
    assert!(app.task_json(&bystander).await["archived_at"].is_null());
    let results = tool_results(&transcript(&app, &run.task_id).await);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("archive target is not bound to this automation run"),
        "{results:?}"
    );
    app.stop().await;
}

/// Calls a tool on `/mcp` as the suite's admin.
async fn mcp_as(app: &TestApp, url: &str, tool: &str, args: serde_json::Value) -> Result<String, String> {
    kandev_server::mock_agent::mcp_call::call_as(url, Some(&app.admin_token), tool, args).await
}

/// Calls a tool over MCP at `url` the way an agent would.
async fn mcp_call(url: &str, tool: &str, args: serde_json::Value) -> Result<String, String> {
    kandev_server::mock_agent::mcp_call::call(url, tool, args).await
}

/// A running session for a hand-made run task, to exercise MCP directly.
async fn running_session(app: &TestApp, ws: &str, metadata: serde_json::Value) -> String {
    use kandev_core::api::Origin;
    use kandev_core::board::TaskStatus;
    use kandev_server::store::NewTask;
    let store = &app.services().store;
    let now = app.services().clock.now();
    let task = store
        .create_task(
            &NewTask {
                workspace_id: ws.to_string(),
                title: "run".into(),
                description: String::new(),
                status: TaskStatus::Running,
                origin: Origin::AutomationRun,
                repository_id: None,
                base_branch: String::new(),
                metadata,
            },
            now,
        )
        .await
        .unwrap();
    let token = format!("{:0>64}", uuid::Uuid::new_v4().simple());
    let s = store.create_session(&task.id, "mock", "/tmp", now).await.unwrap();
    store
        .begin_turn(&s.session.id, &kandev_server::access::credentials::hash_secret(&token))
        .await
        .unwrap();
    format!("{}/mcp/{token}", app.base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_run_with_missing_or_malformed_binding_fails_closed() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let target = app.task(&ws, "target").await;
    for metadata in [
        json!({"trigger_type": "github_pr_merged"}),
        json!({"trigger_type": "github_pr_merged", "automation_target_task_id": ""}),
        json!({"trigger_type": "github_pr_merged", "automation_target_task_id": 42}),
    ] {
        let url = running_session(&app, &ws, metadata.clone()).await;
        let r = mcp_call(&url, "archive_task_kandev", json!({"task_id": target})).await;
        assert_eq!(
            r,
            Err("archive target is not bound to this automation run".into()),
            "{metadata}"
        );
    }
    assert!(app.task_json(&target).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_sessions_and_other_trigger_types_archive_as_before() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    // a run of another trigger type
    let target = app.task(&ws, "target").await;
    let prompt = format!(r#"e2e:mcp:kandev:archive_task_kandev({{"task_id":"{target}"}})"#);
    let a = app
        .automation(
            &ws,
            json!({"name": "hook", "prompt": prompt, "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&target).await["archived_at"].is_string());
    // an ordinary (non-automation) task's session
    let other = app.task(&ws, "other").await;
    let url = running_session(&app, &ws, json!({})).await;
    assert_eq!(
        mcp_call(&url, "archive_task_kandev", json!({"task_id": other})).await,
        Ok("{\n  \"success\": true\n}".into())
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn already_archived_target_succeeds_with_already_archived() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    app.post(&format!("/api/v1/tasks/{target}/archive"), json!({})).await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    let results = tool_results(&transcript(&app, &run.task_id).await);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("already_archived"), "{results:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_target_fails_the_call_but_the_run_still_succeeds() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let bystander = app.task(&ws, "bystander").await;
    // the target disappears between the firing and the agent's call
    let prompt = format!("e2e:delay(300)\n{ARCHIVE_PROMPT}");
    let a = app.merged_automation(&ws, json!({"all_repos": true}), &prompt, 1).await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    app.wait_for_runs(&a, 1).await;
    app.delete(&format!("/api/v1/tasks/{target}")).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    let results = tool_results(&transcript(&app, &run.task_id).await);
    assert!(results[0].contains("Failed to archive task"), "{results:?}");
    assert!(app.task_json(&bystander).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_ending_its_turn_without_the_call_still_succeeds() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": true}),
            "e2e:message(\"I will not archive anything\")",
            1,
        )
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&target).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_run_of_a_merged_automation_carries_no_task_id_and_makes_no_call() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": true}),
            "e2e:message(\"task id: [{{data.task_id}}]\")",
            1,
        )
        .await;
    let r = app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
    assert_eq!(r.body["triggered"], true);
    let run = app.wait_for_run_status(&a, "succeeded").await;
    assert_eq!(run.trigger_type, "manual");
    let listed = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    assert_eq!(listed[0]["trigger_data"], json!({"source": "manual"}));
    assert!(app.run_prompt(&run).await.contains("task id: []"));
    let messages = transcript(&app, &run.task_id).await;
    assert!(!messages.iter().any(|m| m["kind"] == "tool_call"), "no archive call");
    assert!(
        app.task_json(&run.task_id).await["metadata"]
            .get("automation_target_task_id")
            .is_none(),
        "manual runs bind nothing"
    );
    assert!(app.task_json(&target).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_token_is_refused_once_the_turn_has_ended_and_unknown_tokens_are_refused() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:mcp_url()", 1)
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    // The URL the agent was given, with its turn's token.
    let url = transcript(&app, &run.task_id)
        .await
        .iter()
        .find_map(|m| m["content"].as_str()?.strip_prefix("mcp=").map(str::to_string))
        .expect("the agent said its MCP URL");
    let r = mcp_call(&url, "archive_task_kandev", json!({"task_id": target})).await;
    assert!(r.is_err(), "{r:?}");
    let r = app.client.post(&url).json(&json!({})).send().await.unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::UNAUTHORIZED);
    let r = app
        .client
        .post(format!("{}/mcp/not-a-token", app.base))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::NOT_FOUND);
    assert!(app.task_json(&target).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_client_lists_and_calls_the_tools_on_the_local_endpoint() {
    use rmcp::ServiceExt;
    use rmcp::model::ClientConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "hello").await;
    let url = format!("{}/mcp", app.base);
    let client = ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(app.admin_token.clone()),
        ))
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "add_comment",
            "archive_task_kandev",
            "get_task",
            "list_tasks",
            "move_task"
        ]
    );
    let archive = tools.iter().find(|t| t.name == "archive_task_kandev").unwrap();
    assert!(
        archive
            .description
            .as_deref()
            .unwrap_or_default()
            .contains("already_archived")
    );
    let _ = client.cancel().await;
    let got = mcp_as(&app, &url, "get_task", json!({"task_id": t})).await.unwrap();
    assert!(got.contains("\"hello\""));
    let listed = mcp_as(&app, &url, "list_tasks", json!({"workspace_id": ws}))
        .await
        .unwrap();
    assert!(listed.contains(&t));
    assert!(
        mcp_as(&app, &url, "move_task", json!({"task_id": t, "status": "human_review"}))
            .await
            .is_err(),
        "board rules apply"
    );
    assert!(
        mcp_as(&app, &url, "add_comment", json!({"task_id": t, "body": "from MCP"}))
            .await
            .is_ok()
    );
    assert_eq!(
        mcp_as(&app, &url, "archive_task_kandev", json!({"task_id": " "})).await,
        Err("task_id is required".into())
    );
    assert_eq!(
        mcp_as(&app, &url, "archive_task_kandev", json!({"task_id": "missing"})).await,
        Err("Failed to archive task".into())
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashing_agent_fails_the_run_and_its_process_is_reaped() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": true}),
            "e2e:pid()\ne2e:delay(200)\ne2e:crash()",
            1,
        )
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_run_status(&a, "failed").await;
    let listed = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    assert!(
        listed[0]["error_message"].as_str().unwrap().contains("agent"),
        "{listed}"
    );
    let messages = transcript(&app, &run.task_id).await;
    let pid: u32 = messages
        .iter()
        .find_map(|m| {
            m["content"]
                .as_str()
                .and_then(|c| c.strip_prefix("pid="))
                .map(|p| p.parse().unwrap())
        })
        .expect("the agent reported its pid");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the crashed agent was reaped"
    );
    let sessions = app.get(&format!("/api/v1/tasks/{}/sessions", run.task_id)).await.body;
    assert_eq!(sessions[0]["state"], "FAILED");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_request_in_an_automation_run_is_refused_and_fails_the_run() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": true}),
            "e2e:permission(\"Delete the repository\")\ne2e:message(\"went ahead\")",
            1,
        )
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_run_status(&a, "failed").await;
    let listed = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    assert_eq!(
        listed[0]["error_message"],
        "Permission required: Delete the repository \u{2014} automation runs cannot answer prompts"
    );
    assert!(
        !transcript(&app, &run.task_id)
            .await
            .iter()
            .any(|m| m["content"] == "went ahead")
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_past_its_timeout_fails_the_run() {
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| s.agent_turn_timeout = Duration::from_millis(500))
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), HOLD_PROMPT, 1)
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    app.wait_for_run_status(&a, "failed").await;
    let listed = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    assert!(
        listed[0]["error_message"].as_str().unwrap().contains("timed out"),
        "{listed}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archiving_a_run_task_cancels_its_turn_and_a_succeeded_session_can_be_replied_to() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let (t1, t2) = (app.task(&ws, "one").await, app.task(&ws, "two").await);
    let held = app
        .merged_automation(&ws, json!({"all_repos": true}), HOLD_PROMPT, 1)
        .await;
    let run = app.in_flight_run(&held, &t1).await;
    app.post(&format!("/api/v1/tasks/{}/archive", run.task_id), json!({}))
        .await;
    eventually("the cancelled turn to end", Duration::from_secs(20), || async {
        app.get(&format!("/api/v1/tasks/{}/sessions", run.task_id)).await.body[0]["state"] == "CANCELLED"
    })
    .await;
    let failed = app.wait_for_run_status(&held, "failed").await;
    assert_eq!(failed.task_id, run.task_id, "a cancelled turn fails its run");

    let chatty = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"first\")", 1)
        .await;
    app.publish_pr(&merged_pr(&t2, "acme", "api", 8), Form::Typed).await;
    let run = app.wait_for_run_status(&chatty, "succeeded").await;
    let sid = app.get(&format!("/api/v1/tasks/{}/sessions", run.task_id)).await.body[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = app
        .post(
            &format!("/api/v1/sessions/{sid}/prompt"),
            json!({"text": "e2e:message(\"second\")"}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::ACCEPTED);
    eventually("the reply to be answered", Duration::from_secs(20), || async {
        transcript(&app, &run.task_id)
            .await
            .iter()
            .any(|m| m["content"] == "second")
    })
    .await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worktrees_of_the_ten_newest_finished_runs_are_kept_and_older_ones_reclaimed() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"done\")", 20)
        .await;
    for n in 1..=12 {
        app.publish_pr(&merged_pr(&target, "acme", "api", n), Form::Typed).await;
        // one at a time, so creation order is finishing order
        app.wait_for_run_status(&a, "succeeded").await;
        eventually("every run so far to finish", Duration::from_secs(20), || async {
            app.runs_of(&a).await.iter().all(|r| r.status.as_str() == "succeeded")
        })
        .await;
    }
    let runs = app.runs_of(&a).await; // newest first
    assert_eq!(runs.len(), 12);
    let worktree = |task: &str| app.dir.path().join("data").join("worktrees").join(task);
    // Retention runs right after a run is marked finished: let the last one's pass land.
    eventually("retention to keep the ten newest", Duration::from_secs(10), || async {
        runs.iter()
            .enumerate()
            .all(|(i, r)| worktree(&r.task_id).exists() == (i < 10))
    })
    .await;
    app.stop().await;
}
