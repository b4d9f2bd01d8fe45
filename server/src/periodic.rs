//! A background loop shared by the scheduler, the PR poller and the
//! `github_pr` evaluator: one pass at once, then one per interval, until
//! stopped (a stop waits for the pass in flight).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::coord::Leases;

#[derive(Default)]
pub struct Periodic {
    running: Mutex<Option<(CancellationToken, JoinHandle<()>)>>,
}

impl Periodic {
    /// Starts the loop unless it runs already; `false` when it did.
    pub async fn start<F, Fut>(&self, interval: Duration, mut pass: F) -> bool
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let mut guard = self.running.lock().await;
        if guard.is_some() {
            return false;
        }
        let token = CancellationToken::new();
        let stop = token.clone();
        let task = tokio::spawn(async move {
            loop {
                pass().await;
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(interval) => {}
                }
            }
        });
        *guard = Some((token, task));
        true
    }

    /// [`Periodic::start`] for singleton work: a pass runs only on the
    /// replica holding the lease `name` (taken or renewed at each pass), so
    /// replicas share one loop and a dead holder's loop moves within the
    /// lease's lifetime.
    pub async fn start_singleton<F, Fut>(
        &self,
        interval: Duration,
        leases: Arc<Leases>,
        name: &'static str,
        mut pass: F,
    ) -> bool
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.start(interval, move || {
            let (leases, work) = (leases.clone(), pass());
            async move {
                if leases.try_hold(name).await {
                    work.await;
                }
            }
        })
        .await
    }

    pub async fn stop(&self) {
        if let Some((token, task)) = self.running.lock().await.take() {
            token.cancel();
            let _ = task.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn runs_at_once_repeats_starts_once_and_stops() {
        let p = Periodic::default();
        let n = Arc::new(AtomicUsize::new(0));
        let count = n.clone();
        let pass = move || {
            let count = count.clone();
            async move {
                count.fetch_add(1, Ordering::SeqCst);
            }
        };
        assert!(p.start(Duration::from_millis(5), pass.clone()).await);
        assert!(
            !p.start(Duration::from_millis(5), pass).await,
            "a second start is refused"
        );
        while n.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        p.stop().await;
        let after = n.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(n.load(Ordering::SeqCst), after, "no pass after stop");
    }
}
