//! GitHub side costs: requests per watched PR per sweep and sweep time for
//! 2,000 linked open PRs with 100 ms of simulated latency (cold, then
//! unchanged), the GraphQL points an hour of sweeping costs, and the merge →
//! run-row latency with and without webhooks.
//!
//! Run: `cargo bench -p kandev-server --bench github`. Prints figures only.

mod common;

use std::time::{Duration, Instant};

use kandev_core::board::PrRef;
use kandev_core::task_pr::TaskPr;
use kandev_server::app::{Application, BuildOptions};
use kandev_server::config::Settings;
use kandev_server::github::poller::sweep;
use kandev_server::github_sim::{NewPr, Simulator, Timing};
use serde_json::json;

use common::*;

const PRS: i64 = 2000;
const LATENCY_MS: u64 = 100;

async fn sweep_costs(sim: &Simulator, base: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let s = services(dir.path(), |st| {
        st.github_api_url = base.to_string();
        st.github_token = Some("bench".into());
    })
    .await;
    let ws = workspace(&s, "Sweep").await;
    let started = Instant::now();
    for i in 0..PRS {
        let (n, sha) = sim
            .open_pr(
                "acme",
                "api",
                NewPr {
                    title: format!("PR {i}"),
                    ..Default::default()
                },
            )
            .expect("pr");
        sim.set_check_run("acme", "api", &sha, "build", "completed", Some("success"))
            .expect("check");
        let t = task(&s, &ws, &format!("T{i}")).await;
        let row = TaskPr {
            task_id: t,
            workspace_id: ws.clone(),
            owner: "acme".into(),
            repo: "api".into(),
            pr_number: n,
            state: "open".into(),
            head_sha: sha.clone(),
            ..Default::default()
        };
        s.store.upsert_task_pr(&row, s.clock.now()).await.expect("row");
    }
    report("set-up: linked open PRs", PRS as usize, started);
    sim.set_timing(Timing {
        latency_ms: LATENCY_MS,
        ..Default::default()
    });
    let mut warm_points = 0;
    let mut sweeps = vec![];
    for label in [
        "first sweep (cold: every PR read in full)",
        "second sweep (nothing changed)",
    ] {
        // Past the second of the last read: GitHub's updatedAt is in whole seconds.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        sim.reset_counters();
        let started = Instant::now();
        let r = sweep(&s.github, Duration::from_secs(3600)).await;
        let c = sim.counters();
        report(&format!("sweep: {label}"), r.watched, started);
        println!(
            "  requests per watched PR: {:.3} ({} GraphQL, {} REST), {} GraphQL points",
            c.requests as f64 / r.watched.max(1) as f64,
            c.graphql,
            c.requests - c.graphql,
            c.graphql_points
        );
        warm_points = c.graphql_points;
        sweeps.push((
            started.elapsed().as_secs_f64(),
            c.requests as f64 / r.watched.max(1) as f64,
        ));
    }
    // A sweep a minute, plus each PR's full read every ten minutes (six
    // points per hundred PRs).
    let full_reads = (PRS as u64).div_ceil(100) * 6 * 6;
    let hourly = warm_points * 60 + full_reads;
    println!(
        "  GraphQL points an hour at a 60 s interval: {hourly} of 5,000 ({:.0}%; goal: under half)",
        hourly as f64 / 50.0
    );
    sim.set_timing(Timing::default());
    figure(
        "github: sweep of 2,000 PRs at 100 ms, cold",
        sweeps[0].0,
        "s",
        "<= 5",
        None,
    );
    figure(
        "github: sweep of 2,000 PRs at 100 ms, unchanged",
        sweeps[1].0,
        "s",
        "<= 5",
        None,
    );
    figure(
        "github: requests per watched PR per sweep, unchanged",
        sweeps[1].1,
        "requests",
        "<= 0.02",
        None,
    );
    figure(
        "github: GraphQL points an hour (2,000 PRs, 60 s)",
        hourly as f64,
        "points",
        "< 2,500",
        Some((5000.0, "points/h limit")),
    );
}

async fn latency(sim: &Simulator, base: &str, webhooks: bool) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut settings = Settings::defaults();
    settings.listen = "127.0.0.1:0".into();
    settings.database_url = format!("sqlite://{}/bench.db", dir.path().display());
    settings.data_dir = dir.path().join("data");
    settings.web_dir = Some(dir.path().join("web"));
    settings.github_api_url = base.to_string();
    settings.github_token = Some("bench".into());
    settings.github_webhook_secret = Some("bench-secret".into());
    settings.pr_poll_interval = Duration::from_secs(2);
    let app = Application::build(
        settings,
        BuildOptions {
            // The bench binary is not an agent: run turns with the real one.
            mock_agent_bin: Some(env!("CARGO_BIN_EXE_kandev").into()),
            ..Default::default()
        },
    )
    .await
    .expect("app");
    let s = app.services.clone();
    if webhooks {
        sim.set_webhook(
            &format!("http://{}/api/v1/github/webhook", app.address()),
            "bench-secret",
        );
    }
    let ws = workspace(&s, "Latency").await;
    let t = task(&s, &ws, "target").await;
    let a = merged_automation(&s, &ws, "Archive", vec![json!({"all_repos": true})], 10).await;
    let (n, _) = sim
        .open_pr(
            "acme",
            "api",
            NewPr {
                title: "Latency".into(),
                ..Default::default()
            },
        )
        .expect("pr");
    let task = s.board.get(&t).await.expect("task");
    s.github
        .associate(&task, &PrRef::new("acme", "api", n))
        .await
        .expect("link");
    let started = Instant::now();
    sim.merge_pr("acme", "api", n).expect("merge");
    loop {
        if !s.store.list_run_records(&a).await.expect("runs").is_empty() {
            break;
        }
        if started.elapsed() > Duration::from_secs(30) {
            println!("  (no run within 30 s)");
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let d = started.elapsed();
    app.shutdown().await;
    d
}

#[tokio::main]
async fn main() {
    let sim = Simulator::new();
    let (addr, _) = sim.serve("127.0.0.1:0").await.expect("simulator");
    sim.add_repo("acme", "api", false);
    let base = format!("http://{addr}");
    println!(
        "kandev GitHub benchmark against the simulator on loopback ({LATENCY_MS} ms latency for the sweeps); figures vary with machine load\n"
    );
    sweep_costs(&sim, &base).await;
    let polled = latency(&sim, &base, false).await;
    println!(
        "{:<58} {:>8.1} ms (poll interval 2 s)",
        "merge → run row, poller only",
        polled.as_secs_f64() * 1000.0
    );
    let hooked = latency(&sim, &base, true).await;
    println!(
        "{:<58} {:>8.1} ms",
        "merge → run row, with webhooks",
        hooked.as_secs_f64() * 1000.0
    );
    figure(
        "github: merge → run row, poller only (2 s interval)",
        polled.as_secs_f64() * 1000.0,
        "ms",
        "-",
        None,
    );
    figure(
        "github: merge → run row, with webhooks",
        hooked.as_secs_f64() * 1000.0,
        "ms",
        "< 1,000",
        None,
    );
}
