//! Re-reading a PR whose read lagged its webhook delivery (the rule and the
//! waits are `kandev_core::read_lag`'s). One loop per PR at a time: a newer
//! delivery of that PR while it waits only raises what the loop waits for.
//! A crash loses the loop, not the change: the poller's sweep reads it too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use kandev_core::read_lag::{PrSeen, reread_delay};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::GithubService;

/// A PR as the loops know it: owner and repository lower-cased, as GitHub
/// matches them.
type PrKey = (String, String, i64);

/// The PRs being re-read, each with the newest a delivery said of it.
#[derive(Default)]
pub(crate) struct Rereads {
    pending: Mutex<HashMap<PrKey, PrSeen>>,
    tracker: TaskTracker,
    stop: CancellationToken,
}

impl Rereads {
    fn pending(&self) -> MutexGuard<'_, HashMap<PrKey, PrSeen>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `seen`; true when no loop is re-reading this PR yet.
    fn begin(&self, key: &PrKey, seen: &PrSeen) -> bool {
        let mut pending = self.pending();
        match pending.get_mut(key) {
            Some(held) => {
                *held = held.later(seen);
                false
            }
            None => {
                pending.insert(key.clone(), seen.clone());
                true
            }
        }
    }

    fn current(&self, key: &PrKey) -> Option<PrSeen> {
        self.pending().get(key).cloned()
    }

    /// Ends the loop when nothing newer than `read_for` arrived meanwhile.
    fn finish(&self, key: &PrKey, read_for: &PrSeen) -> bool {
        let mut pending = self.pending();
        if pending.get(key).is_some_and(|held| held != read_for) {
            return false;
        }
        pending.remove(key);
        true
    }

    fn give_up(&self, key: &PrKey) {
        self.pending().remove(key);
    }
}

impl GithubService {
    /// Reads the PR again after each of core's waits until a read is no
    /// longer behind what its deliveries said, or the waits are spent.
    pub(super) fn read_again_later(self: &Arc<Self>, owner: &str, repo: &str, number: i64, seen: &PrSeen) {
        let key = (owner.to_ascii_lowercase(), repo.to_ascii_lowercase(), number);
        if !self.rereads.begin(&key, seen) {
            return;
        }
        tracing::info!(
            owner,
            repo,
            number,
            "GitHub's API is behind its webhook for this PR; reading it again shortly"
        );
        let (service, owner, repo) = (Arc::clone(self), owner.to_string(), repo.to_string());
        self.rereads.tracker.spawn(async move {
            let mut attempt = 0;
            while let Some(wait) = reread_delay(attempt) {
                attempt += 1;
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = service.rereads.stop.cancelled() => return,
                }
                let Some(seen) = service.rereads.current(&key) else {
                    return;
                };
                let (_, behind) = service.sync_pr_now(&owner, &repo, number, &seen).await;
                if !behind && service.rereads.finish(&key, &seen) {
                    tracing::debug!(owner, repo, number, attempt, "GitHub's API caught up with its webhook");
                    return;
                }
            }
            service.rereads.give_up(&key);
            tracing::info!(
                owner,
                repo,
                number,
                "GitHub's API is still behind its webhook for this PR; the poller's next sweep reads it again"
            );
        });
    }

    /// Runs `work` beside the re-reads: shutdown waits for it, and it can
    /// ask `stopping` between its reads.
    pub(super) fn read_in_background(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        self.rereads.tracker.spawn(work);
    }

    pub(super) fn stopping(&self) -> bool {
        self.rereads.stop.is_cancelled()
    }

    /// Stops the waiting re-reads and waits for one in flight (shutdown).
    pub async fn stop_rereads(&self) {
        self.rereads.stop.cancel();
        self.rereads.tracker.close();
        self.rereads.tracker.wait().await;
    }
}
