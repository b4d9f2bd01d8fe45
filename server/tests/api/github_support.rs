//! A GitHub simulator on loopback for the tests, and helpers around it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kandev_core::events::{FromPayload, TASK_PR_UPDATED};
use kandev_core::task_pr::TaskPr;
use kandev_server::bus::{Subscription, handler};
use kandev_server::github_sim::{NewPr, PrPatch, SimRuleset, Simulator};
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Db, Spawn, TestApp};

pub const SECRET: &str = "webhook-secret";

pub struct Sim {
    pub sim: Simulator,
    pub base: String,
}

/// How long GitHub's reads lag its writes in every test unless one says
/// otherwise: a behaviour that holds only with instant reads is a bug.
pub const READ_LAG_MS: u64 = 300;

pub async fn simulator() -> Sim {
    let sim = Simulator::new();
    sim.set_timing(kandev_server::github_sim::Timing {
        read_lag_ms: READ_LAG_MS,
        ..Default::default()
    });
    let (addr, _) = sim.serve("127.0.0.1:0").await.expect("simulator");
    sim.add_org("acme");
    sim.add_repo("acme", "api", false);
    Sim {
        sim,
        base: format!("http://{addr}"),
    }
}

impl Sim {
    /// An app talking to this simulator. The poller's timer is an hour, so
    /// only its first sweep (and explicit sweeps) run during a test.
    pub fn app(&self, db: Db) -> Spawn {
        let base = self.base.clone();
        Spawn::new(db).settings(move |s| {
            s.github_api_url = base;
            s.github_token = Some("test-token".into());
            s.github_webhook_secret = Some(SECRET.into());
            s.pr_poll_interval = Duration::from_secs(3600);
        })
    }

    pub fn open(&self, title: &str) -> (i64, String) {
        self.sim
            .open_pr(
                "acme",
                "api",
                NewPr {
                    title: title.into(),
                    ..Default::default()
                },
            )
            .expect("open pr")
    }

    /// A completed, successful `build` check on `sha`.
    pub fn green_build(&self, sha: &str) {
        self.sim
            .set_check_run("acme", "api", sha, "build", "completed", Some("success"))
            .expect("check run");
    }

    /// Opens a PR whose `build` passed; returns its number.
    pub fn green_pr(&self, title: &str) -> i64 {
        let (n, sha) = self.open(title);
        self.green_build(&sha);
        n
    }

    /// CI on acme/api that passes `build` on every new commit (a push, a
    /// branch update, a merge group) `delay_ms` after it appears.
    pub fn auto_build(&self, delay_ms: u64) {
        let ci = kandev_server::github_sim::AutoCi {
            checks: vec!["build".into()],
            conclusion: "success".into(),
            delay_ms,
        };
        self.sim.set_auto_ci("acme", "api", Some(ci)).expect("auto CI");
    }

    /// Classic protection on acme/api requires `build`.
    pub fn require_build(&self) {
        self.sim
            .set_required_checks("acme", "api", Some(vec!["build".into()]))
            .expect("protection");
    }

    /// Puts PR `n` behind its base; `touching_its_files`: the base changed
    /// the PR's own files, so an update merges them.
    pub fn behind(&self, n: i64, touching_its_files: bool) {
        let patch = PrPatch {
            behind: Some(true),
            base_touches_files: Some(touching_its_files),
            ..Default::default()
        };
        self.sim.patch_pr("acme", "api", n, patch).expect("patch");
    }

    /// From now on, reads show a PR as it was `ms` before a merge, close or
    /// push (its webhook already says what happened).
    /// Adds a ruleset on acme/api's default branch, as `shape` makes it.
    pub fn ruleset(&self, shape: impl FnOnce(&mut SimRuleset)) {
        let mut r = SimRuleset {
            name: "main".into(),
            ..Default::default()
        };
        shape(&mut r);
        self.sim.add_ruleset("acme", "api", r).expect("ruleset");
    }

    pub fn lag_reads(&self, ms: u64) {
        self.sim.set_timing(kandev_server::github_sim::Timing {
            read_lag_ms: ms,
            ..Default::default()
        });
    }
}

/// Records every `github.task_pr.updated` the bus carries.
pub struct Published {
    pub rows: Arc<Mutex<Vec<TaskPr>>>,
    _sub: Subscription,
}

impl Published {
    pub fn count(&self) -> usize {
        self.rows.lock().unwrap().len()
    }

    pub fn last(&self) -> TaskPr {
        self.rows.lock().unwrap().last().cloned().expect("a publish")
    }
}

pub async fn watch_publishes(app: &TestApp) -> Published {
    let rows: Arc<Mutex<Vec<TaskPr>>> = Arc::default();
    let sink = rows.clone();
    let sub = app
        .services()
        .bus
        .subscribe(
            TASK_PR_UPDATED,
            "test-watch",
            handler(move |e| {
                let sink = sink.clone();
                async move {
                    if let Ok(pr) = TaskPr::from_payload(&e.data) {
                        sink.lock().unwrap().push(pr);
                    }
                }
            }),
        )
        .await
        .expect("subscribe");
    Published { rows, _sub: sub }
}

impl TestApp {
    pub async fn link(&self, task: &str, number: i64) -> serde_json::Value {
        let r = self
            .post(
                &format!("/api/v1/tasks/{task}/prs"),
                json!({"url": format!("https://github.com/acme/api/pull/{number}")}),
            )
            .await;
        assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.body);
        r.body
    }

    pub async fn sweep(&self) -> kandev_server::github::poller::SweepReport {
        kandev_server::github::poller::sweep(&self.services().github, self.services().settings.pr_settle_period).await
    }
}

/// An app whose merger re-reads every 20 ms.
pub fn fast(sim: &Sim, db: Db) -> Spawn {
    sim.app(db)
        .settings_more(|s| s.merger_poll_interval = Duration::from_millis(20))
}

/// A task handed to review with the PR, then approved.
/// A fast app again on the SQLite database and data directory a stopped
/// one kept (`stop_keeping_files`): a restart.
pub async fn fast_again(sim: &Sim, database_url: String, kept: &tempfile::TempDir) -> TestApp {
    let data = kept.path().join("data");
    fast(sim, Db::Sqlite)
        .settings_more(move |s| {
            s.database_url = database_url;
            s.data_dir = data;
        })
        .start()
        .await
}

/// Approves PR `n` and waits for it to be merged; the task's id.
pub async fn approve_until_merged(gh: &Sim, app: &TestApp, n: i64) -> String {
    let t = approve_with_pr(app, n, "").await;
    wait_status(app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", n).expect("pr").merged, "PR #{n} merged");
    t
}

pub async fn approve_with_pr(app: &TestApp, number: i64, description: &str) -> String {
    let ws = app.workspace_with_repo("W").await;
    approve_in(app, &ws, number, description).await
}

/// [`approve_with_pr`] in a workspace the test set up.
pub async fn approve_in(app: &TestApp, ws: &str, number: i64, description: &str) -> String {
    let t = in_review(app, ws, number, description).await;
    let r = app.post(&format!("/api/v1/tasks/{t}/approve"), json!({})).await;
    assert_eq!(
        r.body,
        json!({"status": "merge_triggered", "pr_url": format!("https://github.com/acme/api/pull/{number}")})
    );
    t
}

/// A task in `ws` handed off for review with PR `number`; the task's id.
pub async fn in_review(app: &TestApp, ws: &str, number: i64, description: &str) -> String {
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/tasks"),
            json!({"title": "Ship", "description": description, "status": "running"}),
        )
        .await;
    let t = r.body["id"].as_str().unwrap().to_string();
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/review"),
            json!({"summary": "ready", "pr_url": format!("https://github.com/acme/api/pull/{number}")}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    t
}

/// Approves PR `n` on a fresh app and waits for the merger to merge it,
/// with one merge and its summary; returns the task's events.
pub async fn merges_once(gh: &Sim, n: i64) -> serde_json::Value {
    let app = fast(gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_merged(&app, &t, n).await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
    events
}

/// Waits for task `t` to be done with "Merged PR #n"; returns its events.
pub async fn wait_merged(app: &TestApp, t: &str, n: i64) -> serde_json::Value {
    let events = wait_status(app, t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        json!(format!("Merged PR #{n}"))
    );
    events
}

/// The last event of `kind` in a task's event list (`Null` when none).
pub fn last_of(events: &serde_json::Value, kind: &str) -> serde_json::Value {
    events
        .as_array()
        .map(|a| a.iter().rev().find(|e| e["kind"] == kind).cloned())
        .unwrap_or_default()
        .unwrap_or(serde_json::Value::Null)
}

/// Waits for the task to reach `status` with its closing event; returns the events.
pub async fn wait_status(app: &TestApp, t: &str, status: &str) -> serde_json::Value {
    let closing = if status == "done" { "completed" } else { status };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        if app.task_json(t).await["status"] == status && !last_of(&events, closing).is_null() {
            return events;
        }
        // The events say where the merger stopped, which a bare timeout would not.
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {t} never became {status}: {events}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits until the merger's latest progress says it is waiting.
pub async fn waiting_for_checks(app: &TestApp, t: &str) {
    crate::support::eventually("the merger to wait", Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        last_of(&events, "merge_progress")["payload"]["step"] == "waiting_for_checks"
    })
    .await;
}
