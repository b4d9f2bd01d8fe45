//! Outbound notifications: targets, signed and Slack-shaped bodies, retries
//! on the schedule, the deliveries log, and the test send.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use axum::routing::post;
use chrono::{DateTime, Utc};
use kandev_server::clock::ManualClock;
use kandev_server::store::RunRecord;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::github_support::{approve_in, fast, simulator, wait_status};
use crate::support::{Db, TestApp, eventually};

const SECRET: &str = "notify-secret";

/// One request a receiver got.
#[derive(Clone, Debug)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
}

#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    /// Statuses to answer, in turn; 200 once they run out.
    answers: Arc<Mutex<VecDeque<u16>>>,
}

impl Receiver {
    async fn start(answers: &[u16]) -> (Receiver, String) {
        let r = Receiver::default();
        r.answers.lock().unwrap().extend(answers);
        let app = Router::new()
            .route(
                "/hook",
                post(
                    |State(r): State<Receiver>, headers: HeaderMap, body: Bytes| async move {
                        r.got.lock().unwrap().push(Received { headers, body });
                        let code = r.answers.lock().unwrap().pop_front().unwrap_or(200);
                        AxumStatus::from_u16(code).unwrap_or(AxumStatus::OK)
                    },
                ),
            )
            .with_state(r.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (r, url)
    }

    fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    fn events(&self) -> Vec<String> {
        self.got().iter().map(|r| header(r, "x-kandev-event")).collect()
    }
}

fn header(r: &Received, name: &str) -> String {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

async fn target(app: &TestApp, ws: &str, body: Value) -> Value {
    let r = app
        .post(&format!("/api/v1/workspaces/{ws}/notification-targets"), body)
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.body
}

async fn deliveries(app: &TestApp, ws: &str) -> Value {
    app.get(&format!("/api/v1/workspaces/{ws}/notification-deliveries"))
        .await
        .body
}

async fn notification_deliveries_are_signed_retried_and_logged(db: Db) {
    let gh = simulator().await;
    let (n, sha) = gh.open("Notify me");
    gh.green_build(&sha);
    let clock = Arc::new(ManualClock::new(at("2026-03-08T12:00:00Z")));
    let app = fast(&gh, db).clock(clock.clone()).start().await;
    let ws = app.workspace_with_repo("W").await;
    // The first delivery is refused once: it is retried, not lost.
    let (hook, url) = Receiver::start(&[500]).await;
    let (slack, slack_url) = Receiver::start(&[]).await;
    let t1 = target(
        &app,
        &ws,
        json!({"kind": "webhook", "url": url, "events": ["merge_triggered", "merged"], "secret": SECRET}),
    )
    .await;
    assert_eq!(
        (t1["has_secret"].clone(), t1.get("secret")),
        (json!(true), None),
        "{t1}"
    );
    target(
        &app,
        &ws,
        json!({"kind": "slack", "url": slack_url, "events": ["merged"]}),
    )
    .await;

    let task = approve_in(&app, &ws, n, "").await;
    wait_status(&app, &task, "done").await;
    // Both go out, in either order and each on its own: wait for both, not
    // for "merged" alone (merge_triggered could still be on its way).
    eventually(
        "both webhook notifications and the Slack one",
        Duration::from_secs(10),
        || async { hook.got().len() >= 2 && slack.got().len() == 1 },
    )
    .await;
    // The first to arrive met the 500 and waits out its 10 s backoff (the
    // test clock stands still, so either may be first).
    let mut sent = hook.events();
    sent.sort();
    assert_eq!(sent, ["merge_triggered", "merged"]);
    let refused = header(&hook.got()[0], "x-kandev-event");
    clock.advance(chrono::Duration::seconds(11));
    eventually("the retry", Duration::from_secs(10), || async { hook.got().len() == 3 }).await;

    let got = hook.got();
    for r in &got {
        let signature = header(r, "x-kandev-signature-256");
        assert!(
            kandev_server::signature::verify(SECRET, &r.body, &signature),
            "{signature}"
        );
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["delivery_id"], header(r, "x-kandev-delivery"));
        assert_eq!(body["task"]["id"], task);
        assert_eq!(body["workspace_id"], ws);
    }
    // The retry sends the very same bytes under the same delivery id.
    assert_eq!(got[0].body, got[2].body);
    assert_eq!(
        header(&got[0], "x-kandev-delivery"),
        header(&got[2], "x-kandev-delivery")
    );
    let merged = got.iter().find(|r| header(r, "x-kandev-event") == "merged").unwrap();
    let merged: Value = serde_json::from_slice(&merged.body).unwrap();
    assert_eq!(merged["detail"], format!("Merged PR #{n}"));

    let slack_body: Value = serde_json::from_slice(&slack.got()[0].body).unwrap();
    assert_eq!(slack_body["text"], format!("Merged: “Ship” — Merged PR #{n}"));
    assert_eq!(slack_body["blocks"][0]["type"], "section");
    assert_eq!(
        header(&slack.got()[0], "x-kandev-signature-256"),
        "",
        "Slack bodies are not signed"
    );

    // The log: every delivery with every attempt, once the retry's is
    // written (the receiver answers before it is).
    let retried = || async {
        let log = deliveries(&app, &ws).await;
        let done = log.as_array().into_iter().flatten().all(|d| d["status"] == "delivered");
        done.then_some(log)
    };
    eventually(
        "the log to say the retry delivered",
        Duration::from_secs(10),
        || async { retried().await.is_some() },
    )
    .await;
    let log = retried().await.expect("the log");
    let triggered = log
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["event"] == refused.as_str() && d["target_id"] == t1["id"])
        .unwrap()
        .clone();
    assert_eq!(triggered["status"], "delivered", "{log}");
    let codes: Vec<Value> = triggered["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status_code"].clone())
        .collect();
    assert_eq!(codes, [json!(500), json!(200)]);
    assert_eq!(triggered["attempts"][0]["error"], "the target answered 500");
    assert_eq!(log.as_array().unwrap().len(), 3, "{log}");
    app.stop().await;
}

crate::on_both_databases!(notification_deliveries_are_signed_retried_and_logged);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_send_reaches_the_target_and_bad_targets_are_refused() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let (hook, url) = Receiver::start(&[]).await;
    let targets = format!("/api/v1/workspaces/{ws}/notification-targets");
    for bad in [
        json!({"kind": "webhook", "url": "ftp://example.com/x", "events": ["merged"]}),
        json!({"kind": "webhook", "url": url, "events": []}),
        json!({"kind": "webhook", "url": url, "events": ["pushed"]}),
    ] {
        let r = app.post(&targets, bad.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.body);
    }
    // An unknown kind does not decode: a 400, as every malformed body.
    let r = app
        .post(&targets, json!({"kind": "teams", "url": url, "events": ["merged"]}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(app.get(&targets).await.body, json!([]), "nothing was written");

    let t = target(
        &app,
        &ws,
        json!({"kind": "webhook", "url": url, "events": ["merge_blocked"]}),
    )
    .await;
    let id = t["id"].as_str().unwrap();
    let r = app.post(&format!("{targets}/{id}/test"), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    eventually("the test delivery", Duration::from_secs(10), || async {
        hook.got().len() == 1
    })
    .await;
    assert_eq!(hook.events(), ["test"]);
    assert_eq!(
        header(&hook.got()[0], "x-kandev-signature-256"),
        "",
        "no secret, no signature"
    );
    eventually("the log to say delivered", Duration::from_secs(5), || async {
        deliveries(&app, &ws).await[0]["status"] == "delivered"
    })
    .await;

    // Deleting the target takes its log with it; a second delete is a 404.
    assert_eq!(
        app.delete(&format!("{targets}/{id}")).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        app.delete(&format!("{targets}/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(deliveries(&app, &ws).await, json!([]));
    app.stop().await;
}

/// A target for `automation_run.failed` in `ws`, a merged-PR automation
/// with `prompt`, and its run once failed and notified: the receiver, the
/// target task, the automation and the run.
async fn a_run_that_fails(app: &TestApp, ws: &str, prompt: &str) -> (Receiver, String, String, RunRecord) {
    let (hook, url) = Receiver::start(&[]).await;
    target(
        app,
        ws,
        json!({"kind": "webhook", "url": url, "events": ["automation_run.failed"]}),
    )
    .await;
    let task = app.task(ws, "target").await;
    let a = app.merged_automation(ws, json!({"all_repos": true}), prompt, 1).await;
    app.publish_pr(
        &crate::engine::merged_pr(&task, "acme", "api", 7),
        crate::engine::Form::Typed,
    )
    .await;
    let run = app.wait_for_run_status(&a, "failed").await;
    eventually("the failure notification", Duration::from_secs(10), || async {
        hook.got().len() == 1
    })
    .await;
    (hook, task, a, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_automation_run_notifies_once_with_its_error() {
    let app = crate::support::spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let (hook, _, a, run) = a_run_that_fails(&app, &ws, "e2e:crash()").await;
    let body: Value = serde_json::from_slice(&hook.got()[0].body).unwrap();
    assert_eq!(body["event"], "automation_run.failed");
    assert_eq!(body["task"]["id"], run.task_id);
    assert_eq!(body["data"]["automation_id"], a);
    assert!(body["detail"].as_str().unwrap().contains("agent"), "{body}");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(hook.got().len(), 1, "one notification per failed run");
    app.stop().await;
}

/// GIVEN a workspace with no repository, WHEN a merged PR fires its
/// automation, THEN the run fails before any task exists and the workspace's
/// targets still hear of it once: no task named, the automation and its
/// error in the body; a redelivery of the event tells nobody again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fails_before_its_task_exists_notifies_once() {
    let app = crate::support::spawn_app(Db::Sqlite).await;
    let ws = app.workspace("No repos").await;
    let (hook, task, a, run) = a_run_that_fails(&app, &ws, "e2e:message(\"ok\")").await;
    assert_eq!(run.task_id, "", "failed before its task");
    let body: Value = serde_json::from_slice(&hook.got()[0].body).unwrap();
    assert_eq!(body["event"], "automation_run.failed");
    assert_eq!(body["task"], Value::Null, "{body}");
    assert_eq!(body["data"]["automation_id"], a);
    assert_eq!(body["data"]["run_id"], run.id);
    assert_eq!(body["detail"], kandev_core::firing::FAIL_NO_REPOSITORY, "{body}");
    // The same event again (a redelivery): its row exists, nobody is told twice.
    let row = app.services().store.get_run_record(&run.id).await.unwrap();
    let event_id = sqlx::query("SELECT event_id FROM automation_runs WHERE id = $1")
        .bind(&run.id)
        .fetch_one(app.services().store.pool())
        .await
        .unwrap();
    let again = kandev_core::events::Event {
        id: sqlx::Row::try_get::<String, _>(&event_id, "event_id").unwrap(),
        subject: kandev_core::events::AUTOMATION_TRIGGERED.into(),
        source: kandev_core::events::SOURCE_AUTOMATION.into(),
        timestamp: chrono::Utc::now(),
        data: kandev_core::events::Payload::AutomationTriggered(kandev_core::events::AutomationTriggered {
            automation_id: a.clone(),
            trigger_id: row.trigger_id.clone(),
            trigger_type: row.trigger_type.clone(),
            trigger_data: json!({"task_id": task, "owner": "acme", "repo": "api", "pr_number": 7}),
            dedup_key: "again".into(),
        }),
    };
    app.services().bus.publish_event(again).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(hook.got().len(), 1, "one notification per failed run");
    assert_eq!(app.runs_of(&a).await.len(), 1);
    app.stop().await;
}

/// The first attempt of the only delivery, once there is one.
async fn first_attempt(app: &TestApp, ws: &str) -> Value {
    eventually("an attempt in the log", Duration::from_secs(10), || async {
        !deliveries(app, ws).await[0]["attempts"][0].is_null()
    })
    .await;
    deliveries(app, ws).await[0]["attempts"][0].clone()
}

/// Owners choose targets, the server makes the requests: without
/// `KANDEV_NOTIFY_PRIVATE_ADDRESSES` a target can reach neither the server's
/// host nor its network — not by a literal address (refused when created,
/// and when sent if one was stored while allowed) and not by a name that
/// resolves inward (refused where it is resolved, so rebinding fails too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_on_internal_addresses_are_refused_unless_allowed() {
    let gh = simulator().await;
    let app = gh
        .app(Db::Sqlite)
        .settings_more(|s| s.notify_private_addresses = false)
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let (hook, url) = Receiver::start(&[]).await;
    let targets = format!("/api/v1/workspaces/{ws}/notification-targets");
    for literal in [
        url.clone(),
        url.replace("127.0.0.1", "[::ffff:127.0.0.1]"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://10.0.0.7:8080/hook".to_string(),
        // Spellings of 127.0.0.1 the URL parser (and so the client) accepts.
        url.replace("127.0.0.1", "2130706433"),
        url.replace("127.0.0.1", "127.1"),
        url.replace("127.0.0.1", "0x7f.0.0.1"),
    ] {
        let r = app
            .post(
                &targets,
                json!({"kind": "webhook", "url": literal, "events": ["merged"]}),
            )
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{literal}: {}", r.body);
        let message = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("a loopback, private or link-local address"),
            "{message}"
        );
    }
    assert_eq!(app.get(&targets).await.body, json!([]), "nothing was written");

    // A name is accepted, then refused on sending: `localhost` resolves inward.
    let by_name = url.replace("127.0.0.1", "localhost");
    let t = target(
        &app,
        &ws,
        json!({"kind": "webhook", "url": by_name, "events": ["merged"]}),
    )
    .await;
    let id = t["id"].as_str().unwrap();
    app.post(&format!("{targets}/{id}/test"), json!({})).await;
    let attempt = first_attempt(&app, &ws).await;
    assert_eq!(
        attempt["error"],
        "refused: localhost is a loopback, private or link-local address; notifications go to public addresses only (see KANDEV_NOTIFY_PRIVATE_ADDRESSES)"
    );
    app.delete(&format!("{targets}/{id}")).await;

    // A literal stored while private addresses were allowed is not sent now.
    let stored = app
        .services()
        .store
        .create_notification_target(
            &ws,
            kandev_core::notify::TargetKind::Webhook,
            &url,
            &["merged".to_string()],
            "",
            Utc::now(),
        )
        .await
        .unwrap();
    app.post(&format!("{targets}/{}/test", stored.id), json!({})).await;
    let attempt = first_attempt(&app, &ws).await;
    assert!(
        attempt["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("refused: 127.0.0.1 is a loopback"),
        "{attempt}"
    );
    assert!(hook.got().is_empty(), "the receiver was reached");
    app.stop().await;
}
