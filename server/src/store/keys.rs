//! Secrets every replica of one installation shares (`installation_keys`).

use chrono::{DateTime, Utc};

use super::rows::RowExt;
use super::{Store, StoreResult, time_to_text};

impl Store {
    /// The installation's key `name`: `candidate` if no replica made one yet,
    /// else the one already there. Replicas starting at once all read the
    /// key the first insert wrote.
    pub async fn installation_key(&self, name: &str, candidate: String, now: DateTime<Utc>) -> StoreResult<String> {
        self.write_text(
            "INSERT INTO installation_keys (name, secret, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO NOTHING",
            vec![name.to_string(), candidate, time_to_text(now)],
        )
        .await?;
        let row = sqlx::query("SELECT secret FROM installation_keys WHERE name = $1")
            .bind(name)
            .fetch_one(&mut *self.read().await?)
            .await?;
        row.text("secret")
    }
}
