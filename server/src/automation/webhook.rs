//! The inbound automation webhook: `POST /api/v1/automations/webhook/{id}`.

use kandev_core::TriggerType;
use kandev_core::api::WebhookResult;
use kandev_core::webhook::{MAX_BODY_BYTES, delivery_key, webhook_data};

use super::fire::EvaluatedEvent;
use super::{AutomationService, FireOutcome, FireRequest};
use crate::error::{ServiceError, ServiceResult};
use crate::signature::{same_secret, verify};
use crate::store::StoreError;

/// What a webhook request's headers carried: its credentials, and the
/// name its sender gave the delivery (`kandev_core::webhook::delivery_key`).
pub struct WebhookHeaders<'a> {
    pub secret: Option<&'a str>,
    pub signature: Option<&'a str>,
    pub idempotency_key: Option<&'a [u8]>,
    pub github_delivery: Option<&'a [u8]>,
}

impl AutomationService {
    /// Checks run in the contract's order: id, automation, enabled, secret,
    /// webhook trigger, body size, then the delivery's name and the firing.
    pub async fn receive_webhook(
        &self,
        id: &str,
        auth: WebhookHeaders<'_>,
        body: &[u8],
    ) -> ServiceResult<(bool, WebhookResult)> {
        if id.trim().is_empty() {
            return Err(ServiceError::BadRequest("automation id required".into()));
        }
        let automation = match self.store.get_automation(id).await {
            Ok(a) => a,
            Err(StoreError::NotFound) => {
                return Err(ServiceError::NotFound("automation not found".into()));
            }
            Err(_) => return Err(ServiceError::NotFound("automation not found".into())),
        };
        if !automation.enabled {
            return Err(ServiceError::Conflict("automation is disabled".into()));
        }
        let secret = self.store.webhook_secret(id).await?;
        let by_header = auth.secret.is_some_and(|s| same_secret(s, &secret));
        let by_signature = auth.signature.is_some_and(|s| verify(&secret, body, s));
        if !(by_header || by_signature) {
            return Err(ServiceError::Unauthorized("invalid webhook secret".into()));
        }
        let Some(trigger) = automation
            .triggers
            .iter()
            .find(|t| t.trigger_type == TriggerType::Webhook && t.enabled)
        else {
            return Err(ServiceError::Conflict("no enabled webhook trigger".into()));
        };
        if body.len() > MAX_BODY_BYTES {
            return Err(ServiceError::TooLarge("webhook body is larger than 1 MiB".into()));
        }
        let dedup_key =
            delivery_key(auth.idempotency_key, auth.github_delivery).map_err(|e| ServiceError::BadRequest(e.into()))?;
        let outcome = self
            .fire_trigger(FireRequest {
                automation_id: automation.id.clone(),
                trigger_id: trigger.id.clone(),
                trigger_type: TriggerType::Webhook.as_str().into(),
                data: webhook_data(body),
                dedup_key,
            })
            .await
            .map_err(|e| {
                tracing::error!(automation_id = %automation.id, error = %e, "webhook firing failed");
                ServiceError::Internal("trigger failed".into())
            })?;
        let (outcome_kind, gate) = outcome.outcome();
        let evaluated = EvaluatedEvent {
            trigger_type: "webhook",
            subject: "webhook",
            summary: "inbound webhook",
        };
        self.note_evaluation((&automation.id, &trigger.id), &evaluated, outcome_kind, gate);
        Ok(match outcome {
            FireOutcome::Fired => (
                true,
                WebhookResult {
                    status: "triggered".into(),
                    reason: None,
                },
            ),
            FireOutcome::Skipped { reason, .. } | FireOutcome::Capped { reason } => (
                false,
                WebhookResult {
                    status: "skipped".into(),
                    reason: Some(reason),
                },
            ),
        })
    }
}
