use chrono::{DateTime, Utc};
use kandev_core::api::{Automation, Run};
use kandev_core::run_status::{KEEP_WORKTREES, RunStatus, RunTaskFacts, derive_status, summary_excerpt};
use serde_json::Value;
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, time_to_text, unique_or};

/// The `data` of an `automation_run.failed` notification, whether the run
/// failed before or after its task existed: receivers see one shape.
fn run_failed_data(run_id: &str, automation_id: &str, error: &str) -> Value {
    serde_json::json!({"run_id": run_id, "automation_id": automation_id, "error": error})
}

/// A run row to write.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub automation_id: String,
    pub trigger_id: String,
    pub trigger_type: String,
    pub task_id: String,
    pub status: RunStatus,
    pub dedup_key: String,
    pub trigger_data: Value,
    pub error_message: String,
    /// The `automation.triggered` event it answers (empty for rows the
    /// firing path writes itself).
    pub event_id: String,
}

/// A stored run row, before read-time derivation.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub id: String,
    pub automation_id: String,
    pub trigger_id: String,
    pub trigger_type: String,
    pub task_id: String,
    pub status: RunStatus,
    pub dedup_key: String,
    pub created_at: DateTime<Utc>,
}

pub type RunView = Run;

const SESSION_PRIMARY: &str = "SELECT s.{col} FROM agent_sessions s WHERE s.task_id = r.task_id AND s.is_primary = 1 \
    ORDER BY s.started_at DESC, s.id DESC LIMIT 1";

fn view_sql(filter: &str) -> String {
    let session = |col: &str| SESSION_PRIMARY.replace("{col}", col);
    format!(
        "SELECT r.id, r.automation_id, r.trigger_id, r.trigger_type, r.task_id, r.status, r.dedup_key, r.trigger_data, \
         r.error_message, r.created_at, a.name AS automation_name, t.id AS t_id, t.archived_at AS t_archived, \
         ({}) AS session_id, ({}) AS session_state, \
         (SELECT m.content FROM session_messages m JOIN agent_sessions s ON s.id = m.session_id \
          WHERE s.task_id = r.task_id AND m.role = 'agent' AND m.kind = 'message' \
          ORDER BY m.created_at DESC, m.seq DESC LIMIT 1) AS last_message \
         FROM automation_runs r JOIN automations a ON a.id = r.automation_id LEFT JOIN tasks t ON t.id = r.task_id \
         WHERE {filter} ORDER BY r.created_at DESC, r.id DESC LIMIT $2",
        session("id"),
        session("state"),
    )
}

fn run_view(row: &AnyRow, with_name: bool) -> StoreResult<Run> {
    let stored = row.text("status")?;
    let stored = RunStatus::parse(&stored).ok_or_else(|| StoreError::Corrupt(format!("run status {stored}")))?;
    let exists = row.opt_text("t_id")?.is_some();
    let facts = RunTaskFacts {
        exists,
        archived: row.opt_text("t_archived")?.is_some(),
        primary_session_cancelled: row.opt_text("session_state")?.as_deref() == Some("CANCELLED"),
    };
    Ok(Run {
        id: row.text("id")?,
        automation_id: row.text("automation_id")?,
        trigger_id: row.text("trigger_id")?,
        trigger_type: row.text("trigger_type")?,
        task_id: if exists { row.text("task_id")? } else { String::new() },
        status: derive_status(stored, facts),
        dedup_key: row.text("dedup_key")?,
        trigger_data: row.json("trigger_data")?,
        error_message: row.text("error_message")?,
        summary: row
            .opt_text("last_message")?
            .map(|m| summary_excerpt(&m))
            .unwrap_or_default(),
        session_id: row.opt_text("session_id")?.unwrap_or_default(),
        automation_name: if with_name {
            Some(row.text("automation_name")?)
        } else {
            None
        },
        workspace_id: None,
        created_at: row.time("created_at")?,
    })
}

fn record(row: &AnyRow) -> StoreResult<RunRecord> {
    let stored = row.text("status")?;
    Ok(RunRecord {
        id: row.text("id")?,
        automation_id: row.text("automation_id")?,
        trigger_id: row.text("trigger_id")?,
        trigger_type: row.text("trigger_type")?,
        task_id: row.text("task_id")?,
        status: RunStatus::parse(&stored).ok_or_else(|| StoreError::Corrupt(format!("run status {stored}")))?,
        dedup_key: row.text("dedup_key")?,
        created_at: row.time("created_at")?,
    })
}

const RECORD_COLUMNS: &str = "id, automation_id, trigger_id, trigger_type, task_id, status, dedup_key, created_at";

/// [`Store::insert_run`] on a transaction's connection.
pub async fn insert_run_on(conn: &mut sqlx::AnyConnection, run: &NewRun, now: DateTime<Utc>) -> StoreResult<String> {
    let id = new_id();
    sqlx::query(
            "INSERT INTO automation_runs (id, automation_id, trigger_id, trigger_type, task_id, status, dedup_key, trigger_data, error_message, created_at, event_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&id)
        .bind(&run.automation_id)
        .bind(&run.trigger_id)
        .bind(&run.trigger_type)
        .bind(&run.task_id)
        .bind(run.status.as_str())
        .bind(&run.dedup_key)
        .bind(run.trigger_data.to_string())
        .bind(&run.error_message)
        .bind(time_to_text(now))
        .bind(&run.event_id)
        .execute(conn)
        .await
        .map_err(unique_or("this firing already has its run"))?;
    Ok(id)
}

impl Store {
    /// Writes a run row. A key (or an event) that already has its row is a
    /// `Conflict`: the unique indexes are the atomic claim on a firing.
    pub async fn insert_run(&self, run: &NewRun, now: DateTime<Utc>) -> StoreResult<String> {
        let mut conn = self.writer().await?;
        insert_run_on(&mut conn, run, now).await
    }

    /// A run that failed before its task existed, and, when its automation
    /// is known (`about`: workspace id and automation name), the workspace's
    /// `automation_run.failed` notifications in the same transaction. A row
    /// the event already has (a redelivery) is a `Conflict` and notifies
    /// nobody again.
    pub async fn insert_pre_task_failure(
        &self,
        run: &NewRun,
        about: Option<(&str, &str)>,
        now: DateTime<Utc>,
    ) -> StoreResult<String> {
        let mut tx = self.write_tx().await?;
        let id = insert_run_on(&mut tx, run, now).await?;
        if let Some((workspace_id, automation_name)) = about {
            let subject = kandev_core::notify::Subject {
                workspace_id: workspace_id.to_string(),
                task_id: String::new(),
                task_title: automation_name.to_string(),
                detail: run.error_message.clone(),
                data: run_failed_data(&id, &run.automation_id, &run.error_message),
            };
            super::notifications::enqueue_on(&mut tx, kandev_core::notify::RUN_FAILED, &subject, None, now).await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    /// Whether a non-empty key is already on a run row of this automation, in
    /// any status. Unchanged for every trigger type.
    pub async fn has_run_with_dedup_key(&self, automation_id: &str, key: &str) -> StoreResult<bool> {
        if key.is_empty() {
            return Ok(false);
        }
        let row = sqlx::query("SELECT COUNT(*) AS n FROM automation_runs WHERE automation_id = $1 AND dedup_key = $2")
            .bind(automation_id)
            .bind(key)
            .fetch_one(&mut *self.read().await?)
            .await?;
        Ok(row.int("n")? > 0)
    }

    /// Everything admission reads, in one round trip: the automation with its
    /// repositories (or `NotFound`; enough to write its run), whether `key`
    /// already has a run, and its open runs — `task_created` rows whose task
    /// exists, is not archived, and whose primary session is not cancelled.
    pub async fn admission(&self, automation_id: &str, key: &str) -> StoreResult<(Automation, bool, i64)> {
        let (automation, row) = self
            .automation_with(
                automation_id,
                "(SELECT COUNT(*) FROM automation_runs d WHERE d.automation_id = a.id AND d.dedup_key = $2 AND $2 <> '') AS seen, \
                 (SELECT COUNT(*) FROM automation_runs r JOIN tasks t ON t.id = r.task_id \
                  WHERE r.automation_id = a.id AND r.status = 'task_created' AND t.archived_at IS NULL \
                  AND NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.task_id = t.id AND s.is_primary = 1 AND s.state = 'CANCELLED')) AS open",
                key,
            )
            .await?;
        Ok((automation, row.int("seen")? > 0, row.int("open")?))
    }

    /// Finalises a run by its task: only the newest `task_created` row changes,
    /// nothing happens when there is none, and the dedup key is never touched.
    /// Returns the automation id of the row that changed.
    pub async fn mark_run_terminal_by_task(
        &self,
        task_id: &str,
        status: RunStatus,
        error: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<String>> {
        let row = sqlx::query(
            "SELECT id, automation_id FROM automation_runs WHERE task_id = $1 AND status = 'task_created' \
             ORDER BY created_at DESC, id DESC LIMIT 1",
        )
        .bind(task_id)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let update = sqlx::query(
            "UPDATE automation_runs SET status = $2, error_message = $3 WHERE id = $1 AND status = 'task_created'",
        )
        .bind(row.text("id")?)
        .bind(status.as_str())
        .bind(error);
        if status != RunStatus::Failed {
            update.execute(&mut *self.writer().await?).await?;
            return Ok(Some(row.text("automation_id")?));
        }
        // A failed run notifies, once: only the write that made it failed
        // queues the notification, in the same transaction.
        let mut tx = self.write_tx().await?;
        if update.execute(&mut *tx).await?.rows_affected() == 1 {
            let data = run_failed_data(&row.text("id")?, &row.text("automation_id")?, error);
            let subject = super::notifications::task_subject_on(&mut tx, task_id, error.to_string(), data).await?;
            if let Some(subject) = subject {
                super::notifications::enqueue_on(&mut tx, kandev_core::notify::RUN_FAILED, &subject, None, now).await?;
            }
        }
        tx.commit().await?;
        Ok(Some(row.text("automation_id")?))
    }

    pub async fn get_run_record(&self, id: &str) -> StoreResult<RunRecord> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {RECORD_COLUMNS} FROM automation_runs WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        record(&row)
    }

    /// Raw rows of an automation, newest first (tests and retention).
    pub async fn list_run_records(&self, automation_id: &str) -> StoreResult<Vec<RunRecord>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {RECORD_COLUMNS} FROM automation_runs WHERE automation_id = $1 ORDER BY created_at DESC, id DESC"
        )))
        .bind(automation_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(record)
        .collect()
    }

    /// The run log of one automation, with read-time statuses.
    pub async fn list_runs(&self, automation_id: &str, limit: i64) -> StoreResult<Vec<Run>> {
        sqlx::query(AssertSqlSafe(view_sql("r.automation_id = $1")))
            .bind(automation_id)
            .bind(limit)
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(|r| run_view(r, false))
            .collect()
    }

    /// The workspace feed, with automation names.
    pub async fn list_workspace_runs(&self, workspace_id: &str, limit: i64) -> StoreResult<Vec<Run>> {
        sqlx::query(AssertSqlSafe(view_sql("a.workspace_id = $1")))
            .bind(workspace_id)
            .bind(limit)
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(|r| run_view(r, true))
            .collect()
    }

    pub async fn delete_run(&self, id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM automation_runs WHERE id = $1")
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes every run row of an automation (its dedup memory) and returns
    /// the task ids they pointed at.
    pub async fn delete_runs(&self, automation_id: &str) -> StoreResult<Vec<String>> {
        let mut tx = self.write_tx().await?;
        let rows = sqlx::query("SELECT task_id FROM automation_runs WHERE automation_id = $1 AND task_id <> ''")
            .bind(automation_id)
            .fetch_all(&mut *tx)
            .await?;
        let tasks = rows
            .iter()
            .map(|r| r.text("task_id"))
            .collect::<StoreResult<Vec<_>>>()?;
        sqlx::query("DELETE FROM automation_runs WHERE automation_id = $1")
            .bind(automation_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(tasks)
    }

    /// The run row (if any) whose task is this one.
    pub async fn run_for_task(&self, task_id: &str) -> StoreResult<Option<RunRecord>> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {RECORD_COLUMNS} FROM automation_runs WHERE task_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1"
        )))
        .bind(task_id)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        row.as_ref().map(record).transpose()
    }
}

/// The stored statuses that are not terminal, as an SQL list (`'a', 'b'`).
fn not_terminal_sql() -> String {
    RunStatus::ALL
        .iter()
        .filter(|s| !s.is_terminal())
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Store {
    /// Retention's view of an automation's runs, newest first, in one query:
    /// whether each run's task still has a worktree and whether it is in use.
    /// Only the rows retention can act on come back — the newest
    /// [`KEEP_WORKTREES`] terminal runs (which it skips) and runs whose task
    /// still holds a worktree — so a finished turn costs the same after ten
    /// runs as after ten thousand; `worktrees_to_reclaim` gives the answer it
    /// would give on the full list.
    pub async fn retention_candidates(
        &self,
        automation_id: &str,
    ) -> StoreResult<Vec<kandev_core::run_status::RetentionCandidate>> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT r.task_id, r.status, \
             CAST(CASE WHEN EXISTS (SELECT 1 FROM agent_sessions s WHERE s.task_id = r.task_id AND s.worktree_path <> '') THEN 1 ELSE 0 END AS BIGINT) AS live, \
             CAST(CASE WHEN EXISTS (SELECT 1 FROM agent_sessions s WHERE s.task_id = r.task_id AND s.state IN ('STARTING', 'RUNNING')) THEN 1 ELSE 0 END AS BIGINT) AS busy \
             FROM automation_runs r WHERE r.automation_id = $1 AND r.task_id <> '' AND ( \
               r.id IN (SELECT k.id FROM automation_runs k WHERE k.automation_id = $1 AND k.task_id <> '' \
                        AND k.status NOT IN ({open}) ORDER BY k.created_at DESC, k.id DESC LIMIT {KEEP_WORKTREES}) \
               OR r.task_id IN (SELECT s.task_id FROM agent_sessions s WHERE s.worktree_path <> '')) \
             ORDER BY r.created_at DESC, r.id DESC",
            open = not_terminal_sql(),
        )))
        .bind(automation_id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let status = r.text("status")?;
                let status =
                    RunStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("run status {status}")))?;
                Ok(kandev_core::run_status::RetentionCandidate {
                    run_id: r.text("task_id")?,
                    terminal: status.is_terminal(),
                    has_worktree: r.flag("live")?,
                    in_use: r.flag("busy")?,
                })
            })
            .collect()
    }
}
