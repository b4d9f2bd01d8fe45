//! Workspace members and their roles.

use chrono::{DateTime, Utc};
use kandev_core::access::{Role, Scope};
use kandev_core::api::{Member, MyWorkspace};
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, time_to_text};

/// A resource's workspace as the guard sees it (see [`Store::place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub workspace_id: String,
    pub role: Option<Role>,
    /// The workspace's board version when this was read.
    pub board_version: i64,
}

fn role(row: &AnyRow) -> StoreResult<Role> {
    parse_role(&row.text("role")?)
}

fn parse_role(text: &str) -> StoreResult<Role> {
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

    /// What the guard needs about the resource a route's scope names, in one
    /// read: its workspace, the caller's role there (`user_id` `None`: no
    /// role) and the workspace's board version. `None` when the resource does
    /// not exist.
    pub async fn place(&self, scope: Scope, id: &str, user_id: Option<&str>) -> StoreResult<Option<Place>> {
        // Static text per scope (sqlx refuses built SQL): the resource joined
        // to its workspace, then the caller's membership.
        macro_rules! place_sql {
            ($from:literal, $key:literal) => {
                concat!(
                    "SELECT w.id AS ws, m.role AS role, CAST(w.board_version + (SELECT COALESCE(SUM(b.n), 0) \
                     FROM board_version_stripes b WHERE b.workspace_id = w.id) AS BIGINT) AS board_version FROM ",
                    $from,
                    " LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2 WHERE ",
                    $key,
                    " = $1"
                )
            };
        }
        let sql = match scope {
            Scope::Workspace | Scope::QueryWorkspace => place_sql!("workspaces w", "w.id"),
            Scope::Task => place_sql!("tasks x JOIN workspaces w ON w.id = x.workspace_id", "x.id"),
            Scope::Automation => place_sql!("automations x JOIN workspaces w ON w.id = x.workspace_id", "x.id"),
            Scope::Trigger => place_sql!(
                "automation_triggers x JOIN automations a ON a.id = x.automation_id JOIN workspaces w ON w.id = a.workspace_id",
                "x.id"
            ),
            Scope::Run => place_sql!(
                "automation_runs x JOIN automations a ON a.id = x.automation_id JOIN workspaces w ON w.id = a.workspace_id",
                "x.id"
            ),
            Scope::Session => place_sql!(
                "agent_sessions x JOIN tasks t ON t.id = x.task_id JOIN workspaces w ON w.id = t.workspace_id",
                "x.id"
            ),
        };
        // No user binds an id no member has (ids are never empty).
        let row = sqlx::query(sql)
            .bind(id)
            .bind(user_id.unwrap_or_default())
            .fetch_optional(&mut *self.read().await?)
            .await?;
        let Some(r) = row else { return Ok(None) };
        let role = r.opt_text("role")?.as_deref().map(parse_role).transpose()?;
        Ok(Some(Place {
            workspace_id: r.text("ws")?,
            role,
            board_version: r.int("board_version")?,
        }))
    }
}
