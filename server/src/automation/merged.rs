//! The "Pull request merged" subscriber: consumes `github.task_pr.updated`,
//! runs the per-event gates once, then the per-trigger gates for each enabled
//! `github_pr_merged` trigger in `(created_at, id)` order.

use std::sync::Arc;

use kandev_core::TriggerType;
use kandev_core::events::{Event, FromPayload, TASK_PR_UPDATED};
use kandev_core::gate::{Gate, Outcome};
use kandev_core::merged::{FiredSet, check_event, check_origin, check_trigger, dedup_key, trigger_data};
use kandev_core::task_pr::TaskPr;
use kandev_core::trigger::config::parse_merged;
use tokio::sync::Mutex;

use super::fire::EvaluatedEvent;
use super::{AutomationService, FireRequest};
use crate::bus::{BusError, Subscription, handler};

/// Owns the `github.task_pr.updated` subscription. Start and stop are
/// idempotent; it spawns nothing of its own.
pub struct MergedPrSubscriber {
    service: Arc<AutomationService>,
    subscription: Mutex<Option<Subscription>>,
}

impl MergedPrSubscriber {
    pub fn new(service: Arc<AutomationService>) -> Self {
        MergedPrSubscriber {
            service,
            subscription: Mutex::new(None),
        }
    }

    /// Subscribes even when no task-origin lookup is wired (events then fail
    /// closed until one is), and logs exactly once per start which state it found.
    pub async fn start(&self) -> Result<(), BusError> {
        let mut guard = self.subscription.lock().await;
        if guard.is_some() {
            return Ok(());
        }
        let service = self.service.clone();
        let sub = self
            .service
            .bus()
            .subscribe(
                TASK_PR_UPDATED,
                "merged",
                handler(move |event| {
                    let service = service.clone();
                    async move { handle(&service, event).await }
                }),
            )
            .await?;
        *guard = Some(sub);
        if self.service.task_origin_lookup().is_none() {
            tracing::warn!(
                trigger_type = "github_pr_merged",
                "no task-origin lookup is wired: github_pr_merged will not fire; merged-PR events fail closed until the lookup is available"
            );
        } else {
            tracing::info!(trigger_type = "github_pr_merged", "merged-PR subscription active");
        }
        Ok(())
    }

    pub async fn stop(&self) {
        if let Some(sub) = self.subscription.lock().await.take() {
            sub.unsubscribe().await;
        }
    }
}

fn describe(pr: &TaskPr) -> String {
    let base = if pr.base_branch.is_empty() {
        String::new()
    } else {
        format!(" into {}", pr.base_branch)
    };
    format!(
        "{}/{}#{} merged{base} (task {})",
        pr.owner, pr.repo, pr.pr_number, pr.task_id
    )
}

/// Evaluates one event. Public so tests and benchmarks can drive it directly.
pub async fn handle(service: &AutomationService, event: Event) {
    // Gate 1: either bus form normalises into the same validated row.
    let pr = match TaskPr::from_payload(&event.data) {
        Ok(pr) => pr,
        Err(e) => {
            tracing::debug!(error = %e, "ignoring a malformed github.task_pr.updated payload");
            return;
        }
    };
    // Gates 2–5.
    if let Err(gate) = check_event(&pr) {
        tracing::trace!(task_id = %pr.task_id, gate = gate.as_str(), "merged-PR event stopped");
        return;
    }
    // Gates 6–7: one lookup per event, read live from the service.
    let Some(lookup) = service.task_origin_lookup() else {
        tracing::debug!(task_id = %pr.task_id, "no task-origin lookup wired; merged-PR event fails closed");
        return;
    };
    let origin = lookup.task_workspace_and_automation_origin(&pr.task_id).await;
    let origin = match check_origin(origin.as_ref()) {
        Ok(o) => o.clone(),
        Err(gate) => {
            tracing::debug!(task_id = %pr.task_id, gate = gate.as_str(), "merged-PR event stopped");
            return;
        }
    };
    // Only the resolved workspace's triggers can pass gate 8; an event
    // without one reaches none.
    let triggers = match service
        .triggers()
        .enabled_in(TriggerType::GithubPrMerged, &origin.workspace_id)
        .await
    {
        Ok(t) => t,
        Err(error) => {
            tracing::error!(%error, task_id = %pr.task_id, "listing github_pr_merged triggers failed; event dropped");
            return;
        }
    };
    let key = dedup_key(&pr);
    let data = trigger_data(&pr);
    let summary = describe(&pr);
    let evaluated = EvaluatedEvent {
        trigger_type: "github_pr_merged",
        subject: TASK_PR_UPDATED,
        summary: &summary,
    };
    let mut fired = FiredSet::new();
    let mut notes = service.collect_evaluations(&evaluated);
    for t in triggers.iter() {
        // Events of other workspaces are not this automation's business: they
        // leave no evaluation record.
        let own_workspace = !origin.workspace_id.is_empty() && origin.workspace_id == t.automation_workspace_id;
        let mut note = |outcome: Outcome, gate: Option<Gate>| {
            if own_workspace {
                notes.note((&t.automation_id, &t.trigger_id), outcome, gate);
            }
        };
        // Parsed once when the index was built; borrowed, not copied.
        let fresh;
        let parsed = match &t.merged {
            Some(p) => p.as_ref(),
            None => {
                fresh = parse_merged(&t.config_raw).map_err(|e| e.to_string());
                fresh.as_ref()
            }
        };
        let cfg = match parsed {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(trigger_id = %t.trigger_id, error = %e, "invalid github_pr_merged config; trigger skipped");
                note(Outcome::Stopped, Some(Gate::Config));
                continue;
            }
        };
        if let Err(gate) = check_trigger(&origin.workspace_id, &t.automation_workspace_id, cfg, &pr) {
            note(Outcome::Stopped, Some(gate));
            continue;
        }
        // Gate 11: added before firing and kept even if the firing errors.
        if !fired.admit(&t.automation_id, &key) {
            note(Outcome::Deduplicated, Some(Gate::FiredSet));
            continue;
        }
        let request = FireRequest {
            automation_id: t.automation_id.clone(),
            trigger_id: t.trigger_id.clone(),
            trigger_type: TriggerType::GithubPrMerged.as_str().into(),
            data: data.clone(),
            dedup_key: key.clone(),
        };
        match service.fire_trigger(request).await {
            Ok(outcome) => {
                let (o, g) = outcome.outcome();
                note(o, g);
            }
            Err(error) => {
                tracing::error!(%error, automation_id = %t.automation_id, trigger_id = %t.trigger_id, "github_pr_merged firing failed");
            }
        }
    }
}
