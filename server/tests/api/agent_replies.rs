//! A reply to a run task's session continues the same conversation: through
//! the agent's `session/load` where it offers it, else by a replayed transcript.

use std::time::Duration;

use serde_json::{Value, json};

use kandev_server::testkit::processes::{ends_within, written_line};

use crate::support::{Db, TestApp, eventually, spawn_app};

async fn messages(app: &TestApp, sid: &str) -> Vec<Value> {
    let r = app.get(&format!("/api/v1/sessions/{sid}/messages")).await;
    r.body.as_array().cloned().unwrap_or_default()
}

async fn waiting(app: &TestApp, task_id: &str) -> bool {
    app.get(&format!("/api/v1/tasks/{task_id}/sessions")).await.body[0]["state"] == "WAITING_FOR_INPUT"
}

/// Sends `text` as a reply to session `sid`, which takes it.
async fn reply(app: &TestApp, sid: &str, text: &str) {
    let r = app
        .post(&format!("/api/v1/sessions/{sid}/prompt"), json!({"text": text}))
        .await;
    assert_eq!(r.status, reqwest::StatusCode::ACCEPTED, "{}", r.body);
}

/// Runs a one-turn automation on `profile` by hand and returns its run
/// task and session once the turn has succeeded.
async fn finished_run(app: &TestApp, profile: Option<&str>) -> (String, String) {
    let ws = app.workspace_with_repo("W").await;
    let mut body = json!({"name": "chat", "prompt": "e2e:message(\"hello\")",
                          "triggers": [{"type": "webhook", "config": {}}]});
    if let Some(p) = profile {
        body["agent_profile_id"] = json!(p);
    }
    let a = app.automation(&ws, body).await["id"].as_str().expect("id").to_string();
    app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    let sid = app.get(&format!("/api/v1/tasks/{}/sessions", run.task_id)).await.body[0]["id"]
        .as_str()
        .expect("a session")
        .to_string();
    (run.task_id, sid)
}

/// Runs a one-turn automation on `profile`, replies twice (the second reply
/// asks the agent what it recalls) and returns the session's transcript.
async fn two_replies(app: &TestApp, profile: Option<&str>) -> Vec<Value> {
    let (task_id, sid) = finished_run(app, profile).await;
    for text in ["e2e:message(\"second\")", "e2e:recall()"] {
        eventually("the session to wait for input", Duration::from_secs(20), || {
            waiting(app, &task_id)
        })
        .await;
        reply(app, &sid, text).await;
        // The turn must have started before the next wait means "ended".
        eventually("the reply to be recorded", Duration::from_secs(20), || async {
            messages(app, &sid).await.iter().any(|m| m["content"] == text)
        })
        .await;
    }
    eventually("the recall to be answered", Duration::from_secs(20), || async {
        messages(app, &sid)
            .await
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.starts_with("recalled")))
    })
    .await;
    messages(app, &sid).await
}

/// What the agent answered to the recall, and what the user said, in order.
async fn recall_on(app: &TestApp, profile: Option<&str>) -> (String, Vec<String>) {
    let transcript = two_replies(app, profile).await;
    let agent = said(&transcript, "agent");
    (agent.last().cloned().unwrap_or_default(), said(&transcript, "user"))
}

fn said(transcript: &[Value], role: &str) -> Vec<String> {
    transcript
        .iter()
        .filter(|m| m["role"] == role && m["kind"] == "message")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_continues_the_agents_own_session_through_session_load() {
    let app = spawn_app(Db::Sqlite).await;
    let (recalled, user) = recall_on(&app, None).await;
    assert_eq!(
        recalled,
        "recalled via load: e2e:message(\"hello\") | e2e:message(\"second\")"
    );
    // The agent replays the conversation while loading: it is not written twice.
    assert_eq!(
        user,
        ["e2e:message(\"hello\")", "e2e:message(\"second\")", "e2e:recall()"]
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_to_an_agent_without_session_load_replays_the_transcript() {
    let app = spawn_app(Db::Sqlite).await;
    let profile = app
        .post(
            "/api/v1/agent-profiles",
            json!({"name": "forgetful", "command": env!("CARGO_BIN_EXE_kandev"),
                   "args": ["mock-agent", "--no-load-session"]}),
        )
        .await;
    assert_eq!(profile.status, reqwest::StatusCode::CREATED, "{}", profile.body);
    let id = profile.body["id"].as_str().expect("profile id").to_string();
    let (recalled, user) = recall_on(&app, Some(&id)).await;
    assert_eq!(
        recalled,
        "recalled via replay: e2e:message(\"hello\") | e2e:message(\"second\")"
    );
    assert_eq!(user.len(), 3, "the replayed history is not written again");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replies_at_once_start_one_turn_and_the_other_is_refused() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid) = finished_run(&app, None).await;
    let path = format!("/api/v1/sessions/{sid}/prompt");
    let (one, two) = tokio::join!(
        app.post(&path, json!({"text": "e2e:delay(200)"})),
        app.post(&path, json!({"text": "e2e:delay(200)"}))
    );
    let mut statuses = [one.status.as_u16(), two.status.as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [202, 409], "{} / {}", one.body, two.body);
    eventually("the one turn to end", Duration::from_secs(20), || {
        waiting(&app, &task_id)
    })
    .await;
    let replies = said(&messages(&app, &sid).await, "user");
    assert_eq!(replies.len(), 2, "one prompt and one reply: {replies:?}");
    app.stop().await;
}

/// The session's state and why its last turn ended.
async fn session_state(app: &TestApp, task_id: &str) -> (String, String) {
    let s = app.get(&format!("/api/v1/tasks/{task_id}/sessions")).await.body[0].clone();
    let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
    (text("state"), text("stop_reason"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_a_stopped_replica_left_mid_reply_waits_for_input_again() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid) = finished_run(&app, None).await;
    // As a replica that died answering a reply leaves it: running, and no
    // turn anywhere holds it.
    app.exec(&format!(
        "UPDATE agent_sessions SET state = 'RUNNING' WHERE id = '{sid}'"
    ))
    .await;
    eventually("the session to be reopened", Duration::from_secs(20), || async {
        session_state(&app, &task_id).await.0 == "WAITING_FOR_INPUT"
    })
    .await;
    let (_, why) = session_state(&app, &task_id).await;
    assert_eq!(why, kandev_server::orchestrator::TURN_LOST);
    reply(&app, &sid, "e2e:message(\"again\")").await;
    eventually("the reply to be answered", Duration::from_secs(20), || async {
        messages(&app, &sid).await.iter().any(|m| m["content"] == "again")
    })
    .await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_in_progress_holds_its_session_and_recovery_leaves_it_alone() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid) = finished_run(&app, None).await;
    reply(&app, &sid, "e2e:delay(6000)").await;
    let lease = format!("session:{sid}");
    let held = sqlx::query("SELECT COUNT(*) AS n FROM leases WHERE name = $1")
        .bind(&lease)
        .fetch_one(app.services().store.pool())
        .await
        .expect("leases");
    assert_eq!(
        sqlx::Row::try_get::<i64, _>(&held, "n").expect("n"),
        1,
        "no lease on the reply's turn"
    );
    // Recovery passes every two seconds: two go by mid-turn.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(session_state(&app, &task_id).await.0, "RUNNING");
    eventually("the reply's turn to end", Duration::from_secs(20), || async {
        session_state(&app, &task_id).await == ("WAITING_FOR_INPUT".into(), "end_turn".into())
    })
    .await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_whose_session_another_replica_took_is_stopped_and_the_conversation_stays_open() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid) = finished_run(&app, None).await;
    let out = tempfile::tempdir().expect("out");
    let agent = out.path().join("agent");
    let text = format!("e2e:spawn(\"echo $PPID > {}\")\ne2e:delay(60000)", agent.display());
    reply(&app, &sid, &text).await;
    let pid = written_line(&agent, Duration::from_secs(30))
        .await
        .expect("the agent's pid");
    // Another replica took the turn's lease while this one stalled.
    app.exec(&format!(
        "UPDATE leases SET owner = 'replica-b' WHERE name = 'session:{sid}'"
    ))
    .await;
    assert!(ends_within(&pid, Duration::from_secs(15)).await, "the reply went on");
    // Not closed by the turn that lost it: once that lease runs out, the
    // session waits for input again.
    eventually("the session to be reopened", Duration::from_secs(30), || async {
        session_state(&app, &task_id).await
            == (
                "WAITING_FOR_INPUT".into(),
                kandev_server::orchestrator::TURN_LOST.into(),
            )
    })
    .await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_standing_down_takes_no_reply_and_leaves_the_session_waiting() {
    let app = spawn_app(Db::Sqlite).await;
    let (task_id, sid) = finished_run(&app, None).await;
    eventually("the session to wait for input", Duration::from_secs(20), || {
        waiting(&app, &task_id)
    })
    .await;
    // As when this replica's clock is found off the database's.
    app.services().leases.stand_down().await;
    let r = app
        .post(
            &format!("/api/v1/sessions/{sid}/prompt"),
            json!({"text": "e2e:message(\"x\")"}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(session_state(&app, &task_id).await.0, "WAITING_FOR_INPUT");
    // Without the standing down's refusal, the claim needs its lease too.
    assert!(!app.services().orchestrator.claim_reply(&sid).await.expect("asked"));
    assert_eq!(session_state(&app, &task_id).await.0, "WAITING_FOR_INPUT");
    app.services().leases.stand_up();
    reply(&app, &sid, "e2e:message(\"back\")").await;
    app.stop().await;
}
