use chrono::{DateTime, Utc};
use kandev_core::api::Repository;
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, time_to_text};

const COLUMNS: &str = "id, workspace_id, provider, owner, name, default_branch, local_path, ci_wait_minutes";

fn repository(row: &AnyRow) -> StoreResult<Repository> {
    Ok(Repository {
        id: row.text("id")?,
        workspace_id: row.text("workspace_id")?,
        provider: row.text("provider")?,
        owner: row.text("owner")?,
        name: row.text("name")?,
        default_branch: row.text("default_branch")?,
        local_path: row.text("local_path")?,
        ci_wait_timeout_minutes: row.opt_int("ci_wait_minutes")?,
    })
}

impl Store {
    pub async fn create_repository(&self, repo: &Repository, now: DateTime<Utc>) -> StoreResult<Repository> {
        let id = new_id();
        sqlx::query(
            "INSERT INTO repositories (id, workspace_id, provider, owner, name, default_branch, local_path, created_at, ci_wait_minutes) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&id)
        .bind(&repo.workspace_id)
        .bind(&repo.provider)
        .bind(&repo.owner)
        .bind(&repo.name)
        .bind(&repo.default_branch)
        .bind(&repo.local_path)
        .bind(time_to_text(now))
        .bind(repo.ci_wait_timeout_minutes)
        .execute(&mut *self.writer().await?)
        .await?;
        self.get_repository(&id).await
    }

    pub async fn get_repository(&self, id: &str) -> StoreResult<Repository> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM repositories WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        repository(&row)
    }

    /// A workspace's repositories, oldest first (the first is the default).
    pub async fn list_repositories(&self, workspace_id: &str) -> StoreResult<Vec<Repository>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM repositories WHERE workspace_id = $1 ORDER BY created_at, id"
        )))
        .bind(workspace_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(repository)
        .collect()
    }

    /// The local checkouts registered in workspaces other than this one
    /// (what its agents must not read), each once.
    pub async fn checkouts_outside(&self, workspace_id: &str) -> StoreResult<Vec<String>> {
        let rows =
            sqlx::query("SELECT DISTINCT local_path FROM repositories WHERE workspace_id <> $1 AND local_path <> ''")
                .bind(workspace_id)
                .fetch_all(&mut *self.read().await?)
                .await?;
        rows.iter().map(|r| r.text("local_path")).collect()
    }

    /// Workspaces holding a repository with this owner/name (case-insensitive,
    /// as GitHub names are).
    pub async fn workspaces_with_repository(&self, owner: &str, name: &str) -> StoreResult<Vec<String>> {
        let rows = sqlx::query(
            "SELECT DISTINCT workspace_id FROM repositories WHERE LOWER(owner) = LOWER($1) AND LOWER(name) = LOWER($2)",
        )
        .bind(owner)
        .bind(name)
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter().map(|r| r.text("workspace_id")).collect()
    }

    /// Sets a repository's CI wait (`None` clears it); `NotFound` unless the
    /// repository is in this workspace.
    pub async fn set_repository_ci_wait(
        &self,
        workspace_id: &str,
        id: &str,
        minutes: Option<i64>,
    ) -> StoreResult<Repository> {
        let done = sqlx::query("UPDATE repositories SET ci_wait_minutes = $1 WHERE id = $2 AND workspace_id = $3")
            .bind(minutes)
            .bind(id)
            .bind(workspace_id)
            .execute(&mut *self.writer().await?)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        self.get_repository(id).await
    }

    /// A repository of this workspace; `NotFound` for one elsewhere.
    pub async fn repository_in(&self, workspace_id: &str, id: &str) -> StoreResult<Repository> {
        let repo = self.get_repository(id).await?;
        if repo.workspace_id != workspace_id {
            return Err(StoreError::NotFound);
        }
        Ok(repo)
    }

    /// The CI wait set on the workspace's repository with this owner/name.
    pub async fn repository_ci_wait(&self, workspace_id: &str, owner: &str, name: &str) -> StoreResult<Option<i64>> {
        let row = sqlx::query(
            "SELECT ci_wait_minutes FROM repositories WHERE workspace_id = $1 AND LOWER(owner) = LOWER($2) \
             AND LOWER(name) = LOWER($3) ORDER BY created_at, id",
        )
        .bind(workspace_id)
        .bind(owner)
        .bind(name)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        Ok(row.map(|r| r.opt_int("ci_wait_minutes")).transpose()?.flatten())
    }
}
