//! `kandev serve` as real processes, for the cluster tests and benchmarks:
//! several replicas on one database (and one NATS), each killable with
//! SIGKILL and restartable, plus a client that drives them through the HTTP
//! API like a load balancer would. Nothing in the product uses it.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::github_sim::{NewPr, Simulator};

pub const ADMIN_TOKEN: &str = "cluster-admin-token-0123456789";
/// The webhook secret replicas and the simulator share.
pub const WEBHOOK_SECRET: &str = "cluster-webhook-secret";

/// One `kandev serve` process and how to start it again.
pub struct Replica {
    pub name: String,
    pub base: String,
    port: u16,
    env: Vec<(String, String)>,
    bin: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

/// What `kandev serve` prints once it listens; the rest of the line is its
/// sign-in page, whose port is the one the kernel picked for port 0.
const READY: &str = "Kandev is ready. Sign in at http://127.0.0.1:";

/// Polls `check` every 50 ms; panics with `what` after `timeout`.
async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Replica {
    /// Starts `kandev` (the binary at `bin`) as a replica with the shared
    /// settings plus its own port, data directory and name.
    pub async fn start(
        bin: &std::path::Path,
        name: &str,
        dir: &std::path::Path,
        shared: &[(String, String)],
    ) -> Replica {
        let mut env: Vec<(String, String)> = shared.to_vec();
        env.push(("KANDEV_DATA_DIR".into(), dir.join(name).display().to_string()));
        env.push(("KANDEV_REPLICA_ID".into(), name.into()));
        let mut r = Replica {
            name: name.into(),
            base: String::new(),
            port: 0,
            env,
            bin: bin.to_path_buf(),
            log: dir.join(format!("{name}.log")),
            child: None,
        };
        r.launch().await;
        r
    }

    /// Starts the process. The first start listens on port 0, so no other
    /// process can take the port between choosing and binding it; restarts
    /// keep that port (the load balancer's address), retrying while the
    /// kernel still holds it or a client's outgoing connection took it.
    async fn launch(&mut self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            match self.spawn_and_read_port().await {
                Ok(port) => {
                    self.port = port;
                    self.base = format!("http://127.0.0.1:{port}");
                    break;
                }
                Err(why) if self.port != 0 && tokio::time::Instant::now() < deadline => {
                    eprintln!("replica {} restarting on port {}: {why}", self.name, self.port);
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(why) => panic!("replica {} did not start: {why}\n{}", self.name, self.log_tail()),
            }
        }
        let health = format!("{}/healthz", self.base);
        let what = format!("replica {} on port {} to serve", self.name, self.port);
        wait_until(&what, Duration::from_secs(60), || async {
            reqwest::get(&health).await.is_ok_and(|r| r.status().is_success())
        })
        .await;
    }

    /// Spawns `kandev serve` and reads the port it announces in its log.
    async fn spawn_and_read_port(&mut self) -> Result<u16, String> {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("log file: {e}"))?;
        // The log is appended to across restarts: only this start's lines count.
        let from = out.metadata().map(|m| m.len() as usize).unwrap_or(0);
        let stderr = out.try_clone().map_err(|e| format!("log file: {e}"))?;
        let mut child = Command::new(&self.bin)
            .arg("serve")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("KANDEV_LISTEN", format!("127.0.0.1:{}", self.port))
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(out)
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("kandev serve: {e}"))?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let exited = child.try_wait().ok().flatten();
            let text = std::fs::read(&self.log).unwrap_or_default();
            let text = String::from_utf8_lossy(text.get(from..).unwrap_or_default());
            let port = text
                .lines()
                .find_map(|l| l.strip_prefix(READY))
                .and_then(|rest| rest.split('/').next()?.parse::<u16>().ok());
            if let Some(port) = port {
                self.child = Some(child);
                return Ok(port);
            }
            if let Some(status) = exited {
                return Err(format!("exited ({status})"));
            }
            if tokio::time::Instant::now() > deadline {
                return Err("it announced no port within 60 s".into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: no shutdown, no lease released, whatever it was doing cut short.
    pub async fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.start_kill();
            let _ = c.wait().await;
        }
    }

    pub async fn restart(&mut self) {
        self.kill().await;
        self.launch().await;
    }

    /// The running process's id (benches read its CPU time from `/proc`).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Everything the process has logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn log_tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// The settings every replica of one installation shares; GitHub is the
/// simulator at `github`.
pub fn shared_env(database_url: &str, github: &str, nats: Option<(&str, &str)>) -> Vec<(String, String)> {
    let mut env = vec![
        ("KANDEV_DATABASE_URL".to_string(), database_url.to_string()),
        ("KANDEV_ADMIN_TOKEN".into(), ADMIN_TOKEN.into()),
        ("KANDEV_NOTIFY_PRIVATE_ADDRESSES".into(), "true".into()),
        ("KANDEV_GITHUB_API_URL".into(), github.to_string()),
        ("GITHUB_TOKEN".into(), "cluster-token".into()),
        ("KANDEV_GITHUB_WEBHOOK_SECRET".into(), WEBHOOK_SECRET.into()),
        ("KANDEV_PR_POLL_INTERVAL".into(), "700ms".into()),
        ("KANDEV_SCHEDULER_INTERVAL".into(), "500ms".into()),
        ("KANDEV_MERGER_POLL_INTERVAL".into(), "200ms".into()),
        ("KANDEV_WEB_DIR".into(), "/nonexistent".into()),
        ("KANDEV_NATS_URL".into(), String::new()),
    ];
    if let Some((url, stream)) = nats {
        env.retain(|(k, _)| k != "KANDEV_NATS_URL");
        env.push(("KANDEV_NATS_URL".into(), url.into()));
        env.push(("KANDEV_NATS_STREAM".into(), stream.into()));
    }
    env
}

/// The admin's HTTP client against one replica.
pub struct Api {
    http: reqwest::Client,
}

impl Default for Api {
    fn default() -> Self {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            reqwest::header::HeaderValue::from_static("Bearer cluster-admin-token-0123456789"),
        );
        Api {
            http: reqwest::Client::builder()
                .default_headers(headers)
                .timeout(Duration::from_secs(30))
                .build()
                .expect("client"),
        }
    }
}

impl Api {
    pub async fn call(&self, base: &str, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{base}{path}"));
        if let Some(b) = body {
            req = req.json(&b);
        }
        match req.send().await {
            Ok(resp) => {
                let status = resp.status();
                let body = resp.json().await.unwrap_or(Value::Null);
                (status, body)
            }
            Err(e) => panic!("{path} on {base}: {e}"),
        }
    }

    pub async fn post(&self, base: &str, path: &str, body: Value) -> Value {
        let (status, body) = self.call(base, Method::POST, path, Some(body)).await;
        assert!(status.is_success(), "POST {path}: {status} {body}");
        body
    }

    /// A workspace with `acme/api`, and a "Pull request merged" automation
    /// whose agent archives the task it is bound to.
    pub async fn merged_setup(&self, base: &str) -> (String, String) {
        let ws = self.post(base, "/api/v1/workspaces", json!({"name": "W"})).await["id"]
            .as_str()
            .expect("ws")
            .to_string();
        self.post(
            base,
            &format!("/api/v1/workspaces/{ws}/repositories"),
            json!({"owner": "acme", "name": "api"}),
        )
        .await;
        let a = self
            .post(
                base,
                &format!("/api/v1/workspaces/{ws}/automations"),
                json!({"name": "Archive merged", "max_concurrent_runs": 100,
                       "prompt": r#"e2e:mcp:kandev:archive_task_kandev({"task_id":"{{data.task_id}}"})"#,
                       "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}}]}),
            )
            .await;
        (ws, a["id"].as_str().expect("automation").to_string())
    }

    /// `n` tasks, each linked to a fresh PR of `acme/api` in the simulator;
    /// their ids and PR numbers.
    pub async fn linked_tasks(&self, bases: &[String], ws: &str, sim: &Simulator, n: usize) -> Vec<(String, i64)> {
        let mut out = vec![];
        for i in 0..n {
            let base = &bases[i % bases.len()];
            let pr = NewPr {
                title: format!("change {i}"),
                ..Default::default()
            };
            let (number, _) = sim.open_pr("acme", "api", pr).expect("open a PR");
            let t = self
                .post(
                    base,
                    &format!("/api/v1/workspaces/{ws}/tasks"),
                    json!({"title": format!("task {i}")}),
                )
                .await;
            let id = t["id"].as_str().expect("task").to_string();
            self.post(
                base,
                &format!("/api/v1/tasks/{id}/prs"),
                json!({"owner": "acme", "repo": "api", "pr_number": number}),
            )
            .await;
            out.push((id, number));
        }
        out
    }
}

/// A fresh database on the PostgreSQL server `admin` points at (its
/// `postgres` database): its URL.
pub async fn fresh_postgres_database(admin: &str) -> String {
    use sqlx::Executor;
    sqlx::any::install_default_drivers();
    let name = format!("kandev_{}", uuid::Uuid::new_v4().simple());
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(admin)
        .await
        .expect("connect to PostgreSQL");
    conn.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .expect("create a database");
    let base = admin
        .rsplit_once('/')
        .map(|(b, _)| b.to_string())
        .unwrap_or_else(|| admin.to_string());
    format!("{base}/{name}")
}
