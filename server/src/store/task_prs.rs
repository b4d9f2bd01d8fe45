use chrono::{DateTime, Utc};
use kandev_core::api::{Origin, TaskPrPreview};
use kandev_core::task_pr::TaskPr;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe};

use super::rows::RowExt;
use super::{Store, StoreResult, opt_time_to_text, time_to_text};

/// Identity of a link: the PR compared by (owner, repo, number), case-insensitively.
pub fn pr_key(owner: &str, repo: &str, number: i64) -> String {
    format!("{}/{}#{number}", owner.to_lowercase(), repo.to_lowercase())
}

const COLUMNS: &str = "task_id, workspace_id, owner, repo, pr_number, pr_url, pr_title, head_branch, head_sha, base_branch, author_login, state, \
    merged_at, closed_at, review_state, checks_state, mergeable_state, review_count, pending_review_count, required_reviews, \
    checks_total, checks_passing, unresolved_review_threads, additions, deletions, last_synced_at";

fn task_pr(row: &AnyRow) -> StoreResult<TaskPr> {
    Ok(TaskPr {
        task_id: row.text("task_id")?,
        workspace_id: row.text("workspace_id")?,
        owner: row.text("owner")?,
        repo: row.text("repo")?,
        pr_number: row.int("pr_number")?,
        pr_url: row.text("pr_url")?,
        pr_title: row.text("pr_title")?,
        head_branch: row.text("head_branch")?,
        head_sha: row.text("head_sha")?,
        base_branch: row.text("base_branch")?,
        author_login: row.text("author_login")?,
        state: row.text("state")?,
        merged_at: row.opt_time("merged_at")?,
        closed_at: row.opt_time("closed_at")?,
        review_state: row.text("review_state")?,
        checks_state: row.text("checks_state")?,
        mergeable_state: row.text("mergeable_state")?,
        review_count: row.int("review_count")?,
        pending_review_count: row.int("pending_review_count")?,
        required_reviews: row.int("required_reviews")?,
        checks_total: row.int("checks_total")?,
        checks_passing: row.int("checks_passing")?,
        unresolved_review_threads: row.int("unresolved_review_threads")?,
        additions: row.int("additions")?,
        deletions: row.int("deletions")?,
        last_synced_at: row.opt_time("last_synced_at")?,
    })
}

/// Writes every field of the row (insert or replace), clearing any detach,
/// on `conn` (a transaction's connection).
pub async fn upsert_on(conn: &mut AnyConnection, pr: &TaskPr, now: DateTime<Utc>) -> StoreResult<()> {
    let key = pr_key(&pr.owner, &pr.repo, pr.pr_number);
    sqlx::query(
            "INSERT INTO task_prs (task_id, pr_key, workspace_id, owner, repo, pr_number, pr_url, pr_title, head_branch, head_sha, base_branch, \
             author_login, state, merged_at, closed_at, review_state, checks_state, mergeable_state, review_count, pending_review_count, \
             required_reviews, checks_total, checks_passing, unresolved_review_threads, additions, deletions, last_synced_at, detached_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, NULL, $28) \
             ON CONFLICT (task_id, pr_key) DO UPDATE SET workspace_id = excluded.workspace_id, owner = excluded.owner, repo = excluded.repo, \
             pr_url = excluded.pr_url, pr_title = excluded.pr_title, head_branch = excluded.head_branch, head_sha = excluded.head_sha, \
             base_branch = excluded.base_branch, author_login = excluded.author_login, state = excluded.state, merged_at = excluded.merged_at, \
             closed_at = excluded.closed_at, review_state = excluded.review_state, checks_state = excluded.checks_state, \
             mergeable_state = excluded.mergeable_state, review_count = excluded.review_count, pending_review_count = excluded.pending_review_count, \
             required_reviews = excluded.required_reviews, checks_total = excluded.checks_total, checks_passing = excluded.checks_passing, \
             unresolved_review_threads = excluded.unresolved_review_threads, additions = excluded.additions, deletions = excluded.deletions, \
             last_synced_at = excluded.last_synced_at, detached_at = NULL",
        )
        .bind(&pr.task_id)
        .bind(&key)
        .bind(&pr.workspace_id)
        .bind(&pr.owner)
        .bind(&pr.repo)
        .bind(pr.pr_number)
        .bind(&pr.pr_url)
        .bind(&pr.pr_title)
        .bind(&pr.head_branch)
        .bind(&pr.head_sha)
        .bind(&pr.base_branch)
        .bind(&pr.author_login)
        .bind(&pr.state)
        .bind(opt_time_to_text(pr.merged_at))
        .bind(opt_time_to_text(pr.closed_at))
        .bind(&pr.review_state)
        .bind(&pr.checks_state)
        .bind(&pr.mergeable_state)
        .bind(pr.review_count)
        .bind(pr.pending_review_count)
        .bind(pr.required_reviews)
        .bind(pr.checks_total)
        .bind(pr.checks_passing)
        .bind(pr.unresolved_review_threads)
        .bind(pr.additions)
        .bind(pr.deletions)
        .bind(opt_time_to_text(pr.last_synced_at))
        .bind(time_to_text(now))
        .execute(conn)
        .await?;
    Ok(())
}

/// Writes only state, merged_at, closed_at and last_synced_at (the reconcile path).
pub async fn write_lifecycle_on(conn: &mut AnyConnection, pr: &TaskPr) -> StoreResult<()> {
    sqlx::query(
            "UPDATE task_prs SET state = $3, merged_at = $4, closed_at = $5, last_synced_at = $6 WHERE task_id = $1 AND pr_key = $2",
        )
        .bind(&pr.task_id)
        .bind(pr_key(&pr.owner, &pr.repo, pr.pr_number))
        .bind(&pr.state)
        .bind(opt_time_to_text(pr.merged_at))
        .bind(opt_time_to_text(pr.closed_at))
        .bind(opt_time_to_text(pr.last_synced_at))
        .execute(conn)
        .await?;
    Ok(())
}

/// Shows a detached link again, leaving what a read stored in it.
pub async fn undetach_on(conn: &mut AnyConnection, pr: &TaskPr) -> StoreResult<()> {
    sqlx::query("UPDATE task_prs SET detached_at = NULL WHERE task_id = $1 AND pr_key = $2")
        .bind(&pr.task_id)
        .bind(pr_key(&pr.owner, &pr.repo, pr.pr_number))
        .execute(conn)
        .await?;
    Ok(())
}

/// One link, detached or not, read on `conn`.
pub async fn read_on(
    conn: &mut AnyConnection,
    task_id: &str,
    owner: &str,
    repo: &str,
    number: i64,
) -> StoreResult<Option<TaskPr>> {
    let row = sqlx::query(AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM task_prs WHERE task_id = $1 AND pr_key = $2"
    )))
    .bind(task_id)
    .bind(pr_key(owner, repo, number))
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(task_pr).transpose()
}

impl Store {
    /// [`upsert_on`] on its own.
    pub async fn upsert_task_pr(&self, pr: &TaskPr, now: DateTime<Utc>) -> StoreResult<()> {
        let mut conn = self.writer().await?;
        upsert_on(&mut conn, pr, now).await
    }

    /// One link, detached or not.
    pub async fn get_task_pr(
        &self,
        task_id: &str,
        owner: &str,
        repo: &str,
        number: i64,
    ) -> StoreResult<Option<TaskPr>> {
        let mut conn = self.read().await?;
        read_on(&mut conn, task_id, owner, repo, number).await
    }

    /// A task's attached links.
    pub async fn list_task_prs(&self, task_id: &str) -> StoreResult<Vec<TaskPr>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM task_prs WHERE task_id = $1 AND detached_at IS NULL ORDER BY created_at, pr_key"
        )))
        .bind(task_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(task_pr)
        .collect()
    }

    /// Every attached link of the tasks a board shows (user tasks, archived
    /// ones only when asked), in one read: grouped by task, oldest first.
    pub async fn list_board_task_prs(&self, workspace_id: &str, include_archived: bool) -> StoreResult<Vec<TaskPr>> {
        let cols: String = COLUMNS
            .split(", ")
            .map(|c| format!("p.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let archived = if include_archived {
            ""
        } else {
            " AND t.archived_at IS NULL"
        };
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {cols} FROM task_prs p JOIN tasks t ON t.id = p.task_id WHERE t.workspace_id = $1 \
             AND p.detached_at IS NULL AND t.origin <> 'automation_run'{archived} ORDER BY p.task_id, p.created_at, p.pr_key"
        )))
        .bind(workspace_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(task_pr)
        .collect()
    }

    /// Attached links the poller syncs: open rows, plus merged or closed rows
    /// still inside their settle period (post-merge changes keep publishing).
    pub async fn list_watched_task_prs(&self, settled_before: DateTime<Utc>) -> StoreResult<Vec<TaskPr>> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM task_prs WHERE detached_at IS NULL AND \
             (state = 'open' OR COALESCE(merged_at, closed_at, last_synced_at, created_at) > $1) ORDER BY created_at, pr_key"
        )))
        .bind(time_to_text(settled_before))
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter().map(task_pr).collect()
    }

    /// Attached links to one PR, across tasks (for webhook deliveries).
    pub async fn find_task_prs(&self, owner: &str, repo: &str, number: i64) -> StoreResult<Vec<TaskPr>> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM task_prs WHERE pr_key = $1 AND detached_at IS NULL"
        )))
        .bind(pr_key(owner, repo, number))
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter().map(task_pr).collect()
    }

    /// The attached, still open links into one repository (by its name,
    /// case-insensitively): what a rename of it can move.
    pub async fn open_task_prs_in(&self, owner: &str, repo: &str) -> StoreResult<Vec<TaskPr>> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM task_prs WHERE lower(owner) = $1 AND lower(repo) = $2 \
             AND detached_at IS NULL AND state = 'open'"
        )))
        .bind(owner.to_lowercase())
        .bind(repo.to_lowercase())
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter().map(task_pr).collect()
    }

    /// Detach (hide) a link; `false` when there was none.
    pub async fn detach_task_pr(
        &self,
        task_id: &str,
        owner: &str,
        repo: &str,
        number: i64,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE task_prs SET detached_at = $3 WHERE task_id = $1 AND pr_key = $2 AND detached_at IS NULL",
        )
        .bind(task_id)
        .bind(pr_key(owner, repo, number))
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Recent links of a workspace's tasks, by the task's current workspace.
    pub async fn list_workspace_task_prs(
        &self,
        workspace_id: &str,
        state: Option<&str>,
        limit: i64,
    ) -> StoreResult<Vec<TaskPrPreview>> {
        let cols: String = COLUMNS
            .split(", ")
            .map(|c| format!("p.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT {cols}, t.workspace_id AS task_workspace_id, t.title AS task_title, t.origin AS task_origin \
             FROM task_prs p JOIN tasks t ON t.id = p.task_id WHERE t.workspace_id = $1 AND p.detached_at IS NULL \
             AND ($3 = '' OR LOWER(p.state) = LOWER($3)) \
             ORDER BY COALESCE(p.merged_at, p.closed_at, p.last_synced_at, p.created_at) DESC LIMIT $2"
        );
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(workspace_id)
            .bind(limit)
            .bind(state.unwrap_or(""))
            .fetch_all(&mut *self.read().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(TaskPrPreview {
                    pr: task_pr(r)?,
                    task_workspace_id: r.text("task_workspace_id")?,
                    task_title: r.text("task_title")?,
                    task_is_automation_run: r.text("task_origin")? == Origin::AutomationRun.as_str(),
                })
            })
            .collect()
    }
}
