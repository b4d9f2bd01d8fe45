//! Linking PRs to tasks: associate (reads the PR, stores it, publishes
//! unconditionally), detach (no publish), restore (publishes unconditionally)
//! and an on-demand lifecycle refresh.

use async_trait::async_trait;
use kandev_core::api::{LinkPrRequest, Task};
use kandev_core::board::PrRef;
use kandev_core::task_pr::{STATE_OPEN, TaskPr};

use super::GithubService;
use super::client::GithubError;
use super::sync::{Announce, Fetched, Write};
use crate::board::PrLinker;
use crate::error::{ServiceError, ServiceResult};

fn github_error(e: GithubError) -> ServiceError {
    match e {
        GithubError::NotConfigured => ServiceError::Unavailable("GitHub is not configured: set GITHUB_TOKEN".into()),
        GithubError::NotFound => {
            ServiceError::Invalid("that pull request does not exist on GitHub (or the token cannot see it)".into())
        }
        other => ServiceError::Upstream(other.to_string()),
    }
}

/// Which PR a link request names.
pub fn requested_pr(req: &LinkPrRequest) -> ServiceResult<PrRef> {
    if let Some(url) = req.url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
        return PrRef::parse(url).ok_or_else(|| ServiceError::Invalid(format!("not a GitHub pull request URL: {url}")));
    }
    match (req.owner.as_deref(), req.repo.as_deref(), req.pr_number) {
        (Some(o), Some(r), Some(n)) if !o.trim().is_empty() && !r.trim().is_empty() && n > 0 => {
            Ok(PrRef::new(o.trim(), r.trim(), n))
        }
        _ => Err(ServiceError::Invalid(
            "give a PR url, or owner, repo and a positive pr_number".into(),
        )),
    }
}

impl GithubService {
    /// Reads the PR, stores the link and publishes `github.task_pr.updated`
    /// whatever the row held before.
    pub async fn associate(&self, task: &Task, pr: &PrRef) -> ServiceResult<TaskPr> {
        let read = self
            .fetch(&pr.owner, &pr.repo, pr.number, &task.id, &task.workspace_id)
            .await
            .map_err(github_error)?;
        self.store_read(pr, &read).await?;
        Ok(read.row)
    }

    /// Stores a link as GitHub just read it, announced whatever it held.
    async fn store_read(&self, pr: &PrRef, read: &Fetched) -> ServiceResult<()> {
        self.store_row((&pr.owner, &pr.repo), &read.row, Write::Whole, Announce::Always)
            .await?;
        Ok(())
    }

    pub async fn list(&self, task_id: &str) -> ServiceResult<Vec<TaskPr>> {
        self.store
            .get_task(task_id)
            .await
            .map_err(ServiceError::not_found("task"))?;
        Ok(self.store.list_task_prs(task_id).await?)
    }

    /// Hides a link; no event.
    pub async fn detach(&self, task_id: &str, pr: &PrRef) -> ServiceResult<()> {
        if !self
            .store
            .detach_task_pr(task_id, &pr.owner, &pr.repo, pr.number, self.clock.now())
            .await?
        {
            return Err(ServiceError::NotFound("no such linked pull request".into()));
        }
        Ok(())
    }

    /// Re-attaches a detached link and publishes unconditionally.
    pub async fn restore(&self, task_id: &str, pr: &PrRef) -> ServiceResult<TaskPr> {
        let listing = self
            .store
            .get_task_pr(task_id, &pr.owner, &pr.repo, pr.number)
            .await?
            .ok_or_else(|| ServiceError::NotFound("no such linked pull request".into()))?;
        self.store_row((&pr.owner, &pr.repo), &listing, Write::Whole, Announce::Always)
            .await?;
        Ok(listing)
    }

    /// A UI refresh of a task's open links: the lifecycle reconcile path.
    pub async fn refresh(&self, task_id: &str) -> ServiceResult<Vec<TaskPr>> {
        for pr in self.list(task_id).await? {
            if let Some(listing) = self
                .store
                .get_task_pr(task_id, &pr.owner, &pr.repo, pr.pr_number)
                .await?
                && let Err(e) = self.reconcile_lifecycle(&listing).await
            {
                tracing::warn!(task_id, error = %e, "PR refresh failed");
            }
        }
        self.list(task_id).await
    }
}

#[async_trait]
impl PrLinker for GithubService {
    /// The review hand-off and `github_pr` runs link their PR. Without GitHub,
    /// or when GitHub cannot be read for it at that moment (failing, slow,
    /// rate limited, not yet showing a PR it just created, refusing a token
    /// about to be fixed), the link is stored from the reference alone: the
    /// hand-off named this PR, and a link lost here would leave its merge
    /// unseen. The poller's sweeps read it from then on. Only a name that
    /// cannot be put in a GitHub URL is refused.
    async fn link(&self, task: &Task, pr: &PrRef) -> ServiceResult<()> {
        if self.client.is_configured() {
            match self
                .fetch(&pr.owner, &pr.repo, pr.number, &task.id, &task.workspace_id)
                .await
            {
                Ok(read) => {
                    self.store_read(pr, &read).await?;
                    return Ok(());
                }
                Err(e @ GithubError::BadName(_)) => return Err(github_error(e)),
                Err(e) => {
                    tracing::warn!(task_id = %task.id, pr = %pr.url(), error = %e,
                        "could not read the PR; linked from its reference, the poller's sweep reads it");
                }
            }
        }
        let row = TaskPr {
            task_id: task.id.clone(),
            workspace_id: task.workspace_id.clone(),
            owner: pr.owner.clone(),
            repo: pr.repo.clone(),
            pr_number: pr.number,
            pr_url: pr.url(),
            state: STATE_OPEN.into(),
            ..Default::default()
        };
        self.store_row((&row.owner, &row.repo), &row, Write::IfMissing, Announce::Always)
            .await?;
        Ok(())
    }
}
