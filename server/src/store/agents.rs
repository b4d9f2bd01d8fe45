use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use kandev_core::api::{AgentProfile, Session, TranscriptMessage};
use serde_json::Value;
use sqlx::any::AnyRow;

use super::rows::{RowExt, flag};
use super::{Store, StoreError, StoreResult, new_id, opt_time_to_text, time_to_text};

/// Session states as stored.
pub mod session_state {
    pub const STARTING: &str = "STARTING";
    pub const RUNNING: &str = "RUNNING";
    pub const WAITING_FOR_INPUT: &str = "WAITING_FOR_INPUT";
    pub const COMPLETED: &str = "COMPLETED";
    pub const FAILED: &str = "FAILED";
    pub const CANCELLED: &str = "CANCELLED";
}

/// A session as the runtime and MCP see it.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    pub session: Session,
    pub profile_id: String,
    pub worktree_path: String,
    /// The agent's ACP session id from the last turn ("" until one is recorded).
    pub acp_session_id: String,
}

fn profile(row: &AnyRow) -> StoreResult<AgentProfile> {
    let args: Vec<String> =
        serde_json::from_value(row.json("args")?).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let env: BTreeMap<String, String> =
        serde_json::from_value(row.json("env")?).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(AgentProfile {
        id: row.text("id")?,
        name: row.text("name")?,
        command: row.text("command")?,
        args,
        env,
        builtin: false,
    })
}

fn session(row: &AnyRow) -> StoreResult<SessionRecord> {
    Ok(SessionRecord {
        session: Session {
            id: row.text("id")?,
            task_id: row.text("task_id")?,
            state: row.text("state")?,
            stop_reason: row.text("stop_reason")?,
            started_at: row.time("started_at")?,
            ended_at: row.opt_time("ended_at")?,
        },
        profile_id: row.text("profile_id")?,
        worktree_path: row.text("worktree_path")?,
        acp_session_id: row.text("acp_session_id")?,
    })
}

const SESSION_COLUMNS: &str =
    "id, task_id, profile_id, state, stop_reason, worktree_path, acp_session_id, started_at, ended_at";

impl Store {
    pub async fn create_agent_profile(&self, p: &AgentProfile, now: DateTime<Utc>) -> StoreResult<AgentProfile> {
        let id = new_id();
        sqlx::query(
            "INSERT INTO agent_profiles (id, name, command, args, env, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&id)
        .bind(&p.name)
        .bind(&p.command)
        .bind(serde_json::to_string(&p.args).unwrap_or_else(|_| "[]".into()))
        .bind(serde_json::to_string(&p.env).unwrap_or_else(|_| "{}".into()))
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        self.get_agent_profile(&id).await
    }

    pub async fn get_agent_profile(&self, id: &str) -> StoreResult<AgentProfile> {
        let row = sqlx::query("SELECT id, name, command, args, env FROM agent_profiles WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound)?;
        profile(&row)
    }

    pub async fn update_agent_profile(&self, p: &AgentProfile) -> StoreResult<()> {
        let done = sqlx::query("UPDATE agent_profiles SET name = $2, command = $3, args = $4, env = $5 WHERE id = $1")
            .bind(&p.id)
            .bind(&p.name)
            .bind(&p.command)
            .bind(serde_json::to_string(&p.args).unwrap_or_else(|_| "[]".into()))
            .bind(serde_json::to_string(&p.env).unwrap_or_else(|_| "{}".into()))
            .execute(&mut *self.writer().await?)
            .await?;
        super::one_row(done)
    }

    pub async fn delete_agent_profile(&self, id: &str) -> StoreResult<()> {
        let done = sqlx::query("DELETE FROM agent_profiles WHERE id = $1")
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        super::one_row(done)
    }

    pub async fn list_agent_profiles(&self) -> StoreResult<Vec<AgentProfile>> {
        sqlx::query("SELECT id, name, command, args, env FROM agent_profiles ORDER BY created_at, id")
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(profile)
            .collect()
    }

    pub async fn create_session(
        &self,
        task_id: &str,
        profile_id: &str,
        worktree: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<SessionRecord> {
        let id = new_id();
        sqlx::query(
            // No token until its first turn mints one; the placeholder is unique
            // and never a hex digest, so no token finds it.
            "INSERT INTO agent_sessions (id, task_id, profile_id, token_hash, state, stop_reason, is_primary, worktree_path, started_at, ended_at) \
             VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8, NULL)",
        )
        .bind(&id)
        .bind(task_id)
        .bind(profile_id)
        .bind(format!("unset:{id}"))
        .bind(session_state::STARTING)
        .bind(flag(true))
        .bind(worktree)
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        self.get_session(&id).await
    }

    pub async fn get_session(&self, id: &str) -> StoreResult<SessionRecord> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {SESSION_COLUMNS} FROM agent_sessions WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        session(&row)
    }

    /// The session whose current turn holds this token (by its SHA-256).
    pub async fn session_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<SessionRecord>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {SESSION_COLUMNS} FROM agent_sessions WHERE token_hash = $1"
        )))
        .bind(token_hash)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        row.as_ref().map(session).transpose()
    }

    pub async fn list_sessions(&self, task_id: &str) -> StoreResult<Vec<Session>> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {SESSION_COLUMNS} FROM agent_sessions WHERE task_id = $1 ORDER BY started_at, id"
        )))
        .bind(task_id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter().map(|r| session(r).map(|s| s.session)).collect()
    }

    pub async fn set_session_state(
        &self,
        id: &str,
        state: &str,
        stop_reason: &str,
        ended_at: Option<DateTime<Utc>>,
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE agent_sessions SET state = $2, stop_reason = $3, ended_at = COALESCE($4, ended_at) WHERE id = $1",
        )
        .bind(id)
        .bind(state)
        .bind(stop_reason)
        .bind(opt_time_to_text(ended_at))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Starts a turn: the session runs, and only the turn's new token (kept
    /// as its SHA-256) opens its tools; the last turn's opens nothing.
    pub async fn begin_turn(&self, id: &str, token_hash: &str) -> StoreResult<()> {
        sqlx::query("UPDATE agent_sessions SET state = $2, stop_reason = '', token_hash = $3 WHERE id = $1")
            .bind(id)
            .bind(session_state::RUNNING)
            .bind(token_hash)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Takes a session waiting for input for a reply's turn: true for exactly
    /// one of several replies racing (on any replica), false for the rest.
    pub async fn claim_waiting_session(&self, id: &str) -> StoreResult<bool> {
        claim_waiting_session_on(&mut *self.writer().await?, id).await
    }

    /// Records the ACP session a turn ran in, for the next reply to load.
    pub async fn set_acp_session_id(&self, id: &str, acp_session_id: &str) -> StoreResult<()> {
        sqlx::query("UPDATE agent_sessions SET acp_session_id = $2 WHERE id = $1")
            .bind(id)
            .bind(acp_session_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    pub async fn set_session_worktree(&self, id: &str, path: &str) -> StoreResult<()> {
        sqlx::query("UPDATE agent_sessions SET worktree_path = $2 WHERE id = $1")
            .bind(id)
            .bind(path)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Appends one transcript message (agents stream many: a lone write).
    pub async fn add_message(&self, session_id: &str, m: &TranscriptMessage) -> StoreResult<()> {
        let (session_id, m) = (session_id.to_string(), m.clone());
        self.write_one(move |conn| {
            Box::pin(async move {
                sqlx::query(
                    "INSERT INTO session_messages (id, session_id, seq, role, kind, content, tool, created_at) \
                     SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5, $6, $7 FROM session_messages WHERE session_id = $2",
                )
                .bind(new_id())
                .bind(session_id)
                .bind(m.role)
                .bind(m.kind)
                .bind(m.content)
                .bind(m.tool.as_ref().map(Value::to_string))
                .bind(time_to_text(m.created_at))
                .execute(conn)
                .await?;
                Ok(())
            })
        })
        .await
    }

    pub async fn list_messages(&self, session_id: &str) -> StoreResult<Vec<TranscriptMessage>> {
        let rows = sqlx::query(
            "SELECT role, kind, content, tool, created_at FROM session_messages WHERE session_id = $1 ORDER BY seq, created_at",
        )
        .bind(session_id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(TranscriptMessage {
                    role: r.text("role")?,
                    kind: r.text("kind")?,
                    content: r.text("content")?,
                    tool: r.opt_text("tool")?.and_then(|t| serde_json::from_str(&t).ok()),
                    created_at: r.time("created_at")?,
                })
            })
            .collect()
    }
}

impl Store {
    /// Marks a task's sessions as having no worktree any more (retention).
    pub async fn clear_worktree(&self, task_id: &str) -> StoreResult<()> {
        sqlx::query("UPDATE agent_sessions SET worktree_path = '' WHERE task_id = $1")
            .bind(task_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }
}

/// `Store::claim_waiting_session` on `conn` (a transaction that also takes
/// the turn's lease).
pub async fn claim_waiting_session_on(conn: &mut sqlx::AnyConnection, id: &str) -> StoreResult<bool> {
    let done = sqlx::query("UPDATE agent_sessions SET state = $2 WHERE id = $1 AND state = $3")
        .bind(id)
        .bind(session_state::STARTING)
        .bind(session_state::WAITING_FOR_INPUT)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}
