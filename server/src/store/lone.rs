//! Lone write statements on SQLite, run by a thread of their own. It takes
//! the write turn once for every statement queued meanwhile and runs them
//! back to back on its own runtime. Under load a lone write then waits
//! neither for the turn to pass from one HTTP task to the next nor for a
//! busy scheduler between its statement and the next one; both hand-offs
//! cost more than the statement itself.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::BoxFuture;
use sqlx::AnyConnection;
use tokio::sync::{mpsc, oneshot};

use super::turn::{Slot, Turn, connection_lost};
use super::{StoreError, StoreResult};

/// One statement's work: runs on the turn's connection, or is told why the
/// turn could not be had; it answers its caller itself, and says whether the
/// connection was lost (so it is replaced before the next statement).
type Job = Box<dyn for<'c> FnOnce(Result<&'c mut AnyConnection, &'c str>) -> BoxFuture<'c, bool> + Send>;

/// Statements run before the turn is given up for others (transactions)
/// even while more keep coming.
const BATCH: usize = 64;
/// Statements waiting at most; a caller past that waits to send (the HTTP
/// layer's in-flight limit keeps it far from here).
const QUEUE: usize = 4096;

#[derive(Clone)]
pub(super) struct LoneWriter {
    jobs: mpsc::Sender<Job>,
}

impl LoneWriter {
    /// Starts the thread; it ends when the last `LoneWriter` is dropped.
    pub(super) fn start(turn: Turn) -> std::io::Result<LoneWriter> {
        let (jobs, queue) = mpsc::channel::<Job>(QUEUE);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        std::thread::Builder::new()
            .name("kandev-sqlite-writer".into())
            .spawn(move || runtime.block_on(drain(turn, queue)))?;
        Ok(LoneWriter { jobs })
    }

    /// Statements sent and not yet taken by the thread (for `/metrics`: a
    /// queue that stays long means the database cannot keep up).
    pub(super) fn waiting(&self) -> usize {
        self.jobs.max_capacity() - self.jobs.capacity()
    }

    /// Runs `work` on the turn's connection and returns what it returns. The
    /// statement runs whole even if the caller stops waiting.
    pub(super) async fn run<R, F>(&self, work: F) -> StoreResult<R>
    where
        R: Send + 'static,
        F: for<'c> FnOnce(&'c mut AnyConnection) -> BoxFuture<'c, StoreResult<R>> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            Box::pin(async move {
                let result = match conn {
                    Ok(conn) => work(conn).await,
                    Err(why) => Err(StoreError::Unavailable(why.to_string())),
                };
                let lost = result.as_ref().is_err_and(connection_lost);
                let _ = answer.send(result);
                lost
            })
        });
        self.jobs
            .send(job)
            .await
            .map_err(|_| StoreError::Unavailable("the writer has stopped".into()))?;
        answered
            .await
            .map_err(|_| StoreError::Unavailable("the writer stopped before answering".into()))?
    }
}

async fn drain(turn: Turn, mut queue: mpsc::Receiver<Job>) {
    while let Some(first) = queue.recv().await {
        let mut slot = match turn.take().await {
            Ok(slot) => slot,
            Err(error) => {
                let why = error.to_string();
                first(Err(&why)).await;
                continue;
            }
        };
        let mut healthy = run(first, &mut slot).await;
        for _ in 1..BATCH {
            if !healthy {
                break;
            }
            let Ok(job) = queue.try_recv() else { break };
            healthy = run(job, &mut slot).await;
        }
    }
}

/// Runs one job; `false` when its connection must be replaced first. A job
/// that panics loses its answer (its caller sees the writer stop answering),
/// never the thread every other write needs.
async fn run(job: Job, slot: &mut Slot) -> bool {
    match AssertUnwindSafe(job(Ok(&mut **slot))).catch_unwind().await {
        Ok(false) => true,
        Ok(true) => {
            slot.mark_broken();
            false
        }
        Err(_) => {
            tracing::error!("a write statement panicked; the writer goes on");
            true
        }
    }
}
