//! Storage: one set of portable SQL over sqlx's `Any` driver, so the embedded
//! SQLite file and PostgreSQL run the same queries and the same migrations
//! (save the few written per dialect, such as triggers).
//!
//! Times are stored as fixed-width RFC 3339 UTC text (they sort as strings) and
//! booleans as 0/1, because `Any` carries only integers, floats, text and blobs.

pub mod agents;
pub mod automations;
pub mod evaluations;
mod gathered;
pub mod github_state;
mod guard_reads;
mod inline;
mod keys;
pub mod leases;
mod lone;
mod members;
pub mod notifications;
pub mod outbox;
pub mod pr_moves;
mod readers;
mod recovery;
pub mod repo_moves;
mod repositories;
mod rows;
pub mod runs;
pub mod task_prs;
pub mod tasks;
mod turn;
mod users;
mod workspaces;

pub use agents::SessionRecord;
pub use automations::{AutomationBrief, AutomationRecord, NewAutomation, TriggerRecord, TriggerWithAutomation};
pub use evaluations::EvaluationRecord;
pub use gathered::GatheredCounts;
use gathered::GatheredReads;
pub use github_state::MergerJob;
pub use guard_reads::{CallerAt, Credential, Place};
use inline::InlineReads;
use lone::LoneWriter;
pub use readers::ReadConn;
use readers::Readers;
pub use recovery::Orphan;
pub use runs::{NewRun, RunRecord, RunView};
pub use tasks::{EventRecord, NewTask, TaskRecord};
use turn::Turn;
pub use turn::{WriteConn, WriteTx};
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
    #[error("the writer is unavailable: {0}")]
    Unavailable(String),
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
    /// SQLite's read connections, handed round without sqlx's release ping.
    readers: Option<Arc<Readers>>,
    backend: Backend,
    /// SQLite has one writer at a time, and a writer that finds the lock
    /// taken sleeps in coarse steps: this process's writes take turns here
    /// instead, on a connection of their own that never waits behind a crowd
    /// of readers. (PostgreSQL writes concurrently from the pool: `None`.)
    turn: Option<Turn>,
    /// SQLite's lone write statements, run in batches on a thread of their own.
    lone: Option<LoneWriter>,
    /// SQLite's guard reads, run on the asking thread (see `inline`).
    inline: Option<Arc<InlineReads>>,
    /// PostgreSQL's guard reads, gathered into shared statements (see `gathered`).
    gathered: Option<Arc<GatheredReads>>,
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
    (
        13,
        "merger_approved_head",
        include_str!("../../migrations/0013_merger_approved_head.sql"),
    ),
    (
        14,
        "session_token_hash",
        include_str!("../../migrations/0014_session_token_hash.sql"),
    ),
    (
        15,
        "installation_keys",
        include_str!("../../migrations/0015_installation_keys.sql"),
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

/// How long a request waits for a connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// SQLite connections for reads.
pub const SQLITE_READERS: usize = 8;

/// A pooled connection idle this long is checked before use; one returned
/// sooner was checked when it came back (sqlx pings every connection on
/// release). SQLite's readers and write turn are outside that: see `readers`.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(10);

async fn open_pool(backend: Backend, options: &AnyConnectOptions, size: u32) -> StoreResult<AnyPool> {
    Ok(AnyPoolOptions::new()
        .max_connections(size)
        .acquire_timeout(ACQUIRE_TIMEOUT)
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
        // On SQLite, room beside the readers for what uses the pool itself (migrations, benches).
        let size = if backend == Backend::Sqlite {
            SQLITE_READERS as u32 + 4
        } else {
            16
        };
        let pool = open_pool(backend, &options, size).await?;
        migrator(backend).run(&pool).await?;
        let turn = match backend {
            Backend::Sqlite => Some(Turn::new(open_pool(backend, &options, 1).await?)),
            Backend::Postgres => None,
        };
        let lone = match &turn {
            Some(turn) => Some(LoneWriter::start(turn.clone()).map_err(|e| StoreError::Unavailable(e.to_string()))?),
            None => None,
        };
        let readers = match backend {
            Backend::Sqlite => Some(Readers::new(pool.clone(), SQLITE_READERS)),
            Backend::Postgres => None,
        };
        let inline = match backend {
            Backend::Sqlite => {
                let file = sqlx::sqlite::SqliteConnectOptions::from_str(&url)?;
                Some(Arc::new(InlineReads::new(file.get_filename())))
            }
            Backend::Postgres => None,
        };
        let gathered = match backend {
            Backend::Postgres => Some(GatheredReads::new(pool.clone())),
            Backend::Sqlite => None,
        };
        Ok(Store {
            pool,
            readers,
            backend,
            turn,
            lone,
            inline,
            gathered,
        })
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// A transaction that writes. SQLite takes its write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred one that reads first could not upgrade
    /// under a concurrent writer, and would fail instead of waiting.
    pub async fn write_tx(&self) -> StoreResult<WriteTx> {
        Ok(match &self.turn {
            Some(turn) => WriteTx::on_turn(turn.take().await?).await?,
            None => WriteTx::pooled(self.pool.begin().await?),
        })
    }

    /// A connection for a single write statement outside a transaction. On
    /// SQLite it waits for the write turn here rather than in SQLite's busy
    /// handler, which sleeps in steps of up to 100 ms.
    pub async fn writer(&self) -> StoreResult<WriteConn> {
        Ok(match &self.turn {
            Some(turn) => WriteConn::on_turn(turn.take().await?),
            None => WriteConn::pooled(self.pool.acquire().await?),
        })
    }

    /// One write statement (`work` runs it on the connection it is given and
    /// reads its answer), run whole even if the caller stops waiting. On
    /// SQLite it runs on the writer thread, batched with every other lone
    /// statement queued meanwhile; prefer it to [`Store::writer`] for a lone
    /// statement on a busy path.
    pub async fn write_one<R, F>(&self, work: F) -> StoreResult<R>
    where
        R: Send + 'static,
        F: for<'c> FnOnce(&'c mut sqlx::AnyConnection) -> futures::future::BoxFuture<'c, StoreResult<R>>
            + Send
            + 'static,
    {
        match &self.lone {
            Some(lone) => lone.run(work).await,
            None => {
                let store = self.clone();
                tokio::spawn(async move { work(&mut *store.writer().await?).await })
                    .await
                    .map_err(|e| StoreError::Unavailable(e.to_string()))?
            }
        }
    }

    /// [`Store::write_one`] for the plain case: one static statement whose
    /// parameters are all text, its answer unread.
    pub(crate) async fn write_text(&self, sql: &'static str, params: Vec<String>) -> StoreResult<()> {
        self.write_one(move |conn| {
            Box::pin(async move {
                let mut q = sqlx::query(sql);
                for p in params {
                    q = q.bind(p);
                }
                q.execute(conn).await?;
                Ok(())
            })
        })
        .await
    }

    /// Lone write statements queued for SQLite's writer thread; `None` on
    /// PostgreSQL, whose lone writes queue in its pool instead.
    pub fn lone_writes_waiting(&self) -> Option<usize> {
        self.lone.as_ref().map(LoneWriter::waiting)
    }

    /// A connection for reads. Never write on it: on SQLite the write would
    /// race the write turn for the database's lock.
    pub async fn read(&self) -> StoreResult<ReadConn> {
        match &self.readers {
            Some(readers) => readers.take().await,
            None => Ok(ReadConn::pooled(self.pool.acquire().await?)),
        }
    }

    /// Guard reads answered by gathered statements on PostgreSQL, and how
    /// many statements answered them (zero on SQLite, which reads inline).
    pub fn gathered_counts(&self) -> GatheredCounts {
        self.gathered.as_ref().map(|g| g.counts()).unwrap_or_default()
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub async fn close(&self) {
        if let Some(turn) = &self.turn {
            turn.close().await;
        }
        if let Some(readers) = &self.readers {
            readers.close();
        }
        if let Some(inline) = &self.inline {
            inline.close();
        }
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

/// Values per `IN (…)` list in one statement: binding costs grow with the
/// square of a statement's parameters in SQLite, so long lists go in chunks.
pub(crate) const IN_LIST_CHUNK: usize = 64;

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
