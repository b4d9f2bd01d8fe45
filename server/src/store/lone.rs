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

use super::turn::Turn;
use super::{StoreError, StoreResult};

/// One statement's work: runs on the turn's connection, or is told why the
/// turn could not be had; it answers its caller itself.
type Job = Box<dyn for<'c> FnOnce(Result<&'c mut AnyConnection, &'c str>) -> BoxFuture<'c, ()> + Send>;

/// Statements run before the turn is given up for others (transactions)
/// even while more keep coming.
const BATCH: usize = 64;

#[derive(Clone)]
pub(super) struct LoneWriter {
    jobs: mpsc::UnboundedSender<Job>,
}

impl LoneWriter {
    /// Starts the thread; it ends when the last `LoneWriter` is dropped.
    pub(super) fn start(turn: Turn) -> std::io::Result<LoneWriter> {
        let (jobs, queue) = mpsc::unbounded_channel::<Job>();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        std::thread::Builder::new()
            .name("kandev-sqlite-writer".into())
            .spawn(move || runtime.block_on(drain(turn, queue)))?;
        Ok(LoneWriter { jobs })
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
                let _ = answer.send(result);
            })
        });
        self.jobs
            .send(job)
            .map_err(|_| StoreError::Unavailable("the writer has stopped".into()))?;
        answered
            .await
            .map_err(|_| StoreError::Unavailable("the writer stopped before answering".into()))?
    }
}

async fn drain(turn: Turn, mut queue: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = queue.recv().await {
        let mut slot = match turn.take().await {
            Ok(slot) => slot,
            Err(error) => {
                let why = error.to_string();
                first(Err(&why)).await;
                continue;
            }
        };
        run(first, &mut slot).await;
        for _ in 1..BATCH {
            let Ok(job) = queue.try_recv() else { break };
            run(job, &mut slot).await;
        }
    }
}

/// A job that panics loses its answer (its caller sees the writer stop
/// answering), never the thread every other write needs.
async fn run(job: Job, conn: &mut AnyConnection) {
    if AssertUnwindSafe(job(Ok(conn))).catch_unwind().await.is_err() {
        tracing::error!("a write statement panicked; the writer goes on");
    }
}
