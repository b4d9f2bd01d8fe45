//! What run recovery reads and writes: runs whose agent turn has no live
//! lease (its replica died), how often each was resumed, and the sessions a
//! dead replica left "running".

use chrono::{DateTime, Utc};

use super::rows::RowExt;
use super::{Store, StoreResult, time_to_text};

/// An open run nobody is driving.
#[derive(Debug, Clone)]
pub struct Orphan {
    pub run_id: String,
    pub task_id: String,
    pub automation_id: String,
    pub recoveries: i64,
}

impl Store {
    /// Open runs (`task_created`, task not archived) whose turn lease is
    /// missing or expired.
    pub async fn orphaned_runs(&self, now: DateTime<Utc>) -> StoreResult<Vec<Orphan>> {
        sqlx::query(
            "SELECT r.id, r.task_id, r.automation_id, r.recoveries FROM automation_runs r \
             JOIN tasks t ON t.id = r.task_id \
             LEFT JOIN leases l ON l.name = 'run:' || r.task_id \
             WHERE r.status = 'task_created' AND t.archived_at IS NULL AND t.origin = 'automation_run' \
             AND (l.name IS NULL OR l.expires_at <= $1) \
             ORDER BY r.created_at, r.id LIMIT 100",
        )
        .bind(time_to_text(now))
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(|r| {
            Ok(Orphan {
                run_id: r.text("id")?,
                task_id: r.text("task_id")?,
                automation_id: r.text("automation_id")?,
                recoveries: r.int("recoveries")?,
            })
        })
        .collect()
    }

    /// Counts one resume of a run.
    pub async fn note_recovery(&self, run_id: &str) -> StoreResult<()> {
        self.write_text(
            "UPDATE automation_runs SET recoveries = recoveries + 1 WHERE id = $1",
            vec![run_id.to_string()],
        )
        .await
    }

    /// The run row answering an `automation.triggered` event, if written.
    pub async fn run_for_event(&self, event_id: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query("SELECT id FROM automation_runs WHERE event_id = $1")
            .bind(event_id)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        row.map(|r| r.text("id")).transpose()
    }

    /// Sessions left starting or running by a replica that stopped: no live
    /// lease of their own (`session:{id}`, held through each turn), and not
    /// the turn of a run still open (run recovery ends and resumes those).
    pub async fn orphaned_sessions(&self, now: DateTime<Utc>) -> StoreResult<Vec<String>> {
        sqlx::query(
            "SELECT s.id FROM agent_sessions s \
             LEFT JOIN leases l ON l.name = 'session:' || s.id \
             WHERE s.state IN ('STARTING', 'RUNNING') AND (l.name IS NULL OR l.expires_at <= $1) \
             AND NOT EXISTS (SELECT 1 FROM automation_runs r WHERE r.task_id = s.task_id AND r.status = 'task_created') \
             ORDER BY s.id LIMIT 100",
        )
        .bind(time_to_text(now))
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(|r| r.text("id"))
        .collect()
    }

    /// A session whose turn died with its replica waits for input again,
    /// saying why: the conversation goes on with the next reply.
    pub async fn reopen_session(&self, id: &str, reason: &str) -> StoreResult<()> {
        self.write_text(
            "UPDATE agent_sessions SET state = 'WAITING_FOR_INPUT', stop_reason = $2 \
             WHERE id = $1 AND state IN ('STARTING', 'RUNNING')",
            vec![id.to_string(), reason.to_string()],
        )
        .await
    }

    /// Ends the sessions of a task still marked starting or running: their
    /// process died with its replica.
    pub async fn end_orphaned_sessions(&self, task_id: &str, reason: &str, now: DateTime<Utc>) -> StoreResult<()> {
        self.write_text(
            "UPDATE agent_sessions SET state = 'FAILED', stop_reason = $2, ended_at = $3 \
             WHERE task_id = $1 AND state IN ('STARTING', 'RUNNING')",
            vec![task_id.to_string(), reason.to_string(), time_to_text(now)],
        )
        .await
    }
}
