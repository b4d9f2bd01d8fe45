use chrono::{DateTime, Utc};
use kandev_core::api::Evaluation;
use kandev_core::gate::{Gate, Outcome};
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Backend, Store, StoreError, StoreResult, new_id, time_to_text};

/// One evaluation to record.
#[derive(Debug, Clone)]
pub struct EvaluationRecord {
    pub automation_id: String,
    pub trigger_id: String,
    pub trigger_type: String,
    pub event_subject: String,
    pub summary: String,
    pub outcome: Outcome,
    pub gate: Option<Gate>,
    pub at: DateTime<Utc>,
}

/// How many evaluations each automation keeps: a few hundred events' worth
/// of "why didn't it fire?" for a busy automation.
pub const KEEP_PER_AUTOMATION: i64 = 300;

/// Rows per INSERT (9 parameters each; well under either database's limit).
/// SQLite finds a *named* parameter (`$n`) by scanning the statement's names,
/// so binding `$n` grows with the square of the statement's size (a profile
/// showed 200-row statements spending most of their time there); anonymous
/// `?` parameters bind in order, so on SQLite the rows go in large statements.
const INSERT_CHUNK: usize = 128;

/// The VALUES list for `rows` rows of `cols` columns, in the backend's
/// placeholder form: `?` on SQLite (positional), `$n` on PostgreSQL.
fn values_list(backend: Backend, rows: usize, cols: usize) -> String {
    let row = |r: usize| -> String {
        let p: Vec<String> = (1..=cols)
            .map(|c| match backend {
                Backend::Sqlite => "?".to_string(),
                Backend::Postgres => format!("${}", r * cols + c),
            })
            .collect();
        format!("({})", p.join(", "))
    };
    (0..rows).map(row).collect::<Vec<_>>().join(", ")
}

fn gate_from(name: &str) -> Option<Gate> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}

fn evaluation(row: &AnyRow) -> StoreResult<Evaluation> {
    let outcome = row.text("outcome")?;
    Ok(Evaluation {
        trigger_id: row.text("trigger_id")?,
        trigger_type: row.text("trigger_type")?,
        event_subject: row.text("event_subject")?,
        summary: row.text("summary")?,
        outcome: Outcome::parse(&outcome).ok_or_else(|| StoreError::Corrupt(format!("outcome {outcome}")))?,
        gate: row.opt_text("gate")?.as_deref().and_then(gate_from),
        at: row.time("at")?,
    })
}

impl Store {
    /// Writes a batch, then trims `trim` (automation ids) to their newest records.
    pub async fn record_evaluations(&self, batch: &[EvaluationRecord], trim: &[String]) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        // Many rows a statement: a busy automation's ring goes in a few round trips.
        for chunk in batch.chunks(INSERT_CHUNK) {
            let sql = format!(
                "INSERT INTO automation_evaluations (id, automation_id, trigger_id, trigger_type, event_subject, summary, outcome, gate, at) VALUES {}",
                values_list(self.backend(), chunk.len(), 9)
            );
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for e in chunk {
                q = q
                    .bind(new_id())
                    .bind(&e.automation_id)
                    .bind(&e.trigger_id)
                    .bind(&e.trigger_type)
                    .bind(&e.event_subject)
                    .bind(&e.summary)
                    .bind(e.outcome.as_str())
                    .bind(e.gate.map(|g| g.as_str().to_string()))
                    .bind(time_to_text(e.at));
            }
            q.execute(&mut *tx).await?;
        }
        for automation_id in trim {
            sqlx::query(
                "DELETE FROM automation_evaluations WHERE automation_id = $1 AND id NOT IN \
                 (SELECT id FROM automation_evaluations WHERE automation_id = $1 ORDER BY at DESC, id DESC LIMIT $2)",
            )
            .bind(automation_id)
            .bind(KEEP_PER_AUTOMATION)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Recent evaluations of an automation's triggers, newest first.
    pub async fn list_evaluations(&self, automation_id: &str, limit: i64) -> StoreResult<Vec<Evaluation>> {
        sqlx::query(
            "SELECT trigger_id, trigger_type, event_subject, summary, outcome, gate, at FROM automation_evaluations \
             WHERE automation_id = $1 ORDER BY at DESC, id DESC LIMIT $2",
        )
        .bind(automation_id)
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?
        .iter()
        .map(evaluation)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_rows_take_positional_parameters_and_postgres_numbered_ones() {
        assert_eq!(values_list(Backend::Sqlite, 2, 2), "(?, ?), (?, ?)");
        assert_eq!(values_list(Backend::Postgres, 2, 2), "($1, $2), ($3, $4)");
    }
}
