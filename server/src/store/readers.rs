//! Connections for reads. On SQLite they are checked out of sqlx's pool
//! once and handed round here: sqlx pings every connection it gets back
//! (one more trip to the connection's thread per query, which under load cost
//! as much as the query), and a SQLite connection has no network to lose.
//! On PostgreSQL the pool and its checks stay, since a server can go away.

use std::sync::{Arc, Mutex};

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{ACQUIRE_TIMEOUT, StoreResult};

/// SQLite's read connections: at most `size` in use, idle ones kept here.
pub(super) struct Readers {
    idle: Mutex<Vec<PoolConnection<Any>>>,
    permits: Arc<Semaphore>,
    pool: AnyPool,
}

impl Readers {
    /// Over `pool`, whose size must be at least `size`.
    pub(super) fn new(pool: AnyPool, size: usize) -> Arc<Readers> {
        Arc::new(Readers {
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Arc::new(Semaphore::new(size)),
            pool,
        })
    }

    pub(super) async fn take(self: &Arc<Self>) -> StoreResult<ReadConn> {
        // As long as the pool would wait, then the pool's error.
        let permit = tokio::time::timeout(ACQUIRE_TIMEOUT, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?
            .map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        // A permit guarantees the pool has a connection to give.
        let conn = match idle {
            Some(conn) => conn,
            None => self.pool.acquire().await?,
        };
        Ok(ReadConn(Held::Shared {
            conn: Some(conn),
            home: self.clone(),
            _permit: permit,
        }))
    }

    /// Lets every idle connection go back to the pool, and no more out.
    pub(super) fn close(&self) {
        self.permits.close();
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// A connection for reads (or a lone statement outside the write turn).
pub struct ReadConn(Held);

enum Held {
    Shared {
        conn: Option<PoolConnection<Any>>,
        home: Arc<Readers>,
        _permit: OwnedSemaphorePermit,
    },
    Pooled(PoolConnection<Any>),
}

impl ReadConn {
    pub(super) fn pooled(conn: PoolConnection<Any>) -> ReadConn {
        ReadConn(Held::Pooled(conn))
    }
}

impl std::ops::Deref for ReadConn {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Held::Shared { conn: Some(conn), .. } | Held::Pooled(conn) => conn,
            Held::Shared { conn: None, .. } => unreachable!("a read connection is held until dropped"),
        }
    }
}

impl std::ops::DerefMut for ReadConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Held::Shared { conn: Some(conn), .. } | Held::Pooled(conn) => conn,
            Held::Shared { conn: None, .. } => unreachable!("a read connection is held until dropped"),
        }
    }
}

impl Drop for ReadConn {
    fn drop(&mut self) {
        // Back to the idle list before the permit goes, so the next taker finds it.
        if let Held::Shared { conn, home, .. } = &mut self.0
            && let Some(conn) = conn.take()
            && !home.permits.is_closed()
        {
            home.idle.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
        }
    }
}
