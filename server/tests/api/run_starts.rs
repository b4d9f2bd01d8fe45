//! A run's agent starts after its run is written, a bounded number at a
//! time: the event is handled once the run row and its lease are committed,
//! so a slow start (a large worktree, a busy machine) never holds the bus.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use kandev_core::run_status::RunStatus;
use kandev_server::orchestrator::{AgentRuntime, CONCURRENT_STARTS, RunStart};
use serde_json::json;
use tokio::sync::Semaphore;

use crate::support::{Db, eventually, spawn_app};

/// An agent runtime whose starts wait at a gate the test opens.
struct Gated {
    in_flight: AtomicUsize,
    most: AtomicUsize,
    started: AtomicUsize,
    gate: Semaphore,
}

impl Gated {
    fn closed() -> Self {
        Gated {
            in_flight: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            gate: Semaphore::new(0),
        }
    }
}

#[async_trait]
impl AgentRuntime for Gated {
    async fn start_run(&self, req: RunStart) -> Result<String, String> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        if let Ok(p) = self.gate.acquire().await {
            p.forget();
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::SeqCst);
        Ok(format!("session-{}", req.task.id))
    }

    async fn reclaim_worktree(&self, _task_id: &str) -> Result<(), String> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_written_while_their_agents_wait_and_starts_are_bounded() {
    let app = spawn_app(Db::Sqlite).await;
    let gated = Arc::new(Gated::closed());
    app.services().orchestrator.set_runtime(gated.clone());
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "Hook", "max_concurrent_runs": 100, "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let a = a["id"].as_str().expect("id").to_string();
    let runs = CONCURRENT_STARTS + 4;
    for _ in 0..runs {
        let r = app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
        assert!(r.status.is_success(), "{}", r.body);
    }
    let store = app.services().store.clone();
    // Every run is written although no agent has started yet.
    eventually("every run written", Duration::from_secs(10), || {
        let (store, a) = (store.clone(), a.clone());
        async move {
            let rows = store.list_run_records(&a).await.expect("runs");
            rows.len() == runs && rows.iter().all(|r| r.status == RunStatus::TaskCreated)
        }
    })
    .await;
    assert_eq!(gated.started.load(Ordering::SeqCst), 0, "no start has finished");
    eventually("the first starts waiting", Duration::from_secs(10), || {
        let g = gated.clone();
        async move { g.in_flight.load(Ordering::SeqCst) == CONCURRENT_STARTS }
    })
    .await;
    // Give the queued starts every chance to pass the bound.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        gated.most.load(Ordering::SeqCst),
        CONCURRENT_STARTS,
        "starts are bounded"
    );
    gated.gate.add_permits(runs);
    eventually("every agent started", Duration::from_secs(10), || {
        let g = gated.clone();
        async move { g.started.load(Ordering::SeqCst) == runs }
    })
    .await;
    assert_eq!(gated.most.load(Ordering::SeqCst), CONCURRENT_STARTS);
    app.stop().await;
}
