//! Schedules: 5-field cron with IANA time zones, descriptors and `@every`.
//!
//! Parsing uses the maintained `croner` crate; `zoned` adds the engine's
//! dialect around it (zone prefixes, `@midnight`, `@every`) and the firing
//! rule. What the browser needs without the zone database lives here.

use std::time::Duration;

use chrono::{DateTime, Utc};

#[cfg(feature = "zones")]
mod zoned;
#[cfg(feature = "zones")]
pub use zoned::*;

/// The shortest `@every` interval.
pub const EVERY_MIN: Duration = Duration::from_secs(1);
/// The longest `@every` interval: 366 days.
pub const EVERY_MAX: Duration = Duration::from_secs(366 * 24 * 3600);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CronError(pub String);

/// The schedule editor's presets: a descriptor per sentence, or custom.
pub const PRESETS: [(&str, &str); 3] = [
    ("@hourly", "automations-cron-every-hour"),
    ("@daily", "automations-cron-every-day"),
    ("@weekly", "automations-cron-every-week"),
];

/// The preset an expression is, if any (`0 * * * *` is "every hour" too).
pub fn preset_of(expr: &str) -> Option<&'static str> {
    match expr.trim() {
        "@hourly" | "0 * * * *" => Some("@hourly"),
        "@daily" | "@midnight" | "0 0 * * *" => Some("@daily"),
        "@weekly" | "0 0 * * 0" => Some("@weekly"),
        _ => None,
    }
}

/// Zone names containing `query` (case-insensitive), at most `limit`: the
/// browser passes its own `Intl` zone list, the server chrono-tz's.
pub fn matching_zones<'a>(names: impl IntoIterator<Item = &'a str>, query: &str, limit: usize) -> Vec<&'a str> {
    let q = query.trim().to_lowercase();
    names
        .into_iter()
        .filter(|n| n.to_lowercase().contains(&q))
        .take(limit)
        .collect()
}

/// Dedup key for a scheduled firing: one per trigger per minute.
pub fn scheduled_dedup_key(trigger_id: &str, now: DateTime<Utc>) -> String {
    format!("scheduled:{trigger_id}:{}", now.timestamp().div_euclid(60))
}
