use chrono::{DateTime, Utc};
use kandev_core::api::Workspace;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, time_to_text};

fn workspace(row: &AnyRow) -> StoreResult<Workspace> {
    Ok(Workspace {
        id: row.text("id")?,
        name: row.text("name")?,
        created_at: row.time("created_at")?,
    })
}

impl Store {
    /// Creates a workspace; its creator (when a user) becomes its owner in the
    /// same transaction, so no workspace is ever left without the person who made it.
    pub async fn create_workspace(
        &self,
        name: &str,
        owner: Option<&str>,
        now: DateTime<Utc>,
    ) -> StoreResult<Workspace> {
        let id = new_id();
        let mut tx = self.write_tx().await?;
        sqlx::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(&id)
            .bind(name)
            .bind(time_to_text(now))
            .execute(&mut *tx)
            .await?;
        if let Some(user_id) = owner {
            sqlx::query(
                "INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES ($1, $2, 'owner', $3)",
            )
            .bind(&id)
            .bind(user_id)
            .bind(time_to_text(now))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.get_workspace(&id).await
    }

    pub async fn get_workspace(&self, id: &str) -> StoreResult<Workspace> {
        let row = sqlx::query("SELECT id, name, created_at FROM workspaces WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound)?;
        workspace(&row)
    }

    pub async fn list_workspaces(&self) -> StoreResult<Vec<Workspace>> {
        sqlx::query("SELECT id, name, created_at FROM workspaces ORDER BY created_at, id")
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(workspace)
            .collect()
    }
}
