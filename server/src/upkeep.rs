//! The coordination upkeep every replica runs, once a second: relay what the
//! outbox still holds, take over runs and merge jobs whose replica stopped,
//! and prune what was delivered long ago. The relay and the recovery scans
//! are singletons (leased); taking over one run or one job is decided by
//! that run's or job's own lease. This replica's leases are renewed on a
//! loop of their own, so a slow recovery pass never delays a renewal (work
//! under a lease stops once its last renewal is too old: `core::lease`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::coord::{Outbox, RENEW_INTERVAL, Tenure, lease};
use crate::merger::Merger;
use crate::orchestrator::Orchestrator;
use crate::periodic::Periodic;

const TICK: Duration = Duration::from_secs(1);
/// Ticks between recovery scans, and between prunes.
const RECOVER_EVERY: u64 = 2;
const PRUNE_EVERY: u64 = 600;

pub struct Upkeep {
    tenure: Arc<Tenure>,
    outbox: Arc<Outbox>,
    orchestrator: Arc<Orchestrator>,
    merger: Arc<Merger>,
    running: Periodic,
    renewing: Periodic,
}

impl Upkeep {
    pub fn new(tenure: Arc<Tenure>, outbox: Arc<Outbox>, orchestrator: Arc<Orchestrator>, merger: Arc<Merger>) -> Self {
        Upkeep {
            tenure,
            outbox,
            orchestrator,
            merger,
            running: Periodic::default(),
            renewing: Periodic::default(),
        }
    }

    pub async fn start(&self) {
        let tenure = self.tenure.clone();
        self.renewing
            .start(RENEW_INTERVAL, move || {
                let tenure = tenure.clone();
                async move { tenure.pass().await }
            })
            .await;
        let (leases, outbox, orchestrator, merger) = (
            self.tenure.leases.clone(),
            self.outbox.clone(),
            self.orchestrator.clone(),
            self.merger.clone(),
        );
        let ticks = Arc::new(AtomicU64::new(0));
        self.running
            .start(TICK, move || {
                let (leases, outbox, orchestrator, merger, ticks) = (
                    leases.clone(),
                    outbox.clone(),
                    orchestrator.clone(),
                    merger.clone(),
                    ticks.clone(),
                );
                async move {
                    let n = ticks.fetch_add(1, Ordering::Relaxed);
                    // Every replica marks its own publications; the relay is one replica's.
                    outbox.flush_marks().await;
                    if leases.try_hold(lease::OUTBOX).await {
                        outbox.relay().await;
                        if n % PRUNE_EVERY == 0 {
                            outbox.prune().await;
                        }
                    }
                    outbox.measure().await;
                    if n % RECOVER_EVERY == 0 && leases.try_hold(lease::RECOVERY).await {
                        orchestrator.recover_orphans().await;
                        merger.resume_all().await;
                    }
                }
            })
            .await;
    }

    /// Stops relaying and recovering; leases are still renewed until
    /// `stop_renewing`, so turns ending in the shutdown keep theirs.
    pub async fn stop(&self) {
        self.running.stop().await;
        self.outbox.flush_marks().await;
    }

    pub async fn stop_renewing(&self) {
        self.renewing.stop().await;
    }
}
