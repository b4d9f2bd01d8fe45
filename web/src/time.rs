//! Time in the browser: `SystemTime::now()` panics on wasm, so "now" comes
//! from JavaScript and every rule takes it as a parameter.

use chrono::{DateTime, TimeZone, Utc};
use kandev_core::text::{Age, age};

use crate::i18n::{t, ta};

pub fn now() -> DateTime<Utc> {
    Utc.timestamp_millis_opt(js_sys::Date::now() as i64)
        .single()
        .unwrap_or_default()
}

/// "5 min ago", localised.
pub fn relative(then: DateTime<Utc>) -> String {
    match age(then, now()) {
        Age::JustNow => t("time-just-now"),
        Age::Minutes(n) => ta("time-minutes-ago", &[("n", n.to_string())]),
        Age::Hours(n) => ta("time-hours-ago", &[("n", n.to_string())]),
        Age::Days(n) => ta("time-days-ago", &[("n", n.to_string())]),
    }
}
