use chrono::{DateTime, Utc};
use kandev_core::api::Evaluation;
use kandev_core::gate::{Gate, Outcome};
use sqlx::any::AnyRow;

use super::rows::RowExt;
use super::{Store, StoreError, StoreResult, new_id, time_to_text};

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
    /// Writes a batch and trims each touched automation to its newest records.
    pub async fn record_evaluations(&self, batch: &[EvaluationRecord]) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        for e in batch {
            sqlx::query(
                "INSERT INTO automation_evaluations (id, automation_id, trigger_id, trigger_type, event_subject, summary, outcome, gate, at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(new_id())
            .bind(&e.automation_id)
            .bind(&e.trigger_id)
            .bind(&e.trigger_type)
            .bind(&e.event_subject)
            .bind(&e.summary)
            .bind(e.outcome.as_str())
            .bind(e.gate.map(|g| g.as_str().to_string()))
            .bind(time_to_text(e.at))
            .execute(&mut **tx)
            .await?;
        }
        let mut touched: Vec<&str> = batch.iter().map(|e| e.automation_id.as_str()).collect();
        touched.sort_unstable();
        touched.dedup();
        for automation_id in touched {
            sqlx::query(
                "DELETE FROM automation_evaluations WHERE automation_id = $1 AND id NOT IN \
                 (SELECT id FROM automation_evaluations WHERE automation_id = $1 ORDER BY at DESC, id DESC LIMIT $2)",
            )
            .bind(automation_id)
            .bind(KEEP_PER_AUTOMATION)
            .execute(&mut **tx)
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
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(evaluation)
        .collect()
    }
}
