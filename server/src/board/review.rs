//! Review hand-off, approve and reject: the only ways into and out of
//! `human_review`. Approving a task whose hand-off bound a PR starts the merger.

use async_trait::async_trait;
use kandev_core::api::{
    Actor, ApproveRequest, ApproveResponse, EVENT_APPROVED, EVENT_MERGE_CANCELLED, EVENT_MERGE_REQUESTED,
    EVENT_REJECTED, EVENT_REVIEW_REQUESTED, RejectRequest, ReviewHandoff, ReviewRequest, Task,
};
use kandev_core::board::{Approval, PrRef, TaskStatus, approve, hand_off_to_review, reject, task_bound_pr};
use serde_json::json;

use super::BoardService;
use crate::error::{ServiceError, ServiceResult};

/// The merger, as approve sees it. The job is persisted before the task moves
/// to `running`, so a running merge task always has a job behind it.
#[async_trait]
pub trait MergeStarter: Send + Sync {
    /// `approved`: the head the person approved, when the approval named it.
    async fn prepare(&self, task: &Task, pr: &PrRef, approved: Option<&str>) -> ServiceResult<()>;
    /// The approval lost a race: forget the prepared job.
    async fn abandon(&self, task_id: &str);
    /// Starts the job (at once, not on a timer).
    async fn start(&self, task_id: &str);
    /// Before a cancelled job is deleted: undo what GitHub still holds (a
    /// merge-queue entry). An error leaves the merge running.
    async fn withdraw(&self, task_id: &str) -> ServiceResult<()>;
}

/// Links a PR to a task (reads it from GitHub when it can).
#[async_trait]
pub trait PrLinker: Send + Sync {
    async fn link(&self, task: &Task, pr: &PrRef) -> ServiceResult<()>;
}

impl BoardService {
    /// Hands a task to human review, binding the PR as structured data.
    pub async fn request_review(&self, id: &str, req: ReviewRequest, actor: &Actor) -> ServiceResult<Task> {
        let task = self.get(id).await?;
        kandev_core::bounds::text("summary", req.summary.as_deref().unwrap_or_default())
            .map_err(|e| ServiceError::Invalid(e.0))?;
        let pr = match req
            .pr_url
            .as_deref()
            .map(kandev_core::schema::trim_space)
            .filter(|u| !u.is_empty())
        {
            Some(url) => Some(
                PrRef::parse(url)
                    .ok_or_else(|| ServiceError::Invalid(format!("pr_url is not a GitHub pull request: {url}")))?,
            ),
            None => None,
        };
        let to = hand_off_to_review(task.status).map_err(|e| ServiceError::Conflict(e.to_string()))?;
        let handoff = ReviewHandoff {
            summary: req.summary.unwrap_or_default(),
            pr_url: pr.as_ref().map(PrRef::url).unwrap_or_default(),
            pr: pr.clone(),
        };
        // The move and the handoff (which binds the PR) together.
        self.move_status_recording(
            &task,
            task.status,
            to,
            actor,
            (
                EVENT_REVIEW_REQUESTED,
                serde_json::to_value(&handoff).unwrap_or_default(),
            ),
        )
        .await?;
        if let Some(pr) = &pr {
            let linker = self.linker.read().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(linker) = linker
                && let Err(e) = linker.link(&task, pr).await
            {
                tracing::warn!(task_id = %task.id, error = %e, "could not link the review PR");
            }
        }
        self.get(id).await
    }

    /// The PR this approval acts on: the latest hand-off of the current review
    /// cycle; comments only for legacy tasks with no hand-off at all.
    pub async fn bound_pr(&self, id: &str) -> ServiceResult<Option<PrRef>> {
        let events = self.store.list_events(id).await?;
        let comments = self.store.list_comments(id).await?;
        Ok(task_bound_pr(&events, &comments))
    }

    pub async fn approve(&self, id: &str, req: ApproveRequest, actor: &Actor) -> ServiceResult<ApproveResponse> {
        let task = self.get(id).await?;
        if task.status != TaskStatus::HumanReview {
            return Err(ServiceError::Conflict(format!(
                "task is not in human_review (it is {})",
                task.status.as_str()
            )));
        }
        // Find the PR before mutating anything, so a lost race leaves no orphan events.
        let bound = self.bound_pr(id).await?;
        let (approval, to) = approve(task.status, bound).map_err(|e| ServiceError::Conflict(e.to_string()))?;
        let reason = req.reason.unwrap_or_default();
        kandev_core::bounds::text("reason", &reason).map_err(|e| ServiceError::Invalid(e.0))?;
        let head = req
            .head_sha
            .as_deref()
            .map(kandev_core::merger::approved_head)
            .transpose()
            .map_err(ServiceError::Invalid)?;
        match approval {
            Approval::Done => {
                self.move_status_recording(
                    &task,
                    TaskStatus::HumanReview,
                    to,
                    actor,
                    (EVENT_APPROVED, json!({"reason": reason})),
                )
                .await?;
                Ok(ApproveResponse {
                    status: "done".into(),
                    pr_url: None,
                })
            }
            Approval::Merge(pr) => {
                self.check_registered(&task, &pr).await?;
                let starter = self
                    .merge
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
                    .ok_or_else(|| ServiceError::Unavailable("the merger is not running".into()))?;
                // One job per task, decided by the database: a second approve
                // racing this one gets a 409 and touches nothing.
                starter.prepare(&task, &pr, head.as_deref()).await?;
                if let Err(e) = self
                    .move_status_for_merge(&task, TaskStatus::HumanReview, to, json!({}), actor)
                    .await
                {
                    starter.abandon(&task.id).await;
                    return Err(e);
                }
                self.record(
                    &task,
                    EVENT_MERGE_REQUESTED,
                    json!({"reason": reason, "pr_url": pr.url(), "owner": pr.owner, "repo": pr.repo, "number": pr.number}),
                    actor,
                )
                .await?;
                starter.start(&task.id).await;
                Ok(ApproveResponse {
                    status: "merge_triggered".into(),
                    pr_url: Some(pr.url()),
                })
            }
        }
    }

    /// Stops the merge of an approved task: its job goes, and the task goes
    /// back to human review with an event naming who cancelled it. The PR is
    /// left as it is.
    pub async fn cancel_merge(&self, id: &str, actor: &Actor) -> ServiceResult<Task> {
        let task = self.get(id).await?;
        let to = kandev_core::board::cancel_merge(task.status).map_err(|e| ServiceError::Conflict(e.to_string()))?;
        let merger = self.merge.read().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(m) = merger {
            m.withdraw(id).await?;
        }
        if !self.store.delete_merger_job_if_any(id).await? {
            return Err(ServiceError::Conflict("no merge of this task is in progress".into()));
        }
        // The merger's kind of move (the job row is gone already), with its event.
        self.swap(
            &task,
            task.status,
            to,
            json!({}),
            actor,
            true,
            Some((EVENT_MERGE_CANCELLED, json!({}))),
        )
        .await?;
        self.get(id).await
    }

    pub async fn reject(&self, id: &str, req: RejectRequest, actor: &Actor) -> ServiceResult<Task> {
        let task = self.get(id).await?;
        let reason = kandev_core::schema::trim_space(&req.reason);
        if reason.is_empty() {
            return Err(ServiceError::Invalid("reason is required".into()));
        }
        kandev_core::bounds::text("reason", reason).map_err(|e| ServiceError::Invalid(e.0))?;
        let to = reject(task.status).map_err(|e| ServiceError::Conflict(e.to_string()))?;
        // The move and its reason together: a crash between them would lose the reason.
        self.move_status_recording(
            &task,
            task.status,
            to,
            actor,
            (EVENT_REJECTED, json!({"reason": reason})),
        )
        .await?;
        self.get(id).await
    }

    /// The merger acts with the bot token on a repository only when the task's
    /// workspace registered it: a PR anywhere else is refused before anything moves.
    async fn check_registered(&self, task: &Task, pr: &PrRef) -> ServiceResult<()> {
        let repos = self.store.list_repositories(&task.workspace_id).await?;
        let known = repos
            .iter()
            .any(|r| r.owner.eq_ignore_ascii_case(&pr.owner) && r.name.eq_ignore_ascii_case(&pr.repo));
        if known {
            Ok(())
        } else {
            Err(ServiceError::Invalid(format!(
                "{}/{} is not a repository of this workspace: register it before approving a merge of {}",
                pr.owner,
                pr.repo,
                pr.url()
            )))
        }
    }
}
