//! The orchestrator: writes a firing's hidden run task (in the firing's own
//! transaction, or from `automation.triggered`) and starts its agent, off the
//! delivery path. It writes the run rows of the
//! firing path (`task_created`, pre-task `failed`) and finalises them when the
//! agent's turn ends.

mod create;
mod finalise;
mod recover;
mod sessions;

pub use create::Inline;
pub use finalise::{HANDED_OVER, TurnOutcome};
pub use sessions::TURN_LOST;

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use kandev_core::api::{Repository, Task};
use kandev_core::events::{AUTOMATION_TRIGGERED, AutomationTriggered, FromPayload};
use tokio::sync::{Mutex, Semaphore};
use tokio_util::task::TaskTracker;

use crate::board::PrLinker;
use crate::bus::{Bus, BusError, Subscription, handler};
use crate::clock::Clock;
use crate::coord::Leases;
use crate::live::LiveHub;
use crate::metrics::Metrics;
use crate::store::Store;

/// What the agent runtime needs to start a run task's session.
#[derive(Debug, Clone)]
pub struct RunStart {
    pub task: Task,
    pub prompt: String,
    pub agent_profile_id: String,
    pub executor_profile_id: String,
    pub repository: Option<Repository>,
    pub automation_id: String,
}

/// Starts agent sessions. The turn runs in the background and its end is
/// reported back through [`Orchestrator::finish_turn`].
#[async_trait]
pub trait AgentRuntime: Send + Sync {
    async fn start_run(&self, req: RunStart) -> Result<String, String>;
    /// Removes the worktree of a finished run (retention).
    async fn reclaim_worktree(&self, task_id: &str) -> Result<(), String>;
}

pub struct Orchestrator {
    store: Store,
    bus: Bus,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
    live: LiveHub,
    leases: Arc<Leases>,
    runtime: RwLock<Option<Arc<dyn AgentRuntime>>>,
    linker: RwLock<Option<Arc<dyn PrLinker>>>,
    tracker: TaskTracker,
    /// Agent starts in flight at once (each prepares a worktree and spawns a process).
    starts: Semaphore,
    subscription: Mutex<Option<Subscription>>,
}

/// How many run agents one replica starts at once; the rest wait their turn
/// with their run written and leased.
pub const CONCURRENT_STARTS: usize = 8;

impl Orchestrator {
    pub fn new(
        store: Store,
        bus: Bus,
        clock: Arc<dyn Clock>,
        metrics: Metrics,
        live: LiveHub,
        leases: Arc<Leases>,
    ) -> Self {
        Orchestrator {
            store,
            bus,
            clock,
            metrics,
            live,
            leases,
            runtime: RwLock::new(None),
            linker: RwLock::new(None),
            tracker: TaskTracker::new(),
            starts: Semaphore::new(CONCURRENT_STARTS),
            subscription: Mutex::new(None),
        }
    }

    pub fn set_runtime(&self, runtime: Arc<dyn AgentRuntime>) {
        *self.runtime.write().unwrap_or_else(|p| p.into_inner()) = Some(runtime);
    }

    pub fn set_pr_linker(&self, linker: Arc<dyn PrLinker>) {
        *self.linker.write().unwrap_or_else(|p| p.into_inner()) = Some(linker);
    }

    fn runtime(&self) -> Option<Arc<dyn AgentRuntime>> {
        self.runtime.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Subscribes to `automation.triggered`. Idempotent.
    pub async fn start(self: &Arc<Self>) -> Result<(), BusError> {
        let mut guard = self.subscription.lock().await;
        if guard.is_some() {
            return Ok(());
        }
        let me = self.clone();
        let sub = self
            .bus
            .subscribe(
                AUTOMATION_TRIGGERED,
                "orchestrator",
                handler(move |event| {
                    let me = me.clone();
                    async move {
                        match AutomationTriggered::from_payload(&event.data) {
                            // Awaited: the event counts as handled (acknowledged,
                            // or marked published) only once its run is written.
                            Ok(ev) => {
                                let worker = me.clone();
                                let id = event.id.clone();
                                let created = me
                                    .tracker
                                    .spawn(async move { worker.create_automation_task(&id, ev).await });
                                if let Err(e) = created.await {
                                    tracing::error!(error = %e, "task creation stopped");
                                }
                            }
                            Err(e) => tracing::warn!(error = %e, "ignoring a malformed automation.triggered payload"),
                        }
                    }
                }),
            )
            .await?;
        *guard = Some(sub);
        tracing::info!("orchestrator subscribed to automation.triggered");
        Ok(())
    }

    pub async fn stop(&self) {
        if let Some(sub) = self.subscription.lock().await.take() {
            sub.unsubscribe().await;
        }
        self.wait_idle().await;
    }

    /// Waits until every task creation started so far, and the agent start
    /// it queued, has finished (tests).
    pub async fn wait_idle(&self) {
        self.tracker.close();
        self.tracker.wait().await;
        self.tracker.reopen();
    }
}
