//! Merged events per second end to end (merge in GitHub → event through the
//! outbox → run → agent archives the task), on one SQLite process and on
//! three replicas sharing PostgreSQL and NATS JetStream. Needs the services
//! `cargo xtask bench` starts; prints figures, never fails on them.
//!
//! Run: `cargo xtask bench` (or `cargo bench -p kandev-server --bench cluster`
//! with `KANDEV_TEST_POSTGRES_URL` and `KANDEV_TEST_NATS_URL` set).

mod common;

use std::time::{Duration, Instant};

use kandev_server::github_sim::Simulator;
use kandev_server::testkit::{Api, Replica, WEBHOOK_SECRET, fresh_postgres_database, shared_env};
use sqlx::{AnyPool, Row};

const KANDEV: &str = env!("CARGO_BIN_EXE_kandev");
const MERGES: usize = 120;

async fn archived(db: &AnyPool) -> i64 {
    sqlx::query("SELECT COUNT(*) AS n FROM tasks WHERE archived_at IS NOT NULL AND origin = 'user'")
        .fetch_one(db)
        .await
        .map(|r| r.get::<i64, _>("n"))
        .unwrap_or(0)
}

/// Links `MERGES` PRs, merges them all at once, and times until every task
/// is archived. Returns merged events per second.
async fn burst(label: &str, database_url: &str, nats: Option<(&str, &str)>, replicas: usize) -> f64 {
    let sim = Simulator::new();
    let (addr, _) = sim.serve("127.0.0.1:0").await.expect("simulator");
    sim.add_org("acme");
    sim.add_repo("acme", "api", false);
    let dir = tempfile::tempdir().expect("dir");
    let env = shared_env(database_url, &format!("http://{addr}"), nats);
    let mut running = vec![];
    for i in 0..replicas {
        running.push(Replica::start(KANDEV.as_ref(), &format!("b{i}"), dir.path(), &env).await);
    }
    sim.set_webhook(&format!("{}/api/v1/github/webhook", running[0].base), WEBHOOK_SECRET);
    let api = Api::default();
    let bases: Vec<String> = running.iter().map(|r| r.base.clone()).collect();
    let (ws, _) = api.merged_setup(&bases[0]).await;
    let tasks = api.linked_tasks(&bases, &ws, &sim, MERGES).await;
    sqlx::any::install_default_drivers();
    let db = AnyPool::connect(database_url).await.expect("database");
    let started = Instant::now();
    for (_, n) in &tasks {
        sim.merge_pr("acme", "api", *n).expect("merge");
    }
    let deadline = started + Duration::from_secs(300);
    while archived(&db).await < MERGES as i64 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = started.elapsed();
    let done = archived(&db).await;
    let rate = done as f64 / elapsed.as_secs_f64();
    println!(
        "{label:<52} {done:>4}/{MERGES} archived in {:>7.1} ms = {rate:>7.1} merged events/s",
        elapsed.as_secs_f64() * 1000.0
    );
    for r in &mut running {
        r.kill().await;
    }
    rate
}

/// Single-row inserts per second on `url`, the database's raw write rate.
async fn raw_inserts(url: &str) -> f64 {
    sqlx::any::install_default_drivers();
    let db = AnyPool::connect(url).await.expect("database");
    sqlx::query("CREATE TABLE bench_rows (id TEXT PRIMARY KEY)")
        .execute(&db)
        .await
        .expect("table");
    let started = Instant::now();
    for i in 0..1000 {
        sqlx::query("INSERT INTO bench_rows (id) VALUES ($1)")
            .bind(format!("r{i}"))
            .execute(&db)
            .await
            .expect("insert");
    }
    1000.0 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let (Ok(postgres), Ok(nats)) = (
        std::env::var("KANDEV_TEST_POSTGRES_URL"),
        std::env::var("KANDEV_TEST_NATS_URL"),
    ) else {
        println!("cluster benchmark skipped: it needs PostgreSQL and NATS (run `cargo xtask bench`)");
        return;
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    println!("kandev cluster benchmark: {MERGES} PRs merged at once, mock agents archiving their tasks\n");
    let dir = tempfile::tempdir().expect("dir");
    let sqlite = format!("sqlite://{}/one.db", dir.path().display());
    let one = burst("one process, SQLite, in-process bus", &sqlite, None, 1).await;
    let raw_sqlite = raw_inserts(&format!("sqlite://{}/raw.db?mode=rwc", dir.path().display())).await;
    let pg = fresh_postgres_database(&postgres).await;
    let stream = format!("bench_{}", uuid::Uuid::new_v4().simple());
    let three = burst(
        "three replicas, PostgreSQL and NATS JetStream",
        &pg,
        Some((&nats, &stream)),
        3,
    )
    .await;
    let raw_pg = raw_inserts(&fresh_postgres_database(&postgres).await).await;
    println!("\nraw single-row inserts: SQLite {raw_sqlite:.0}/s, PostgreSQL {raw_pg:.0}/s (same run)");
    println!(
        "three replicas handle {:.2}x one process (goal: 2x; on a two-core machine the replicas and their agents share the same cores)",
        three / one.max(1e-9)
    );
    common::figure(
        "cluster: one process, SQLite",
        one,
        "merges/s",
        "-",
        Some((raw_sqlite, "raw inserts/s")),
    );
    common::figure(
        "cluster: three replicas, PostgreSQL + NATS",
        three,
        "merges/s",
        "2x one process",
        Some((one, "one process merges/s")),
    );
}
