//! The bounded, persistent record of recent trigger evaluations ("why didn't
//! it fire?"). Records queue off the evaluation path; the writer folds
//! whatever queued up into a ring per automation (its newest
//! `KEEP_PER_AUTOMATION`), so a burst of events costs at most one ring's
//! worth of rows per automation instead of a row per trigger per event.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::metrics::Metrics;
use crate::store::evaluations::KEEP_PER_AUTOMATION;
use crate::store::{EvaluationRecord, Store};

enum Msg {
    Record(EvaluationRecord),
    Flush(oneshot::Sender<()>),
}

/// What the writer has done, for the bench and metrics.
#[derive(Debug, Default)]
pub struct TraceCounters {
    /// Records handed to the recorder.
    pub recorded: AtomicU64,
    /// Rows written: older records of a ring that overflowed before a write
    /// are never written.
    pub written: AtomicU64,
    /// Time spent writing, in microseconds.
    pub write_micros: AtomicU64,
}

#[derive(Clone)]
pub struct EvaluationRecorder {
    tx: mpsc::Sender<Msg>,
    metrics: Metrics,
    counters: Arc<TraceCounters>,
}

/// Records waiting to be folded; past this a record is dropped (and counted)
/// rather than held in memory or making the evaluation wait.
const QUEUE: usize = 20_000;

/// Pending records, newest last, at most `KEEP_PER_AUTOMATION` per automation.
#[derive(Default)]
struct Rings(HashMap<String, VecDeque<EvaluationRecord>>);

impl Rings {
    fn push(&mut self, r: EvaluationRecord) {
        let ring = self.0.entry(r.automation_id.clone()).or_default();
        if ring.len() as i64 >= KEEP_PER_AUTOMATION {
            ring.pop_front();
        }
        ring.push_back(r);
    }

    fn take(&mut self) -> Vec<EvaluationRecord> {
        self.0.drain().flat_map(|(_, ring)| ring).collect()
    }
}

async fn write(store: &Store, rings: &mut Rings, counters: &TraceCounters) {
    let batch = rings.take();
    if batch.is_empty() {
        return;
    }
    let started = Instant::now();
    match store.record_evaluations(&batch).await {
        Ok(()) => {
            counters.written.fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
        Err(e) => tracing::warn!(error = %e, dropped = batch.len(), "could not record trigger evaluations"),
    }
    counters
        .write_micros
        .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
}

impl EvaluationRecorder {
    pub fn start(store: Store, metrics: Metrics) -> Self {
        let (tx, mut rx) = mpsc::channel::<Msg>(QUEUE);
        let counters = Arc::new(TraceCounters::default());
        let writer_counters = counters.clone();
        tokio::spawn(async move {
            let mut rings = Rings::default();
            let mut waiters = Vec::new();
            // Whatever queued up while the last write ran is folded into the next.
            while let Some(first) = rx.recv().await {
                let mut next = Some(first);
                while let Some(msg) = next {
                    match msg {
                        Msg::Record(r) => rings.push(r),
                        Msg::Flush(w) => waiters.push(w),
                    }
                    next = rx.try_recv().ok();
                }
                write(&store, &mut rings, &writer_counters).await;
                for w in waiters.drain(..) {
                    let _ = w.send(());
                }
            }
        });
        EvaluationRecorder { tx, metrics, counters }
    }

    pub fn record(&self, r: EvaluationRecord) {
        self.counters.recorded.fetch_add(1, Ordering::Relaxed);
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

    pub fn counters(&self) -> &TraceCounters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use kandev_core::gate::Outcome;

    fn rec(automation: &str, n: usize) -> EvaluationRecord {
        EvaluationRecord {
            automation_id: automation.into(),
            trigger_id: format!("t{n}"),
            trigger_type: "github_pr_merged".into(),
            event_subject: "github.task_pr.updated".into(),
            summary: format!("event {n}"),
            outcome: Outcome::Stopped,
            gate: None,
            at: Utc::now(),
        }
    }

    #[test]
    fn a_ring_keeps_only_each_automations_newest_records() {
        let mut rings = Rings::default();
        let keep = KEEP_PER_AUTOMATION as usize;
        for n in 0..keep + 50 {
            rings.push(rec("a", n));
        }
        rings.push(rec("b", 0));
        let taken = rings.take();
        let a: Vec<_> = taken.iter().filter(|r| r.automation_id == "a").collect();
        assert_eq!(a.len(), keep);
        assert_eq!(a[0].summary, "event 50", "the oldest fifty fell out");
        assert_eq!(a[keep - 1].summary, format!("event {}", keep + 49));
        assert_eq!(taken.iter().filter(|r| r.automation_id == "b").count(), 1);
        assert!(rings.take().is_empty(), "taking empties the rings");
    }
}
