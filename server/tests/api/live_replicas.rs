//! Live updates across replicas: a browser streaming a workspace from one
//! `kandev serve` sees a change made through another (behind a load
//! balancer, its requests and its stream may land anywhere), and a replica's
//! own change reaches its stream once, not again from NATS.

use std::time::Duration;

use kandev_core::api::{LIVE_TASK_UPDATED, LiveUpdate};
use kandev_server::testkit::{ADMIN_TOKEN, Api, Replica, shared_env};
use serde_json::json;

use crate::github_support::simulator;
use crate::support::postgres_url;

const KANDEV: &str = env!("CARGO_BIN_EXE_kandev");

/// `GET /workspaces/{ws}/stream` on one replica, read as a browser reads it.
struct LiveStream {
    resp: reqwest::Response,
    buf: String,
}

impl LiveStream {
    async fn open(base: &str, ws: &str) -> LiveStream {
        let resp = reqwest::Client::new()
            .get(format!("{base}/api/v1/workspaces/{ws}/stream"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("stream");
        assert!(resp.status().is_success(), "stream on {base}: {}", resp.status());
        LiveStream {
            resp,
            buf: String::new(),
        }
    }

    /// The next notice, or `None` if none comes within `within`.
    async fn next(&mut self, within: Duration) -> Option<LiveUpdate> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                // Keep-alive comments carry no data.
                if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) {
                    return Some(serde_json::from_str(data.trim_start()).expect("a notice's data is JSON"));
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk())
                .await
                .ok()?
                .expect("reading the stream")?;
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

fn task_updated(id: &str) -> Option<LiveUpdate> {
    Some(LiveUpdate {
        kind: LIVE_TASK_UPDATED.into(),
        id: id.into(),
    })
}

async fn new_task(api: &Api, base: &str, ws: &str, title: &str) -> String {
    api.post(
        base,
        &format!("/api/v1/workspaces/{ws}/tasks"),
        json!({ "title": title }),
    )
    .await["id"]
        .as_str()
        .expect("task id")
        .to_string()
}

/// Replicas r1 and r2 on `env`, and a workspace made through r1.
async fn two_replicas(dir: &std::path::Path, env: &[(String, String)]) -> (Replica, Replica, String) {
    let r1 = Replica::start(KANDEV.as_ref(), "r1", dir, env).await;
    let r2 = Replica::start(KANDEV.as_ref(), "r2", dir, env).await;
    let ws = Api::default()
        .post(&r1.base, "/api/v1/workspaces", json!({"name": "W"}))
        .await["id"]
        .as_str()
        .expect("workspace id")
        .to_string();
    (r1, r2, ws)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_change_through_one_replica_reaches_a_browser_streaming_from_another() {
    let sim = simulator().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let nats = std::env::var("KANDEV_TEST_NATS_URL").expect("KANDEV_TEST_NATS_URL: run through `cargo xtask test`");
    let stream = format!("live_{}", uuid::Uuid::new_v4().simple());
    let env = shared_env(&postgres_url().await, &sim.base, Some((&nats, &stream)));
    let (r1, r2, ws) = two_replicas(dir.path(), &env).await;
    let api = Api::default();
    let mut on_r1 = LiveStream::open(&r1.base, &ws).await;
    let mut on_r2 = LiveStream::open(&r2.base, &ws).await;
    let wait = Duration::from_secs(15);

    let first = new_task(&api, &r2.base, &ws, "made on r2").await;
    assert_eq!(
        on_r1.next(wait).await,
        task_updated(&first),
        "r1 never heard of r2's change:\n{}",
        r1.log_tail()
    );
    assert_eq!(on_r2.next(wait).await, task_updated(&first));

    // Whatever else reaches the subject is dropped, never streamed: a line
    // break in a kind would split the event (axum panics on one).
    let outsider = async_nats::connect(&nats).await.expect("nats");
    let subject = kandev_server::bus::live_subject(&stream);
    for junk in [
        json!({"workspace_id": ws, "kind": "task.updated\nevent: resync", "id": "x"}),
        json!({"workspace_id": ws, "kind": "task.deleted", "id": "x"}),
        json!("not a notice"),
    ] {
        outsider
            .publish(subject.clone(), junk.to_string().into())
            .await
            .expect("publish");
    }
    outsider.flush().await.expect("flush");

    // By now NATS has carried `first` to r1; an echo to r2 would come before
    // the next change, which r2 hears only from NATS.
    let second = new_task(&api, &r1.base, &ws, "made on r1").await;
    assert_eq!(
        on_r2.next(wait).await,
        task_updated(&second),
        "r2 heard its own change twice, or never heard r1's:\n{}",
        r2.log_tail()
    );
    assert_eq!(
        on_r1.next(wait).await,
        task_updated(&second),
        "r1 heard its own change twice"
    );
}

/// A `nats-server` of this test's own, so it can be stopped and started
/// again on the same port without disturbing the tests sharing the other.
struct OwnNats {
    dir: std::path::PathBuf,
    port: Option<u16>,
    child: Option<tokio::process::Child>,
}

impl OwnNats {
    async fn start(dir: &std::path::Path) -> OwnNats {
        let mut nats = OwnNats {
            dir: dir.to_path_buf(),
            port: None,
            child: None,
        };
        nats.start_again().await;
        nats
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port.expect("started"))
    }

    /// Starts it (on the port it had, if it ran before) and waits until it listens.
    async fn start_again(&mut self) {
        let log = self.dir.join("nats.log");
        let out = std::fs::File::create(&log).expect("nats log");
        // `-1`: a port the kernel picks, announced in the log.
        let port = self.port.map_or("-1".to_string(), |p| p.to_string());
        let child = tokio::process::Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port, "-sd"])
            .arg(self.dir.join("js"))
            .stdout(out.try_clone().expect("log handle"))
            .stderr(out)
            .kill_on_drop(true)
            .spawn()
            .expect("nats-server on PATH: run through `cargo xtask test`");
        self.child = Some(child);
        let listening = "Listening for client connections on 127.0.0.1:";
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(rest) = text.split(listening).nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                self.port = Some(digits.parse().expect("nats-server's port"));
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "nats-server did not start:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

/// What a replica logs once its live updates reach NATS after an outage.
const BACK: &str = "live updates reached NATS again";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_nats_comes_back_every_open_stream_reads_again() {
    let sim = simulator().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut nats = OwnNats::start(dir.path()).await;
    let env = shared_env(&postgres_url().await, &sim.base, Some((&nats.url(), "live")));
    let (r1, r2, ws) = two_replicas(dir.path(), &env).await;
    let api = Api::default();
    let mut on_r2 = LiveStream::open(&r2.base, &ws).await;
    let wait = Duration::from_secs(30);
    let first = new_task(&api, &r1.base, &ws, "before the outage").await;
    assert_eq!(on_r2.next(wait).await, task_updated(&first), "{}", r2.log_tail());
    // The first connection is not a reconnect: nothing to announce.
    assert!(!r2.log_text().contains(BACK), "{}", r2.log_tail());

    nats.stop().await;
    // r2 cannot hear of this one while NATS is down.
    let missed = new_task(&api, &r1.base, &ws, "during the outage").await;
    nats.start_again().await;

    // The page on r2 is told to read everything again, which shows `missed`.
    // r1 may still deliver its notice of `missed` once reconnected; nothing else.
    loop {
        match on_r2.next(wait).await {
            Some(n) if n == LiveUpdate::resync() => break,
            Some(n) if Some(&n) == task_updated(&missed).as_ref() => {}
            other => panic!(
                "expected a resync after NATS came back, got {other:?}:\n{}",
                r2.log_tail()
            ),
        }
    }
    assert!(r2.log_text().contains(BACK), "{}", r2.log_tail());
    // And r2 hears r1 again.
    let after = new_task(&api, &r1.base, &ws, "after the outage").await;
    loop {
        match on_r2.next(wait).await {
            Some(n) if Some(&n) == task_updated(&after).as_ref() => break,
            Some(n) if Some(&n) == task_updated(&missed).as_ref() || n == LiveUpdate::resync() => {}
            other => panic!(
                "r2 stopped hearing r1 after NATS came back, got {other:?}:\n{}",
                r2.log_tail()
            ),
        }
    }
}
