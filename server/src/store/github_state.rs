use chrono::{DateTime, Utc};
use kandev_core::api::{GithubWorkspaceSettings, RepoScopeMode};
use kandev_core::merger::JobState;
use sqlx::any::AnyRow;

use super::rows::{RowExt, flag};
use super::{Store, StoreError, StoreResult, opt_time_to_text, time_to_text};

/// A merger job that has not finished: what survives a restart.
#[derive(Debug, Clone, PartialEq)]
pub struct MergerJob {
    pub task_id: String,
    pub owner: String,
    pub repo: String,
    pub pr_number: i64,
    pub state: String,
    pub timeout_minutes: i64,
    /// The PR's GraphQL node id once it was enqueued (to dequeue it).
    pub pr_node_id: String,
    /// What the merger remembers between decisions: its waits, branch
    /// updates (the `updated_branch` column's name predates the count; an
    /// older row's 1 is one update), the queue, and the approved head.
    pub memory: JobState,
}

fn job(row: &AnyRow) -> StoreResult<MergerJob> {
    Ok(MergerJob {
        task_id: row.text("task_id")?,
        owner: row.text("owner")?,
        repo: row.text("repo")?,
        pr_number: row.int("pr_number")?,
        state: row.text("state")?,
        timeout_minutes: row.int("timeout_minutes")?,
        pr_node_id: row.text("pr_node_id")?,
        memory: JobState {
            wait_started_at: row.opt_time("wait_started_at")?,
            waiting_on_sha: row.text("waiting_on_sha")?,
            branch_updates: u32::try_from(row.int("updated_branch")?.max(0)).unwrap_or(u32::MAX),
            update_from_sha: row.text("update_from_sha")?,
            queued: row.flag("queued")?,
            approved_sha: row.text("approved_sha")?,
            approved_diff: row.text("approved_diff")?,
        },
    })
}

fn scope_mode(s: &str) -> RepoScopeMode {
    match s {
        "orgs" => RepoScopeMode::Orgs,
        "repos" => RepoScopeMode::Repos,
        _ => RepoScopeMode::All,
    }
}

fn scope_mode_name(m: RepoScopeMode) -> &'static str {
    match m {
        RepoScopeMode::All => "all",
        RepoScopeMode::Orgs => "orgs",
        RepoScopeMode::Repos => "repos",
    }
}

/// Records a delivery id; `false` when it was seen before.
pub async fn claim_delivery_on(
    conn: &mut sqlx::AnyConnection,
    id: &str,
    event: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let done = sqlx::query(
        "INSERT INTO github_deliveries (id, event, received_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(event)
    .bind(time_to_text(now))
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

impl Store {
    /// Claims a GitHub delivery id; `false` when it was seen before.
    pub async fn claim_delivery(&self, id: &str, event: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let mut conn = self.writer().await?;
        claim_delivery_on(&mut conn, id, event, now).await
    }

    pub async fn github_settings(&self, workspace_id: &str) -> StoreResult<GithubWorkspaceSettings> {
        let row = sqlx::query(
            "SELECT repo_scope_mode, repo_scope_orgs, repo_scope_repos, merge_method, delete_branch, ci_wait_minutes \
             FROM github_workspace_settings WHERE workspace_id = $1",
        )
        .bind(workspace_id)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        let Some(row) = row else { return Ok(Default::default()) };
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
        Ok(GithubWorkspaceSettings {
            repo_scope_mode: scope_mode(&row.text("repo_scope_mode")?),
            repo_scope_orgs: serde_json::from_value(row.json("repo_scope_orgs")?).map_err(corrupt)?,
            repo_scope_repos: serde_json::from_value(row.json("repo_scope_repos")?).map_err(corrupt)?,
            merge_method: row.text("merge_method")?,
            delete_branch: row.flag("delete_branch")?,
            ci_wait_timeout_minutes: row.opt_int("ci_wait_minutes")?,
        })
    }

    pub async fn put_github_settings(&self, workspace_id: &str, s: &GithubWorkspaceSettings) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO github_workspace_settings (workspace_id, repo_scope_mode, repo_scope_orgs, repo_scope_repos, merge_method, delete_branch, \
             ci_wait_minutes) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (workspace_id) DO UPDATE SET repo_scope_mode = excluded.repo_scope_mode, \
             repo_scope_orgs = excluded.repo_scope_orgs, repo_scope_repos = excluded.repo_scope_repos, merge_method = excluded.merge_method, \
             delete_branch = excluded.delete_branch, ci_wait_minutes = excluded.ci_wait_minutes",
        )
        .bind(workspace_id)
        .bind(scope_mode_name(s.repo_scope_mode))
        .bind(serde_json::to_string(&s.repo_scope_orgs).unwrap_or_else(|_| "[]".into()))
        .bind(serde_json::to_string(&s.repo_scope_repos).unwrap_or_else(|_| "[]".into()))
        .bind(&s.merge_method)
        .bind(flag(s.delete_branch))
        .bind(s.ci_wait_timeout_minutes)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Writes a new job unless the task has one: `false` when it does. Two
    /// approvals racing get one job between them (the primary key decides).
    pub async fn insert_merger_job(&self, j: &MergerJob, now: DateTime<Utc>) -> StoreResult<bool> {
        let done = sqlx::query(
            "INSERT INTO merger_jobs (task_id, owner, repo, pr_number, state, timeout_minutes, wait_started_at, waiting_on_sha, \
             updated_branch, update_from_sha, queued, pr_node_id, approved_sha, approved_diff, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) \
             ON CONFLICT (task_id) DO NOTHING",
        )
        .bind(&j.task_id)
        .bind(&j.owner)
        .bind(&j.repo)
        .bind(j.pr_number)
        .bind(&j.state)
        .bind(j.timeout_minutes)
        .bind(opt_time_to_text(j.memory.wait_started_at))
        .bind(&j.memory.waiting_on_sha)
        .bind(i64::from(j.memory.branch_updates))
        .bind(&j.memory.update_from_sha)
        .bind(flag(j.memory.queued))
        .bind(&j.pr_node_id)
        .bind(&j.memory.approved_sha)
        .bind(&j.memory.approved_diff)
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Saves a running job's progress; `false` when the job is gone (its
    /// merge was cancelled), and then nothing is written.
    pub async fn update_merger_job(&self, j: &MergerJob, now: DateTime<Utc>) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE merger_jobs SET state = $2, wait_started_at = $3, waiting_on_sha = $4, updated_branch = $5, \
             update_from_sha = $6, queued = $7, pr_node_id = $8, approved_sha = $9, approved_diff = $10, updated_at = $11 \
             WHERE task_id = $1",
        )
        .bind(&j.task_id)
        .bind(&j.state)
        .bind(opt_time_to_text(j.memory.wait_started_at))
        .bind(&j.memory.waiting_on_sha)
        .bind(i64::from(j.memory.branch_updates))
        .bind(&j.memory.update_from_sha)
        .bind(flag(j.memory.queued))
        .bind(&j.pr_node_id)
        .bind(&j.memory.approved_sha)
        .bind(&j.memory.approved_diff)
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn get_merger_job(&self, task_id: &str) -> StoreResult<Option<MergerJob>> {
        let row = sqlx::query(
            "SELECT task_id, owner, repo, pr_number, state, timeout_minutes, wait_started_at, waiting_on_sha, updated_branch, \
             update_from_sha, queued, pr_node_id, approved_sha, approved_diff \
             FROM merger_jobs WHERE task_id = $1",
        )
        .bind(task_id)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        row.as_ref().map(job).transpose()
    }

    /// Deletes a task's job; `false` when it had none.
    pub async fn delete_merger_job_if_any(&self, task_id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM merger_jobs WHERE task_id = $1")
            .bind(task_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn delete_merger_job(&self, task_id: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM merger_jobs WHERE task_id = $1")
            .bind(task_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Deletes a job only if nothing touched it since `before`: approve writes
    /// the job a moment before the task moves to `running`, and a replica
    /// looking in between must not take that for a stale job.
    pub async fn delete_stale_merger_job(&self, task_id: &str, before: DateTime<Utc>) -> StoreResult<()> {
        sqlx::query("DELETE FROM merger_jobs WHERE task_id = $1 AND updated_at < $2")
            .bind(task_id)
            .bind(time_to_text(before))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    pub async fn list_merger_jobs(&self) -> StoreResult<Vec<MergerJob>> {
        sqlx::query(
            "SELECT task_id, owner, repo, pr_number, state, timeout_minutes, wait_started_at, waiting_on_sha, updated_branch, \
             update_from_sha, queued, pr_node_id, approved_sha, approved_diff \
             FROM merger_jobs ORDER BY created_at",
        )
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(job)
        .collect()
    }
}
