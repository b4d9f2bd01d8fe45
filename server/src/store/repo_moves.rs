//! A repository renamed or transferred on GitHub: the workspaces' registered
//! repositories and the trigger filters naming it follow it, in the caller's
//! transaction (beside the link that revealed the move, or alone for a
//! `repository` delivery), so a crash keeps either every old name or every
//! new one. Filters are rewritten by `kandev_core::trigger::moved_repo`.

use kandev_core::trigger::moved_repo::follow_repo_move;
use serde_json::Value;
use sqlx::{AnyConnection, Row};

use super::automations::bump_catalog;
use super::{Store, StoreResult};

/// How much followed a move.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Followed {
    pub repositories: u64,
    pub triggers: u64,
}

/// Renames `from` to `to` wherever it is registered or filtered on. A
/// workspace that registered both names keeps both rows as they are.
pub async fn follow_repository_on(
    conn: &mut AnyConnection,
    from: (&str, &str),
    to: (&str, &str),
) -> StoreResult<Followed> {
    // A rename that only changes case is a rename too: push and CI filters
    // match names exactly.
    if from == to {
        return Ok(Followed::default());
    }
    let repositories = sqlx::query(
        "UPDATE repositories SET owner = $3, name = $4 \
         WHERE provider = 'github' AND lower(owner) = lower($1) AND lower(name) = lower($2) \
         AND (owner <> $3 OR name <> $4) \
         AND NOT EXISTS (SELECT 1 FROM repositories n WHERE n.workspace_id = repositories.workspace_id \
             AND n.id <> repositories.id AND lower(n.owner) = lower($3) AND lower(n.name) = lower($4))",
    )
    .bind(from.0)
    .bind(from.1)
    .bind(to.0)
    .bind(to.1)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    // A coarse text match finds the candidates; the core rule decides.
    let candidates = sqlx::query("SELECT id, config FROM automation_triggers WHERE lower(config) LIKE $1")
        .bind(format!("%{}%", from.1.to_lowercase()))
        .fetch_all(&mut *conn)
        .await?;
    let mut triggers = 0;
    for row in candidates {
        let (id, config): (String, String) = (row.try_get("id")?, row.try_get("config")?);
        let Ok(parsed) = serde_json::from_str::<Value>(&config) else {
            continue;
        };
        if let Some(moved) = follow_repo_move(&parsed, from, to) {
            // Only over the config read: an edit that landed since wins.
            triggers += sqlx::query("UPDATE automation_triggers SET config = $2 WHERE id = $1 AND config = $3")
                .bind(&id)
                .bind(moved.to_string())
                .bind(&config)
                .execute(&mut *conn)
                .await?
                .rows_affected();
        }
    }
    if triggers > 0 {
        bump_catalog(conn).await?;
    }
    Ok(Followed { repositories, triggers })
}

impl Store {
    /// [`follow_repository_on`] in a transaction of its own.
    pub async fn follow_repository(&self, from: (&str, &str), to: (&str, &str)) -> StoreResult<Followed> {
        let mut tx = self.write_tx().await?;
        let followed = follow_repository_on(&mut tx, from, to).await?;
        tx.commit().await?;
        Ok(followed)
    }
}
