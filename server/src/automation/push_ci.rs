//! The push and CI subscriber: `github.push_received` and
//! `github.check_run_completed`, published by the GitHub webhook receiver.
//! Start subscribes to both or to neither.

use std::sync::Arc;

use kandev_core::TriggerType;
use kandev_core::events::{CHECK_RUN_COMPLETED, CheckRunCompleted, Event, FromPayload, PUSH_RECEIVED, PushReceived};
use kandev_core::gate::{Gate, Outcome};
use kandev_core::trigger::config::{parse_ci, parse_push};
use kandev_core::trigger::detect::{check_ci, check_push, ci_data, ci_dedup_key, push_data, push_dedup_key};
use serde_json::Value;
use tokio::sync::Mutex;

use super::fire::EvaluatedEvent;
use super::{AutomationService, FireRequest};
use crate::bus::{BusError, Subscription, handler};
use crate::store::TriggerWithAutomation;

pub struct PushCiSubscriber {
    service: Arc<AutomationService>,
    subscriptions: Mutex<Vec<Subscription>>,
}

impl PushCiSubscriber {
    pub fn new(service: Arc<AutomationService>) -> Self {
        PushCiSubscriber {
            service,
            subscriptions: Mutex::new(vec![]),
        }
    }

    /// Idempotent; if the second subscription fails the first is rolled back.
    pub async fn start(&self) -> Result<(), BusError> {
        let mut guard = self.subscriptions.lock().await;
        if !guard.is_empty() {
            return Ok(());
        }
        let bus = self.service.bus().clone();
        let svc = self.service.clone();
        let push = bus
            .subscribe(
                PUSH_RECEIVED,
                "push",
                handler(move |e| {
                    let svc = svc.clone();
                    async move { handle_push(&svc, e).await }
                }),
            )
            .await?;
        let svc = self.service.clone();
        let ci = bus
            .subscribe(
                CHECK_RUN_COMPLETED,
                "ci",
                handler(move |e| {
                    let svc = svc.clone();
                    async move { handle_check_run(&svc, e).await }
                }),
            )
            .await;
        let ci = match ci {
            Ok(s) => s,
            Err(e) => {
                push.unsubscribe().await;
                tracing::error!(error = %e, "push/CI subscriber failed to start");
                return Err(e);
            }
        };
        guard.extend([push, ci]);
        tracing::info!("push/CI subscriber started");
        Ok(())
    }

    pub async fn stop(&self) {
        let subs: Vec<Subscription> = self.subscriptions.lock().await.drain(..).collect();
        for s in subs {
            s.unsubscribe().await;
        }
    }
}

/// One push or check-run event, ready for the detector pass.
struct Detected<'a> {
    ty: TriggerType,
    subject: &'a str,
    summary: String,
    workspace_ids: &'a [String],
    key: String,
    data: Value,
}

/// Runs one detector pass: list, parse, filter, fire.
async fn evaluate<F>(service: &AutomationService, ev: Detected<'_>, check: F)
where
    F: Fn(&TriggerWithAutomation) -> Result<(), Gate>,
{
    let Detected {
        ty,
        subject,
        summary,
        workspace_ids,
        key,
        data,
    } = ev;
    let evaluated = EvaluatedEvent {
        trigger_type: ty.as_str(),
        subject,
        summary: &summary,
    };
    let triggers = match service.triggers().enabled(ty).await {
        Ok(t) => t,
        Err(error) => {
            tracing::error!(%error, trigger_type = ty.as_str(), "listing triggers failed; event dropped");
            return;
        }
    };
    for t in triggers.iter() {
        let own_workspace = workspace_ids.contains(&t.automation_workspace_id);
        let note = |o: Outcome, g: Option<Gate>| {
            if own_workspace {
                service.note_evaluation((&t.automation_id, &t.trigger_id), &evaluated, o, g);
            }
        };
        if let Err(gate) = check(t) {
            note(Outcome::Stopped, Some(gate));
            continue;
        }
        let request = FireRequest {
            automation_id: t.automation_id.clone(),
            trigger_id: t.trigger_id.clone(),
            trigger_type: ty.as_str().into(),
            data: data.clone(),
            dedup_key: key.clone(),
        };
        match service.fire_trigger(request).await {
            Ok(outcome) => {
                let (o, g) = outcome.outcome();
                note(o, g);
            }
            Err(error) => tracing::error!(%error, trigger_id = %t.trigger_id, "firing failed"),
        }
    }
}

pub async fn handle_push(service: &AutomationService, event: Event) {
    let push = match PushReceived::from_payload(&event.data) {
        Ok(p) => p,
        Err(e) => {
            tracing::debug!(error = %e, "ignoring a malformed github.push_received payload");
            return;
        }
    };
    let summary = format!("push to {}/{}@{} ({})", push.owner, push.repo, push.branch, push.sha);
    let check = |t: &TriggerWithAutomation| {
        let cfg = parse_push(&t.config_raw).map_err(|e| {
            tracing::debug!(trigger_id = %t.trigger_id, error = %e, "invalid github_push config; trigger skipped");
            Gate::Config
        })?;
        check_push(&cfg, &push, &t.automation_workspace_id)
    };
    let ev = Detected {
        ty: TriggerType::GithubPush,
        subject: PUSH_RECEIVED,
        summary,
        workspace_ids: &push.workspace_ids,
        key: push_dedup_key(&push),
        data: push_data(&push),
    };
    evaluate(service, ev, check).await;
}

pub async fn handle_check_run(service: &AutomationService, event: Event) {
    let run = match CheckRunCompleted::from_payload(&event.data) {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(error = %e, "ignoring a malformed github.check_run_completed payload");
            return;
        }
    };
    let summary = format!(
        "{} {} on {}/{}@{}",
        run.check_name, run.conclusion, run.owner, run.repo, run.branch
    );
    let check = |t: &TriggerWithAutomation| {
        let cfg = parse_ci(&t.config_raw).map_err(|e| {
            tracing::debug!(trigger_id = %t.trigger_id, error = %e, "invalid github_ci config; trigger skipped");
            Gate::Config
        })?;
        check_ci(&cfg, &run, &t.automation_workspace_id)
    };
    let ev = Detected {
        ty: TriggerType::GithubCi,
        subject: CHECK_RUN_COMPLETED,
        summary,
        workspace_ids: &run.workspace_ids,
        key: ci_dedup_key(&run),
        data: ci_data(&run),
    };
    evaluate(service, ev, check).await;
}
