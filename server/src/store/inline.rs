//! The guard's reads on SQLite, run where they are asked for. sqlx runs each
//! SQLite statement on its connection's own thread: a hand-off there and one
//! back, which under load cost more than the guard's indexed lookup itself,
//! and every API request makes one. These connections are plain SQLite
//! (rusqlite) used synchronously on the caller's thread; a statement is a
//! few index probes, so it blocks that thread for microseconds.
//!
//! They never wait: a connection that finds the database busy (a rare
//! moment in WAL mode) answers `None` at once and the caller reads through
//! sqlx instead. They only read (`query_only`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::{Connection, OpenFlags, Row};

use super::guard_reads::PARAMETER_NAMES;
use super::rows::RowExt;
use super::{StoreError, StoreResult};

/// Idle connections kept; one is in use per thread reading at that moment.
const KEEP_IDLE: usize = 16;

/// Prepared statements kept per connection: the guard's statements (one per
/// credential kind and scope, and the admin's places) are about twenty, more
/// than rusqlite's default sixteen, which would re-prepare them in turn.
const STATEMENTS: usize = 64;

pub(super) struct InlineReads {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    closed: AtomicBool,
}

impl InlineReads {
    /// Over the database file at `path` (already created and migrated).
    pub(super) fn new(path: &Path) -> InlineReads {
        InlineReads {
            path: path.to_path_buf(),
            idle: Mutex::new(vec![]),
            closed: Default::default(),
        }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::ZERO)?;
        conn.pragma_update(None, "query_only", true)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        Ok(conn)
    }

    /// The first row `sql` gives for `params` (bound to `$1`, `$2`, … in
    /// order), read by `map`. `None` when this path cannot answer now (busy,
    /// or no connection could be opened): read through sqlx instead.
    pub(super) fn first_row<T>(
        &self,
        sql: &str,
        params: &[&str],
        map: impl FnOnce(&Row<'_>) -> StoreResult<T>,
    ) -> Option<StoreResult<Option<T>>> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => match self.open() {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::debug!(error = %e, "inline read connection not opened; reading through the pool");
                    return None;
                }
            },
        };
        let answer = read(&conn, sql, params, map);
        if !self.closed.load(Ordering::Acquire) {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < KEEP_IDLE {
                idle.push(conn);
            }
        }
        match answer {
            Err(Unanswered::Busy) => None,
            Err(Unanswered::Failed(e)) => Some(Err(e)),
            Ok(row) => Some(Ok(row)),
        }
    }

    /// Lets every connection go; later reads go through sqlx.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

enum Unanswered {
    Busy,
    Failed(StoreError),
}

impl From<rusqlite::Error> for Unanswered {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => Unanswered::Busy,
            _ => Unanswered::Failed(StoreError::Unavailable(format!("inline read: {e}"))),
        }
    }
}

fn read<T>(
    conn: &Connection,
    sql: &str,
    params: &[&str],
    map: impl FnOnce(&Row<'_>) -> StoreResult<T>,
) -> Result<Option<T>, Unanswered> {
    let mut stmt = conn.prepare_cached(sql)?;
    if params.len() > PARAMETER_NAMES.len() {
        return Err(Unanswered::Failed(StoreError::Unavailable(format!(
            "inline read: {} parameters, at most {}",
            params.len(),
            PARAMETER_NAMES.len()
        ))));
    }
    for (name, value) in PARAMETER_NAMES.iter().zip(params) {
        // A `$n` used twice is one parameter; one not used is skipped.
        if let Some(at) = stmt.parameter_index(name)? {
            stmt.raw_bind_parameter(at, *value)?;
        }
    }
    let mut rows = stmt.raw_query();
    match rows.next()? {
        Some(row) => map(row).map(Some).map_err(Unanswered::Failed),
        None => Ok(None),
    }
}

fn column<T: rusqlite::types::FromSql>(row: &Row<'_>, col: &str) -> StoreResult<T> {
    row.get(col)
        .map_err(|e| StoreError::Corrupt(format!("column {col}: {e}")))
}

impl RowExt for Row<'_> {
    fn text(&self, col: &str) -> StoreResult<String> {
        column(self, col)
    }

    fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
        column(self, col)
    }

    fn int(&self, col: &str) -> StoreResult<i64> {
        column(self, col)
    }

    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>> {
        column(self, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_text(reads: &InlineReads, sql: &str, params: &[&str]) -> Option<StoreResult<Option<String>>> {
        reads.first_row(sql, params, |r| r.text("v"))
    }

    #[test]
    fn parameters_bind_by_their_dollar_numbers_even_when_repeated() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("k.db");
        Connection::open(&path).expect("create");
        let reads = InlineReads::new(&path);
        let got = one_text(&reads, "SELECT $2 || $1 || $2 AS v", &["a", "b"]);
        assert_eq!(got.and_then(Result::ok).flatten().as_deref(), Some("bab"));
        let none = one_text(&reads, "SELECT 'x' AS v WHERE $1 = 'no'", &["yes"]);
        assert!(matches!(none, Some(Ok(None))), "no row is an answer, not a fallback");
    }

    #[test]
    fn a_database_it_cannot_open_sends_the_read_through_the_pool() {
        let dir = tempfile::tempdir().expect("dir");
        let reads = InlineReads::new(&dir.path().join("missing.db"));
        assert!(one_text(&reads, "SELECT 'x' AS v", &[]).is_none());
        assert!(!dir.path().join("missing.db").exists(), "never created");
    }

    #[test]
    fn busy_falls_back_and_other_failures_are_errors() {
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
        assert!(matches!(Unanswered::from(busy), Unanswered::Busy));
        let locked = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_LOCKED), None);
        assert!(matches!(Unanswered::from(locked), Unanswered::Busy));
        let corrupt = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT), None);
        assert!(matches!(Unanswered::from(corrupt), Unanswered::Failed(_)));
    }

    #[test]
    fn it_only_reads_and_a_closed_one_answers_nothing() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("k.db");
        Connection::open(&path)
            .expect("create")
            .execute_batch("CREATE TABLE t (v TEXT)")
            .expect("table");
        let reads = InlineReads::new(&path);
        let write = one_text(&reads, "INSERT INTO t (v) VALUES ('x') RETURNING v", &[]);
        assert!(matches!(write, Some(Err(_))), "query_only refuses a write");
        reads.close();
        assert!(one_text(&reads, "SELECT 'x' AS v", &[]).is_none());
    }
}
