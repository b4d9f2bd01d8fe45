//! The cron scheduler: once at start, then every `KANDEV_SCHEDULER_INTERVAL`,
//! fire each enabled `scheduled` trigger whose next occurrence after its anchor
//! (`last_evaluated_at`, else `created_at`) has come.

use std::sync::Arc;
use std::time::Duration;

use kandev_core::TriggerType;
use kandev_core::cron::{Schedule, is_due, scheduled_dedup_key};
use kandev_core::trigger::config::parse_scheduled;
use serde_json::json;

use super::fire::EvaluatedEvent;
use super::{AutomationService, FireRequest};
use crate::coord::{Leases, lease};
use crate::periodic::Periodic;
use chrono::SecondsFormat;

pub struct Scheduler {
    service: Arc<AutomationService>,
    interval: Duration,
    leases: Arc<Leases>,
    running: Periodic,
}

impl Scheduler {
    pub fn new(service: Arc<AutomationService>, interval: Duration, leases: Arc<Leases>) -> Self {
        Scheduler {
            service,
            interval,
            leases,
            running: Periodic::default(),
        }
    }

    pub async fn start(&self) {
        let svc = self.service.clone();
        self.running
            .start_singleton(self.interval, self.leases.clone(), lease::SCHEDULER, move || {
                let svc = svc.clone();
                async move { tick(&svc).await }
            })
            .await;
    }

    pub async fn stop(&self) {
        self.running.stop().await;
    }
}

/// One pass over the scheduled triggers.
pub async fn tick(service: &AutomationService) {
    let triggers = match service
        .store()
        .list_enabled_triggers_by_type(TriggerType::Scheduled)
        .await
    {
        Ok(t) => t,
        Err(error) => {
            tracing::error!(%error, "listing scheduled triggers failed");
            return;
        }
    };
    let now = service.clock().now();
    for t in triggers {
        let cfg = match parse_scheduled(&t.config_raw) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(trigger_id = %t.trigger_id, error = %e, "invalid scheduled config; trigger skipped");
                continue;
            }
        };
        // A stored schedule is untrusted (saved before today's bounds, or by
        // hand): one that no longer parses is logged and skipped, never fired.
        if !cfg.cron_expression.trim().is_empty()
            && let Err(error) = Schedule::parse(&cfg.cron_expression, &cfg.timezone)
        {
            tracing::warn!(trigger_id = %t.trigger_id, expression = %cfg.cron_expression, %error, "stored schedule is invalid; trigger skipped");
            continue;
        }
        let anchor = t.last_evaluated_at.unwrap_or(t.created_at);
        if !is_due(&cfg.cron_expression, &cfg.timezone, anchor, now) {
            continue;
        }
        let request = FireRequest {
            automation_id: t.automation_id.clone(),
            trigger_id: t.trigger_id.clone(),
            trigger_type: TriggerType::Scheduled.as_str().into(),
            data: json!({"source": "scheduled", "timestamp": now.to_rfc3339_opts(SecondsFormat::Secs, true)}),
            dedup_key: scheduled_dedup_key(&t.trigger_id, now),
        };
        match service.fire_trigger(request).await {
            Ok(outcome) => {
                let (o, g) = outcome.outcome();
                let summary = format!(
                    "schedule {} ({})",
                    cfg.cron_expression.trim(),
                    if cfg.timezone.is_empty() { "UTC" } else { &cfg.timezone }
                );
                let evaluated = EvaluatedEvent {
                    trigger_type: "scheduled",
                    subject: "scheduler",
                    summary: &summary,
                };
                service.note_evaluation((&t.automation_id, &t.trigger_id), &evaluated, o, g);
            }
            Err(error) => {
                tracing::error!(%error, trigger_id = %t.trigger_id, "scheduled firing failed")
            }
        }
    }
}
