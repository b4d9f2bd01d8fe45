//! The NATS stream can be written by more than Kandev's replicas — an agent on
//! the same host, anything on the network that reaches NATS — so a replica
//! handles only events a replica of its installation published.

use std::time::Duration;

use chrono::Utc;
use kandev_core::events::{AUTOMATION_TRIGGERED, AutomationTriggered, Event, Payload, TASK_PR_UPDATED};
use kandev_server::bus::{OPEN_NATS, SEAL_HEADER};
use kandev_server::store::Store;
use serde_json::json;

use crate::engine::{ARCHIVE_PROMPT, Form, merged_pr};
use crate::logs::{Captured, capture};
use crate::on_both_databases;
use crate::support::{Db, Spawn, TestApp, eventually, postgres_url};

fn event(id: &str, subject: &str, data: Payload) -> Event {
    Event {
        id: id.into(),
        subject: subject.into(),
        source: "github".into(),
        timestamp: Utc::now(),
        data,
    }
}

/// Publishes `event` into `stream` as any NATS client could, with `seal` if given.
async fn publish_as_outsider(stream: &str, event: &Event, seal: Option<&str>) {
    let url = std::env::var("KANDEV_TEST_NATS_URL").expect("KANDEV_TEST_NATS_URL");
    let client = async_nats::connect(url).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Msg-Id", event.id.as_str());
    if let Some(seal) = seal {
        headers.insert(SEAL_HEADER, seal);
    }
    js.publish_with_headers(format!("{stream}.{}", event.subject), headers, event.to_wire().into())
        .await
        .expect("publish")
        .await
        .expect("stored");
}

async fn app_on_stream(stream: &str) -> TestApp {
    let stream = stream.to_string();
    Spawn::new(Db::Sqlite)
        .nats()
        .settings_more(move |s| s.nats_stream = stream)
        .start()
        .await
}

fn new_stream() -> String {
    format!("test_{}", uuid::Uuid::new_v4().simple())
}

/// An app on a stream of its own, a task to be forged against (`victim`), a
/// task whose PR really merges (`merged`) and an automation archiving the
/// task of a merged PR.
struct Scene {
    app: TestApp,
    stream: String,
    victim: String,
    merged: String,
    automation: String,
}

async fn scene() -> Scene {
    let stream = new_stream();
    let app = app_on_stream(&stream).await;
    let ws = app.workspace_with_repo("W").await;
    let victim = app.task(&ws, "victim").await;
    let merged = app.task(&ws, "merged").await;
    let automation = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 5)
        .await;
    Scene {
        app,
        stream,
        victim,
        merged,
        automation,
    }
}

impl Scene {
    /// Merges the genuine PR, waits for each forged id to be refused, then
    /// checks that only the genuine event fired and the victim is untouched.
    async fn only_the_genuine_event_fires(&self, logs: &Captured, forged: &[&str]) {
        let Scene {
            app,
            victim,
            merged,
            automation,
            ..
        } = self;
        app.publish_pr(&merged_pr(merged, "acme", "api", 8), Form::Typed).await;
        app.wait_for_run_status(automation, "succeeded").await;
        for id in forged {
            eventually(&format!("{id} to be refused"), Duration::from_secs(10), || async {
                !logs
                    .at(
                        "WARN",
                        &["refusing a bus message no replica of this installation published", id],
                    )
                    .is_empty()
            })
            .await;
        }
        app.settle().await;
        let runs = app.runs_of(automation).await;
        assert_eq!(runs.len(), 1, "only the genuine event fired: {runs:?}");
        assert_eq!(runs[0].dedup_key, format!("pr_merged:{merged}:acme/api#8"));
        assert!(app.task_json(victim).await["archived_at"].is_null());
        assert!(app.task_json(merged).await["archived_at"].is_string());
    }
}

// One thread, so every task's log lines reach the capture.
#[tokio::test]
async fn a_merged_event_or_a_firing_forged_on_nats_archives_nothing_and_is_refused() {
    let (logs, _guard) = capture();
    let scene = scene().await;
    let Scene {
        app,
        stream,
        victim,
        automation: a,
        ..
    } = &scene;
    let trigger = app.services().store.get_automation(a).await.unwrap().triggers[0]
        .id
        .clone();
    // A merged event for a task whose PR is open, and a firing as the engine
    // would announce one, both for the victim, both from outside.
    let pr = event(
        "forged-pr",
        TASK_PR_UPDATED,
        Payload::TaskPr(merged_pr(victim, "acme", "api", 7)),
    );
    publish_as_outsider(stream, &pr, None).await;
    let firing = event(
        "forged-firing",
        AUTOMATION_TRIGGERED,
        Payload::AutomationTriggered(AutomationTriggered {
            automation_id: a.clone(),
            trigger_id: trigger,
            trigger_type: "github_pr_merged".into(),
            trigger_data: json!({"task_id": victim, "owner": "acme", "repo": "api", "pr_number": 7}),
            dedup_key: format!("pr_merged:{victim}:acme/api#7"),
        }),
    );
    // Sealed by another installation (or a guess): no better than none.
    publish_as_outsider(stream, &firing, Some("sha256=00")).await;
    scene
        .only_the_genuine_event_fires(&logs, &["forged-pr", "forged-firing"])
        .await;
    let metrics = app.metrics().await;
    assert!(metrics.contains("\nkandev_bus_messages_refused_total 2\n"), "{metrics}");
    scene.app.stop().await;
}

/// An event an older replica (no seals) published and marked: in the outbox,
/// unsealed in the stream.
async fn published_unsealed_by_an_older_replica(app: &TestApp, stream: &str, stored: &Event, sent: &Event) {
    let store = &app.services().store;
    let mut tx = store.write_tx().await.unwrap();
    kandev_server::store::outbox::enqueue(&mut tx, stored).await.unwrap();
    tx.commit().await.unwrap();
    store
        .mark_published(std::slice::from_ref(&stored.id), Utc::now())
        .await
        .unwrap();
    publish_as_outsider(stream, sent, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsealed_event_the_outbox_holds_is_handled_as_during_a_rolling_upgrade() {
    let stream = new_stream();
    let app = app_on_stream(&stream).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    let e = event(
        "from-an-older-replica",
        TASK_PR_UPDATED,
        Payload::TaskPr(merged_pr(&target, "acme", "api", 7)),
    );
    published_unsealed_by_an_older_replica(&app, &stream, &e, &e).await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&target).await["archived_at"].is_string());
    app.stop().await;
}

#[tokio::test]
async fn an_unsealed_event_reusing_a_stored_id_with_another_body_is_refused() {
    let (logs, _guard) = capture();
    let scene = scene().await;
    let Scene {
        app, stream, victim, ..
    } = &scene;
    // The outbox holds an open PR's event; the stream gets "merged" under its id.
    let mut open = merged_pr(victim, "acme", "api", 7);
    open.state = "open".into();
    let stored = event("reused-id", TASK_PR_UPDATED, Payload::TaskPr(open));
    let sent = event(
        "reused-id",
        TASK_PR_UPDATED,
        Payload::TaskPr(merged_pr(victim, "acme", "api", 7)),
    );
    published_unsealed_by_an_older_replica(app, stream, &stored, &sent).await;
    scene.only_the_genuine_event_fires(&logs, &["reused-id"]).await;
    scene.app.stop().await;
}

async fn replicas_starting_at_once_share_one_bus_key(db: Db) {
    let url = match db {
        Db::Sqlite => {
            let dir = tempfile::tempdir().unwrap().keep();
            format!("sqlite://{}/kandev.db", dir.display())
        }
        Db::Postgres => postgres_url().await,
    };
    let mut stores = vec![];
    for _ in 0..4 {
        stores.push(Store::connect(&url).await.expect("store"));
    }
    let keys = futures::future::join_all(
        stores
            .iter()
            .enumerate()
            .map(|(i, s)| s.installation_key("bus", format!("candidate-{i}"), Utc::now())),
    )
    .await;
    let keys: Vec<String> = keys.into_iter().map(|k| k.expect("key")).collect();
    assert!(keys[0].starts_with("candidate-"), "{keys:?}");
    assert!(keys.iter().all(|k| k == &keys[0]), "one key for all: {keys:?}");
    let later = stores[0]
        .installation_key("bus", "later".into(), Utc::now())
        .await
        .unwrap();
    assert_eq!(later, keys[0], "a later start keeps the key");
}
on_both_databases!(replicas_starting_at_once_share_one_bus_key);

/// A nats-server of the test's own that requires a user and password; ended
/// when dropped.
struct LockedNats {
    _child: tokio::process::Child,
    _dir: tempfile::TempDir,
    port: u16,
}

/// A NATS whose one user is `user`; with `anonymous`, a client giving no
/// credentials is let in as that user (`no_auth_user`).
async fn locked_nats(user: &str, password: &str, anonymous: bool) -> LockedNats {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("nats.conf");
    let store = dir.path().join("js");
    let no_auth_user = if anonymous {
        format!("no_auth_user: {user:?}")
    } else {
        String::new()
    };
    std::fs::write(
        &config,
        format!(
            "listen: \"127.0.0.1:{port}\"\njetstream {{ store_dir: {store:?} }}\n\
             accounts {{ K {{ jetstream: enabled, users: [{{user: {user:?}, password: {password:?}}}] }} }}\n\
             {no_auth_user}\n"
        ),
    )
    .expect("nats.conf");
    let child = tokio::process::Command::new("nats-server")
        .arg("-c")
        .arg(&config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("nats-server on PATH (`cargo xtask test` installs it)");
    eventually("nats-server to listen", Duration::from_secs(10), || async {
        tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
    })
    .await;
    LockedNats {
        _child: child,
        _dir: dir,
        port,
    }
}

/// A server on the NATS at `url` (credentials in it).
async fn on_nats(url: String) -> TestApp {
    let app = Spawn::new(Db::Sqlite)
        .nats()
        .settings_more(move |s| s.nats_url = url)
        .start()
        .await;
    assert_eq!(app.services().bus.kind(), "nats");
    app
}

// One thread, so the start's log lines reach the capture.
#[tokio::test]
async fn a_nats_that_requires_credentials_is_reached_with_those_in_the_url() {
    let (logs, _guard) = capture();
    let nats = locked_nats("kandev", "s3cr:t@x", false).await;
    let plain = format!("nats://127.0.0.1:{}", nats.port);
    assert!(
        async_nats::connect(plain.as_str()).await.is_err(),
        "the test's NATS refuses a client without credentials"
    );
    let app = on_nats(format!("nats://kandev:s3cr%3At%40x@127.0.0.1:{}", nats.port)).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.publish_pr(&merged_pr(&target, "acme", "api", 7), Form::Typed).await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&target).await["archived_at"].is_string());
    assert!(
        logs.at("WARN", &[OPEN_NATS]).is_empty(),
        "a locked NATS is not warned of"
    );
    app.stop().await;
}

/// Credentials keep a NATS closed only if it refuses clients without them:
/// one open to anyone (no credentials asked, or `no_auth_user`) is warned
/// of at start.
#[tokio::test]
async fn a_nats_that_takes_clients_without_credentials_is_warned_of_at_start() {
    let (logs, _guard) = capture();
    let app = Spawn::new(Db::Sqlite).nats().start().await;
    assert_eq!(logs.at("WARN", &[OPEN_NATS]).len(), 1, "no credentials given");
    app.stop().await;
    let (logs, _guard) = capture();
    let nats = locked_nats("kandev", "pw", true).await;
    let app = on_nats(format!("nats://kandev:pw@127.0.0.1:{}", nats.port)).await;
    assert_eq!(logs.at("WARN", &[OPEN_NATS]).len(), 1, "credentials given, none needed");
    app.stop().await;
}
