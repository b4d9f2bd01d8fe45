use chrono::{DateTime, Utc};
use kandev_core::api::Repository;
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, time_to_text};

const COLUMNS: &str = "id, workspace_id, provider, owner, name, default_branch, local_path";

fn repository(row: &AnyRow) -> StoreResult<Repository> {
    Ok(Repository {
        id: row.text("id")?,
        workspace_id: row.text("workspace_id")?,
        provider: row.text("provider")?,
        owner: row.text("owner")?,
        name: row.text("name")?,
        default_branch: row.text("default_branch")?,
        local_path: row.text("local_path")?,
    })
}

impl Store {
    pub async fn create_repository(&self, repo: &Repository, now: DateTime<Utc>) -> StoreResult<Repository> {
        let id = new_id();
        sqlx::query(
            "INSERT INTO repositories (id, workspace_id, provider, owner, name, default_branch, local_path, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&id)
        .bind(&repo.workspace_id)
        .bind(&repo.provider)
        .bind(&repo.owner)
        .bind(&repo.name)
        .bind(&repo.default_branch)
        .bind(&repo.local_path)
        .bind(time_to_text(now))
        .execute(&self.pool)
        .await?;
        self.get_repository(&id).await
    }

    pub async fn get_repository(&self, id: &str) -> StoreResult<Repository> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM repositories WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
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
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(repository)
        .collect()
    }

    /// Workspaces holding a repository with this owner/name (case-insensitive,
    /// as GitHub names are).
    pub async fn workspaces_with_repository(&self, owner: &str, name: &str) -> StoreResult<Vec<String>> {
        let rows = sqlx::query(
            "SELECT DISTINCT workspace_id FROM repositories WHERE LOWER(owner) = LOWER($1) AND LOWER(name) = LOWER($2)",
        )
        .bind(owner)
        .bind(name)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| r.text("workspace_id")).collect()
    }
}
