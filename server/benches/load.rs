//! The API under load: 200 concurrent clients against a real `kandev serve`
//! process, first on `/healthz` (the baseline), then on a mix of board
//! reads, task writes and automation reads with live-stream subscribers
//! open beside them — on SQLite, then on PostgreSQL when it is available.
//! Prints rates, latency percentiles and errors; never fails on them.
//!
//! Run: `cargo xtask load` (60 s a phase), or `cargo bench -p kandev-server
//! --bench load` with `KANDEV_LOAD_SECONDS` to shorten it.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kandev_core::api::SESSION_COOKIE;
use kandev_server::testkit::{Api, Replica, fresh_postgres_database, shared_env};
use serde_json::json;
use tokio::sync::Mutex;

const KANDEV: &str = env!("CARGO_BIN_EXE_kandev");
const CLIENTS: usize = 200;
/// Of the clients, these hold a live stream open instead of sending requests.
const SUBSCRIBERS: usize = 10;
const BOARD_TASKS: usize = 50;

/// Microseconds per request, per request kind.
type Latencies = Vec<(&'static str, Vec<u32>)>;

/// What one phase measured.
#[derive(Default)]
struct Phase {
    label: String,
    requests: u64,
    errors: u64,
    seconds: f64,
    latencies: Latencies,
    /// The server process's CPU time over the phase (user + system).
    server_cpu: Option<f64>,
}

impl Phase {
    fn rate(&self, kind: Option<&str>) -> f64 {
        let n: usize = self
            .latencies
            .iter()
            .filter(|(k, _)| kind.is_none_or(|want| *k == want))
            .map(|(_, l)| l.len())
            .sum();
        n as f64 / self.seconds.max(1e-9)
    }

    fn percentile(&self, p: f64) -> f64 {
        self.percentile_of(None, p)
    }

    fn percentile_of(&self, kind: Option<&str>, p: f64) -> f64 {
        let mut all: Vec<u32> = self
            .latencies
            .iter()
            .filter(|(k, _)| kind.is_none_or(|want| *k == want))
            .flat_map(|(_, l)| l.iter().copied())
            .collect();
        all.sort_unstable();
        if all.is_empty() {
            return 0.0;
        }
        let i = ((all.len() as f64 - 1.0) * p).round() as usize;
        f64::from(all[i]) / 1000.0
    }

    fn print(&self) {
        println!(
            "{:<44} {:>9.0} req/s  p50 {:>6.1} ms  p99 {:>6.1} ms  errors {}",
            self.label,
            self.requests as f64 / self.seconds.max(1e-9),
            self.percentile(0.50),
            self.percentile(0.99),
            self.errors
        );
        if let Some(cpu) = self.server_cpu {
            // Less at the mercy of other load on the machine than the rate.
            println!(
                "  server CPU {:.0} µs a request ({:.2} cores busy)",
                cpu / (self.requests.max(1) as f64) * 1e6,
                cpu / self.seconds.max(1e-9)
            );
        }
    }
}

/// The CPU time (user + system) process `pid` has used, from `/proc`; `None`
/// where there is no such file.
fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid?)).ok()?;
    // Fields after the parenthesised name; utime and stime are the 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // Linux reports them in USER_HZ, 100 a second on every architecture it exports to user space.
    Some(ticks / 100.0)
}

/// A client that sends `credential` with every request.
fn client(mut headers: reqwest::header::HeaderMap) -> reqwest::Client {
    // As every browser does; the driver reads the bytes without unpacking them.
    headers.insert(
        reqwest::header::ACCEPT_ENCODING,
        reqwest::header::HeaderValue::from_static("gzip, deflate, br"),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(CLIENTS)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// `CLIENTS - subscribers` request loops for `seconds`; `pick(client, n)`
/// chooses each request's kind and sends it.
async fn drive<F, Fut>(
    label: &str,
    seconds: u64,
    subscribers: usize,
    base: &str,
    ws: &str,
    http: reqwest::Client,
    pick: F,
) -> Phase
where
    F: Fn(reqwest::Client, usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = (&'static str, bool)> + Send,
{
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let events = Arc::new(AtomicU64::new(0));
    let pick = Arc::new(pick);
    let results: Arc<Mutex<Latencies>> = Arc::default();
    let mut handles = vec![];
    for i in 0..subscribers {
        let (http, stop, events, url) = (
            http.clone(),
            stop.clone(),
            events.clone(),
            format!("{base}/api/v1/workspaces/{ws}/stream"),
        );
        handles.push(tokio::spawn(async move {
            let Ok(mut r) = http.get(&url).timeout(Duration::from_secs(3600)).send().await else {
                return;
            };
            while !stop.load(Ordering::Relaxed) {
                match tokio::time::timeout(Duration::from_millis(200), r.chunk()).await {
                    Ok(Ok(Some(_))) => {
                        events.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => return,
                    Err(_) => {}
                }
            }
            let _ = i;
        }));
    }
    let started = Instant::now();
    for c in 0..CLIENTS - subscribers {
        let (http, stop, errors, results, pick) = (
            http.clone(),
            stop.clone(),
            errors.clone(),
            results.clone(),
            pick.clone(),
        );
        handles.push(tokio::spawn(async move {
            let mut mine: Latencies = vec![];
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let (kind, ok) = pick(http.clone(), c, n).await;
                n += 1;
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let micros = t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                match mine.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, l)) => l.push(micros),
                    None => mine.push((kind, vec![micros])),
                }
            }
            results.lock().await.extend(mine);
        }));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let seconds = started.elapsed().as_secs_f64();
    for h in handles {
        let _ = h.await;
    }
    let mut merged: Latencies = vec![];
    for (kind, l) in results.lock().await.drain(..) {
        match merged.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, all)) => all.extend(l),
            None => merged.push((kind, l)),
        }
    }
    let requests = merged.iter().map(|(_, l)| l.len() as u64).sum::<u64>() + errors.load(Ordering::Relaxed);
    if subscribers > 0 {
        println!(
            "  ({subscribers} live-stream subscribers received {} chunks)",
            events.load(Ordering::Relaxed)
        );
    }
    Phase {
        label: label.into(),
        requests,
        errors: errors.load(Ordering::Relaxed),
        seconds,
        latencies: merged,
        server_cpu: None,
    }
}

/// The mix's clients act as a browser does: a member of the workspace,
/// signed in with its session cookie, sending the same-origin `Origin` its
/// changes need. Returns those headers.
async fn signed_in_member(api: &Api, base: &str, ws: &str) -> reqwest::header::HeaderMap {
    let password = "load-password-1234";
    let user = api
        .post(base, "/api/v1/users", json!({"username": "load", "password": password}))
        .await;
    let id = user["id"].as_str().expect("user id");
    let (status, body) = api
        .call(
            base,
            reqwest::Method::PUT,
            &format!("/api/v1/workspaces/{ws}/members/{id}"),
            Some(json!({"role": "member"})),
        )
        .await;
    assert!(status.is_success(), "member: {status} {body}");
    let login = reqwest::Client::new()
        .post(format!("{base}/api/v1/auth/login"))
        .header(reqwest::header::ORIGIN, base)
        .json(&json!({"username": "load", "password": password}))
        .send()
        .await
        .expect("sign in");
    assert!(login.status().is_success(), "sign in: {}", login.status());
    let cookie = login
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{SESSION_COOKIE}=")))
        .and_then(|v| v.split(';').next())
        .expect("session cookie")
        .to_string();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::COOKIE, cookie.parse().expect("cookie header"));
    headers.insert(reqwest::header::ORIGIN, base.parse().expect("origin header"));
    headers
}

async fn ok(r: Result<reqwest::Response, reqwest::Error>) -> bool {
    match r {
        Ok(r) => {
            let good = r.status().is_success();
            let _ = r.bytes().await;
            good
        }
        Err(_) => false,
    }
}

/// Both phases against one server on `database_url`; returns (healthz, mix).
async fn run(backend: &str, database_url: &str, seconds: u64) -> (Phase, Phase) {
    let dir = tempfile::tempdir().expect("dir");
    let mut env = shared_env(database_url, "http://127.0.0.1:9", None);
    env.retain(|(k, _)| k != "GITHUB_TOKEN");
    let mut server = Replica::start(KANDEV.as_ref(), "load", dir.path(), &env).await;
    let base = server.base.clone();
    let api = Api::default();
    let ws = api.post(&base, "/api/v1/workspaces", json!({"name": "Load"})).await["id"]
        .as_str()
        .expect("workspace id")
        .to_string();
    let mut tasks = vec![];
    for i in 0..BOARD_TASKS {
        let t = api
            .post(
                &base,
                &format!("/api/v1/workspaces/{ws}/tasks"),
                json!({"title": format!("Task {i}")}),
            )
            .await;
        tasks.push(t["id"].as_str().expect("task id").to_string());
    }
    api.post(
        &base,
        &format!("/api/v1/workspaces/{ws}/automations"),
        json!({"name": "Nightly", "triggers": [{"type": "scheduled", "config": {"cron": "0 3 * * *"}}]}),
    )
    .await;

    let health = format!("{base}/healthz");
    let cpu = cpu_seconds(server.pid());
    let mut baseline = drive(
        &format!("{backend}: /healthz"),
        seconds,
        0,
        &base,
        &ws,
        client(reqwest::header::HeaderMap::new()),
        move |http, _, _| {
            let url = health.clone();
            async move { ("healthz", ok(http.get(&url).send().await).await) }
        },
    )
    .await;
    baseline.server_cpu = cpu.zip(cpu_seconds(server.pid())).map(|(a, b)| b - a);
    baseline.print();

    let (board, automations) = (
        format!("{base}/api/v1/workspaces/{ws}/tasks"),
        format!("{base}/api/v1/workspaces/{ws}/automations"),
    );
    let task_urls: Vec<String> = tasks.iter().map(|t| format!("{base}/api/v1/tasks/{t}")).collect();
    let browser = client(signed_in_member(&api, &base, &ws).await);
    let cpu = cpu_seconds(server.pid());
    let mut mix = drive(
        &format!("{backend}: mixed API"),
        seconds,
        SUBSCRIBERS,
        &base,
        &ws,
        browser,
        move |http, c, n| {
            let (board, automations) = (board.clone(), automations.clone());
            let task = task_urls[(c + n as usize) % task_urls.len()].clone();
            async move {
                // Of every ten requests: six board reads, two task writes, two automation reads.
                match (c as u64 + n) % 10 {
                    0..=5 => ("board", ok(http.get(&board).send().await).await),
                    6 | 7 => {
                        let body = json!({"title": format!("Task {c}.{n}")});
                        ("task write", ok(http.patch(&task).json(&body).send().await).await)
                    }
                    _ => ("automations", ok(http.get(&automations).send().await).await),
                }
            }
        },
    )
    .await;
    mix.server_cpu = cpu.zip(cpu_seconds(server.pid())).map(|(a, b)| b - a);
    mix.print();
    for kind in ["board", "task write", "automations"] {
        println!(
            "  {kind:<12} {:>9.0} req/s  p50 {:>6.1} ms  p99 {:>6.1} ms",
            mix.rate(Some(kind)),
            mix.percentile_of(Some(kind), 0.50),
            mix.percentile_of(Some(kind), 0.99)
        );
    }
    println!(
        "  board reads run at {:.0}% of the /healthz rate (goal: at least 20%)",
        mix.rate(Some("board")) / baseline.rate(None).max(1e-9) * 100.0
    );
    let healthz = baseline.rate(None);
    common::figure(
        &format!("load {backend}: board reads/s"),
        mix.rate(Some("board")),
        "req/s",
        ">= 20% healthz",
        Some((healthz, "healthz req/s")),
    );
    common::figure(
        &format!("load {backend}: p99 of the mix"),
        mix.percentile(0.99),
        "ms",
        "< 50",
        None,
    );
    common::figure(
        &format!("load {backend}: errors"),
        mix.errors as f64,
        "requests",
        "0",
        None,
    );
    server.kill().await;
    (baseline, mix)
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let seconds: u64 = std::env::var("KANDEV_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    println!(
        "kandev API load: {CLIENTS} concurrent clients, {seconds} s a phase, the driver on the same machine; goals: 0 errors, p99 < 50 ms\n"
    );
    let dir = tempfile::tempdir().expect("dir");
    run("SQLite", &format!("sqlite://{}/load.db", dir.path().display()), seconds).await;
    match std::env::var("KANDEV_TEST_POSTGRES_URL") {
        Ok(admin) => {
            let url = fresh_postgres_database(&admin).await;
            run("PostgreSQL", &url, seconds).await;
        }
        Err(_) => println!("\nPostgreSQL skipped: set KANDEV_TEST_POSTGRES_URL (`cargo xtask load` does)"),
    }
}
