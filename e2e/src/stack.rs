//! The system under test: `kandev github-sim` and `kandev serve` (temporary
//! SQLite file, the mock agent, fast pollers) as child processes on loopback.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::scratch::Scratch;
use crate::wait::{announced, eventually};

const WEBHOOK_SECRET: &str = "e2e-webhook-secret";
/// The harness's own credential for fixtures; the browser signs in as a person.
const ADMIN_TOKEN: &str = "e2e-admin-token-0123456789abcdef";
/// The person the browser signs in as: an instance admin, so every
/// workspace the harness creates is theirs to use.
pub const E2E_USER: &str = "e2e";
pub const E2E_PASSWORD: &str = "e2e-password-1234";

pub struct Stack {
    pub base: String,
    pub sim: String,
    pub log: PathBuf,
    http: reqwest::Client,
    server: Child,
    simulator: Child,
    /// Last, so it is removed after the processes writing into it are gone.
    scratch: Scratch,
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `kandev` binary the workspace build produced.
pub fn kandev_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("KANDEV_BIN") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    target.join("debug").join("kandev")
}

impl Stack {
    pub async fn start(name: &str) -> anyhow::Result<Stack> {
        let bin = kandev_bin();
        if !bin.exists() {
            bail!(
                "{} is missing: build it with `cargo build -p kandev-server`",
                bin.display()
            );
        }
        let web = workspace_root().join("web/dist");
        if !web.join("index.html").exists() {
            bail!("{} is missing: build it with `cargo xtask web`", web.display());
        }
        let scratch = Scratch::create(std::env::temp_dir().join(format!("kandev-e2e-{name}-{}", std::process::id())))?;
        let dir = scratch.path().to_path_buf();
        let log = dir.join("server.log");

        let sim_log = dir.join("simulator.log");
        let sim_out = std::fs::File::create(&sim_log)?;
        let mut simulator = Command::new(&bin)
            .args(["github-sim", "--listen", "127.0.0.1:0"])
            .stdout(sim_out)
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("starting the GitHub simulator")?;
        let sim = announced(&mut simulator, &sim_log, "github simulator listening on ")
            .await
            .context("the GitHub simulator did not start")?;

        let out = std::fs::File::create(&log)?;
        let mut server = Command::new(&bin)
            .arg("serve")
            .env("KANDEV_LISTEN", "127.0.0.1:0")
            .env("KANDEV_DATABASE_URL", format!("sqlite://{}/kandev.db", dir.display()))
            .env("KANDEV_DATA_DIR", dir.join("data"))
            .env("KANDEV_WEB_DIR", &web)
            .env("KANDEV_GITHUB_API_URL", &sim)
            .env("GITHUB_TOKEN", "e2e-token")
            .env("KANDEV_GITHUB_WEBHOOK_SECRET", WEBHOOK_SECRET)
            .env("KANDEV_PR_POLL_INTERVAL", "1s")
            .env("KANDEV_MERGER_POLL_INTERVAL", "300ms")
            .env("KANDEV_SCHEDULER_INTERVAL", "1s")
            .env("KANDEV_NATS_URL", "")
            .env("KANDEV_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("KANDEV_LOG_FORMAT", "text")
            // The test receivers listen on loopback.
            .env("KANDEV_NOTIFY_PRIVATE_ADDRESSES", "true")
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdout(out.try_clone()?)
            .stderr(out)
            .kill_on_drop(true)
            .spawn()
            .context("starting kandev serve")?;
        let login = announced(&mut server, &log, "Kandev is ready. Sign in at ")
            .await
            .context("kandev did not start")?;
        // The sign-in page may carry the first admin's name as a query.
        let base = login.split("/login").next().unwrap_or_default().to_string();

        let stack = Stack {
            base,
            sim,
            log,
            http: reqwest::Client::new(),
            server,
            simulator,
            scratch,
        };
        let http = stack.http.clone();
        let (health, sim_health) = (format!("{}/healthz", stack.base), format!("{}/_sim/health", stack.sim));
        eventually("kandev and the simulator to answer", Duration::from_secs(30), || {
            let http = http.clone();
            let (a, b) = (health.clone(), sim_health.clone());
            async move {
                let ok = |r: Result<reqwest::Response, reqwest::Error>| r.is_ok_and(|r| r.status().is_success());
                (ok(http.get(a).send().await) && ok(http.get(b).send().await)).then_some(())
            }
        })
        .await
        .with_context(|| stack.log_tail())?;
        stack.prepare().await?;
        stack.scratch.release();
        Ok(stack)
    }

    /// The simulator's webhook and the person the browser signs in as.
    async fn prepare(&self) -> anyhow::Result<()> {
        // Deliveries go straight to Kandev, so merges are seen within a second.
        let hook = json!({"url": format!("{}/api/v1/github/webhook", self.base), "secret": WEBHOOK_SECRET});
        self.sim_put("/_sim/webhook", hook).await?;
        self.post(
            "/api/v1/users",
            json!({"username": E2E_USER, "password": E2E_PASSWORD, "admin": true}),
        )
        .await?;
        Ok(())
    }

    /// Stops both processes and waits (briefly) until they are gone, so no
    /// file appears in the directory while it is removed.
    fn stop(&mut self) {
        let _ = self.server.start_kill();
        let _ = self.simulator.start_kill();
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < deadline
            && [&mut self.server, &mut self.simulator]
                .into_iter()
                .any(|c| matches!(c.try_wait(), Ok(None)))
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The last lines of the server log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn call(&self, method: reqwest::Method, url: String, body: Option<Value>) -> anyhow::Result<Value> {
        let mut req = self.http.request(method.clone(), &url);
        if url.starts_with(&self.base) {
            req = req.bearer_auth(ADMIN_TOKEN);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.with_context(|| format!("{method} {url}"))?;
        let status = resp.status();
        let text = resp.text().await?;
        if !status.is_success() {
            bail!("{method} {url} answered {status}: {text}");
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.call(reqwest::Method::GET, format!("{}{path}", self.base), None)
            .await
    }

    pub async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(reqwest::Method::POST, format!("{}{path}", self.base), Some(body))
            .await
    }

    pub async fn put(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(reqwest::Method::PUT, format!("{}{path}", self.base), Some(body))
            .await
    }

    /// The status of a GET with another bearer token (to try a user's token).
    pub async fn status_with_token(&self, path: &str, token: &str) -> anyhow::Result<u16> {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .send()
            .await?;
        Ok(resp.status().as_u16())
    }

    /// A user who signs in with `password`.
    pub async fn user(&self, username: &str, password: &str) -> anyhow::Result<String> {
        let u = self
            .post("/api/v1/users", json!({"username": username, "password": password}))
            .await?;
        Ok(u["id"].as_str().unwrap_or_default().to_string())
    }

    pub async fn sim_get(&self, path: &str) -> anyhow::Result<Value> {
        self.call(reqwest::Method::GET, format!("{}{path}", self.sim), None)
            .await
    }

    pub async fn sim_post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(reqwest::Method::POST, format!("{}{path}", self.sim), Some(body))
            .await
    }

    pub async fn sim_patch(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(reqwest::Method::PATCH, format!("{}{path}", self.sim), Some(body))
            .await
    }

    pub async fn sim_put(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(reqwest::Method::PUT, format!("{}{path}", self.sim), Some(body))
            .await
    }

    // --- fixtures through the public API ---

    pub async fn workspace(&self, name: &str) -> anyhow::Result<String> {
        let w = self.post("/api/v1/workspaces", json!({"name": name})).await?;
        Ok(w["id"].as_str().unwrap_or_default().to_string())
    }

    pub async fn repository(&self, ws: &str, owner: &str, name: &str) -> anyhow::Result<String> {
        let r = self
            .post(
                &format!("/api/v1/workspaces/{ws}/repositories"),
                json!({"owner": owner, "name": name}),
            )
            .await?;
        Ok(r["id"].as_str().unwrap_or_default().to_string())
    }

    pub async fn task(&self, ws: &str, title: &str, status: &str) -> anyhow::Result<String> {
        let t = self
            .post(
                &format!("/api/v1/workspaces/{ws}/tasks"),
                json!({"title": title, "status": status}),
            )
            .await?;
        Ok(t["id"].as_str().unwrap_or_default().to_string())
    }

    pub async fn automation(&self, ws: &str, body: Value) -> anyhow::Result<String> {
        let a = self.post(&format!("/api/v1/workspaces/{ws}/automations"), body).await?;
        Ok(a["id"].as_str().unwrap_or_default().to_string())
    }

    /// A GitHub organisation with repositories in the simulator.
    pub async fn sim_repo(&self, owner: &str, name: &str) -> anyhow::Result<()> {
        self.sim_post("/_sim/orgs", json!({"login": owner})).await?;
        self.sim_post("/_sim/repos", json!({"owner": owner, "name": name, "private": false}))
            .await?;
        Ok(())
    }

    /// Opens a PR in the simulator: (number, head sha).
    pub async fn sim_pr(&self, owner: &str, repo: &str, title: &str) -> anyhow::Result<(i64, String)> {
        let p = self
            .sim_post(&format!("/_sim/repos/{owner}/{repo}/pulls"), json!({"title": title}))
            .await?;
        Ok((
            p["number"].as_i64().unwrap_or_default(),
            p["head_sha"].as_str().unwrap_or_default().to_string(),
        ))
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.stop();
    }
}
