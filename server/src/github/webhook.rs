//! `POST /api/v1/github/webhook`: deliveries verified with
//! `X-Hub-Signature-256`, deduplicated by `X-GitHub-Delivery` (persisted), then
//! turned into an immediate PR sync, `github.push_received` or
//! `github.check_run_completed`.

use kandev_core::events::{CHECK_RUN_COMPLETED, PUSH_RECEIVED, Payload, SOURCE_GITHUB};
use kandev_core::webhook::{GithubDelivery, parse_github_delivery};

use super::GithubService;
use crate::error::{ServiceError, ServiceResult};
use crate::signature::verify;

/// One delivery as it arrived.
pub struct Delivery<'a> {
    pub event: Option<&'a str>,
    pub delivery_id: Option<&'a str>,
    pub signature: Option<&'a str>,
    pub body: &'a [u8],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryAck {
    Accepted(String),
    Duplicate,
    Ignored(String),
}

impl GithubService {
    pub async fn receive(&self, d: Delivery<'_>) -> ServiceResult<DeliveryAck> {
        let Some(secret) = &self.webhook_secret else {
            return Err(ServiceError::Forbidden(
                "GitHub deliveries are refused: KANDEV_GITHUB_WEBHOOK_SECRET is not set".into(),
            ));
        };
        // Verify before anything else, so nobody unauthenticated can burn delivery ids.
        if !d.signature.is_some_and(|s| verify(secret, d.body, s)) {
            return Err(ServiceError::Unauthorized(
                "invalid or missing X-Hub-Signature-256".into(),
            ));
        }
        let event = d
            .event
            .ok_or_else(|| ServiceError::BadRequest("missing X-GitHub-Event".into()))?;
        let id = d
            .delivery_id
            .ok_or_else(|| ServiceError::BadRequest("missing X-GitHub-Delivery".into()))?;
        let parsed = parse_github_delivery(event, d.body).map_err(ServiceError::BadRequest)?;
        if !self.store.claim_delivery(id, event, self.clock.now()).await? {
            tracing::debug!(delivery = id, "duplicate GitHub delivery ignored");
            return Ok(DeliveryAck::Duplicate);
        }
        match parsed {
            GithubDelivery::PullRequest {
                owner,
                repo,
                number,
                action,
            } => {
                let synced = self.sync_pr_now(&owner, &repo, number).await;
                Ok(DeliveryAck::Accepted(format!(
                    "pull_request {action}: synced {synced} linked row(s)"
                )))
            }
            GithubDelivery::Push(mut push) => {
                push.workspace_ids = self.store.workspaces_with_repository(&push.owner, &push.repo).await?;
                self.bus
                    .publish(PUSH_RECEIVED, SOURCE_GITHUB, Payload::Push(push))
                    .await
                    .map_err(|e| ServiceError::Internal(e.to_string()))?;
                Ok(DeliveryAck::Accepted("push published".into()))
            }
            GithubDelivery::CheckRun(mut run) => {
                run.workspace_ids = self.store.workspaces_with_repository(&run.owner, &run.repo).await?;
                self.bus
                    .publish(CHECK_RUN_COMPLETED, SOURCE_GITHUB, Payload::CheckRun(run))
                    .await
                    .map_err(|e| ServiceError::Internal(e.to_string()))?;
                Ok(DeliveryAck::Accepted("check run published".into()))
            }
            GithubDelivery::Ignored(reason) => Ok(DeliveryAck::Ignored(reason)),
        }
    }
}
