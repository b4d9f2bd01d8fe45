//! `fire_trigger`: the engine's admission path. Order: automation exists →
//! enabled → dedup key unseen → concurrency cap; then the run is written in
//! the firing's transaction, or `automation.triggered` is published for the
//! orchestrator.

use kandev_core::events::{AUTOMATION_TRIGGERED, AutomationTriggered, Payload, SOURCE_AUTOMATION};
use kandev_core::firing::{
    RunRow, SKIP_ALREADY_FIRED, SKIP_AUTOMATION_DISABLED, SKIP_AUTOMATION_MISSING, cap_reached, cap_reason,
    row_dedup_key,
};
use kandev_core::gate::{Gate, Outcome};
use kandev_core::run_status::RunStatus;
use serde_json::Value;

use super::AutomationService;
use super::evaluations::{EventNote, TriggerNote};
use crate::error::{ServiceError, ServiceResult};
use crate::orchestrator::Inline;
use crate::store::automations::mark_fired_on;
use crate::store::{NewRun, StoreError};

/// One firing handed to the engine.
#[derive(Debug, Clone)]
pub struct FireRequest {
    pub automation_id: String,
    pub trigger_id: String,
    /// A registry type, or `manual`.
    pub trigger_type: String,
    pub data: Value,
    pub dedup_key: String,
}

/// The event an evaluation was about, as the record shows it.
pub(crate) struct EvaluatedEvent<'a> {
    pub trigger_type: &'a str,
    pub subject: &'a str,
    pub summary: &'a str,
}

/// What admission decided. Errors (dedup query, cap count, publish) are `Err`.
#[derive(Debug, Clone, PartialEq)]
pub enum FireOutcome {
    Fired,
    /// Skipped without a row: missing, disabled or already fired.
    Skipped {
        reason: String,
        gate: Gate,
    },
    /// Skipped by the concurrency cap; a `skipped` row was written.
    Capped {
        reason: String,
    },
}

impl FireOutcome {
    pub fn outcome(&self) -> (Outcome, Option<Gate>) {
        match self {
            FireOutcome::Fired => (Outcome::Fired, None),
            FireOutcome::Skipped { gate: Gate::Dedup, .. } => (Outcome::Deduplicated, Some(Gate::Dedup)),
            FireOutcome::Skipped { gate, .. } => (Outcome::Stopped, Some(*gate)),
            FireOutcome::Capped { .. } => (Outcome::Capped, Some(Gate::ConcurrencyCap)),
        }
    }
}

impl AutomationService {
    pub async fn fire_trigger(&self, req: FireRequest) -> ServiceResult<FireOutcome> {
        // One read for every admission gate; the gates still apply in order.
        let (automation, seen, open) = match self.store.admission(&req.automation_id, &req.dedup_key).await {
            Ok(a) => a,
            Err(StoreError::NotFound) => {
                tracing::debug!(automation_id = %req.automation_id, "fire: automation no longer exists");
                return Ok(FireOutcome::Skipped {
                    reason: SKIP_AUTOMATION_MISSING.into(),
                    gate: Gate::AutomationExists,
                });
            }
            Err(e) => return Err(e.into()),
        };
        if !automation.enabled {
            tracing::debug!(automation_id = %automation.id, "fire: automation is disabled");
            return Ok(FireOutcome::Skipped {
                reason: SKIP_AUTOMATION_DISABLED.into(),
                gate: Gate::AutomationEnabled,
            });
        }
        if seen {
            tracing::debug!(automation_id = %automation.id, dedup_key = %req.dedup_key, "fire: this trigger has already fired");
            return Ok(FireOutcome::Skipped {
                reason: SKIP_ALREADY_FIRED.into(),
                gate: Gate::Dedup,
            });
        }
        let capped = cap_reached(automation.max_concurrent_runs, open);
        let now = self.clock.now();
        if capped {
            let reason = cap_reason(automation.max_concurrent_runs);
            let row = NewRun {
                automation_id: automation.id.clone(),
                trigger_id: req.trigger_id.clone(),
                trigger_type: req.trigger_type.clone(),
                task_id: String::new(),
                status: RunStatus::Skipped,
                dedup_key: row_dedup_key(&req.trigger_type, &req.dedup_key, RunRow::CapSkipped),
                trigger_data: req.data.clone(),
                error_message: reason.clone(),
                event_id: String::new(),
            };
            match self.store.insert_run(&row, now).await {
                Ok(run_id) => {
                    self.metrics.run(RunStatus::Skipped.as_str());
                    self.live
                        .notify(&automation.workspace_id, kandev_core::api::LIVE_RUN_UPDATED, &run_id);
                }
                // Another replica recorded this very firing first.
                Err(StoreError::Conflict(_)) => {
                    tracing::debug!(automation_id = %automation.id, dedup_key = %req.dedup_key, "cap-skip already recorded")
                }
                Err(e) => {
                    tracing::warn!(automation_id = %automation.id, error = %e, "could not write the cap-skip run row")
                }
            }
        }
        if capped {
            if !req.trigger_id.is_empty()
                && let Err(e) = self.store.set_trigger_last_evaluated_at(&req.trigger_id, now).await
            {
                tracing::warn!(trigger_id = %req.trigger_id, error = %e, "could not move last_evaluated_at");
            }
            return Ok(FireOutcome::Capped {
                reason: cap_reason(automation.max_concurrent_runs),
            });
        }
        let triggered = AutomationTriggered {
            automation_id: automation.id.clone(),
            trigger_id: req.trigger_id.clone(),
            trigger_type: req.trigger_type.clone(),
            trigger_data: req.data,
            dedup_key: req.dedup_key.clone(),
        };
        // The run in this firing's own transaction (its id stands in for the
        // event it needs no more); the event is the path for what that cannot
        // write, and for a service wired without an orchestrator.
        if let Some(orchestrator) = self.orchestrator() {
            match orchestrator
                .create_with_firing(&automation, &triggered, &crate::store::new_id(), now)
                .await
            {
                Inline::Created => {
                    log_fired(&triggered);
                    return Ok(FireOutcome::Fired);
                }
                Inline::AlreadyFired => {
                    tracing::debug!(automation_id = %automation.id, dedup_key = %req.dedup_key, "fire: this trigger has already fired");
                    return Ok(FireOutcome::Skipped {
                        reason: SKIP_ALREADY_FIRED.into(),
                        gate: Gate::Dedup,
                    });
                }
                Inline::HandOff => {}
            }
        }
        let event = self.outbox.event(
            AUTOMATION_TRIGGERED,
            SOURCE_AUTOMATION,
            Payload::AutomationTriggered(triggered.clone()),
        );
        // The anchors move with the event, in one transaction: a crash after
        // the commit loses nothing (the relay sends it), one before it lets
        // the source event come again.
        let written: crate::store::StoreResult<()> = async {
            let mut tx = self.store.write_tx().await?;
            mark_fired_on(&mut tx, &req.trigger_id, &automation.id, now).await?;
            self.outbox.write(&mut tx, &event).await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        written.map_err(|e| ServiceError::Internal(e.to_string()))?;
        self.outbox.committed(&event).await;
        log_fired(&triggered);
        Ok(FireOutcome::Fired)
    }

    /// Records one evaluation of one trigger and counts it.
    pub(crate) fn note_evaluation(
        &self,
        target: (&str, &str),
        event: &EvaluatedEvent<'_>,
        outcome: Outcome,
        gate: Option<Gate>,
    ) {
        let mut notes = self.collect_evaluations(event);
        notes.note(target, outcome, gate);
    }

    /// Collects one event's evaluations; they are counted and recorded
    /// together when the collector is dropped.
    pub(crate) fn collect_evaluations<'s>(&'s self, event: &EvaluatedEvent<'_>) -> Evaluations<'s> {
        Evaluations {
            service: self,
            event: Some(EventNote {
                trigger_type: event.trigger_type.to_string(),
                event_subject: event.subject.to_string(),
                summary: event.summary.to_string(),
                at: self.clock.now(),
            }),
            notes: vec![],
        }
    }
}

fn log_fired(req: &AutomationTriggered) {
    // The same fields whichever path wrote the run.
    tracing::info!(
        automation_id = %req.automation_id,
        trigger_id = %req.trigger_id,
        trigger_type = %req.trigger_type,
        dedup_key = %req.dedup_key,
        "automation fired"
    );
}

/// One event's evaluations, recorded as one batch (a busy automation's
/// thousand triggers cost one queue message and four counter updates).
pub(crate) struct Evaluations<'s> {
    service: &'s AutomationService,
    event: Option<EventNote>,
    notes: Vec<TriggerNote>,
}

impl Evaluations<'_> {
    pub fn note(&mut self, target: (&str, &str), outcome: Outcome, gate: Option<Gate>) {
        self.notes.push(TriggerNote {
            automation_id: target.0.to_string(),
            trigger_id: target.1.to_string(),
            outcome,
            gate,
        });
    }
}

impl Drop for Evaluations<'_> {
    fn drop(&mut self) {
        let Some(event) = self.event.take() else { return };
        let notes = std::mem::take(&mut self.notes);
        for outcome in [Outcome::Fired, Outcome::Deduplicated, Outcome::Capped, Outcome::Stopped] {
            let n = notes.iter().filter(|x| x.outcome == outcome).count() as u64;
            if n > 0 {
                self.service
                    .metrics
                    .evaluations(&event.trigger_type, outcome.as_str(), n);
            }
        }
        self.service.recorder.record(event, notes);
    }
}
