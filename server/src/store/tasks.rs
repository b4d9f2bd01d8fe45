use chrono::{DateTime, Utc};
use kandev_core::api::{Actor, Comment, Origin, Task, TaskEvent};
use kandev_core::board::TaskStatus;
use serde_json::Value;
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, one_row, time_to_text};

pub type TaskRecord = Task;
pub type EventRecord = TaskEvent;

/// A task to insert.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub workspace_id: String,
    pub title: String,
    pub description: String,
    pub status: TaskStatus,
    pub origin: Origin,
    pub repository_id: Option<String>,
    pub base_branch: String,
    pub metadata: Value,
}

const COLUMNS: &str = "id, workspace_id, title, description, status, origin, archived_at, repository_id, base_branch, metadata, created_at, updated_at";

fn task(row: &AnyRow) -> StoreResult<Task> {
    let status = row.text("status")?;
    let origin = row.text("origin")?;
    Ok(Task {
        id: row.text("id")?,
        workspace_id: row.text("workspace_id")?,
        title: row.text("title")?,
        description: row.text("description")?,
        status: TaskStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("status {status}")))?,
        origin: Origin::parse(&origin).ok_or_else(|| StoreError::Corrupt(format!("origin {origin}")))?,
        archived_at: row.opt_time("archived_at")?,
        repository_id: row.opt_text("repository_id")?,
        base_branch: row.text("base_branch")?,
        metadata: row.json("metadata")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
    })
}

fn event(row: &AnyRow) -> StoreResult<TaskEvent> {
    // An unreadable actor (hand-edited, or from a future version) reads as the system.
    let actor = serde_json::from_value(row.json("actor")?).unwrap_or(Actor::System);
    Ok(TaskEvent {
        id: row.text("id")?,
        task_id: row.text("task_id")?,
        kind: row.text("kind")?,
        payload: row.json("payload")?,
        actor,
        created_at: row.time("created_at")?,
    })
}

/// Inserts a task on `conn` (a transaction's connection); returns its id.
/// Inserts a task and answers it as stored (`RETURNING`: no second read).
pub async fn insert_task_on(conn: &mut sqlx::AnyConnection, t: &NewTask, now: DateTime<Utc>) -> StoreResult<Task> {
    let row = sqlx::query(AssertSqlSafe(format!(
        "INSERT INTO tasks ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9, $10, $10) RETURNING {COLUMNS}"
    )))
    .bind(new_id())
    .bind(&t.workspace_id)
    .bind(&t.title)
    .bind(&t.description)
    .bind(t.status.as_str())
    .bind(t.origin.as_str())
    .bind(t.repository_id.clone())
    .bind(&t.base_branch)
    .bind(t.metadata.to_string())
    .bind(time_to_text(now))
    .fetch_one(conn)
    .await?;
    task(&row)
}

impl Store {
    pub async fn create_task(&self, t: &NewTask, now: DateTime<Utc>) -> StoreResult<Task> {
        let mut conn = self.writer().await?;
        insert_task_on(&mut conn, t, now).await
    }

    /// Creates a task and records its first event (`created`) in one
    /// transaction: a crash never leaves a task without the event that says
    /// who made it.
    pub async fn create_task_recording(
        &self,
        t: &NewTask,
        event: (&str, &Value),
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Task> {
        let mut tx = self.write_tx().await?;
        let task = insert_task_on(&mut tx, t, now).await?;
        add_event_on(&mut tx, &task.id, event.0, event.1, actor, now).await?;
        tx.commit().await?;
        Ok(task)
    }

    pub async fn get_task(&self, id: &str) -> StoreResult<Task> {
        let row = sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM tasks WHERE id = $1")))
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound)?;
        task(&row)
    }

    /// The board: user tasks (and run tasks when asked), archived ones when asked.
    pub async fn list_tasks(
        &self,
        workspace_id: &str,
        include_archived: bool,
        include_runs: bool,
    ) -> StoreResult<Vec<Task>> {
        let mut sql = format!("SELECT {COLUMNS} FROM tasks WHERE workspace_id = $1");
        if !include_archived {
            sql.push_str(" AND archived_at IS NULL");
        }
        if !include_runs {
            sql.push_str(" AND origin <> 'automation_run'");
        }
        sql.push_str(" ORDER BY created_at, id");
        sqlx::query(AssertSqlSafe(sql))
            .bind(workspace_id)
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(task)
            .collect()
    }

    /// Sets the given fields only, in one statement, so two edits of
    /// different fields never undo each other; returns the task as written.
    pub async fn update_task_text(
        &self,
        id: &str,
        title: Option<&str>,
        description: Option<&str>,
        now: DateTime<Utc>,
    ) -> StoreResult<Task> {
        let (id, title, description) = (
            id.to_string(),
            title.map(str::to_string),
            description.map(str::to_string),
        );
        self.write_one(move |conn| {
            Box::pin(async move {
                let row = sqlx::query(AssertSqlSafe(format!(
                    "UPDATE tasks SET title = COALESCE($2, title), description = COALESCE($3, description), \
                     updated_at = $4 WHERE id = $1 RETURNING {COLUMNS}"
                )))
                .bind(id)
                .bind(title)
                .bind(description)
                .bind(time_to_text(now))
                .fetch_optional(conn)
                .await?
                .ok_or(StoreError::NotFound)?;
                task(&row)
            })
        })
        .await
    }

    /// Compare-and-swap the status: moves only if the task is still in `from`
    /// and (for everyone but the merger) no merge job holds it, and records
    /// `events` (kind, payload) by `actor` in the same transaction, so a crash
    /// never leaves a move without its `status_changed` (or a rejection
    /// without its reason). `false` means it did not move and nothing was written.
    #[allow(clippy::too_many_arguments)]
    pub async fn swap_task_status(
        &self,
        id: &str,
        from: TaskStatus,
        to: TaskStatus,
        now: DateTime<Utc>,
        for_merger: bool,
        events: &[(&str, Value)],
        actor: &Actor,
    ) -> StoreResult<bool> {
        let sql = if for_merger {
            "UPDATE tasks SET status = $3, updated_at = $4 WHERE id = $1 AND status = $2"
        } else {
            "UPDATE tasks SET status = $3, updated_at = $4 WHERE id = $1 AND status = $2 \
             AND NOT EXISTS (SELECT 1 FROM merger_jobs WHERE task_id = $1)"
        };
        let mut tx = self.write_tx().await?;
        let done = sqlx::query(sql)
            .bind(id)
            .bind(from.as_str())
            .bind(to.as_str())
            .bind(time_to_text(now))
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() != 1 {
            return Ok(false);
        }
        for (kind, payload) in events {
            add_event_on(&mut tx, id, kind, payload, actor, now).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    pub async fn delete_task(&self, id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM tasks WHERE id = $1")
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sets `archived_at` if unset. `Ok(true)` when it was already archived.
    /// Archives the task and records `event` by `actor` in one transaction:
    /// a crash between the two would leave an archived task whose archive no
    /// retry ever records (the retry sees it already archived). `true` when
    /// it was archived already.
    pub async fn archive_task(&self, id: &str, event: &str, actor: &Actor, now: DateTime<Utc>) -> StoreResult<bool> {
        let mut tx = self.write_tx().await?;
        let done =
            sqlx::query("UPDATE tasks SET archived_at = $2, updated_at = $2 WHERE id = $1 AND archived_at IS NULL")
                .bind(id)
                .bind(time_to_text(now))
                .execute(&mut *tx)
                .await?;
        if done.rows_affected() == 1 {
            add_event_on(&mut tx, id, event, &Value::Object(Default::default()), actor, now).await?;
            tx.commit().await?;
            return Ok(false);
        }
        drop(tx);
        self.get_task(id).await.map(|_| true)
    }

    /// Unarchives the task and records `event`, together.
    pub async fn unarchive_task(&self, id: &str, event: &str, actor: &Actor, now: DateTime<Utc>) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query("UPDATE tasks SET archived_at = NULL, updated_at = $2 WHERE id = $1")
            .bind(id)
            .bind(time_to_text(now))
            .execute(&mut *tx)
            .await?;
        one_row(done)?;
        add_event_on(&mut tx, id, event, &Value::Object(Default::default()), actor, now).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The two facts the merged trigger needs: the task's current workspace and
    /// its origin. `Ok(None)` when no such task exists.
    pub async fn task_workspace_and_origin(&self, id: &str) -> StoreResult<Option<(String, Origin)>> {
        let row = sqlx::query("SELECT workspace_id, origin FROM tasks WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let origin = row.text("origin")?;
        let origin = Origin::parse(&origin).ok_or_else(|| StoreError::Corrupt(format!("origin {origin}")))?;
        Ok(Some((row.text("workspace_id")?, origin)))
    }

    pub async fn add_comment(
        &self,
        task_id: &str,
        body: &str,
        author: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment> {
        let id = new_id();
        sqlx::query("INSERT INTO task_comments (id, task_id, body, author, created_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(&id)
            .bind(task_id)
            .bind(body)
            .bind(author)
            .bind(time_to_text(now))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(Comment {
            id,
            task_id: task_id.into(),
            body: body.into(),
            author: author.into(),
            created_at: now,
        })
    }

    /// Comments, oldest first.
    pub async fn list_comments(&self, task_id: &str) -> StoreResult<Vec<Comment>> {
        let rows = sqlx::query("SELECT id, task_id, body, author, created_at FROM task_comments WHERE task_id = $1 ORDER BY created_at, id")
            .bind(task_id)
            .fetch_all(&mut *self.read().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Comment {
                    id: r.text("id")?,
                    task_id: r.text("task_id")?,
                    body: r.text("body")?,
                    author: r.text("author")?,
                    created_at: r.time("created_at")?,
                })
            })
            .collect()
    }

    pub async fn add_event(
        &self,
        task_id: &str,
        kind: &str,
        payload: &Value,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<TaskEvent> {
        // The event and its notifications commit together: a crash loses
        // both or neither.
        let mut tx = self.write_tx().await?;
        let event = add_event_on(&mut tx, task_id, kind, payload, actor, now).await?;
        tx.commit().await?;
        Ok(event)
    }

    /// Events, oldest first.
    pub async fn list_events(&self, task_id: &str) -> StoreResult<Vec<TaskEvent>> {
        sqlx::query("SELECT id, task_id, kind, payload, actor, created_at FROM task_events WHERE task_id = $1 ORDER BY seq, created_at, id")
            .bind(task_id)
            .fetch_all(&mut *self.read().await?)
            .await?
            .iter()
            .map(event)
            .collect()
    }
}

/// Appends a task event (and the notifications it causes) inside the
/// caller's transaction.
async fn add_event_on(
    conn: &mut sqlx::AnyConnection,
    task_id: &str,
    kind: &str,
    payload: &Value,
    actor: &Actor,
    now: DateTime<Utc>,
) -> StoreResult<TaskEvent> {
    let id = new_id();
    let actor_json = serde_json::to_string(actor).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    sqlx::query(
        "INSERT INTO task_events (id, task_id, seq, kind, payload, actor, created_at) \
         SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5, $6 FROM task_events WHERE task_id = $2",
    )
    .bind(&id)
    .bind(task_id)
    .bind(kind)
    .bind(payload.to_string())
    .bind(actor_json)
    .bind(time_to_text(now))
    .execute(&mut *conn)
    .await?;
    if let Some(notification) = kandev_core::notify::for_task_event(kind, actor) {
        let detail = kandev_core::notify::detail(payload);
        if let Some(subject) = super::notifications::task_subject_on(conn, task_id, detail, payload.clone()).await? {
            super::notifications::enqueue_on(conn, notification, &subject, None, now).await?;
        }
    }
    Ok(TaskEvent {
        id,
        task_id: task_id.into(),
        kind: kind.into(),
        payload: payload.clone(),
        actor: actor.clone(),
        created_at: now,
    })
}
