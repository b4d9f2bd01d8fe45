//! SQLite's write turn. One process writes at a time (SQLite has one
//! writer); the turn owns one connection for good, so a write pays neither a
//! pool round trip nor sqlx's release ping (a second trip to the connection's
//! thread per statement, which under load doubled the time each writer held
//! the turn). PostgreSQL writes concurrently from the shared pool.

use std::sync::Arc;
use std::time::Instant;

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::{CHECK_IDLE_AFTER, StoreError, StoreResult};

/// The turn's connection, whether a transaction is open on it (one
/// dropped without a commit, not yet rolled back), and whether it failed in a
/// way that asks for a fresh one.
#[derive(Default)]
pub(super) struct Slot {
    conn: Option<PoolConnection<Any>>,
    open: bool,
    broken: bool,
    last_used: Option<Instant>,
}

/// The write turn: the slot behind a fair mutex, and the one-connection pool
/// its connection comes from (again after a failure).
#[derive(Clone)]
pub(super) struct Turn {
    slot: Arc<Mutex<Slot>>,
    pool: AnyPool,
}

impl Turn {
    pub(super) fn new(pool: AnyPool) -> Self {
        Turn {
            slot: Arc::default(),
            pool,
        }
    }

    /// Waits for the turn; the connection comes clean (anything a dropped
    /// transaction left open is rolled back first).
    pub(super) async fn take(&self) -> StoreResult<OwnedMutexGuard<Slot>> {
        let mut slot = self.slot.clone().lock_owned().await;
        slot.settle(&self.pool).await?;
        Ok(slot)
    }

    /// Gives the connection back to its pool (before the pool closes).
    pub(super) async fn close(&self) {
        let conn = self.slot.lock().await.conn.take();
        if let Some(conn) = conn {
            let _ = conn.close().await;
        }
        self.pool.close().await;
    }
}

impl Slot {
    async fn settle(&mut self, pool: &AnyPool) -> StoreResult<()> {
        if self.open {
            self.rollback().await;
        }
        // Checked like a pooled connection: after a failure, or idle long enough to have died.
        let idle = self.last_used.is_some_and(|at| at.elapsed() >= CHECK_IDLE_AFTER);
        if let Some(conn) = self.conn.as_mut()
            && !self.broken
            && idle
            && conn.ping().await.is_err()
        {
            self.broken = true;
        }
        if self.broken {
            self.conn = None;
            self.broken = false;
        }
        if self.conn.is_none() {
            self.conn = Some(pool.acquire().await?);
        }
        self.last_used = Some(Instant::now());
        Ok(())
    }

    /// Rolls back an open transaction; a connection that cannot is replaced
    /// at the next turn.
    async fn rollback(&mut self) {
        self.open = false;
        if let Some(conn) = self.conn.as_mut()
            && let Err(error) = conn.execute("ROLLBACK").await
        {
            // SQLite ends a transaction itself on some errors; that is no fault of the connection.
            if !error.to_string().contains("no transaction is active") {
                tracing::warn!(%error, "could not roll back a write transaction; reconnecting");
                self.broken = true;
            }
        }
    }

    /// The connection failed as a connection (not a statement): the next
    /// take replaces it.
    pub(super) fn mark_broken(&mut self) {
        self.broken = true;
    }

    fn conn(&mut self) -> &mut AnyConnection {
        // `Turn::take` filled it, and only `settle` empties it.
        self.conn.as_deref_mut().expect("the write turn holds a connection")
    }

    /// Begins a transaction that takes SQLite's write lock at once.
    async fn begin(&mut self) -> Result<(), sqlx::Error> {
        let done = self.conn().execute("BEGIN IMMEDIATE").await;
        match done {
            Ok(_) => self.open = true,
            Err(_) => self.broken = true,
        }
        done.map(|_| ())
    }

    async fn commit(&mut self) -> Result<(), sqlx::Error> {
        // On failure the transaction stays open: the next turn rolls it back.
        self.conn().execute("COMMIT").await?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for Slot {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        self.conn.as_deref().expect("the write turn holds a connection")
    }
}

impl std::ops::DerefMut for Slot {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn()
    }
}

/// Whether an error means the connection itself is gone (its I/O, its
/// worker thread, its protocol), rather than that a statement was refused.
pub(super) fn connection_lost(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Db(sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed | sqlx::Error::Protocol(_))
    )
}

/// A write transaction: on SQLite the turn's connection, held until it
/// commits or is dropped; on PostgreSQL a pooled connection's transaction.
pub struct WriteTx(Open);

enum Open {
    Turn(TurnTx),
    Pooled(sqlx::Transaction<'static, Any>),
}

/// A transaction on the turn's connection. `None` only inside `drop`.
struct TurnTx(Option<OwnedMutexGuard<Slot>>);

impl WriteTx {
    pub(super) async fn on_turn(mut slot: OwnedMutexGuard<Slot>) -> Result<WriteTx, sqlx::Error> {
        slot.begin().await?;
        Ok(WriteTx(Open::Turn(TurnTx(Some(slot)))))
    }

    pub(super) fn pooled(tx: sqlx::Transaction<'static, Any>) -> WriteTx {
        WriteTx(Open::Pooled(tx))
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self.0 {
            Open::Turn(mut turn) => turn.slot().commit().await,
            Open::Pooled(tx) => tx.commit().await,
        }
    }
}

impl TurnTx {
    fn slot(&mut self) -> &mut Slot {
        self.0.as_deref_mut().expect("taken only by drop")
    }
}

impl std::ops::Deref for WriteTx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Open::Turn(turn) => turn.0.as_deref().expect("taken only by drop"),
            Open::Pooled(tx) => tx,
        }
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Open::Turn(turn) => turn.slot(),
            Open::Pooled(tx) => tx,
        }
    }
}

impl Drop for TurnTx {
    /// Dropped without a commit: rolled back before anyone else gets the
    /// turn — on a task that keeps the turn meanwhile, or by its next taker.
    fn drop(&mut self) {
        if let Some(slot) = self.0.take()
            && slot.open
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let mut slot = slot;
                slot.rollback().await;
            });
        }
    }
}

/// A connection for one write statement: the turn's on SQLite, a pooled
/// one on PostgreSQL.
pub struct WriteConn(Held);

enum Held {
    Turn(OwnedMutexGuard<Slot>),
    Pooled(PoolConnection<Any>),
}

impl WriteConn {
    pub(super) fn on_turn(slot: OwnedMutexGuard<Slot>) -> WriteConn {
        WriteConn(Held::Turn(slot))
    }

    pub(super) fn pooled(conn: PoolConnection<Any>) -> WriteConn {
        WriteConn(Held::Pooled(conn))
    }
}

impl std::ops::Deref for WriteConn {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Held::Turn(slot) => slot,
            Held::Pooled(conn) => conn,
        }
    }
}

impl std::ops::DerefMut for WriteConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Held::Turn(slot) => slot,
            Held::Pooled(conn) => conn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_connection_is_told_from_a_refused_statement() {
        assert!(connection_lost(&StoreError::Db(sqlx::Error::WorkerCrashed)));
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone");
        assert!(connection_lost(&StoreError::Db(sqlx::Error::Io(io))));
        assert!(!connection_lost(&StoreError::Db(sqlx::Error::RowNotFound)));
        assert!(!connection_lost(&StoreError::Conflict("row".into())));
        assert!(!connection_lost(&StoreError::NotFound));
    }
}
