//! The PR poller: its first sweep runs at once on start, then every
//! `KANDEV_PR_POLL_INTERVAL` (webhook deliveries sync their PR directly). Each sweep
//! syncs every watched link: open ones, and merged or closed ones still
//! settling, so post-merge changes keep publishing. Reads are batched over
//! GraphQL (see `batch`); REST with ETags is the fallback.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;

use super::GithubService;
use super::batch::{BATCH, PrKey};
use super::client::{GithubError, GithubResult};
use super::sync::{Announce, Write};
use crate::coord::{Leases, lease};
use crate::periodic::Periodic;
use crate::store::task_prs::pr_key;
use kandev_core::task_pr::TaskPr;
use kandev_core::unreadable::sweeps_to_skip;

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
    /// Links GitHub answered 404 for lately, left out of this sweep.
    pub skipped: usize,
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

/// Batched queries in flight at once: bounded, as GitHub asks of clients.
const CONCURRENCY: usize = 4;

/// How long a PR goes without a full read even when its probe is
/// unchanged: the probe cannot see a resolved conversation or a changed
/// branch rule.
pub const FULL_READ_EVERY: Duration = Duration::from_secs(600);

/// What the sweep remembers of a PR between sweeps (per replica: a replica
/// taking the poller over starts with full reads): its probe, and when it
/// was last read in full — `None` when that read may have raced an edit.
#[derive(Default)]
pub struct ProbeMemory(Mutex<HashMap<String, (String, Option<Instant>)>>);

impl ProbeMemory {
    fn unchanged(&self, key: &str, probe: &str) -> bool {
        let m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        m.get(key)
            .is_some_and(|(seen, at)| seen == probe && at.is_some_and(|at| at.elapsed() < FULL_READ_EVERY))
    }

    fn remember(&self, key: String, probe: String, settled: bool) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        m.insert(key, (probe, settled.then(Instant::now)));
    }

    /// Forgets PRs no longer watched.
    fn keep_only(&self, keys: &HashSet<String>) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|k, _| keys.contains(k));
    }
}

/// Watched links GitHub answered 404 for: misses in a row, and sweeps
/// still to sit out (per replica, like the probes: a takeover tries all).
#[derive(Default)]
pub struct Unreadable(Mutex<HashMap<String, (u32, u32)>>);

impl Unreadable {
    /// Whether this sweep leaves the link out (and counts the sweep).
    fn sits_out(&self, key: &str) -> bool {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match m.get_mut(key) {
            Some((_, left)) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        }
    }

    fn missed(&self, key: String) -> u32 {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let entry = m.entry(key).or_insert((0, 0));
        entry.0 = entry.0.saturating_add(1);
        entry.1 = sweeps_to_skip(entry.0);
        entry.0
    }

    fn read(&self, key: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
    }

    fn keep_only(&self, keys: &HashSet<String>) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|k, _| keys.contains(k));
    }
}

/// Whether a probe can stand for its PR until something changes. GitHub
/// stamps `updatedAt` in whole seconds: a PR edited in the second of the
/// read (or the one before, for the clocks' sake) may be edited again
/// within that second without its probe changing, so it is read once more.
fn settled(probe: &str, github_now: i64) -> bool {
    let updated = serde_json::from_str::<serde_json::Value>(probe)
        .ok()
        .and_then(|v| v.get("updatedAt")?.as_str().map(str::to_string))
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok());
    match updated {
        Some(t) => github_now == 0 || t.timestamp() < github_now - 1,
        None => true,
    }
}

fn link_key(l: &TaskPr) -> String {
    format!("{}|{}", l.task_id, pr_key(&l.owner, &l.repo, l.pr_number))
}

fn pr_of(l: &TaskPr) -> PrKey {
    PrKey {
        owner: l.owner.clone(),
        repo: l.repo.clone(),
        number: l.pr_number,
    }
}

/// Runs `f` over chunks of `rows` of [`BATCH`], [`CONCURRENCY`] at a time,
/// pairing each row with its answer (or the chunk's error).
async fn in_batches<'a, T, F, Fut>(rows: &[&'a TaskPr], f: F) -> Vec<(&'a TaskPr, GithubResult<Option<T>>)>
where
    F: Fn(Vec<PrKey>) -> Fut,
    Fut: std::future::Future<Output = GithubResult<Vec<Option<T>>>>,
{
    let chunks: Vec<&[&'a TaskPr]> = rows.chunks(BATCH).collect();
    let reads: Vec<_> = chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let read = f(chunk.iter().map(|l| pr_of(l)).collect());
            async move { (i, read.await) }
        })
        .collect();
    let answers: Vec<(usize, GithubResult<Vec<Option<T>>>)> = futures::stream::iter(reads)
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut out = vec![];
    for (i, answer) in answers {
        let chunk = chunks[i].iter().copied();
        match answer {
            Ok(found) => out.extend(chunk.zip(found.into_iter().map(Ok))),
            Err(e) => out.extend(chunk.map(|l| (l, Err(e.clone())))),
        }
    }
    out
}

/// One sweep over the watched links: a GraphQL probe of every PR, a GraphQL
/// detail read of those that changed, REST for what GraphQL could not read.
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
    let keys: HashSet<String> = rows.iter().map(link_key).collect();
    service.probes.keep_only(&keys);
    service.unreadable.keep_only(&keys);
    let mut tally = Tally::default();
    let all: Vec<&TaskPr> = rows
        .iter()
        .filter(|r| !service.unreadable.sits_out(&link_key(r)))
        .collect();
    report.skipped = rows.len() - all.len();
    let client = service.client();
    let mut changed: Vec<(&TaskPr, String)> = vec![];
    let mut by_rest: Vec<&TaskPr> = vec![];
    for (row, probe) in in_batches(&all, |keys| async move { client.probe_prs(&keys).await }).await {
        match probe {
            Ok(Some(v)) => {
                service.unreadable.read(&link_key(row));
                let text = v.to_string();
                if service.probes.unchanged(&link_key(row), &text) {
                    report.synced += 1;
                } else {
                    changed.push((row, text));
                }
            }
            Ok(None) => by_rest.push(row),
            Err(e) if e.is_rate_limit() => tally.failed(&mut report, &e),
            Err(e) => {
                tracing::debug!(error = %e, "GraphQL probe failed; reading over REST");
                by_rest.push(row);
            }
        }
    }
    let github_now = client.github_clock();
    let probes: HashMap<String, String> = changed.iter().map(|(r, p)| (link_key(r), p.clone())).collect();
    let changed_rows: Vec<&TaskPr> = changed.iter().map(|(r, _)| *r).collect();
    for (row, parts) in in_batches(&changed_rows, |keys| async move { client.detail_prs(&keys).await }).await {
        match parts {
            Ok(Some(parts)) => {
                let old = row;
                let new = parts.row(
                    &old.owner,
                    &old.repo,
                    &old.task_id,
                    &old.workspace_id,
                    service.clock.now(),
                );
                match service
                    .store_row((&old.owner, &old.repo), &new, Write::Whole, Announce::IfSyncChanged)
                    .await
                {
                    Ok(published) => {
                        report.synced += 1;
                        report.published += usize::from(published);
                        if let Some(p) = probes.get(&link_key(row)) {
                            service
                                .probes
                                .remember(link_key(row), p.clone(), settled(p, github_now));
                        }
                    }
                    Err(e) => {
                        report.failed += 1;
                        tracing::error!(task_id = %old.task_id, error = %e, "could not write the synced PR row");
                    }
                }
            }
            Ok(None) => by_rest.push(row),
            Err(e) if e.is_rate_limit() => tally.failed(&mut report, &e),
            Err(e) => {
                tracing::debug!(error = %e, "GraphQL detail read failed; reading over REST");
                by_rest.push(row);
            }
        }
    }
    // REST, conditional requests four at a time: boxed so the stream's
    // futures have one concrete, Send type.
    let syncs: Vec<futures::future::BoxFuture<'_, (String, GithubResult<bool>)>> = by_rest
        .iter()
        .map(|row| Box::pin(async move { (link_key(row), service.sync_row(row).await) }) as _)
        .collect();
    let results: Vec<_> = futures::stream::iter(syncs)
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    for (key, r) in results {
        match r {
            Ok(published) => {
                service.unreadable.read(&key);
                report.synced += 1;
                report.published += usize::from(published);
            }
            Err(GithubError::NotFound) => {
                report.failed += 1;
                let misses = service.unreadable.missed(key.clone());
                tracing::warn!(link = %key, misses, skipped_sweeps = sweeps_to_skip(misses),
                    "GitHub answered 404 for a watched PR; tried again after the skipped sweeps");
            }
            Err(e) => tally.failed(&mut report, &e),
        }
    }
    if tally.limited {
        tracing::warn!(
            deferred = report.failed,
            "GitHub rate limit reached: some PRs wait for the next sweep"
        );
    }
    report
}

#[derive(Default)]
struct Tally {
    limited: bool,
}

impl Tally {
    fn failed(&mut self, report: &mut SweepReport, e: &GithubError) {
        report.failed += 1;
        if let GithubError::RateLimited(until) = e {
            self.limited = true;
            tracing::debug!(until, "PR sync deferred by the rate limit");
        } else {
            tracing::warn!(error = %e, "PR sync failed; retried next sweep");
        }
    }
}
