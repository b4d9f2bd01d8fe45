//! Notification targets, deliveries and their attempts. Deliveries are
//! written beside the event that raised them (`enqueue_on`, inside the
//! caller's transaction) and claimed one at a time by whichever replica sees
//! them due, so each attempt is made by one sender.

use chrono::{DateTime, Duration, Utc};
use kandev_core::api::{
    DELIVERY_DELIVERED, DELIVERY_FAILED, DELIVERY_PENDING, DeliveryAttempt, NotificationDelivery, NotificationTarget,
};
use kandev_core::notify::{self, Subject, TargetKind};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, time_to_text};

/// A target with its secret, for the sender.
#[derive(Debug, Clone)]
pub struct TargetRecord {
    pub target: NotificationTarget,
    pub secret: String,
}

/// A claimed delivery, ready to send.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    pub id: String,
    pub event: String,
    pub body: String,
    pub attempts: i64,
    pub target: Option<TargetRecord>,
}

const TARGET_COLUMNS: &str = "id, workspace_id, kind, url, secret, events, created_at";

fn target(row: &AnyRow) -> StoreResult<TargetRecord> {
    let kind = row.text("kind")?;
    let events: Vec<String> =
        serde_json::from_value(row.json("events")?).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let secret = row.text("secret")?;
    Ok(TargetRecord {
        target: NotificationTarget {
            id: row.text("id")?,
            workspace_id: row.text("workspace_id")?,
            kind: TargetKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("target kind {kind:?}")))?,
            url: row.text("url")?,
            events,
            has_secret: !secret.is_empty(),
            created_at: row.time("created_at")?,
        },
        secret,
    })
}

async fn targets_on(conn: &mut AnyConnection, workspace_id: &str) -> StoreResult<Vec<TargetRecord>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {TARGET_COLUMNS} FROM notification_targets WHERE workspace_id = $1 ORDER BY created_at, id"
    )))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    // One unreadable row (a hand edit, an older version) is skipped: it must
    // not fail the task event whose transaction is asking.
    Ok(rows
        .iter()
        .filter_map(|r| match target(r) {
            Ok(t) => Some(t),
            Err(error) => {
                tracing::warn!(target_id = %r.text("id").unwrap_or_default(), %error, "unreadable notification target skipped");
                None
            }
        })
        .collect())
}

/// Writes one delivery of `event` per target of the workspace that wants
/// it, each body rendered now with its delivery id. Returns how many.
pub async fn enqueue_on(
    conn: &mut AnyConnection,
    event: &str,
    subject: &Subject,
    only_target: Option<&str>,
    now: DateTime<Utc>,
) -> StoreResult<usize> {
    let targets = targets_on(conn, &subject.workspace_id).await?;
    let mut written = 0;
    for t in targets
        .iter()
        .filter(|t| notify::wants(&t.target.events, event) && only_target.is_none_or(|id| id == t.target.id))
    {
        let id = new_id();
        let body = match t.target.kind {
            TargetKind::Webhook => notify::webhook_body(event, &id, subject, now),
            TargetKind::Slack => notify::slack_body(event, subject),
        };
        sqlx::query(
            "INSERT INTO notification_deliveries (id, target_id, workspace_id, event, task_id, body, status, attempts, \
             next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $8)",
        )
        .bind(&id)
        .bind(&t.target.id)
        .bind(&subject.workspace_id)
        .bind(event)
        .bind(&subject.task_id)
        .bind(body.to_string())
        .bind(DELIVERY_PENDING)
        .bind(time_to_text(now))
        .execute(&mut *conn)
        .await?;
        written += 1;
    }
    Ok(written)
}

/// The subject of a task's notification, read in the writer's transaction.
pub async fn task_subject_on(
    conn: &mut AnyConnection,
    task_id: &str,
    detail: String,
    data: serde_json::Value,
) -> StoreResult<Option<Subject>> {
    let row = sqlx::query("SELECT workspace_id, title FROM tasks WHERE id = $1")
        .bind(task_id)
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|r| {
        Ok(Subject {
            workspace_id: r.text("workspace_id")?,
            task_id: task_id.to_string(),
            task_title: r.text("title")?,
            detail,
            data,
        })
    })
    .transpose()
}

impl Store {
    pub async fn create_notification_target(
        &self,
        workspace_id: &str,
        kind: TargetKind,
        url: &str,
        events: &[String],
        secret: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<NotificationTarget> {
        let id = new_id();
        sqlx::query(
            "INSERT INTO notification_targets (id, workspace_id, kind, url, secret, events, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&id)
        .bind(workspace_id)
        .bind(kind.as_str())
        .bind(url)
        .bind(secret)
        .bind(serde_json::to_string(events).unwrap_or_else(|_| "[]".into()))
        .bind(time_to_text(now))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(self.notification_target(workspace_id, &id).await?.target)
    }

    pub async fn notification_targets(&self, workspace_id: &str) -> StoreResult<Vec<NotificationTarget>> {
        let mut conn = self.read().await?;
        Ok(targets_on(&mut conn, workspace_id)
            .await?
            .into_iter()
            .map(|t| t.target)
            .collect())
    }

    /// A target of this workspace; `NotFound` for one elsewhere.
    pub async fn notification_target(&self, workspace_id: &str, id: &str) -> StoreResult<TargetRecord> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {TARGET_COLUMNS} FROM notification_targets WHERE id = $1 AND workspace_id = $2"
        )))
        .bind(id)
        .bind(workspace_id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        target(&row)
    }

    /// Deletes a target with its deliveries and their log.
    pub async fn delete_notification_target(&self, workspace_id: &str, id: &str) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        let gone = sqlx::query("DELETE FROM notification_targets WHERE id = $1 AND workspace_id = $2")
            .bind(id)
            .bind(workspace_id)
            .execute(&mut *tx)
            .await?;
        if gone.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        sqlx::query(
            "DELETE FROM notification_attempts WHERE delivery_id IN \
             (SELECT id FROM notification_deliveries WHERE target_id = $1)",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM notification_deliveries WHERE target_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Queues a test delivery to one target.
    pub async fn enqueue_test(&self, workspace_id: &str, target_id: &str, now: DateTime<Utc>) -> StoreResult<usize> {
        let subject = Subject {
            workspace_id: workspace_id.to_string(),
            detail: "Deliveries to this target work.".into(),
            ..Default::default()
        };
        let mut tx = self.write_tx().await?;
        let n = enqueue_on(&mut tx, notify::TEST, &subject, Some(target_id), now).await?;
        tx.commit().await?;
        Ok(n)
    }

    /// The newest deliveries of a workspace, each with its attempts: one
    /// statement, so one snapshot — a delivery is never read from before an
    /// attempt that is read from after it (pending, with its 200 logged).
    pub async fn notification_deliveries(
        &self,
        workspace_id: &str,
        limit: i64,
    ) -> StoreResult<Vec<NotificationDelivery>> {
        let rows = sqlx::query(
            "SELECT d.id, d.target_id, d.event, d.task_id, d.status, d.next_attempt_at, d.created_at, \
                    a.attempt, a.at, a.status_code, a.error \
             FROM (SELECT id, target_id, event, task_id, status, next_attempt_at, created_at \
                   FROM notification_deliveries WHERE workspace_id = $1 \
                   ORDER BY created_at DESC, id DESC LIMIT $2) d \
             LEFT JOIN notification_attempts a ON a.delivery_id = d.id \
             ORDER BY d.created_at DESC, d.id DESC, a.attempt",
        )
        .bind(workspace_id)
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut out: Vec<NotificationDelivery> = Vec::new();
        for r in &rows {
            let id = r.text("id")?;
            if out.last().is_none_or(|d| d.id != id) {
                let status = r.text("status")?;
                out.push(NotificationDelivery {
                    next_attempt_at: (status == DELIVERY_PENDING)
                        .then(|| r.time("next_attempt_at"))
                        .transpose()?,
                    id,
                    target_id: r.text("target_id")?,
                    event: r.text("event")?,
                    task_id: r.text("task_id")?,
                    status,
                    created_at: r.time("created_at")?,
                    attempts: Vec::new(),
                });
            }
            // A delivery not yet attempted joins no attempt.
            if let (Some(attempt), Some(delivery)) = (r.opt_int("attempt")?, out.last_mut()) {
                delivery.attempts.push(DeliveryAttempt {
                    attempt,
                    at: r.time("at")?,
                    status_code: r.opt_int("status_code")?,
                    error: r.text("error")?,
                });
            }
        }
        Ok(out)
    }

    /// Claims up to `limit` due deliveries for `hold`: a claim another
    /// replica already holds is skipped, so one sender makes each attempt.
    pub async fn claim_due_deliveries(
        &self,
        now: DateTime<Utc>,
        hold: Duration,
        limit: i64,
    ) -> StoreResult<Vec<DueDelivery>> {
        let now_text = time_to_text(now);
        let candidates = sqlx::query(
            "SELECT id FROM notification_deliveries WHERE status = $1 AND next_attempt_at <= $2 \
             AND (claimed_until IS NULL OR claimed_until < $2) ORDER BY next_attempt_at, id LIMIT $3",
        )
        .bind(DELIVERY_PENDING)
        .bind(&now_text)
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut claimed = vec![];
        for c in &candidates {
            let id = c.text("id")?;
            let won = sqlx::query(
                "UPDATE notification_deliveries SET claimed_until = $1 WHERE id = $2 AND status = $3 \
                 AND (claimed_until IS NULL OR claimed_until < $4)",
            )
            .bind(time_to_text(now + hold))
            .bind(&id)
            .bind(DELIVERY_PENDING)
            .bind(&now_text)
            .execute(&mut *self.writer().await?)
            .await?;
            if won.rows_affected() != 1 {
                continue;
            }
            let row = sqlx::query(
                "SELECT target_id, workspace_id, event, body, attempts FROM notification_deliveries WHERE id = $1",
            )
            .bind(&id)
            .fetch_one(&mut *self.read().await?)
            .await?;
            let target = match self
                .notification_target(&row.text("workspace_id")?, &row.text("target_id")?)
                .await
            {
                Ok(t) => Some(t),
                Err(StoreError::NotFound) => None,
                // Unreadable: fail this delivery (its log says why), not the pass.
                Err(error) => {
                    tracing::warn!(delivery = %id, %error, "a delivery's target is unreadable");
                    None
                }
            };
            claimed.push(DueDelivery {
                id,
                event: row.text("event")?,
                body: row.text("body")?,
                attempts: row.int("attempts")?,
                target,
            });
        }
        Ok(claimed)
    }

    /// Logs an attempt and moves the delivery on: delivered, failed for
    /// good, or pending until `retry_at`.
    pub async fn record_attempt(
        &self,
        d: &DueDelivery,
        status_code: Option<u16>,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let attempt = d.attempts + 1;
        let ok = status_code.is_some_and(notify::delivered);
        let (status, next) = match (ok, retry_at) {
            (true, _) => (DELIVERY_DELIVERED, now),
            (false, Some(at)) => (DELIVERY_PENDING, at),
            (false, None) => (DELIVERY_FAILED, now),
        };
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO notification_attempts (delivery_id, attempt, at, status_code, error) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (delivery_id, attempt) DO NOTHING",
        )
        .bind(&d.id)
        .bind(attempt)
        .bind(time_to_text(now))
        .bind(status_code.map(i64::from))
        .bind(error)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE notification_deliveries SET status = $1, attempts = $2, next_attempt_at = $3, claimed_until = NULL \
             WHERE id = $4",
        )
        .bind(status)
        .bind(attempt)
        .bind(time_to_text(next))
        .bind(&d.id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
