//! Users, their API tokens and browser sessions, and the sign-in throttle.
//! Tokens and session ids are stored only as SHA-256 hashes.

use chrono::{DateTime, Utc};
use kandev_core::api::{TokenInfo, User};
use sqlx::any::AnyRow;

use super::rows::{RowExt, flag};
use super::{Store, StoreError, StoreResult, new_id, one_row, time_to_text};

/// A user with the password hash the sign-in needs.
#[derive(Debug, Clone)]
pub struct UserRecord {
    pub user: User,
    pub password_hash: String,
}

pub(super) fn user(row: &impl RowExt) -> StoreResult<UserRecord> {
    Ok(UserRecord {
        user: User {
            id: row.text("id")?,
            username: row.text("username")?,
            admin: row.flag("admin")?,
            created_at: row.time("created_at")?,
        },
        password_hash: row.text("password_hash")?,
    })
}

fn token(row: &AnyRow) -> StoreResult<TokenInfo> {
    Ok(TokenInfo {
        id: row.text("id")?,
        name: row.text("name")?,
        created_at: row.time("created_at")?,
        last_used_at: row.opt_time("last_used_at")?,
    })
}

/// A unique index refused the row.
fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

const USER_COLUMNS: &str = "id, username, password_hash, admin, created_at";

impl Store {
    /// Inserts a user; `Conflict` when the (normalised) username is taken.
    pub async fn create_user(
        &self,
        username: &str,
        password_hash: &str,
        admin: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<User> {
        let id = new_id();
        let done = sqlx::query(
            "INSERT INTO users (id, username, password_hash, admin, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&id)
        .bind(username)
        .bind(password_hash)
        .bind(flag(admin))
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await;
        match done {
            Ok(_) => Ok(self.get_user(&id).await?.user),
            Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict(format!("user {username} exists"))),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn get_user(&self, id: &str) -> StoreResult<UserRecord> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound)?;
        user(&row)
    }

    pub async fn user_by_name(&self, username: &str) -> StoreResult<Option<UserRecord>> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE username = $1");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(username)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .as_ref()
            .map(user)
            .transpose()
    }

    pub async fn list_users(&self) -> StoreResult<Vec<User>> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users ORDER BY username");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(|r| user(r).map(|u| u.user))
            .collect()
    }

    pub async fn count_users(&self) -> StoreResult<i64> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM users")
            .fetch_one(&mut *self.read().await?)
            .await?;
        row.int("n")
    }

    /// Deletes a user with its tokens, sessions and memberships.
    /// Deletes a user with its tokens, sessions and memberships, refusing
    /// (`Conflict`, naming them) while it is the only owner of a workspace:
    /// like a member change, a deletion never leaves a workspace ownerless.
    /// Those workspaces' rows are touched first, in id order, so a concurrent
    /// member change in one of them waits for this (and two deletions cannot
    /// deadlock).
    pub async fn delete_user(&self, id: &str) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        let owned = sqlx::query(
            "SELECT m.workspace_id, w.name FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id \
             WHERE m.user_id = $1 AND m.role = 'owner' ORDER BY m.workspace_id",
        )
        .bind(id)
        .fetch_all(&mut *tx)
        .await?;
        let mut sole = vec![];
        for row in &owned {
            let owners = super::members::lock_and_count_owners(&mut tx, &row.text("workspace_id")?).await?;
            if !kandev_core::access::leaves_an_owner(owners, true, None) {
                sole.push(format!("\"{}\"", row.text("name")?));
            }
        }
        if !sole.is_empty() {
            return Err(StoreError::Conflict(format!(
                "this user is the only owner of {}: give each another owner first",
                sole.join(", ")
            )));
        }
        for table in ["api_tokens", "web_sessions", "workspace_members"] {
            sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE user_id = $1")))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        let done = sqlx::query("DELETE FROM users WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        one_row(done)?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn create_token(
        &self,
        user_id: &str,
        name: &str,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<TokenInfo> {
        let id = new_id();
        sqlx::query(
            "INSERT INTO api_tokens (id, user_id, name, token_hash, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, NULL)",
        )
        .bind(&id)
        .bind(user_id)
        .bind(name)
        .bind(token_hash)
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(TokenInfo {
            id,
            name: name.into(),
            created_at: now,
            last_used_at: None,
        })
    }

    pub async fn list_tokens(&self, user_id: &str) -> StoreResult<Vec<TokenInfo>> {
        sqlx::query(
            "SELECT id, name, created_at, last_used_at FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id",
        )
        .bind(user_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(token)
        .collect()
    }

    /// Revokes one of the user's tokens; another user's token is `NotFound`.
    pub async fn delete_token(&self, user_id: &str, id: &str) -> StoreResult<()> {
        let done = sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user_id)
            .execute(&mut *self.writer().await?)
            .await?;
        one_row(done)
    }

    pub async fn create_web_session(
        &self,
        id_hash: &str,
        user_id: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query("INSERT INTO web_sessions (id_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)")
            .bind(id_hash)
            .bind(user_id)
            .bind(time_to_text(now))
            .bind(time_to_text(expires_at))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Ends a browser session, and every expired one with it.
    pub async fn delete_web_session(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<()> {
        sqlx::query("DELETE FROM web_sessions WHERE id_hash = $1 OR expires_at <= $2")
            .bind(id_hash)
            .bind(time_to_text(now))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Forgets expired sessions, and failure counts a day past their wait
    /// (names an attacker sprayed would otherwise pile up).
    pub async fn prune_access(&self, now: DateTime<Utc>) -> StoreResult<()> {
        sqlx::query("DELETE FROM web_sessions WHERE expires_at <= $1")
            .bind(time_to_text(now))
            .execute(&mut *self.writer().await?)
            .await?;
        sqlx::query("DELETE FROM login_throttle WHERE blocked_until <= $1")
            .bind(time_to_text(now - chrono::Duration::days(1)))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// `(failures, blocked_until)` for a username, if it has failed lately.
    pub async fn login_throttle(&self, username: &str) -> StoreResult<Option<(u32, DateTime<Utc>)>> {
        let row = sqlx::query("SELECT failures, blocked_until FROM login_throttle WHERE username = $1")
            .bind(username)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let failures = u32::try_from(row.int("failures")?.max(0)).unwrap_or(u32::MAX);
        Ok(Some((failures, row.time("blocked_until")?)))
    }

    /// Claims a sign-in attempt for a username unless it must wait: the
    /// attempt is counted as a failure in advance and further attempts are
    /// held until `hold_until` while its password is checked. One statement,
    /// so two replicas cannot both pass the same due wait, and no failure is
    /// lost to a read-then-write race. `Ok(failures)` with this attempt
    /// counted, or `Err((failures, blocked_until))` on record when the
    /// username must wait.
    pub async fn claim_login_attempt(
        &self,
        username: &str,
        now: DateTime<Utc>,
        hold_until: DateTime<Utc>,
    ) -> StoreResult<Result<u32, (u32, DateTime<Utc>)>> {
        let claimed = sqlx::query(
            "INSERT INTO login_throttle (username, failures, blocked_until) VALUES ($1, 1, $3) \
             ON CONFLICT (username) DO UPDATE SET failures = login_throttle.failures + 1, blocked_until = excluded.blocked_until \
             WHERE login_throttle.blocked_until <= $2 \
             RETURNING failures",
        )
        .bind(username)
        .bind(time_to_text(now))
        .bind(time_to_text(hold_until))
        .fetch_optional(&mut *self.writer().await?)
        .await?;
        if let Some(row) = claimed {
            return Ok(Ok(u32::try_from(row.int("failures")?.max(0)).unwrap_or(u32::MAX)));
        }
        // Refused: the wait still running (or, if the row went meanwhile, none).
        Ok(Err(self.login_throttle(username).await?.unwrap_or((0, now))))
    }

    /// After a claimed attempt failed: the wait its failure count earns. Left
    /// alone if a later attempt has been counted since (its own outcome sets
    /// the wait) or a success cleared the count.
    pub async fn settle_login_failure(
        &self,
        username: &str,
        failures: u32,
        blocked_until: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query("UPDATE login_throttle SET blocked_until = $3 WHERE username = $1 AND failures = $2")
            .bind(username)
            .bind(i64::from(failures))
            .bind(time_to_text(blocked_until))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    pub async fn clear_login_throttle(&self, username: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM login_throttle WHERE username = $1")
            .bind(username)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }
}
