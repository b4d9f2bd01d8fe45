//! Workspace members and their roles.

use chrono::{DateTime, Utc};
use kandev_core::access::Role;
use kandev_core::api::{Member, MyWorkspace};
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, time_to_text};

fn role(row: &AnyRow) -> StoreResult<Role> {
    parse_role(&row.text("role")?)
}

pub(super) fn parse_role(text: &str) -> StoreResult<Role> {
    Role::parse(text).ok_or_else(|| StoreError::Corrupt(format!("role {text}")))
}

/// Locks a workspace's row for the rest of the transaction (a row lock on
/// PostgreSQL, the write lock on SQLite) and counts its owners: every change
/// that could remove an owner takes this turn first, so two such changes to
/// one workspace cannot both remove "the other" owner.
pub(super) async fn lock_and_count_owners(conn: &mut sqlx::AnyConnection, workspace_id: &str) -> StoreResult<usize> {
    let locked = sqlx::query("UPDATE workspaces SET name = name WHERE id = $1")
        .bind(workspace_id)
        .execute(&mut *conn)
        .await?;
    super::one_row(locked)?;
    let owners = sqlx::query("SELECT COUNT(*) AS n FROM workspace_members WHERE workspace_id = $1 AND role = 'owner'")
        .bind(workspace_id)
        .fetch_one(&mut *conn)
        .await?
        .int("n")?;
    Ok(usize::try_from(owners).unwrap_or(0))
}

impl Store {
    /// Adds a member, changes a role (`Some`) or removes a member (`None`),
    /// refusing (`Conflict`) any change that would leave the workspace without
    /// an owner. The workspace row is touched first so concurrent changes to
    /// one workspace's members take turns (a row lock on PostgreSQL, the write
    /// lock on SQLite) and cannot both remove "the other" owner.
    pub async fn change_member(
        &self,
        workspace_id: &str,
        user_id: &str,
        new_role: Option<Role>,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        let owners = lock_and_count_owners(&mut tx, workspace_id).await?;
        let current = sqlx::query("SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2")
            .bind(workspace_id)
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?
            .as_ref()
            .map(role)
            .transpose()?;
        if !kandev_core::access::leaves_an_owner(owners, current == Some(Role::Owner), new_role) {
            return Err(StoreError::Conflict("a workspace keeps at least one owner".into()));
        }
        match new_role {
            Some(r) => {
                sqlx::query(
                    "INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role",
                )
                .bind(workspace_id)
                .bind(user_id)
                .bind(r.as_str())
                .bind(time_to_text(now))
                .execute(&mut *tx)
                .await?;
            }
            None if current.is_none() => return Err(StoreError::NotFound),
            None => {
                sqlx::query("DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2")
                    .bind(workspace_id)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn list_members(&self, workspace_id: &str) -> StoreResult<Vec<Member>> {
        sqlx::query(
            "SELECT m.user_id, u.username, m.role FROM workspace_members m JOIN users u ON u.id = m.user_id \
             WHERE m.workspace_id = $1 ORDER BY u.username",
        )
        .bind(workspace_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(|r| {
            Ok(Member {
                user_id: r.text("user_id")?,
                username: r.text("username")?,
                role: role(r)?,
            })
        })
        .collect()
    }

    /// The workspaces a user is a member of, with the role, oldest first.
    pub async fn user_workspaces(&self, user_id: &str) -> StoreResult<Vec<MyWorkspace>> {
        sqlx::query(
            "SELECT w.id, w.name, m.role FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id \
             WHERE m.user_id = $1 ORDER BY w.created_at, w.id",
        )
        .bind(user_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(|r| {
            Ok(MyWorkspace {
                id: r.text("id")?,
                name: r.text("name")?,
                role: role(r)?,
            })
        })
        .collect()
    }
}
