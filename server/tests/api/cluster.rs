//! Several `kandev serve` processes on one PostgreSQL and one NATS
//! (JetStream), and one process on SQLite killed again and again: every
//! event is handled once in effect, by one replica, whatever dies when.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use sqlx::{AnyPool, Row};

use kandev_server::testkit::{Api, Replica, WEBHOOK_SECRET, shared_env};

use crate::github_support::{Sim, simulator};
use crate::support::{eventually, postgres_url};

const KANDEV: &str = env!("CARGO_BIN_EXE_kandev");

fn nats_url() -> String {
    std::env::var("KANDEV_TEST_NATS_URL").expect("KANDEV_TEST_NATS_URL: run through `cargo xtask test`")
}

async fn pool(url: &str) -> AnyPool {
    sqlx::any::install_default_drivers();
    AnyPool::connect(url).await.expect("database")
}

/// Three replicas on a fresh PostgreSQL database and their own NATS stream;
/// GitHub's webhooks go to the first (as to a load balancer's one address).
async fn cluster(sim: &Sim, dir: &std::path::Path) -> (Vec<Replica>, String) {
    let url = postgres_url().await;
    let stream = format!("cluster_{}", uuid::Uuid::new_v4().simple());
    let nats = nats_url();
    let env = shared_env(&url, &sim.base, Some((&nats, &stream)));
    let mut replicas = vec![];
    for name in ["r1", "r2", "r3"] {
        replicas.push(Replica::start(KANDEV.as_ref(), name, dir, &env).await);
    }
    sim.sim
        .set_webhook(&format!("{}/api/v1/github/webhook", replicas[0].base), WEBHOOK_SECRET);
    (replicas, url)
}

fn bases(replicas: &[Replica]) -> Vec<String> {
    replicas.iter().map(|r| r.base.clone()).collect()
}

/// Waits until every task is archived, naming the stragglers on timeout.
async fn all_archived(db: &AnyPool, tasks: &[(String, i64)], timeout: Duration, logs: impl Fn() -> String) {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let rows = sqlx::query("SELECT id FROM tasks WHERE archived_at IS NOT NULL")
            .fetch_all(db)
            .await
            .expect("tasks");
        let archived: HashSet<String> = rows.iter().map(|r| r.get::<String, _>("id")).collect();
        let missing: Vec<&String> = tasks
            .iter()
            .map(|(t, _)| t)
            .filter(|t| !archived.contains(*t))
            .collect();
        if missing.is_empty() {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            panic!(
                "{} task(s) never archived, e.g. {:?}\n{}",
                missing.len(),
                &missing[..missing.len().min(3)],
                logs()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits until no run is open: a task is archived a moment before its
/// agent's turn (and so its run) ends.
async fn runs_finished(db: &AnyPool) {
    eventually("every run to finish", Duration::from_secs(60), || async {
        sqlx::query("SELECT COUNT(*) AS n FROM automation_runs WHERE status = 'task_created'")
            .fetch_one(db)
            .await
            .map(|r| r.get::<i64, _>("n") == 0)
            .unwrap_or(false)
    })
    .await;
}

/// Exactly one task-creating run per merged link, each bound to its own task
/// and finished, and exactly one archive per task.
async fn exactly_once(db: &AnyPool, automation: &str, tasks: &[(String, i64)]) {
    runs_finished(db).await;
    let runs = sqlx::query(
        "SELECT r.dedup_key, r.status, t.metadata FROM automation_runs r JOIN tasks t ON t.id = r.task_id \
         WHERE r.automation_id = $1",
    )
    .bind(automation)
    .fetch_all(db)
    .await
    .expect("runs");
    assert_eq!(runs.len(), tasks.len(), "one task-creating run per merge");
    let mut targets = HashSet::new();
    for r in &runs {
        let meta: serde_json::Value = serde_json::from_str(&r.get::<String, _>("metadata")).expect("metadata");
        let target = meta["automation_target_task_id"]
            .as_str()
            .expect("bound target")
            .to_string();
        assert_eq!(r.get::<String, _>("status"), "succeeded", "run for {target}");
        let number = tasks.iter().find(|(t, _)| *t == target).expect("a task of ours").1;
        assert_eq!(
            r.get::<String, _>("dedup_key"),
            format!("pr_merged:{target}:acme/api#{number}")
        );
        assert!(targets.insert(target), "two runs bound to one task");
    }
    let run_tasks = sqlx::query("SELECT COUNT(*) AS n FROM tasks WHERE origin = 'automation_run'")
        .fetch_one(db)
        .await
        .expect("count");
    assert_eq!(
        run_tasks.get::<i64, _>("n"),
        tasks.len() as i64,
        "no run task left behind"
    );
    let archives =
        sqlx::query("SELECT task_id, COUNT(*) AS n FROM task_events WHERE kind = 'archived' GROUP BY task_id")
            .fetch_all(db)
            .await
            .expect("events");
    let per_task: HashMap<String, i64> = archives.iter().map(|r| (r.get("task_id"), r.get("n"))).collect();
    for (t, _) in tasks {
        assert_eq!(per_task.get(t), Some(&1), "task {t} archived once");
    }
}

async fn merge_burst(kill_one: bool) {
    let sim = simulator().await;
    let dir = tempfile::tempdir().expect("dir");
    let (mut replicas, url) = cluster(&sim, dir.path()).await;
    let api = Api::default();
    let (ws, automation) = api.merged_setup(&replicas[1].base).await;
    let tasks = api.linked_tasks(&bases(&replicas), &ws, &sim.sim, 50).await;
    for (_, n) in &tasks {
        sim.sim.merge_pr("acme", "api", *n).expect("merge");
    }
    if kill_one {
        // The replica GitHub's webhooks reach dies mid-burst, and comes back.
        tokio::time::sleep(Duration::from_millis(300 + rand_millis(700))).await;
        replicas[0].kill().await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        replicas[0].restart().await;
    }
    let db = pool(&url).await;
    let logs = || {
        replicas
            .iter()
            .map(|r| format!("--- {} ---\n{}", r.name, r.log_tail()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    all_archived(&db, &tasks, Duration::from_secs(120), logs).await;
    exactly_once(&db, &automation, &tasks).await;
    for r in &mut replicas {
        r.kill().await;
    }
}

fn rand_millis(max: u64) -> u64 {
    use rand::Rng;
    rand::rng().random_range(0..max)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_merges_at_once_on_three_replicas_run_fifty_times_and_archive_each_task_once() {
    merge_burst(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_burst_loses_no_merge_and_doubles_none() {
    merge_burst(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_second_schedule_fires_once_per_slot_across_three_replicas() {
    let sim = simulator().await;
    let dir = tempfile::tempdir().expect("dir");
    let (mut replicas, url) = cluster(&sim, dir.path()).await;
    let api = Api::default();
    let base = replicas[2].base.clone();
    let ws = api.post(&base, "/api/v1/workspaces", json!({"name": "W"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    api.post(
        &base,
        &format!("/api/v1/workspaces/{ws}/repositories"),
        json!({"owner": "acme", "name": "api"}),
    )
    .await;
    let a = api
        .post(
            &base,
            &format!("/api/v1/workspaces/{ws}/automations"),
            json!({"name": "tick", "prompt": "e2e:message(\"tick\")", "max_concurrent_runs": 100,
                   "triggers": [{"type": "scheduled", "config": {"cron_expression": "@every 2s"}}]}),
        )
        .await;
    let id = a["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let db = pool(&url).await;
    let rows = sqlx::query("SELECT dedup_key, task_id FROM automation_runs WHERE automation_id = $1")
        .bind(&id)
        .fetch_all(&db)
        .await
        .unwrap();
    assert!(!rows.is_empty(), "the schedule fired");
    let keys: Vec<String> = rows.iter().map(|r| r.get("dedup_key")).collect();
    let distinct: HashSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "one run per slot: {keys:?}");
    // The engine's slot is the minute: ten seconds span one or two of them.
    assert!(keys.len() <= 2, "{keys:?}");
    let run_tasks = sqlx::query("SELECT COUNT(*) AS n FROM tasks WHERE origin = 'automation_run'")
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(
        run_tasks.get::<i64, _>("n"),
        keys.len() as i64,
        "no run task beside its run"
    );
    for r in &mut replicas {
        r.kill().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_jobs_survive_the_death_of_the_replica_driving_them() {
    let sim = simulator().await;
    sim.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .expect("protection");
    let dir = tempfile::tempdir().expect("dir");
    let (mut replicas, url) = cluster(&sim, dir.path()).await;
    let api = Api::default();
    let base = replicas[0].base.clone();
    let ws = api.post(&base, "/api/v1/workspaces", json!({"name": "W"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    api.post(
        &base,
        &format!("/api/v1/workspaces/{ws}/repositories"),
        json!({"owner": "acme", "name": "api"}),
    )
    .await;
    let mut jobs = vec![];
    for i in 0..3 {
        let (n, sha) = sim.open(&format!("merge me {i}"));
        let t = api
            .post(
                &base,
                &format!("/api/v1/workspaces/{ws}/tasks"),
                json!({"title": format!("t{i}"), "status": "running"}),
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_string();
        api.post(
            &base,
            &format!("/api/v1/tasks/{t}/review"),
            json!({"pr_url": format!("https://github.com/acme/api/pull/{n}")}),
        )
        .await;
        let (status, body) = api
            .call(
                &base,
                Method::POST,
                &format!("/api/v1/tasks/{t}/approve"),
                Some(json!({})),
            )
            .await;
        assert!(status.is_success(), "{body}");
        jobs.push((t, n, sha));
    }
    let db = pool(&url).await;
    // The jobs wait for the required check; whoever drives them dies.
    eventually("every job to have a driver", Duration::from_secs(20), || async {
        sqlx::query("SELECT COUNT(*) AS n FROM leases WHERE name LIKE 'merge:%'")
            .fetch_one(&db)
            .await
            .map(|r| r.get::<i64, _>("n") == 3)
            .unwrap_or(false)
    })
    .await;
    let owners: HashSet<String> = sqlx::query("SELECT owner FROM leases WHERE name LIKE 'merge:%'")
        .fetch_all(&db)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get("owner"))
        .collect();
    for r in replicas.iter_mut().filter(|r| owners.contains(&r.name)) {
        r.kill().await;
    }
    assert!(
        replicas.iter().any(|r| !owners.contains(&r.name)),
        "a replica is left to take over"
    );
    for (_, _, sha) in &jobs {
        sim.green_build(sha);
    }
    for (t, n, _) in &jobs {
        eventually(&format!("task {t} to finish"), Duration::from_secs(60), || async {
            sqlx::query("SELECT status FROM tasks WHERE id = $1")
                .bind(t)
                .fetch_one(&db)
                .await
                .map(|r| r.get::<String, _>("status") == "done")
                .unwrap_or(false)
        })
        .await;
        assert!(sim.sim.pr("acme", "api", *n).expect("pr").merged);
    }
    assert_eq!(sim.sim.counters().merges, 3, "each PR merged exactly once");
    for r in &mut replicas {
        r.kill().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sqlite_process_killed_at_random_during_two_hundred_merges_archives_each_task_exactly_once() {
    let sim = simulator().await;
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("sqlite://{}/kandev.db", dir.path().display());
    let env = shared_env(&url, &sim.base, None);
    let mut kandev = Replica::start(KANDEV.as_ref(), "solo", dir.path(), &env).await;
    sim.sim
        .set_webhook(&format!("{}/api/v1/github/webhook", kandev.base), WEBHOOK_SECRET);
    let api = Api::default();
    let (ws, automation) = api.merged_setup(&kandev.base).await;
    // A slow agent: killed mid-turn, its run is resumed on restart.
    api.call(
        &kandev.base,
        Method::PATCH,
        &format!("/api/v1/automations/{automation}"),
        Some(
            json!({"prompt": "e2e:delay(300)\ne2e:mcp:kandev:archive_task_kandev({\"task_id\":\"{{data.task_id}}\"})"}),
        ),
    )
    .await;
    let seed = rand_millis(1_000_000);
    println!("chaos seed {seed}");
    let tasks = api
        .linked_tasks(std::slice::from_ref(&kandev.base), &ws, &sim.sim, 200)
        .await;
    let db = pool(&url).await;
    // Four waves of fifty (the cap is a hundred), a SIGKILL at a random
    // moment of the second and third.
    for (wave, chunk) in tasks.chunks(50).enumerate() {
        for (_, n) in chunk {
            sim.sim.merge_pr("acme", "api", *n).expect("merge");
        }
        if wave == 1 || wave == 2 {
            tokio::time::sleep(Duration::from_millis(200 + (seed + wave as u64 * 7919) % 700)).await;
            kandev.kill().await;
            kandev.restart().await;
        }
        let logs = || kandev.log_tail();
        all_archived(&db, chunk, Duration::from_secs(120), logs).await;
        // Every turn over before the next kill: a run may be resumed once.
        runs_finished(&db).await;
    }
    exactly_once(&db, &automation, &tasks).await;
    let resumed = sqlx::query("SELECT COALESCE(SUM(recoveries), 0) AS n FROM automation_runs")
        .fetch_one(&db)
        .await
        .expect("recoveries")
        .get::<i64, _>("n");
    assert!(resumed > 0, "the kills landed mid-turn: some runs were resumed");
    println!("{resumed} run(s) resumed after a kill");
    kandev.kill().await;
}
