//! The PR poller: its first sweep runs at once on start, then every
//! `KANDEV_PR_POLL_INTERVAL` (webhook deliveries sync their PR directly). Each sweep
//! syncs every watched link: open ones, and merged or closed ones still
//! settling, so post-merge changes keep publishing.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use super::GithubService;
use super::client::GithubError;
use crate::coord::{Leases, lease};
use crate::periodic::Periodic;

pub struct Poller {
    service: Arc<GithubService>,
    interval: Duration,
    settle: Duration,
    leases: Arc<Leases>,
    running: Periodic,
}

/// What one sweep did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SweepReport {
    pub watched: usize,
    pub synced: usize,
    pub published: usize,
    pub failed: usize,
}

impl Poller {
    pub fn new(service: Arc<GithubService>, interval: Duration, settle: Duration, leases: Arc<Leases>) -> Self {
        Poller {
            service,
            interval,
            settle,
            leases,
            running: Periodic::default(),
        }
    }

    /// Starts the loop; the first sweep runs before the first wait.
    pub async fn start(&self) {
        if !self.service.client().is_configured() {
            tracing::info!("GitHub is not configured (no GITHUB_TOKEN): the PR poller stays idle");
            return;
        }
        let (service, settle) = (self.service.clone(), self.settle);
        let started = self
            .running
            .start_singleton(self.interval, self.leases.clone(), lease::POLLER, move || {
                let service = service.clone();
                async move {
                    let report = sweep(&service, settle).await;
                    tracing::debug!(?report, "PR sweep done");
                }
            })
            .await;
        if started {
            tracing::info!(interval = ?self.interval, "PR poller started");
        }
    }

    pub async fn stop(&self) {
        self.running.stop().await;
    }
}

/// One sweep over the watched links, four at a time.
pub async fn sweep(service: &GithubService, settle: Duration) -> SweepReport {
    let now = service.clock.now();
    let settled_before = now - chrono::Duration::from_std(settle).unwrap_or(chrono::Duration::hours(6));
    let rows = match service.store.list_watched_task_prs(settled_before).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "could not list watched PRs");
            return SweepReport::default();
        }
    };
    let mut report = SweepReport {
        watched: rows.len(),
        ..Default::default()
    };
    // Boxed so the stream's futures have one concrete, Send type.
    let syncs: Vec<futures::future::BoxFuture<'_, _>> =
        rows.iter().map(|row| Box::pin(service.sync_row(row)) as _).collect();
    let results: Vec<_> = futures::stream::iter(syncs).buffer_unordered(4).collect().await;
    let mut limited = false;
    for r in results {
        match r {
            Ok(published) => {
                report.synced += 1;
                report.published += usize::from(published);
            }
            Err(GithubError::RateLimited(until)) => {
                report.failed += 1;
                limited = true;
                tracing::debug!(until, "PR sync deferred by the rate limit");
            }
            Err(e) => {
                report.failed += 1;
                tracing::warn!(error = %e, "PR sync failed; retried next sweep");
            }
        }
    }
    if limited {
        tracing::warn!(
            deferred = report.failed,
            "GitHub rate limit reached: some PRs wait for the next sweep"
        );
    }
    report
}
