//! The bounded, persistent record of recent trigger evaluations ("why didn't
//! it fire?"). Each event's records queue as one message off the evaluation
//! path; the writer folds them into a ring per automation (its newest
//! `KEEP_PER_AUTOMATION`) and writes the rings once a second, so a second
//! of events costs at most one ring's worth of rows per automation, not a
//! row per trigger per event.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use kandev_core::gate::{Gate, Outcome};

use crate::metrics::Metrics;
use crate::store::evaluations::KEEP_PER_AUTOMATION;
use crate::store::{EvaluationRecord, Store};

/// What every evaluation of one event shares.
#[derive(Debug)]
pub struct EventNote {
    pub trigger_type: String,
    pub event_subject: String,
    pub summary: String,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// One trigger's evaluation of an event.
#[derive(Debug)]
pub struct TriggerNote {
    pub automation_id: String,
    pub trigger_id: String,
    pub outcome: Outcome,
    pub gate: Option<Gate>,
}

/// A record waiting in its automation's ring.
struct Pending {
    event: Arc<EventNote>,
    note: TriggerNote,
}

impl Pending {
    fn record(self) -> EvaluationRecord {
        EvaluationRecord {
            automation_id: self.note.automation_id,
            trigger_id: self.note.trigger_id,
            trigger_type: self.event.trigger_type.clone(),
            event_subject: self.event.event_subject.clone(),
            summary: self.event.summary.clone(),
            outcome: self.note.outcome,
            gate: self.note.gate,
            at: self.event.at,
        }
    }
}

enum Msg {
    /// One event's evaluations, queued as one message.
    Event(Arc<EventNote>, Vec<TriggerNote>),
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

/// How long records gather before they are written (a reader's flush
/// writes at once).
const WRITE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Events waiting to be folded; past this an event's records are dropped
/// (and counted) rather than held in memory or making the evaluation wait.
const QUEUE: usize = 20_000;

/// Pending records, newest last, at most `KEEP_PER_AUTOMATION` per automation.
#[derive(Default)]
struct Rings(HashMap<String, VecDeque<Pending>>);

impl Rings {
    fn push(&mut self, event: &Arc<EventNote>, note: TriggerNote) {
        let ring = match self.0.get_mut(&note.automation_id) {
            Some(r) => r,
            None => self.0.entry(note.automation_id.clone()).or_default(),
        };
        if ring.len() as i64 >= KEEP_PER_AUTOMATION {
            ring.pop_front();
        }
        ring.push_back(Pending {
            event: event.clone(),
            note,
        });
    }

    fn push_event(&mut self, event: &Arc<EventNote>, notes: Vec<TriggerNote>) {
        for n in notes {
            self.push(event, n);
        }
    }

    fn take(&mut self) -> Vec<EvaluationRecord> {
        self.0.drain().flat_map(|(_, ring)| ring).map(Pending::record).collect()
    }
}

/// Rows an automation gets before its table rows are trimmed again: the
/// trim is a sorted delete, so it runs once per this many rows rather than
/// on every write (an automation holds at most `KEEP_PER_AUTOMATION` plus
/// this many).
const TRIM_AFTER: usize = (KEEP_PER_AUTOMATION / 2) as usize;

async fn write(store: &Store, rings: &mut Rings, since_trim: &mut HashMap<String, usize>, counters: &TraceCounters) {
    let batch = rings.take();
    if batch.is_empty() {
        return;
    }
    for r in &batch {
        *since_trim.entry(r.automation_id.clone()).or_default() += 1;
    }
    let trim: Vec<String> = since_trim
        .iter()
        .filter(|(_, n)| **n >= TRIM_AFTER)
        .map(|(a, _)| a.clone())
        .collect();
    let started = Instant::now();
    match store.record_evaluations(&batch, &trim).await {
        Ok(()) => {
            counters.written.fetch_add(batch.len() as u64, Ordering::Relaxed);
            for a in &trim {
                since_trim.remove(a);
            }
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
            let mut since_trim = HashMap::new();
            let mut waiters: Vec<oneshot::Sender<()>> = Vec::new();
            let mut due: Option<tokio::time::Instant> = None;
            loop {
                // Records gather in the rings until the interval is up (or a
                // reader asks): a write costs at most one ring per automation,
                // however many events arrived meanwhile.
                let timer = async {
                    match due {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    msg = rx.recv() => match msg {
                        Some(Msg::Event(event, notes)) => {
                            rings.push_event(&event, notes);
                            due.get_or_insert_with(|| tokio::time::Instant::now() + WRITE_EVERY);
                            continue;
                        }
                        Some(Msg::Flush(w)) => waiters.push(w),
                        None => {
                            write(&store, &mut rings, &mut since_trim, &writer_counters).await;
                            return;
                        }
                    },
                    _ = timer => {}
                }
                // Take whatever else is queued before writing.
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Msg::Event(event, notes) => rings.push_event(&event, notes),
                        Msg::Flush(w) => waiters.push(w),
                    }
                }
                write(&store, &mut rings, &mut since_trim, &writer_counters).await;
                due = None;
                for w in waiters.drain(..) {
                    let _ = w.send(());
                }
            }
        });
        EvaluationRecorder { tx, metrics, counters }
    }

    /// Queues one event's evaluations (one message, however many triggers).
    pub fn record(&self, event: EventNote, notes: Vec<TriggerNote>) {
        if notes.is_empty() {
            return;
        }
        self.counters.recorded.fetch_add(notes.len() as u64, Ordering::Relaxed);
        let n = notes.len();
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(Msg::Event(Arc::new(event), notes)) {
            for _ in 0..n {
                self.metrics.evaluation_dropped();
            }
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

    fn push(rings: &mut Rings, automation: &str, n: usize) {
        let event = Arc::new(EventNote {
            trigger_type: "github_pr_merged".into(),
            event_subject: "github.task_pr.updated".into(),
            summary: format!("event {n}"),
            at: Utc::now(),
        });
        let note = TriggerNote {
            automation_id: automation.into(),
            trigger_id: format!("t{n}"),
            outcome: Outcome::Stopped,
            gate: None,
        };
        rings.push(&event, note);
    }

    #[test]
    fn a_ring_keeps_only_each_automations_newest_records() {
        let mut rings = Rings::default();
        let keep = KEEP_PER_AUTOMATION as usize;
        for n in 0..keep + 50 {
            push(&mut rings, "a", n);
        }
        push(&mut rings, "b", 0);
        let taken = rings.take();
        let a: Vec<_> = taken.iter().filter(|r| r.automation_id == "a").collect();
        assert_eq!(a.len(), keep);
        assert_eq!(a[0].summary, "event 50", "the oldest fifty fell out");
        assert_eq!(a[keep - 1].summary, format!("event {}", keep + 49));
        assert_eq!(taken.iter().filter(|r| r.automation_id == "b").count(), 1);
        assert!(rings.take().is_empty(), "taking empties the rings");
    }
}
