//! The bounded, persistent record of recent trigger evaluations ("why didn't
//! it fire?"). Writes are batched off the evaluation path so a busy detector
//! never waits on them.

use tokio::sync::{mpsc, oneshot};

use crate::metrics::Metrics;
use crate::store::{EvaluationRecord, Store};

enum Msg {
    Record(EvaluationRecord),
    Flush(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct EvaluationRecorder {
    tx: mpsc::Sender<Msg>,
    metrics: Metrics,
}

const BATCH: usize = 512;
/// Records waiting to be written; past this a record is dropped (and counted)
/// rather than held in memory or making the evaluation wait.
const QUEUE: usize = 20_000;

async fn write(store: &Store, batch: &mut Vec<EvaluationRecord>) {
    if batch.is_empty() {
        return;
    }
    if let Err(e) = store.record_evaluations(batch).await {
        tracing::warn!(error = %e, dropped = batch.len(), "could not record trigger evaluations");
    }
    batch.clear();
}

impl EvaluationRecorder {
    pub fn start(store: Store, metrics: Metrics) -> Self {
        let (tx, mut rx) = mpsc::channel::<Msg>(QUEUE);
        tokio::spawn(async move {
            let mut batch = Vec::new();
            let mut waiters = Vec::new();
            // Whatever queued up while the last batch was written goes in the next.
            while let Some(first) = rx.recv().await {
                let mut next = Some(first);
                while let Some(msg) = next {
                    match msg {
                        Msg::Record(r) => batch.push(r),
                        Msg::Flush(w) => waiters.push(w),
                    }
                    if batch.len() >= BATCH {
                        write(&store, &mut batch).await;
                    }
                    next = rx.try_recv().ok();
                }
                write(&store, &mut batch).await;
                for w in waiters.drain(..) {
                    let _ = w.send(());
                }
            }
        });
        EvaluationRecorder { tx, metrics }
    }

    pub fn record(&self, r: EvaluationRecord) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(Msg::Record(r)) {
            self.metrics.evaluation_dropped();
        }
    }

    /// Waits until everything recorded so far is written.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}
