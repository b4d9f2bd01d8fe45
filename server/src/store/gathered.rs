//! The guard's reads on PostgreSQL, gathered: every API request makes one,
//! and on PostgreSQL each is a round trip whose cost (the server process's
//! wake-up, the socket, the executor's set-up) is many times the read's
//! index probes. Reads of the same statement that arrive while one is being
//! answered wait for the next statement, which answers all of them at once
//! (the statement run once per parameter set through a lateral join).
//!
//! Nothing waits on a timer: a read that finds no statement of its kind
//! running starts one at once, so a lone read costs one round trip as before.
//! Each read still starts after its request arrived, so it sees every write
//! committed before that, on any replica. A gathered statement that fails
//! answers nobody: each of its readers then reads alone, so no input (one
//! hostile id, say) can fail the others' reads.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sqlx::any::AnyRow;
use sqlx::{AnyPool, AssertSqlSafe};
use tokio::sync::oneshot;

use super::guard_reads::PARAMETER_NAMES;
use super::rows::RowExt;
use super::{StoreError, StoreResult};

/// The most reads one statement answers; more wait for the next.
const MAX_GATHERED: usize = 128;

/// A reader's answer: its row if any, or why there is none.
type Answer = Result<Option<AnyRow>, Unanswered>;

enum Unanswered {
    /// The gathered statement failed: read alone, so one reader's input
    /// cannot fail the others.
    ReadAlone,
    /// No statement could be run (no connection), or the reader's own failed.
    Failed(StoreError),
}

/// Why a statement gave no rows: no connection (every reader fails alike)
/// or the statement itself.
enum Failure {
    Connection(sqlx::Error),
    Statement(sqlx::Error),
}

struct Waiter {
    params: Vec<String>,
    reply: oneshot::Sender<Answer>,
}

/// One statement's readers waiting for the next round trip.
struct Queue {
    waiting: Vec<Waiter>,
    running: bool,
    gathered_sql: Arc<str>,
}

/// How many reads were answered and in how many statements (for `/metrics`
/// and the tests that show the gathering).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GatheredCounts {
    pub reads: u64,
    pub statements: u64,
}

pub(super) struct GatheredReads {
    pool: AnyPool,
    queues: Mutex<HashMap<&'static str, Queue>>,
    reads: AtomicU64,
    statements: AtomicU64,
}

impl GatheredReads {
    pub(super) fn new(pool: AnyPool) -> Arc<GatheredReads> {
        Arc::new(GatheredReads {
            pool,
            queues: Mutex::default(),
            reads: AtomicU64::new(0),
            statements: AtomicU64::new(0),
        })
    }

    pub(super) fn counts(&self) -> GatheredCounts {
        GatheredCounts {
            reads: self.reads.load(Ordering::Relaxed),
            statements: self.statements.load(Ordering::Relaxed),
        }
    }

    /// The first row `sql` gives for `params` (`$1`, `$2`, … in order), read
    /// with whatever reads of the same statement are waiting. `None`: this
    /// path could not answer; read alone.
    pub(super) async fn first_row(
        self: &Arc<Self>,
        sql: &'static str,
        params: &[&str],
    ) -> Option<StoreResult<Option<AnyRow>>> {
        if params.len() > PARAMETER_NAMES.len() {
            return None;
        }
        let (reply, answer) = oneshot::channel();
        let waiter = Waiter {
            params: params.iter().map(|p| p.to_string()).collect(),
            reply,
        };
        let start = {
            let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
            let queue = queues.entry(sql).or_insert_with(|| Queue {
                waiting: vec![],
                running: false,
                gathered_sql: gathered_sql(sql).into(),
            });
            queue.waiting.push(waiter);
            !std::mem::replace(&mut queue.running, true)
        };
        if start {
            // Its own task: a reader that stops waiting must not strand the
            // others gathered into its statement.
            tokio::spawn(Arc::clone(self).run(sql));
        }
        match answer.await.ok()? {
            Ok(row) => Some(Ok(row)),
            Err(Unanswered::ReadAlone) => None,
            Err(Unanswered::Failed(e)) => Some(Err(e)),
        }
    }

    /// Answers `sql`'s waiting readers, a statement at a time, until none wait.
    async fn run(self: Arc<Self>, sql: &'static str) {
        let mut stopped = Stopped {
            reads: &self,
            sql,
            done: false,
        };
        loop {
            let (batch, gathered_sql) = {
                let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
                let Some(queue) = queues.get_mut(sql) else { return };
                if queue.waiting.is_empty() {
                    queue.running = false;
                    stopped.done = true;
                    return;
                }
                let take = queue.waiting.len().min(MAX_GATHERED);
                let batch: Vec<Waiter> = queue.waiting.drain(..take).collect();
                (batch, Arc::clone(&queue.gathered_sql))
            };
            self.statements.fetch_add(1, Ordering::Relaxed);
            self.reads.fetch_add(batch.len() as u64, Ordering::Relaxed);
            match self.answer(sql, &gathered_sql, &batch).await {
                Ok(mut rows) => {
                    for (i, w) in batch.into_iter().enumerate() {
                        let _ = w.reply.send(Ok(rows.remove(&i)));
                    }
                }
                Err(Failure::Connection(e)) => {
                    // Reading alone would only wait for a connection again.
                    let message = e.to_string();
                    for w in batch {
                        let _ = w
                            .reply
                            .send(Err(Unanswered::Failed(StoreError::Unavailable(message.clone()))));
                    }
                }
                Err(Failure::Statement(e)) if batch.len() == 1 => {
                    // Alone already: its own error, as an ungathered read gets.
                    if let Some(w) = batch.into_iter().next() {
                        let _ = w.reply.send(Err(Unanswered::Failed(e.into())));
                    }
                }
                Err(Failure::Statement(e)) => {
                    tracing::debug!(error = %e, readers = batch.len(), "gathered guard read failed; each reads alone");
                    for w in batch {
                        let _ = w.reply.send(Err(Unanswered::ReadAlone));
                    }
                }
            }
        }
    }

    /// Each reader's row, by its place in `batch`.
    async fn answer(
        &self,
        sql: &'static str,
        gathered_sql: &str,
        batch: &[Waiter],
    ) -> Result<HashMap<usize, AnyRow>, Failure> {
        let mut conn = self.pool.acquire().await.map_err(Failure::Connection)?;
        if let [one] = batch {
            // Alone: the plain statement, as an ungathered read would run it.
            let mut query = sqlx::query(sql);
            for p in &one.params {
                query = query.bind(p.as_str());
            }
            let row = query.fetch_optional(&mut *conn).await.map_err(Failure::Statement)?;
            return Ok(row.into_iter().map(|r| (0, r)).collect());
        }
        let rows = sqlx::query(AssertSqlSafe(gathered_sql))
            .bind(parameter_sets(batch))
            .fetch_all(&mut *conn)
            .await
            .map_err(Failure::Statement)?;
        let mut answers = HashMap::with_capacity(rows.len());
        for row in rows {
            let at = row.int("gathered_n").ok().and_then(|n| usize::try_from(n).ok());
            let Some(at) = at else {
                return Err(Failure::Statement(sqlx::Error::Decode("gathered_n".into())));
            };
            // The first row per reader, as `fetch_optional` would take.
            answers.entry(at).or_insert(row);
        }
        Ok(answers)
    }
}

/// Should a runner stop early (a panic, the runtime shutting down), its
/// queue is let go: the readers waiting in it read alone, and the next
/// reader starts a new runner.
struct Stopped<'a> {
    reads: &'a GatheredReads,
    sql: &'static str,
    done: bool,
}

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut queues = self.reads.queues.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(queue) = queues.get_mut(self.sql) {
            queue.running = false;
            queue.waiting.clear();
        }
    }
}

/// The readers' parameters as one JSON array of objects (`gathered_n`, `p1`…):
/// `Any` binds no arrays, and JSON carries any text as it is.
fn parameter_sets(batch: &[Waiter]) -> String {
    let sets: Vec<serde_json::Value> = batch
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut set = serde_json::Map::new();
            set.insert("gathered_n".into(), i.into());
            for (k, p) in w.params.iter().enumerate() {
                set.insert(format!("p{}", k + 1), p.as_str().into());
            }
            serde_json::Value::Object(set)
        })
        .collect();
    serde_json::Value::Array(sets).to_string()
}

/// `sql` run once per parameter set: its `$n` become the set's columns.
fn gathered_sql(sql: &str) -> String {
    let mut body = sql.to_string();
    // Highest first, so `$1` never eats the start of a longer name.
    for (n, name) in PARAMETER_NAMES.iter().enumerate().rev() {
        body = body.replace(name, &format!("i.p{}", n + 1));
    }
    let columns: Vec<String> = (1..=PARAMETER_NAMES.len()).map(|n| format!("p{n} TEXT")).collect();
    format!(
        "SELECT i.gathered_n AS gathered_n, q.* FROM json_to_recordset(CAST($1 AS json)) \
         AS i(gathered_n BIGINT, {}) CROSS JOIN LATERAL ({body} LIMIT 1) q",
        columns.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_parameter_becomes_its_sets_column() {
        let sql = gathered_sql("SELECT a FROM t WHERE x = $1 AND y = $2 AND z = $1");
        assert_eq!(
            sql,
            "SELECT i.gathered_n AS gathered_n, q.* FROM json_to_recordset(CAST($1 AS json)) \
             AS i(gathered_n BIGINT, p1 TEXT, p2 TEXT, p3 TEXT, p4 TEXT) CROSS JOIN LATERAL \
             (SELECT a FROM t WHERE x = i.p1 AND y = i.p2 AND z = i.p1 LIMIT 1) q"
        );
    }

    #[test]
    fn hostile_text_travels_as_json_values() {
        let (reply, _answer) = oneshot::channel();
        let batch = [Waiter {
            params: vec!["'; DROP TABLE users; --".into(), "\"}]$2\\".into()],
            reply,
        }];
        let sets: serde_json::Value = serde_json::from_str(&parameter_sets(&batch)).expect("JSON");
        assert_eq!(sets[0]["gathered_n"], 0);
        assert_eq!(sets[0]["p1"], "'; DROP TABLE users; --");
        assert_eq!(sets[0]["p2"], "\"}]$2\\");
    }
}
