//! Storage: one set of portable SQL over sqlx's `Any` driver, so the embedded
//! SQLite file and PostgreSQL run the same queries and the same migrations
//! (save the few written per dialect, such as triggers).
//!
//! Times are stored as fixed-width RFC 3339 UTC text (they sort as strings) and
//! booleans as 0/1, because `Any` carries only integers, floats, text and blobs.

pub mod agents;
pub mod automations;
pub mod evaluations;
pub mod github_state;
pub mod leases;
mod members;
pub mod notifications;
pub mod outbox;
mod recovery;
mod repositories;
mod rows;
pub mod runs;
pub mod task_prs;
pub mod tasks;
mod users;
mod workspaces;

pub use agents::SessionRecord;
pub use automations::{AutomationBrief, AutomationRecord, NewAutomation, TriggerRecord, TriggerWithAutomation};
pub use evaluations::EvaluationRecord;
pub use github_state::MergerJob;
pub use members::Place;
pub use recovery::Orphan;
pub use runs::{NewRun, RunRecord, RunView};
pub use task_prs::TaskPrListing;
pub use tasks::{EventRecord, NewTask, TaskRecord};
pub use users::UserRecord;

use std::borrow::Cow;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, Executor, SqlSafeStr};

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt row: {0}")]
    Corrupt(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Which database the store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The store: a connection pool plus the queries, grouped by table in the
/// sibling modules.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    /// Where write turns get their connection. On SQLite a pool of its own,
    /// so a writer holding the turn never waits for a connection behind a
    /// crowd of readers; on PostgreSQL the same pool as reads.
    writes: AnyPool,
    backend: Backend,
    /// SQLite has one writer at a time, and a writer that finds the lock
    /// taken sleeps in coarse steps: this process's write transactions take
    /// turns here instead. (PostgreSQL writes concurrently; unused there.)
    write_gate: Arc<tokio::sync::Mutex<()>>,
}

/// A write transaction; on SQLite it holds the process's write turn until
/// it commits or is dropped.
pub struct WriteTx {
    tx: sqlx::Transaction<'static, sqlx::Any>,
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl std::ops::Deref for WriteTx {
    type Target = sqlx::Transaction<'static, sqlx::Any>;
    fn deref(&self) -> &Self::Target {
        &self.tx
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.tx
    }
}

/// A connection for one write statement; on SQLite it holds the process's
/// write turn while the statement runs, like [`WriteTx`].
pub struct WriteConn {
    conn: sqlx::pool::PoolConnection<sqlx::Any>,
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl std::ops::Deref for WriteConn {
    type Target = sqlx::AnyConnection;
    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl std::ops::DerefMut for WriteConn {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}

impl WriteTx {
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }
}

const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../../migrations/0001_init.sql")),
    (
        2,
        "merger_wait_head",
        include_str!("../../migrations/0002_merger_wait_head.sql"),
    ),
    (3, "access", include_str!("../../migrations/0003_access.sql")),
    (
        4,
        "coordination",
        include_str!("../../migrations/0004_coordination.sql"),
    ),
    (
        5,
        "merger_github",
        include_str!("../../migrations/0005_merger_github.sql"),
    ),
    (
        6,
        "notifications",
        include_str!("../../migrations/0006_notifications.sql"),
    ),
    (
        7,
        "trigger_catalog",
        include_str!("../../migrations/0007_trigger_catalog.sql"),
    ),
    (
        8,
        "session_resume",
        include_str!("../../migrations/0008_session_resume.sql"),
    ),
    (
        11,
        "automation_no_repository",
        include_str!("../../migrations/0011_automation_no_repository.sql"),
    ),
    (
        12,
        "retention_index",
        include_str!("../../migrations/0012_retention_index.sql"),
    ),
];

/// Migrations written once per dialect (triggers have no portable form):
/// version, name, SQLite's text, PostgreSQL's text.
const DIALECT_MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    (
        9,
        "board_version",
        include_str!("../../migrations/0009_board_version.sqlite.sql"),
        include_str!("../../migrations/0009_board_version.postgres.sql"),
    ),
    (
        10,
        "board_version_stripes",
        include_str!("../../migrations/0010_board_version_stripes.sqlite.sql"),
        include_str!("../../migrations/0010_board_version_stripes.postgres.sql"),
    ),
];

fn migrator(backend: Backend) -> Migrator {
    let dialect = DIALECT_MIGRATIONS.iter().map(|(version, name, sqlite, postgres)| {
        let sql = match backend {
            Backend::Sqlite => sqlite,
            Backend::Postgres => postgres,
        };
        (version, name, sql)
    });
    // Applied in version order, whichever list a migration sits in.
    let mut all: Vec<_> = MIGRATIONS
        .iter()
        .map(|(version, name, sql)| (version, name, sql))
        .chain(dialect)
        .collect();
    all.sort_by_key(|(version, _, _)| **version);
    Migrator::with_migrations(
        all.into_iter()
            .map(|(version, name, sql)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(*name),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    )
}

/// A connection idle this long is checked before use; one returned sooner
/// was checked when it came back (sqlx pings every connection on release).
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(10);

async fn open_pool(backend: Backend, options: &AnyConnectOptions, size: u32) -> StoreResult<AnyPool> {
    Ok(AnyPoolOptions::new()
        .max_connections(size)
        .acquire_timeout(Duration::from_secs(30))
        // sqlx's own check pings on every acquire: a second round trip per
        // query. Only a connection idle long enough to have died is pinged.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= CHECK_IDLE_AFTER {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .after_connect(move |conn, _meta| {
            Box::pin(async move {
                if backend == Backend::Sqlite {
                    conn.execute("PRAGMA journal_mode=WAL").await?;
                    conn.execute("PRAGMA busy_timeout=10000").await?;
                    conn.execute("PRAGMA foreign_keys=ON").await?;
                    conn.execute("PRAGMA synchronous=NORMAL").await?;
                }
                Ok(())
            })
        })
        .connect_with(options.clone())
        .await?)
}

impl Store {
    /// Connects to `sqlite://PATH` (created if missing, WAL) or `postgres://…`
    /// and applies migrations.
    pub async fn connect(url: &str) -> StoreResult<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        };
        // Every pooled connection to an in-memory database opens its own,
        // empty one: reads, writes and migrations would each see another.
        if backend == Backend::Sqlite && (url.contains(":memory:") || url.contains("mode=memory")) {
            return Err(StoreError::Db(sqlx::Error::Configuration(
                "an in-memory SQLite database cannot be shared by the connection pools: use a file (sqlite://PATH)"
                    .into(),
            )));
        }
        let url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                let sep = if url.contains('?') { '&' } else { '?' };
                format!("{url}{sep}mode=rwc")
            }
            _ => url.to_string(),
        };
        let options = AnyConnectOptions::from_str(&url)?;
        let pool = open_pool(backend, &options, if backend == Backend::Sqlite { 8 } else { 16 }).await?;
        migrator(backend).run(&pool).await?;
        let writes = match backend {
            // Two: one can answer the pool's release check while the other writes.
            Backend::Sqlite => open_pool(backend, &options, 2).await?,
            Backend::Postgres => pool.clone(),
        };
        Ok(Store {
            pool,
            writes,
            backend,
            write_gate: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// A transaction that writes. SQLite takes its write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred one that reads first could not upgrade
    /// under a concurrent writer, and would fail instead of waiting.
    pub async fn write_tx(&self) -> StoreResult<WriteTx> {
        Ok(match self.backend {
            Backend::Sqlite => {
                let turn = self.write_gate.clone().lock_owned().await;
                WriteTx {
                    tx: self.writes.begin_with("BEGIN IMMEDIATE").await?,
                    _turn: Some(turn),
                }
            }
            Backend::Postgres => WriteTx {
                tx: self.pool.begin().await?,
                _turn: None,
            },
        })
    }

    /// A connection for a single write statement outside a transaction. On
    /// SQLite it waits for the write turn here rather than in SQLite's busy
    /// handler, which sleeps in steps of up to 100 ms.
    pub async fn writer(&self) -> StoreResult<WriteConn> {
        let turn = match self.backend {
            Backend::Sqlite => Some(self.write_gate.clone().lock_owned().await),
            Backend::Postgres => None,
        };
        Ok(WriteConn {
            conn: self.writes.acquire().await?,
            _turn: turn,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A write a unique index refused becomes a `Conflict` naming `what`.
pub fn unique_or(what: &str) -> impl FnOnce(sqlx::Error) -> StoreError + '_ {
    move |e| match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => StoreError::Conflict(what.to_string()),
        _ => StoreError::Db(e),
    }
}

/// An update that must hit its row: none touched means the row is gone.
pub fn one_row(done: sqlx::any::AnyQueryResult) -> StoreResult<()> {
    if done.rows_affected() == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}

/// `$first, $first+1, …` for `n` bound values: an `IN (…)` list after the
/// statement's other `first - 1` parameters.
pub(crate) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Fixed-width UTC text: microsecond precision, `Z` suffix.
pub fn time_to_text(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

pub fn text_to_time(s: &str) -> StoreResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt(format!("bad time {s:?}: {e}")))
}

pub fn opt_time_to_text(t: Option<DateTime<Utc>>) -> Option<String> {
    t.map(time_to_text)
}

pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_number_an_in_list_after_the_other_parameters() {
        assert_eq!(super::placeholders(3, 3), "$3, $4, $5");
        assert_eq!(super::placeholders(2, 1), "$2");
    }
}
