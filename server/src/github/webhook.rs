//! `POST /api/v1/github/webhook`: deliveries verified with
//! `X-Hub-Signature-256`, deduplicated by `X-GitHub-Delivery` (persisted), then
//! turned into an immediate PR sync, `github.push_received`,
//! `github.check_run_completed`, or a re-read of a moved repository's links.

use std::sync::Arc;

use kandev_core::events::{CHECK_RUN_COMPLETED, PUSH_RECEIVED, Payload, SOURCE_GITHUB};
use kandev_core::webhook::{GithubDelivery, parse_github_delivery};

use super::GithubService;
use crate::error::{ServiceError, ServiceResult};
use crate::signature::verify;
use crate::store::github_state::claim_delivery_on;

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
    /// Claims a delivery id that needs no event written with it; false
    /// (logged) for one already handled.
    async fn claim(&self, id: &str, event_name: &str) -> ServiceResult<bool> {
        let fresh = self.store.claim_delivery(id, event_name, self.clock.now()).await?;
        if !fresh {
            tracing::debug!(delivery = id, "duplicate GitHub delivery ignored");
        }
        Ok(fresh)
    }

    pub async fn receive(self: &Arc<Self>, d: Delivery<'_>) -> ServiceResult<DeliveryAck> {
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
        let event_name = d
            .event
            .ok_or_else(|| ServiceError::BadRequest("missing X-GitHub-Event".into()))?;
        let id = d
            .delivery_id
            .ok_or_else(|| ServiceError::BadRequest("missing X-GitHub-Delivery".into()))?;
        let parsed = parse_github_delivery(event_name, d.body).map_err(ServiceError::BadRequest)?;
        // Push and check-run deliveries become events: the claim of the
        // delivery id and the event are one transaction, so a crash can
        // neither lose the event nor announce it twice.
        let (event, what) = match parsed {
            GithubDelivery::Push(mut push) => {
                push.workspace_ids = self.store.workspaces_with_repository(&push.owner, &push.repo).await?;
                let event = self.outbox.event(PUSH_RECEIVED, SOURCE_GITHUB, Payload::Push(push));
                (event, "push published")
            }
            GithubDelivery::CheckRun(mut run) => {
                run.workspace_ids = self.store.workspaces_with_repository(&run.owner, &run.repo).await?;
                let event = self
                    .outbox
                    .event(CHECK_RUN_COMPLETED, SOURCE_GITHUB, Payload::CheckRun(run));
                (event, "check run published")
            }
            // A PR delivery syncs the PR now, and again shortly while GitHub's
            // reads lag the delivery; should the process die first, the
            // poller's next sweep finds the same change.
            GithubDelivery::PullRequest {
                owner,
                repo,
                number,
                action,
                seen,
            } => {
                if !self.claim(id, event_name).await? {
                    return Ok(DeliveryAck::Duplicate);
                }
                let (synced, behind) = self.sync_pr_now(&owner, &repo, number, &seen).await;
                if behind {
                    self.read_again_later(&owner, &repo, number, &seen);
                }
                return Ok(DeliveryAck::Accepted(format!(
                    "pull_request {action}: synced {synced} linked row(s)"
                )));
            }
            GithubDelivery::RepositoryMoved {
                old_owner,
                old_repo,
                new_owner,
                new_repo,
            } => {
                // Before the claim: a failure answers an error, so GitHub's
                // redelivery renames; following twice finds nothing the second time.
                self.follow_names((&old_owner, &old_repo), (&new_owner, &new_repo))
                    .await?;
                if !self.claim(id, event_name).await? {
                    return Ok(DeliveryAck::Duplicate);
                }
                self.follow_move(&old_owner, &old_repo);
                return Ok(DeliveryAck::Accepted(format!(
                    "repository moved: reading the open links of {old_owner}/{old_repo} again"
                )));
            }
            GithubDelivery::Ignored(reason) => {
                if !self.claim(id, event_name).await? {
                    return Ok(DeliveryAck::Duplicate);
                }
                return Ok(DeliveryAck::Ignored(reason));
            }
        };
        let mut tx = self.store.write_tx().await?;
        if !claim_delivery_on(&mut tx, id, event_name, self.clock.now()).await? {
            tracing::debug!(delivery = id, "duplicate GitHub delivery ignored");
            return Ok(DeliveryAck::Duplicate);
        }
        self.outbox.write(&mut tx, &event).await?;
        tx.commit().await?;
        self.outbox.committed(&event).await;
        Ok(DeliveryAck::Accepted(what.into()))
    }
}
