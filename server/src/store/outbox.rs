//! The outbox: events written in the same transaction as the state they
//! announce, read back by the relay until it has published them.

use chrono::{DateTime, Utc};
use kandev_core::events::Event;
use sqlx::AnyConnection;
use sqlx::AssertSqlSafe;

use super::rows::RowExt;
use super::{Store, StoreResult, time_to_text};

/// An event waiting to be published: its id, subject and wire body.
#[derive(Debug, Clone)]
pub struct Pending {
    pub id: String,
    pub subject: String,
    pub body: Vec<u8>,
}

/// Writes `event` into the outbox on `conn` (a transaction's connection).
pub async fn enqueue(conn: &mut AnyConnection, event: &Event) -> StoreResult<()> {
    sqlx::query("INSERT INTO outbox (id, subject, body, created_at, published_at) VALUES ($1, $2, $3, $4, NULL)")
        .bind(&event.id)
        .bind(&event.subject)
        .bind(String::from_utf8_lossy(&event.to_wire()).into_owned())
        .bind(time_to_text(event.timestamp))
        .execute(conn)
        .await?;
    Ok(())
}

impl Store {
    /// Unpublished events created at or before `until`, oldest first.
    pub async fn pending_events(&self, until: DateTime<Utc>, limit: i64) -> StoreResult<Vec<Pending>> {
        sqlx::query(
            "SELECT id, subject, body FROM outbox WHERE published_at IS NULL AND created_at <= $1 \
             ORDER BY created_at, id LIMIT $2",
        )
        .bind(time_to_text(until))
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(|r| {
            Ok(Pending {
                id: r.text("id")?,
                subject: r.text("subject")?,
                body: r.text("body")?.into_bytes(),
            })
        })
        .collect()
    }

    /// Marks events published, in one statement.
    pub async fn mark_published(&self, ids: &[String], now: DateTime<Utc>) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "UPDATE outbox SET published_at = $1 WHERE published_at IS NULL AND id IN ({})",
            super::placeholders(2, ids.len())
        );
        let ids = ids.to_vec();
        // A lone write, through the write turn.
        self.write_one(move |conn| {
            Box::pin(async move {
                let mut q = sqlx::query(AssertSqlSafe(sql)).bind(time_to_text(now));
                for id in ids {
                    q = q.bind(id);
                }
                q.execute(conn).await?;
                Ok(())
            })
        })
        .await
    }

    /// Forgets events published before `events` and GitHub delivery ids
    /// received before `deliveries`.
    pub async fn prune_delivered(&self, events: DateTime<Utc>, deliveries: DateTime<Utc>) -> StoreResult<u64> {
        let published = sqlx::query("DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < $1")
            .bind(time_to_text(events))
            .execute(&mut *self.writer().await?)
            .await?
            .rows_affected();
        let received = sqlx::query("DELETE FROM github_deliveries WHERE received_at < $1")
            .bind(time_to_text(deliveries))
            .execute(&mut *self.writer().await?)
            .await?
            .rows_affected();
        Ok(published + received)
    }

    /// The subject and wire body the outbox holds under `id` (published
    /// events are kept an hour): how a replica vouches for an unsealed one.
    pub async fn stored_event(&self, id: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
        let row = sqlx::query("SELECT subject, body FROM outbox WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        row.map(|r| Ok((r.text("subject")?, r.text("body")?.into_bytes())))
            .transpose()
    }

    /// How many events wait to be published.
    pub async fn outbox_backlog(&self) -> StoreResult<i64> {
        Ok(self.outbox_waiting().await?.0)
    }

    /// How many events wait to be published, and when the oldest was written
    /// (metrics: a backlog that only grows older means nothing is sending).
    pub async fn outbox_waiting(&self) -> StoreResult<(i64, Option<DateTime<Utc>>)> {
        let row = sqlx::query("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox WHERE published_at IS NULL")
            .fetch_one(&mut *self.read().await?)
            .await?;
        Ok((row.int("n")?, row.opt_time("oldest")?))
    }
}
