use chrono::{DateTime, Utc};
use kandev_core::TriggerType;
use kandev_core::api::{Automation, PatchAutomation, Trigger};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe};

use super::rows::{RowExt, flag};
use super::{Store, StoreError, StoreResult, new_id, one_row, time_to_text};

pub type AutomationRecord = Automation;
pub type TriggerRecord = Trigger;

/// An automation to create, with its triggers and repository selection.
#[derive(Debug, Clone)]
pub struct NewAutomation {
    pub workspace_id: String,
    pub name: String,
    pub description: String,
    pub prompt: String,
    pub task_title_template: String,
    pub agent_profile_id: String,
    pub executor_profile_id: String,
    pub repository_ids: Vec<String>,
    pub no_repository: bool,
    pub enabled: bool,
    pub max_concurrent_runs: i64,
    pub webhook_secret: String,
    pub triggers: Vec<(TriggerType, Value, bool)>,
}

/// An enabled trigger of an enabled automation, as a detector lists it.
#[derive(Debug, Clone)]
pub struct TriggerWithAutomation {
    pub trigger_id: String,
    pub trigger_type: TriggerType,
    /// The stored config text, parsed per evaluation (invalid skips the trigger).
    pub config_raw: String,
    pub automation_id: String,
    pub automation_workspace_id: String,
    pub created_at: DateTime<Utc>,
    pub last_evaluated_at: Option<DateTime<Utc>>,
}

const AUTOMATION_COLUMNS: &str = "id, workspace_id, name, description, prompt, task_title_template, agent_profile_id, \
    executor_profile_id, no_repository, enabled, max_concurrent_runs, last_triggered_at, created_at, updated_at";
const TRIGGER_COLUMNS: &str = "id, automation_id, type, config, enabled, last_evaluated_at, created_at, updated_at";

/// A trigger's column names in a row: as in its table, or prefixed beside
/// its automation's (`list_automations`).
struct TriggerNames {
    id: &'static str,
    automation_id: &'static str,
    ty: &'static str,
    config: &'static str,
    enabled: &'static str,
    last_evaluated_at: &'static str,
    created_at: &'static str,
    updated_at: &'static str,
}

const PLAIN: TriggerNames = TriggerNames {
    id: "id",
    automation_id: "automation_id",
    ty: "type",
    config: "config",
    enabled: "enabled",
    last_evaluated_at: "last_evaluated_at",
    created_at: "created_at",
    updated_at: "updated_at",
};

const JOINED: TriggerNames = TriggerNames {
    id: "t_id",
    automation_id: "t_automation_id",
    ty: "t_type",
    config: "t_config",
    enabled: "t_enabled",
    last_evaluated_at: "t_last_evaluated_at",
    created_at: "t_created_at",
    updated_at: "t_updated_at",
};

/// Between the repository ids folded into one column: a control character
/// no id holds (ids are the server's UUIDs, checked on every write).
const REPOSITORY_SEPARATOR: char = '\u{1f}';

/// The statement behind `list_automations` ($1 the workspace, $2 the
/// separator), built once: the list is on a hot path.
static LIST_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(list_sql);

fn list_sql() -> String {
    let automation: Vec<String> = AUTOMATION_COLUMNS
        .split(", ")
        .map(|c| format!("a.{c} AS {c}"))
        .collect();
    let trigger: Vec<String> = TRIGGER_COLUMNS.split(", ").map(|c| format!("t.{c} AS t_{c}")).collect();
    format!(
        "SELECT {}, {}, (SELECT string_agg(r.repository_id, $2 ORDER BY r.position) \
         FROM automation_repositories r WHERE r.automation_id = a.id) AS repository_ids \
         FROM automations a LEFT JOIN automation_triggers t ON t.automation_id = a.id \
         WHERE a.workspace_id = $1 ORDER BY a.created_at DESC, a.id DESC, t.created_at, t.id",
        automation.join(", "),
        trigger.join(", ")
    )
}

fn trigger(row: &AnyRow) -> StoreResult<Trigger> {
    trigger_named(row, &PLAIN)
}

fn trigger_named(row: &AnyRow, n: &TriggerNames) -> StoreResult<Trigger> {
    let ty = row.text(n.ty)?;
    let raw = row.text(n.config)?;
    Ok(Trigger {
        id: row.text(n.id)?,
        automation_id: row.text(n.automation_id)?,
        trigger_type: TriggerType::parse(&ty).ok_or_else(|| StoreError::Corrupt(format!("trigger type {ty}")))?,
        // stored raw: text that is not JSON is shown as a string rather than lost
        config: serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
        enabled: row.flag(n.enabled)?,
        last_evaluated_at: row.opt_time(n.last_evaluated_at)?,
        created_at: row.time(n.created_at)?,
        updated_at: row.time(n.updated_at)?,
    })
}

fn automation(row: &AnyRow, triggers: Vec<Trigger>, repository_ids: Vec<String>) -> StoreResult<Automation> {
    Ok(Automation {
        id: row.text("id")?,
        workspace_id: row.text("workspace_id")?,
        name: row.text("name")?,
        description: row.text("description")?,
        prompt: row.text("prompt")?,
        task_title_template: row.text("task_title_template")?,
        agent_profile_id: row.text("agent_profile_id")?,
        executor_profile_id: row.text("executor_profile_id")?,
        repository_ids,
        no_repository: row.flag("no_repository")?,
        enabled: row.flag("enabled")?,
        max_concurrent_runs: row.int("max_concurrent_runs")?,
        last_triggered_at: row.opt_time("last_triggered_at")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        triggers,
    })
}

/// Marks the trigger catalogue changed, in the writer's transaction.
pub(super) async fn bump_catalog(conn: &mut AnyConnection) -> StoreResult<()> {
    sqlx::query("UPDATE trigger_catalog SET version = version + 1 WHERE id = 1")
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn insert_trigger(
    conn: &mut AnyConnection,
    automation_id: &str,
    ty: TriggerType,
    config: &Value,
    enabled: bool,
    now: DateTime<Utc>,
) -> StoreResult<String> {
    let id = new_id();
    sqlx::query(
        "INSERT INTO automation_triggers (id, automation_id, type, config, enabled, last_evaluated_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, NULL, $6, $6)",
    )
    .bind(&id)
    .bind(automation_id)
    .bind(ty.as_str())
    .bind(config.to_string())
    .bind(flag(enabled))
    .bind(time_to_text(now))
    .execute(&mut *conn)
    .await?;
    bump_catalog(conn).await?;
    Ok(id)
}

async fn replace_repositories(
    conn: &mut AnyConnection,
    automation_id: &str,
    ids: &[String],
    now: DateTime<Utc>,
) -> StoreResult<()> {
    sqlx::query("DELETE FROM automation_repositories WHERE automation_id = $1")
        .bind(automation_id)
        .execute(&mut *conn)
        .await?;
    for (position, repository_id) in ids.iter().enumerate() {
        sqlx::query(
            "INSERT INTO automation_repositories (id, automation_id, repository_id, position, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(new_id())
        .bind(automation_id)
        .bind(repository_id)
        .bind(position as i64)
        .bind(time_to_text(now))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

impl Store {
    /// Creates the automation, its triggers and its repository selection in
    /// one transaction: either all of it exists afterwards or none of it.
    pub async fn create_automation(&self, a: &NewAutomation, now: DateTime<Utc>) -> StoreResult<Automation> {
        let id = new_id();
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO automations (id, workspace_id, name, description, prompt, task_title_template, agent_profile_id, \
             executor_profile_id, enabled, max_concurrent_runs, webhook_secret, last_triggered_at, created_at, updated_at, \
             no_repository) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL, $12, $12, $13)",
        )
        .bind(&id)
        .bind(&a.workspace_id)
        .bind(&a.name)
        .bind(&a.description)
        .bind(&a.prompt)
        .bind(&a.task_title_template)
        .bind(&a.agent_profile_id)
        .bind(&a.executor_profile_id)
        .bind(flag(a.enabled))
        .bind(a.max_concurrent_runs)
        .bind(&a.webhook_secret)
        .bind(time_to_text(now))
        .bind(flag(a.no_repository))
        .execute(&mut *tx)
        .await?;
        // One microsecond apart, so the triggers read back in the order given
        // (the editor's resolved condition is "the first" of them).
        for (i, (ty, config, enabled)) in a.triggers.iter().enumerate() {
            let at = now + chrono::Duration::microseconds(i as i64);
            insert_trigger(&mut tx, &id, *ty, config, *enabled, at).await?;
        }
        replace_repositories(&mut tx, &id, &a.repository_ids, now).await?;
        tx.commit().await?;
        self.get_automation(&id).await
    }

    pub async fn get_automation(&self, id: &str) -> StoreResult<Automation> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {AUTOMATION_COLUMNS} FROM automations WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        let triggers = self.list_triggers(id).await?;
        let repos = self.automation_repository_ids(id).await?;
        automation(&row, triggers, repos)
    }

    /// What a firing's run needs, in one read: the automation with its
    /// repositories but **without its triggers** (a run needs none), and the
    /// run already written for `event_id`, if any (a redelivered event).
    pub async fn automation_for_run(&self, id: &str, event_id: &str) -> StoreResult<(Automation, Option<String>)> {
        let (automation, row) = self
            .automation_with(
                id,
                "(SELECT id FROM automation_runs WHERE event_id = $2 LIMIT 1) AS answered_run",
                event_id,
            )
            .await?;
        Ok((automation, row.opt_text("answered_run")?))
    }

    /// The automation `id` with its repositories (not its triggers), plus
    /// `extra` columns that may read `arg` as `$2`, in one round trip; the
    /// row carries the extra columns. `NotFound` when it is gone.
    pub(super) async fn automation_with(&self, id: &str, extra: &str, arg: &str) -> StoreResult<(Automation, AnyRow)> {
        let columns: Vec<String> = AUTOMATION_COLUMNS
            .split(',')
            .map(|c| format!("a.{}", c.trim()))
            .collect();
        let mut rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {}, r.repository_id AS run_repository_id, {extra} \
             FROM automations a LEFT JOIN automation_repositories r ON r.automation_id = a.id \
             WHERE a.id = $1 ORDER BY r.position",
            columns.join(", ")
        )))
        .bind(id)
        .bind(arg)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let repos = rows
            .iter()
            .filter_map(|r| r.opt_text("run_repository_id").transpose())
            .collect::<StoreResult<Vec<_>>>()?;
        if rows.is_empty() {
            return Err(StoreError::NotFound);
        }
        let first = rows.swap_remove(0);
        Ok((automation(&first, vec![], repos)?, first))
    }

    /// A workspace's automations, newest first, with triggers and repositories,
    /// in one statement: a row per trigger (one row for an automation with
    /// none), the repositories folded into each row in order. Under load each
    /// statement is a hand-off to the connection's thread and back, which cost
    /// more than the reads; three made this list cost as much as a task write.
    pub async fn list_automations(&self, workspace_id: &str) -> StoreResult<Vec<Automation>> {
        let rows = sqlx::query(AssertSqlSafe(LIST_SQL.as_str()))
            .bind(workspace_id)
            .bind(REPOSITORY_SEPARATOR.to_string())
            .fetch_all(&mut *self.read().await?)
            .await?;
        let mut list: Vec<Automation> = vec![];
        for r in &rows {
            let id = r.text("id")?;
            let a = match list.last_mut() {
                Some(a) if a.id == id => a,
                _ => {
                    let repos = r
                        .opt_text("repository_ids")?
                        .map(|ids| ids.split(REPOSITORY_SEPARATOR).map(str::to_string).collect())
                        .unwrap_or_default();
                    list.push(automation(r, vec![], repos)?);
                    list.last_mut().ok_or(StoreError::NotFound)?
                }
            };
            if r.opt_text(JOINED.id)?.is_some() {
                a.triggers.push(trigger_named(r, &JOINED)?);
            }
        }
        Ok(list)
    }

    /// Writes the fields `edit` names, and only those, in one statement, so
    /// two edits of different fields never undo each other;
    /// `repository_ids` is replaced when given. `edit` is already checked.
    pub async fn update_automation(&self, id: &str, edit: &PatchAutomation, now: DateTime<Utc>) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query(
            "UPDATE automations SET name = COALESCE($2, name), description = COALESCE($3, description), \
             prompt = COALESCE($4, prompt), task_title_template = COALESCE($5, task_title_template), \
             agent_profile_id = COALESCE($6, agent_profile_id), executor_profile_id = COALESCE($7, executor_profile_id), \
             enabled = COALESCE($8, enabled), max_concurrent_runs = COALESCE($9, max_concurrent_runs), updated_at = $10, \
             no_repository = COALESCE($11, no_repository) WHERE id = $1",
        )
        .bind(id)
        .bind(edit.name.as_deref())
        .bind(edit.description.as_deref())
        .bind(edit.prompt.as_deref())
        .bind(edit.task_title_template.as_deref())
        .bind(edit.agent_profile_id.as_deref())
        .bind(edit.executor_profile_id.as_deref())
        .bind(edit.enabled.map(flag))
        .bind(edit.max_concurrent_runs)
        .bind(time_to_text(now))
        .bind(edit.no_repository.map(flag))
        .execute(&mut *tx)
        .await?;
        one_row(done)?;
        if let Some(ids) = &edit.repository_ids {
            replace_repositories(&mut tx, id, ids, now).await?;
        }
        bump_catalog(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn delete_automation(&self, id: &str) -> StoreResult<bool> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query("DELETE FROM automations WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        bump_catalog(&mut tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The trigger catalogue's version stamp (see `automation::index`).
    /// `None` when the row is gone (a hand edit): nothing can be cached then.
    pub async fn trigger_catalog_version(&self) -> StoreResult<Option<i64>> {
        let row = sqlx::query("SELECT version FROM trigger_catalog WHERE id = 1")
            .fetch_optional(&mut *self.read().await?)
            .await?;
        row.map(|r| r.int("version")).transpose()
    }

    pub async fn webhook_secret(&self, id: &str) -> StoreResult<String> {
        let row = sqlx::query("SELECT webhook_secret FROM automations WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound)?;
        row.text("webhook_secret")
    }

    pub async fn set_webhook_secret(&self, id: &str, secret: &str, now: DateTime<Utc>) -> StoreResult<()> {
        let done = sqlx::query("UPDATE automations SET webhook_secret = $2, updated_at = $3 WHERE id = $1")
            .bind(id)
            .bind(secret)
            .bind(time_to_text(now))
            .execute(&mut *self.writer().await?)
            .await?;
        super::one_row(done)
    }

    /// Moves only when a firing is published.
    /// The scheduler's anchor; moves on a fire and on a cap-skip.
    pub async fn set_trigger_last_evaluated_at(&self, trigger_id: &str, now: DateTime<Utc>) -> StoreResult<()> {
        let mut conn = self.writer().await?;
        mark_evaluated_on(&mut conn, trigger_id, now).await
    }

    pub async fn automation_repository_ids(&self, automation_id: &str) -> StoreResult<Vec<String>> {
        let rows =
            sqlx::query("SELECT repository_id FROM automation_repositories WHERE automation_id = $1 ORDER BY position")
                .bind(automation_id)
                .fetch_all(&mut *self.read().await?)
                .await?;
        rows.iter().map(|r| r.text("repository_id")).collect()
    }

    /// An automation's triggers in creation order.
    pub async fn list_triggers(&self, automation_id: &str) -> StoreResult<Vec<Trigger>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {TRIGGER_COLUMNS} FROM automation_triggers WHERE automation_id = $1 ORDER BY created_at, id"
        )))
        .bind(automation_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(trigger)
        .collect()
    }

    pub async fn add_trigger(
        &self,
        automation_id: &str,
        ty: TriggerType,
        config: &Value,
        enabled: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Trigger> {
        let mut tx = self.write_tx().await?;
        let id = insert_trigger(&mut tx, automation_id, ty, config, enabled, now).await?;
        tx.commit().await?;
        self.get_trigger(&id).await
    }

    pub async fn get_trigger(&self, id: &str) -> StoreResult<Trigger> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {TRIGGER_COLUMNS} FROM automation_triggers WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        trigger(&row)
    }

    /// Writes only the fields given (a concurrent edit of the other one
    /// stays) and answers the trigger as stored.
    pub async fn update_trigger(
        &self,
        id: &str,
        config: Option<&Value>,
        enabled: Option<bool>,
        now: DateTime<Utc>,
    ) -> StoreResult<Trigger> {
        let mut tx = self.write_tx().await?;
        let row = sqlx::query(AssertSqlSafe(format!(
            "UPDATE automation_triggers SET config = COALESCE($2, config), enabled = COALESCE($3, enabled), \
             updated_at = $4 WHERE id = $1 RETURNING {TRIGGER_COLUMNS}"
        )))
        .bind(id)
        .bind(config.map(Value::to_string))
        .bind(enabled.map(flag))
        .bind(time_to_text(now))
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let stored = trigger(&row)?;
        bump_catalog(&mut tx).await?;
        tx.commit().await?;
        Ok(stored)
    }

    pub async fn delete_trigger(&self, id: &str) -> StoreResult<bool> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query("DELETE FROM automation_triggers WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        bump_catalog(&mut tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Enabled triggers of a type whose automation is enabled, in
    /// `(created_at ASC, id ASC)` order — one total order for every caller.
    pub async fn list_enabled_triggers_by_type(&self, ty: TriggerType) -> StoreResult<Vec<TriggerWithAutomation>> {
        let rows = sqlx::query(
            "SELECT t.id, t.type, t.config, t.created_at, t.last_evaluated_at, a.id AS automation_id, a.workspace_id \
             FROM automation_triggers t JOIN automations a ON a.id = t.automation_id \
             WHERE t.type = $1 AND t.enabled = 1 AND a.enabled = 1 \
             ORDER BY t.created_at ASC, t.id ASC",
        )
        .bind(ty.as_str())
        .fetch_all(&mut *self.read().await?)
        .await?;
        let read = |r: &sqlx::any::AnyRow| -> StoreResult<TriggerWithAutomation> {
            Ok(TriggerWithAutomation {
                trigger_id: r.text("id")?,
                trigger_type: ty,
                config_raw: r.text("config")?,
                automation_id: r.text("automation_id")?,
                automation_workspace_id: r.text("workspace_id")?,
                created_at: r.time("created_at")?,
                last_evaluated_at: r.opt_time("last_evaluated_at")?,
            })
        };
        // One unreadable row (an older version, a hand edit) is skipped, not
        // allowed to stop every other trigger of its type.
        Ok(rows
            .iter()
            .filter_map(|r| match read(r) {
                Ok(t) => Some(t),
                Err(error) => {
                    let id = r.text("id").unwrap_or_default();
                    tracing::warn!(trigger_id = %id, %error, "unreadable trigger row skipped");
                    None
                }
            })
            .collect())
    }
}

/// Moves a trigger's `last_evaluated_at` (the scheduler's anchor) on `conn`.
pub async fn mark_evaluated_on(
    conn: &mut sqlx::AnyConnection,
    trigger_id: &str,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    sqlx::query("UPDATE automation_triggers SET last_evaluated_at = $2 WHERE id = $1")
        .bind(trigger_id)
        .bind(time_to_text(now))
        .execute(conn)
        .await?;
    Ok(())
}

/// A firing's anchors on `conn`: its trigger's `last_evaluated_at` (manual
/// runs have no trigger) and its automation's `last_triggered_at`.
pub async fn mark_fired_on(
    conn: &mut sqlx::AnyConnection,
    trigger_id: &str,
    automation_id: &str,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    if !trigger_id.is_empty() {
        mark_evaluated_on(conn, trigger_id, now).await?;
    }
    sqlx::query("UPDATE automations SET last_triggered_at = $2 WHERE id = $1")
        .bind(automation_id)
        .bind(time_to_text(now))
        .execute(conn)
        .await?;
    Ok(())
}

/// What the firing path needs to know about an automation.
#[derive(Debug, Clone)]
pub struct AutomationBrief {
    pub id: String,
    pub workspace_id: String,
    pub name: String,
    pub enabled: bool,
    pub max_concurrent_runs: i64,
}

impl AutomationBrief {
    /// From a row carrying `id, workspace_id, name, enabled, max_concurrent_runs`.
    pub(super) fn from_row(row: &AnyRow) -> StoreResult<AutomationBrief> {
        Ok(AutomationBrief {
            id: row.text("id")?,
            workspace_id: row.text("workspace_id")?,
            name: row.text("name")?,
            enabled: row.flag("enabled")?,
            max_concurrent_runs: row.int("max_concurrent_runs")?,
        })
    }
}

impl Store {
    pub async fn automation_brief(&self, id: &str) -> StoreResult<AutomationBrief> {
        let row =
            sqlx::query("SELECT id, workspace_id, name, enabled, max_concurrent_runs FROM automations WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *self.read().await?)
                .await?
                .ok_or(StoreError::NotFound)?;
        AutomationBrief::from_row(&row)
    }
}
