//! Leases: a named piece of singleton work has one owner until it stops
//! renewing. Acquiring and renewing are one conditional write, so two
//! replicas racing for a free lease cannot both win.

use chrono::{DateTime, Duration, Utc};
use sqlx::AnyConnection;

use super::rows::RowExt;
use super::{Store, StoreResult, time_to_text};

/// The acquire-or-renew statement: inserts a free name, takes an expired
/// one, renews one this owner holds.
const ACQUIRE: &str = "INSERT INTO leases (name, owner, expires_at) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at \
     WHERE leases.owner = excluded.owner OR leases.expires_at <= $4";

/// [`Store::acquire_lease`] inside a transaction (a run's lease is taken in
/// the same transaction that creates the run).
pub async fn acquire_in(
    conn: &mut AnyConnection,
    name: &str,
    owner: &str,
    ttl: Duration,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let done = sqlx::query(ACQUIRE)
        .bind(name)
        .bind(owner)
        .bind(time_to_text(now + ttl))
        .bind(time_to_text(now))
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

impl Store {
    /// The database's clock, where replicas share the database (PostgreSQL);
    /// `None` on SQLite, which one process uses.
    pub async fn database_clock(&self) -> StoreResult<Option<DateTime<Utc>>> {
        if self.backend() != super::Backend::Postgres {
            return Ok(None);
        }
        let row = sqlx::query(
            "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS now",
        )
        .fetch_one(&mut *self.read().await?)
        .await?;
        Ok(Some(super::text_to_time(&row.text("now")?)?))
    }

    /// Takes or renews `name` for `owner` until `now + ttl`; `false` while
    /// another owner holds it.
    /// A lone write: on SQLite it takes the write turn on the writer thread
    /// rather than racing the turn for SQLite's lock in its busy handler's
    /// coarse sleeps (under load: a late or refused lease, so a tick skipped).
    pub async fn acquire_lease(&self, name: &str, owner: &str, ttl: Duration, now: DateTime<Utc>) -> StoreResult<bool> {
        let (name, owner) = (name.to_string(), owner.to_string());
        self.write_one(move |conn| Box::pin(async move { acquire_in(conn, &name, &owner, ttl, now).await }))
            .await
    }

    /// Renews, one statement per [`IN_LIST_CHUNK`](super::IN_LIST_CHUNK) names, the leases among
    /// `names` that `owner` still holds (expired or not: nobody took them
    /// over) until `now + ttl`; returns those it renewed. A replica running
    /// five hundred agent turns renews their leases in eight writes, not
    /// five hundred.
    pub async fn renew_leases(
        &self,
        names: &[String],
        owner: &str,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<String>> {
        let mut kept = Vec::with_capacity(names.len());
        for chunk in names.chunks(super::IN_LIST_CHUNK) {
            let sql = format!(
                "UPDATE leases SET expires_at = $2 WHERE owner = $1 AND name IN ({}) RETURNING name",
                super::placeholders(3, chunk.len())
            );
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(owner)
                .bind(time_to_text(now + ttl));
            for name in chunk {
                q = q.bind(name);
            }
            for row in q.fetch_all(&mut *self.writer().await?).await? {
                kept.push(row.text("name")?);
            }
        }
        Ok(kept)
    }

    pub async fn release_lease(&self, name: &str, owner: &str) -> StoreResult<()> {
        self.write_text(
            "DELETE FROM leases WHERE name = $1 AND owner = $2",
            vec![name.to_string(), owner.to_string()],
        )
        .await
    }

    /// Who holds `name`, run out or not (`None`: nobody).
    pub async fn lease_owner(&self, name: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query("SELECT owner FROM leases WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        row.map(|r| r.text("owner")).transpose()
    }

    /// Takes `name` from `from` (an owner known to be gone) for `to` until
    /// `now + ttl`: `false` if `from` no longer holds it.
    pub async fn take_lease_from(
        &self,
        name: &str,
        from: &str,
        to: &str,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let done = sqlx::query("UPDATE leases SET owner = $1, expires_at = $2 WHERE name = $3 AND owner = $4")
            .bind(to)
            .bind(time_to_text(now + ttl))
            .bind(name)
            .bind(from)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Releases everything `owner` holds (a clean shutdown).
    pub async fn release_leases_of(&self, owner: &str) -> StoreResult<()> {
        self.write_text("DELETE FROM leases WHERE owner = $1", vec![owner.to_string()])
            .await
    }

    /// Whether anyone holds `name` right now.
    pub async fn lease_alive(&self, name: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let row = sqlx::query("SELECT expires_at FROM leases WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        match row {
            Some(r) => Ok(r.time("expires_at")? > now),
            None => Ok(false),
        }
    }
}
