//! Reading a PR from GitHub into a `TaskPr` row, and the two write paths: the
//! watch-driven sync (publishes on any of sixteen fields changing) and the
//! lifecycle reconcile (state, merged_at and closed_at only; never on merged
//! or closed rows).

use chrono::{DateTime, Utc};
use kandev_core::api::LIVE_TASK_PR_UPDATED;
use kandev_core::checks::{review_summary, summarize};
use kandev_core::events::{Payload, SOURCE_GITHUB, TASK_PR_UPDATED};
use kandev_core::merger::{branch_rules, unresolved_threads};
use kandev_core::read_lag::{PrSeen, read_behind};
use kandev_core::task_pr::{
    STATE_CLOSED, STATE_MERGED, STATE_OPEN, TaskPr, lifecycle_changed, needs_unwatched_sync, repo_moved, sync_changed,
};

use super::GithubService;
use super::client::GithubResult;
use super::model::PullRequest;
use super::moved::log_followed;
use crate::store::StoreResult;
use crate::store::pr_moves::move_on;
use crate::store::repo_moves::follow_repository_on;
use crate::store::task_prs::{read_on, undetach_on, upsert_on, write_lifecycle_on};

/// What a write of a link row touches.
#[derive(Clone, Copy)]
pub(crate) enum Write {
    /// Every field, clearing any detach.
    Whole,
    /// State, merged_at, closed_at and last_synced_at (the reconcile path).
    Lifecycle,
    /// A link from its reference alone: inserted when absent (announced),
    /// else only undetached, never overwriting what a read stored.
    IfMissing,
}

/// When a write announces itself, given the row stored before it.
#[derive(Clone, Copy)]
pub(crate) enum Announce {
    Always,
    /// One of the sixteen sync fields changed.
    IfSyncChanged,
    /// State, merged_at or closed_at changed.
    IfLifecycleChanged,
}

fn time(s: &Option<String>) -> Option<DateTime<Utc>> {
    s.as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// `open`, `closed` or `merged`, as the sync writes it.
pub fn pr_state(pr: &PullRequest) -> &'static str {
    if pr.merged || pr.merged_at.is_some() {
        STATE_MERGED
    } else if pr.state == "closed" {
        STATE_CLOSED
    } else {
        STATE_OPEN
    }
}

/// One PR read over REST: the link row it makes and GitHub's `updated_at`.
pub struct Fetched {
    pub row: TaskPr,
    pub updated_at: Option<String>,
}

/// Everything a link row is made of, however it was read (REST or a
/// GraphQL batch).
pub(crate) struct PrParts {
    pub pr: PullRequest,
    /// (reviewer login, review state) of every review, oldest first.
    pub reviews: Vec<(String, String)>,
    pub checks: Vec<kandev_core::checks::Check>,
    pub required_reviews: i64,
    pub unresolved_review_threads: i64,
}

impl PrParts {
    /// The link row these parts make for `task_id`.
    pub fn row(&self, owner: &str, repo: &str, task_id: &str, workspace_id: &str, now: DateTime<Utc>) -> TaskPr {
        let pr = &self.pr;
        let summary = summarize(&self.checks);
        let (review_state, review_count) = review_summary(&self.reviews, pr.requested_reviewers.len());
        // The case GitHub reports comes from the URL the API returned.
        let reported = kandev_core::board::PrRef::parse(&pr.html_url);
        TaskPr {
            task_id: task_id.to_string(),
            workspace_id: workspace_id.to_string(),
            owner: reported
                .as_ref()
                .map(|r| r.owner.clone())
                .unwrap_or_else(|| owner.to_string()),
            repo: reported
                .as_ref()
                .map(|r| r.repo.clone())
                .unwrap_or_else(|| repo.to_string()),
            pr_number: pr.number,
            pr_url: pr.html_url.clone(),
            pr_title: pr.title.clone(),
            head_branch: pr.head.branch.clone(),
            head_sha: pr.head.sha.clone(),
            base_branch: pr.base.branch.clone(),
            author_login: pr.user.login.clone(),
            state: pr_state(pr).to_string(),
            merged_at: time(&pr.merged_at),
            closed_at: time(&pr.closed_at),
            review_state,
            checks_state: summary.state,
            mergeable_state: pr.mergeable_state.clone(),
            review_count,
            pending_review_count: pr.requested_reviewers.len() as i64,
            required_reviews: self.required_reviews,
            checks_total: summary.total,
            checks_passing: summary.passing,
            unresolved_review_threads: self.unresolved_review_threads,
            additions: pr.additions,
            deletions: pr.deletions,
            last_synced_at: Some(now),
        }
    }
}

impl GithubService {
    /// Reads everything the row holds over REST: the PR, its reviews and
    /// the checks of its head commit (check runs and commit statuses).
    pub async fn fetch(
        &self,
        owner: &str,
        repo: &str,
        number: i64,
        task_id: &str,
        workspace_id: &str,
    ) -> GithubResult<Fetched> {
        let pr = self.client.pull(owner, repo, number).await?;
        let reviews = self.client.reviews(owner, repo, number).await?;
        let checks = if pr.head.sha.is_empty() {
            vec![]
        } else {
            self.client.commit_checks(owner, repo, &pr.head.sha).await?
        };
        let (required_reviews, unresolved_review_threads) = if pr_state(&pr) == STATE_OPEN {
            self.review_requirements(owner, repo, &pr).await?
        } else {
            (0, 0)
        };
        let parts = PrParts {
            reviews: reviews
                .iter()
                .map(|r| (r.user.login.clone(), r.state.clone()))
                .collect(),
            checks,
            required_reviews,
            unresolved_review_threads,
            pr,
        };
        let row = parts.row(owner, repo, task_id, workspace_id, self.clock.now());
        Ok(Fetched {
            row,
            updated_at: parts.pr.updated_at,
        })
    }

    /// Approving reviews the base branch requires (protection and rulesets,
    /// conditional reads a 304 makes free) and unresolved review threads
    /// (GraphQL, asked only when the PR has review comments at all). A
    /// GraphQL failure leaves the thread count at 0 rather than failing the
    /// whole sync: the merger reads it again before merging.
    async fn review_requirements(&self, owner: &str, repo: &str, pr: &PullRequest) -> GithubResult<(i64, i64)> {
        let base = &pr.base.branch;
        let rules: Vec<_> = self
            .client
            .branch_rules(owner, repo, base)
            .await?
            .iter()
            .map(|r| r.core())
            .collect();
        let protection = self.client.required_approvals(owner, repo, base).await?;
        let required = branch_rules(&rules)
            .with_protection_approvals(protection)
            .required_approvals;
        let unresolved = if pr.review_comments > 0 {
            match self.client.gate(owner, repo, pr.number).await {
                Ok(gate) => unresolved_threads(gate.review_threads.nodes.iter().map(|t| t.is_resolved)),
                Err(e) => {
                    tracing::info!(owner, repo, number = pr.number, error = %e, "could not count review threads");
                    0
                }
            }
        } else {
            0
        };
        Ok((i64::from(required), i64::from(unresolved)))
    }

    /// Writes a link row and, when it announces itself against the row stored
    /// right now, its `github.task_pr.updated` event — in one transaction, so
    /// a crash can lose neither without the other. Publishes after the commit.
    /// Returns whether it announced. `asked` is the `owner/repo` the read
    /// asked under: a row GitHub reports under another name (a renamed or
    /// transferred repository) moves to it first, in the same transaction.
    pub(crate) async fn store_row(
        &self,
        asked: (&str, &str),
        row: &TaskPr,
        write: Write,
        announce: Announce,
    ) -> StoreResult<bool> {
        let now = self.clock.now();
        let mut tx = self.store.write_tx().await?;
        if repo_moved(asked.0, asked.1, row) {
            let from = TaskPr {
                owner: asked.0.to_string(),
                repo: asked.1.to_string(),
                ..row.clone()
            };
            tracing::info!(task_id = %row.task_id, from = %format!("{}/{}", from.owner, from.repo),
                to = %format!("{}/{}", row.owner, row.repo), number = row.pr_number,
                "GitHub reports this PR's repository under a new name; the link follows it");
            move_on(&mut tx, &from, row).await?;
            let followed = follow_repository_on(&mut tx, (&from.owner, &from.repo), (&row.owner, &row.repo)).await?;
            log_followed(followed, (&from.owner, &from.repo), (&row.owner, &row.repo));
        }
        let stored = read_on(&mut tx, &row.task_id, &row.owner, &row.repo, row.pr_number).await?;
        let publish = match (announce, stored.as_ref()) {
            _ if matches!(write, Write::IfMissing) => stored.is_none(),
            (Announce::Always, _) | (_, None) => true,
            (Announce::IfSyncChanged, Some(old)) => sync_changed(old, row),
            (Announce::IfLifecycleChanged, Some(old)) => lifecycle_changed(old, row),
        };
        match write {
            Write::Whole => upsert_on(&mut tx, row, now).await?,
            Write::Lifecycle => write_lifecycle_on(&mut tx, row).await?,
            Write::IfMissing if stored.is_none() => upsert_on(&mut tx, row, now).await?,
            Write::IfMissing => undetach_on(&mut tx, row).await?,
        }
        let event = publish.then(|| {
            self.outbox
                .event(TASK_PR_UPDATED, SOURCE_GITHUB, Payload::TaskPr(row.clone()))
        });
        if let Some(e) = &event {
            self.outbox.write(&mut tx, e).await?;
        }
        tx.commit().await?;
        if let Some(e) = event {
            self.outbox.committed(&e).await;
        }
        if let Ok(task) = self.store.get_task(&row.task_id).await {
            self.live.notify(&task.workspace_id, LIVE_TASK_PR_UPDATED, &row.task_id);
        }
        Ok(publish)
    }

    /// The watch-driven sync: always writes the row; publishes only when one
    /// of the sixteen fields changed. Returns whether it published.
    pub async fn sync_row(&self, listing: &TaskPr) -> GithubResult<bool> {
        self.sync_row_reading(listing).await.map(|(published, _)| published)
    }

    /// `sync_row`, also handing back what it read (the webhook path compares
    /// it with what the delivery said).
    async fn sync_row_reading(&self, listing: &TaskPr) -> GithubResult<(bool, Fetched)> {
        let old = listing;
        let read = self
            .fetch(&old.owner, &old.repo, old.pr_number, &old.task_id, &old.workspace_id)
            .await?;
        match self
            .store_row(
                (&old.owner, &old.repo),
                &read.row,
                Write::Whole,
                Announce::IfSyncChanged,
            )
            .await
        {
            Ok(published) => Ok((published, read)),
            Err(e) => {
                tracing::error!(task_id = %old.task_id, error = %e, "could not write the synced PR row");
                Ok((false, read))
            }
        }
    }

    /// The unwatched lifecycle reconcile: writes and publishes only state,
    /// merged_at and closed_at, and never touches merged or closed rows.
    pub async fn reconcile_lifecycle(&self, listing: &TaskPr) -> GithubResult<bool> {
        let old = listing;
        if !needs_unwatched_sync(old) {
            return Ok(false);
        }
        let pr = self.client.pull(&old.owner, &old.repo, old.pr_number).await?;
        let mut new = old.clone();
        new.state = pr_state(&pr).to_string();
        new.merged_at = time(&pr.merged_at);
        new.closed_at = time(&pr.closed_at);
        new.last_synced_at = Some(self.clock.now());
        match self
            .store_row(
                (&old.owner, &old.repo),
                &new,
                Write::Lifecycle,
                Announce::IfLifecycleChanged,
            )
            .await
        {
            Ok(published) => Ok(published),
            Err(e) => {
                tracing::error!(task_id = %old.task_id, error = %e, "could not write the reconciled PR row");
                Ok(false)
            }
        }
    }

    /// Syncs every attached link to one PR now (webhook deliveries). Answers
    /// how many rows it synced and whether any read was behind what the
    /// delivery `seen` said of the PR.
    pub async fn sync_pr_now(&self, owner: &str, repo: &str, number: i64, seen: &PrSeen) -> (usize, bool) {
        let rows = match self.store.find_task_prs(owner, repo, number).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "could not list the links of a PR");
                return (0, false);
            }
        };
        let (mut synced, mut behind) = (0, false);
        for row in &rows {
            match self.sync_row_reading(row).await {
                Ok((_, read)) => {
                    synced += 1;
                    behind |= read_behind(seen, &read.row.state, read.updated_at.as_deref());
                }
                Err(e) => {
                    tracing::warn!(task_id = %row.task_id, error = %e, "webhook-driven sync failed; the poller will retry")
                }
            }
        }
        (synced, behind)
    }
}
