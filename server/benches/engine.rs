//! Engine throughput: merged-PR events evaluated per second with 1,000
//! enabled `github_pr_merged` triggers spread over 100 workspaces, then with
//! 1,000 in the event's own workspace; runs created per second; and the
//! machine's raw SQLite insert rate for comparison.
//!
//! Run: `cargo bench -p kandev-server --bench engine`. Prints figures only.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use kandev_core::events::{Payload, SOURCE_GITHUB, TASK_PR_UPDATED};
use kandev_core::task_pr::TaskPr;
use kandev_server::orchestrator::{AgentRuntime, RunStart};
use serde_json::json;

use common::*;

fn merged(task_id: &str, number: i64) -> TaskPr {
    TaskPr {
        task_id: task_id.into(),
        owner: "acme".into(),
        repo: "api".into(),
        pr_number: number,
        pr_url: format!("https://github.com/acme/api/pull/{number}"),
        base_branch: "main".into(),
        state: "merged".into(),
        ..Default::default()
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let s = services(dir.path(), |_| {}).await;
    s.orchestrator.start().await.expect("orchestrator");
    let ws = workspace(&s, "Bench").await;
    let t = task(&s, &ws, "target").await;
    println!("kandev engine benchmark (SQLite file, in-process bus); figures vary with machine load\n");

    // None of these triggers match: pure evaluation.
    let none_match = || {
        (0..10)
            .map(|i| json!({"all_repos": false, "repos": [{"owner": "other", "name": format!("r{i}")}]}))
            .collect::<Vec<_>>()
    };
    let sub = kandev_server::automation::merged::MergedPrSubscriber::new(s.automation.clone());
    sub.start().await.expect("subscribe");
    let events = 2000;
    let mut number = 0;
    let mut publish_all = async |label: &str| {
        let started = Instant::now();
        for _ in 0..events {
            number += 1;
            s.bus
                .publish(TASK_PR_UPDATED, SOURCE_GITHUB, Payload::TaskPr(merged(&t, number)))
                .await
                .expect("publish");
        }
        report(label, events as usize, started);
        rate(events as usize, started.elapsed())
    };

    // 1,000 triggers over 100 workspaces: ten in the event's own.
    let started = Instant::now();
    merged_automation(&s, &ws, "A0", none_match(), 1).await;
    for w in 1..100 {
        let other = workspace(&s, &format!("W{w}")).await;
        merged_automation(&s, &other, "A", none_match(), 1).await;
    }
    report("set-up: 100 workspaces x 10 triggers", 1000, started);
    let spread = publish_all("merged events evaluated (1,000 triggers in 100 workspaces, none fire)").await;

    // 1,000 in the event's own workspace (1,990 in all).
    let started = Instant::now();
    for a in 1..100 {
        merged_automation(&s, &ws, &format!("A{a}"), none_match(), 1).await;
    }
    report("set-up: 99 more automations x 10 triggers here", 990, started);
    s.automation.recorder().flush().await;
    let trace = s.automation.recorder().counters();
    let written_before = trace.written.load(Relaxed);
    let micros_before = trace.write_micros.load(Relaxed);
    let own = publish_all("merged events evaluated (1,000 triggers in the event's workspace, none fire)").await;
    let started = Instant::now();
    s.automation.recorder().flush().await;
    report(
        "  evaluation records flushed afterwards",
        events as usize * (10 + 1000),
        started,
    );
    let (written, micros) = (
        trace.written.load(Relaxed) - written_before,
        trace.write_micros.load(Relaxed) - micros_before,
    );
    let per_event = micros as f64 / events as f64;
    println!(
        "  evaluation trace: {} records, {written} rows written (each automation's newest), {per_event:.0} µs of writing per event",
        events * 1000
    );

    // Runs created: ten automations (each at the highest cap, each watching
    // its own repository), 1,000 merged events over the ten, one run each.
    // First with the agents held — the figure is fire → run task and
    // `task_created` row, and a real agent's turn ends minutes later — with
    // events published straight onto the bus after their state's
    // transaction, then written in it and published through the outbox, as
    // the PR sync publishes them. Last, a stress figure: the same with every
    // turn failing at once (this bench serves no MCP endpoint), so each run
    // is also finalised, notified and its worktree reclaimed meanwhile.
    // The state each announcing transaction writes (see `announce`).
    sqlx::query("CREATE TABLE bench_state (id TEXT PRIMARY KEY, v TEXT NOT NULL)")
        .execute(s.store.pool())
        .await
        .expect("table");
    let real: Arc<dyn AgentRuntime> = Arc::new(s.runtime.clone());
    // (direct, through the outbox, stress): a phase lasts about a second, so
    // the first two take turns for ROUNDS rounds and count by their median.
    let mut rates: [Vec<f64>; 3] = Default::default();
    let mut phases = vec![];
    for round in 1..=ROUNDS {
        phases.push((
            format!("runs created, events published directly (round {round})"),
            0,
            true,
        ));
        phases.push((
            format!("runs created, events through the outbox (round {round})"),
            1,
            true,
        ));
    }
    phases.push((
        "runs created while every turn fails at once (stress)".to_string(),
        2,
        false,
    ));
    for (label, mode, held) in phases {
        let (label, through_outbox) = (label.as_str(), mode == 1);
        let runtime = if held {
            Arc::new(Held) as Arc<dyn AgentRuntime>
        } else {
            real.clone()
        };
        s.orchestrator.set_runtime(runtime);
        let ws = workspace(&s, label).await;
        let target = task(&s, &ws, "target").await;
        for i in 0..RUN_AUTOMATIONS {
            let config = json!({"all_repos": false, "repos": [{"owner": "acme", "name": format!("api-{i}")}]});
            merged_automation(&s, &ws, &format!("Fire {i}"), vec![config], 100).await;
        }
        let runs = RUN_AUTOMATIONS * 100;
        let started = Instant::now();
        for n in 0..runs {
            let mut pr = merged(&target, 10_000 + n as i64);
            pr.repo = format!("api-{}", n % RUN_AUTOMATIONS);
            announce(&s, &format!("{label} {n}"), Payload::TaskPr(pr), through_outbox).await;
        }
        let mut created = 0;
        while created < runs && started.elapsed() < std::time::Duration::from_secs(60) {
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            created = run_count(&s, &ws, "").await;
        }
        rates[mode].push(rate(runs, started.elapsed()));
        report(label, runs, started);
        s.orchestrator.wait_idle().await;
        s.runtime.wait_idle().await;
        let skipped = run_count(&s, &ws, "skipped").await;
        println!(
            "  (run rows written: {}, of which cap-skipped: {skipped})",
            run_count(&s, &ws, "").await
        );
    }
    s.orchestrator.set_runtime(real);
    let [direct, outboxed, stress] = rates.map(|mut r| median(&mut r));

    // One renewal pass over the leases of 500 running agent turns (each run
    // holds one while its agent works; every replica renews its own every
    // three seconds).
    let leases = kandev_server::coord::Leases::new(s.store.clone(), s.clock.clone(), "bench-replica".into());
    for i in 0..500 {
        leases.try_hold(&format!("run:bench-{i}")).await;
    }
    let started = Instant::now();
    leases.renew().await;
    let renewal_ms = started.elapsed().as_secs_f64() * 1000.0;
    report("one renewal pass over 500 held leases", 500, started);

    // The machine's raw SQLite insert rate on the same file and pool.
    sqlx::query("CREATE TABLE bench_rows (id TEXT PRIMARY KEY, v TEXT NOT NULL)")
        .execute(s.store.pool())
        .await
        .expect("table");
    let rows = 2000;
    let started = Instant::now();
    for i in 0..rows {
        sqlx::query("INSERT INTO bench_rows (id, v) VALUES ($1, $2)")
            .bind(format!("r{i}"))
            .bind("x")
            .execute(s.store.pool())
            .await
            .expect("insert");
    }
    report("raw SQLite single-row inserts (autocommit)", rows, started);
    let raw = rate(rows, started.elapsed());
    let baseline = Some((raw, "raw inserts/s"));
    figure(
        "engine: merged events/s, 1,000 triggers in 100 workspaces",
        spread,
        "events/s",
        ">= 5,000",
        baseline,
    );
    figure(
        "engine: merged events/s, 1,000 triggers in one workspace",
        own,
        "events/s",
        ">= 2,000",
        baseline,
    );
    figure(
        "engine: evaluation trace writes per event",
        per_event,
        "µs",
        "< evaluation",
        Some((1e6 / own, "µs/event")),
    );
    figure("engine: runs created/s (direct)", direct, "runs/s", ">= 500", baseline);
    figure(
        "engine: runs created/s (through the outbox)",
        outboxed,
        "runs/s",
        ">= 500",
        baseline,
    );
    figure(
        "engine: runs created/s, every turn failing at once",
        stress,
        "runs/s",
        "(stress)",
        baseline,
    );
    figure(
        "engine: one renewal pass over 500 held leases",
        renewal_ms,
        "ms",
        "-",
        Some((1000.0 / raw, "ms per raw insert")),
    );
    let overhead = (direct / outboxed.max(1e-9) - 1.0) * 100.0;
    println!(
        "\nthe outbox costs {overhead:.0}% of run throughput over publishing directly (medians of {ROUNDS} rounds; goal: at most 20%)"
    );
    sub.stop().await;
    s.orchestrator.stop().await;
    s.runtime.shutdown().await;
}

/// Publishes an event as every real publisher does (the PR sync, the
/// webhook, a firing): after a transaction that writes its state. Directly,
/// the event goes on the bus after the commit; through the outbox, it is
/// written in that transaction and published after it, so the difference
/// between the two is what the outbox costs.
async fn announce(s: &kandev_server::app::Services, state: &str, event: Payload, through_outbox: bool) {
    let mut tx = s.store.write_tx().await.expect("write turn");
    sqlx::query("INSERT INTO bench_state (id, v) VALUES ($1, $2)")
        .bind(state)
        .bind("synced")
        .execute(&mut *tx)
        .await
        .expect("state");
    if through_outbox {
        let event = s.outbox.event(TASK_PR_UPDATED, SOURCE_GITHUB, event);
        s.outbox.write(&mut tx, &event).await.expect("outbox");
        tx.commit().await.expect("commit");
        s.outbox.committed(&event).await;
    } else {
        tx.commit().await.expect("commit");
        s.bus
            .publish(TASK_PR_UPDATED, SOURCE_GITHUB, event)
            .await
            .expect("publish");
    }
}

/// Rounds of the direct and outbox phases, taken in turns.
const ROUNDS: usize = 3;

/// The middle value (the upper middle of an even count).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// Automations in the runs figure; each takes a hundred runs (the cap).
const RUN_AUTOMATIONS: usize = 10;

/// An agent runtime that starts nothing: the run stays open, as it does
/// while a real agent works.
struct Held;

#[async_trait::async_trait]
impl AgentRuntime for Held {
    async fn start_run(&self, req: RunStart) -> Result<String, String> {
        Ok(req.task.id)
    }

    async fn reclaim_worktree(&self, _task_id: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Run rows of one workspace (of one status, or all when `status` is
/// empty), counted in the database: the poll must not cost the writes it
/// measures a full listing every two milliseconds.
async fn run_count(s: &kandev_server::app::Services, workspace_id: &str, status: &str) -> usize {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM automation_runs r \
         WHERE r.automation_id IN (SELECT a.id FROM automations a WHERE a.workspace_id = $1) \
         AND ($2 = '' OR r.status = $2)",
    )
    .bind(workspace_id)
    .bind(status)
    .fetch_one(s.store.pool())
    .await
    .expect("count");
    n as usize
}
