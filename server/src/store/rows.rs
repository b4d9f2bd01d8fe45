//! Reading typed values out of rows: sqlx's `Any` rows and, for the
//! guard's inline reads on SQLite, rusqlite's.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreError, StoreResult, text_to_time};

pub(crate) trait RowExt {
    fn text(&self, col: &str) -> StoreResult<String>;
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>>;
    fn int(&self, col: &str) -> StoreResult<i64>;
    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>>;

    fn flag(&self, col: &str) -> StoreResult<bool> {
        Ok(self.int(col)? != 0)
    }

    fn time(&self, col: &str) -> StoreResult<DateTime<Utc>> {
        text_to_time(&self.text(col)?)
    }

    fn opt_time(&self, col: &str) -> StoreResult<Option<DateTime<Utc>>> {
        self.opt_text(col)?.as_deref().map(text_to_time).transpose()
    }

    fn json(&self, col: &str) -> StoreResult<serde_json::Value> {
        let raw = self.text(col)?;
        serde_json::from_str(&raw).map_err(|e| StoreError::Corrupt(format!("bad json in {col}: {e}")))
    }
}

impl RowExt for AnyRow {
    fn text(&self, col: &str) -> StoreResult<String> {
        Ok(self.try_get::<String, _>(col)?)
    }

    fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
        Ok(self.try_get::<Option<String>, _>(col)?)
    }

    fn int(&self, col: &str) -> StoreResult<i64> {
        Ok(self.try_get::<i64, _>(col)?)
    }

    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>> {
        Ok(self.try_get::<Option<i64>, _>(col)?)
    }
}

pub(crate) fn flag(b: bool) -> i64 {
    i64::from(b)
}
