//! Schedules evaluated in IANA time zones: parsing, next runs, the firing
//! rule. Only the server compiles this (feature `zones`): the zone database
//! would be most of the browser bundle's data.

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};

use super::{CronError, EVERY_MAX, EVERY_MIN};
use crate::duration::parse_duration;

/// A parsed schedule.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// A cron pattern evaluated in a zone.
    Cron { cron: Box<croner::Cron>, tz: Tz },
    /// A fixed interval from the anchor; zones do not apply.
    Every(Duration),
}

fn parse_zone(name: &str) -> Result<Tz, CronError> {
    let name = name.trim();
    if name.is_empty() {
        return Ok(Tz::UTC);
    }
    Tz::from_str(name).map_err(|_| CronError(format!("unknown time zone \"{name}\"")))
}

impl Schedule {
    /// Parses `expr` (trimmed) in `timezone` (empty = UTC). A `TZ=`/`CRON_TZ=`
    /// prefix on the expression wins over the configured zone.
    pub fn parse(expr: &str, timezone: &str) -> Result<Schedule, CronError> {
        let mut expr = expr.trim();
        let mut tz = parse_zone(timezone)?;
        for prefix in ["CRON_TZ=", "TZ="] {
            if let Some(rest) = expr.strip_prefix(prefix) {
                let (zone, pattern) = rest
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| CronError("missing pattern after time zone".into()))?;
                tz = parse_zone(zone)?;
                expr = pattern.trim();
                break;
            }
        }
        if expr.is_empty() {
            return Err(CronError("empty expression".into()));
        }
        if let Some(rest) = expr.strip_prefix("@every") {
            let every = parse_duration(rest).map_err(|e| CronError(e.to_string()))?;
            if !(EVERY_MIN..=EVERY_MAX).contains(&every) {
                return Err(CronError("@every must be from 1s to 366 days".into()));
            }
            return Ok(Schedule::Every(every));
        }
        let pattern = if expr.eq_ignore_ascii_case("@midnight") {
            "@daily"
        } else {
            expr
        };
        if pattern.starts_with('@')
            && !["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@hourly"]
                .iter()
                .any(|d| d.eq_ignore_ascii_case(pattern))
        {
            return Err(CronError(format!("unknown descriptor {pattern}")));
        }
        if !pattern.starts_with('@') && pattern.split_whitespace().count() != 5 {
            return Err(CronError("expected exactly 5 fields".into()));
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(pattern)
            .map_err(|e| CronError(e.to_string()))?;
        Ok(Schedule::Cron {
            cron: Box::new(cron),
            tz,
        })
    }

    /// The first occurrence strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            // Checked: a stored value from anywhere must never panic the scheduler.
            Schedule::Every(d) => chrono::Duration::from_std(*d)
                .ok()
                .and_then(|d| after.checked_add_signed(d)),
            Schedule::Cron { cron, tz } => {
                let local = tz.from_utc_datetime(&after.naive_utc());
                cron.find_next_occurrence(&local, false)
                    .ok()
                    .map(|t| t.with_timezone(&Utc))
            }
        }
    }
}

/// Save-time check: the expression parses and has a run after `now` (a
/// pattern such as February 30th parses but never fires).
pub fn validate_schedule(expr: &str, timezone: &str, now: DateTime<Utc>) -> Result<(), CronError> {
    let schedule = Schedule::parse(expr, timezone)?;
    match schedule.next_after(now) {
        Some(_) => Ok(()),
        None => Err(CronError("the schedule never runs".into())),
    }
}

/// The scheduler's firing rule: the next occurrence strictly after the anchor
/// (`last_evaluated_at`, else `created_at`) is at or before `now`. A blank or
/// unparseable expression never fires. A slot missed while down fires once,
/// because the anchor then moves to `now`.
pub fn is_due(expr: &str, timezone: &str, anchor: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    if expr.trim().is_empty() {
        return false;
    }
    Schedule::parse(expr, timezone)
        .ok()
        .and_then(|s| s.next_after(anchor))
        .is_some_and(|next| next <= now)
}

/// The editor's preview: the next `count` runs exactly as the scheduler would
/// fire them, or why the schedule is refused at save.
pub fn preview(expr: &str, timezone: &str, now: DateTime<Utc>, count: usize) -> Result<Vec<DateTime<Utc>>, CronError> {
    validate_schedule(expr, timezone, now)?;
    Ok(upcoming(expr, timezone, now, count))
}

/// The next `count` run times after `now`.
pub fn upcoming(expr: &str, timezone: &str, now: DateTime<Utc>, count: usize) -> Vec<DateTime<Utc>> {
    let Ok(schedule) = Schedule::parse(expr, timezone) else {
        return vec![];
    };
    let mut out = Vec::with_capacity(count);
    let mut cursor = now;
    while out.len() < count {
        match schedule.next_after(cursor) {
            Some(next) => {
                out.push(next);
                cursor = next;
            }
            None => break,
        }
    }
    out
}

/// Every IANA zone name we know, for the time-zone combobox.
pub fn timezone_names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name())
}

/// Zone names containing `query` (case-insensitive), at most `limit`.
pub fn matching_timezones(query: &str, limit: usize) -> Vec<&'static str> {
    super::matching_zones(timezone_names(), query, limit)
}

/// A time shown in a zone (empty or unknown zone: UTC), for the next-run preview.
pub fn format_in_zone(at: DateTime<Utc>, timezone: &str) -> String {
    let tz = parse_zone(timezone).unwrap_or(Tz::UTC);
    at.with_timezone(&tz).format("%a %Y-%m-%d %H:%M %Z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::{preset_of, scheduled_dedup_key};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn next_fire_in_utc_and_in_a_zone() {
        let s = Schedule::parse("0 9 * * *", "UTC").unwrap();
        assert_eq!(s.next_after(t("2026-03-08T08:00:00Z")), Some(t("2026-03-08T09:00:00Z")));
        let s = Schedule::parse("0 9 * * *", "Europe/Berlin").unwrap();
        // 09:00 in Berlin is 08:00 UTC in winter
        assert_eq!(s.next_after(t("2026-01-10T00:00:00Z")), Some(t("2026-01-10T08:00:00Z")));
    }

    #[test]
    fn next_is_strictly_after() {
        let s = Schedule::parse("0 * * * *", "").unwrap();
        assert_eq!(s.next_after(t("2026-03-08T09:00:00Z")), Some(t("2026-03-08T10:00:00Z")));
    }

    #[test]
    fn descriptors_and_every() {
        for d in [
            "@yearly",
            "@annually",
            "@monthly",
            "@weekly",
            "@daily",
            "@midnight",
            "@hourly",
            "@DAILY",
        ] {
            assert!(Schedule::parse(d, "UTC").is_ok(), "{d}");
        }
        let s = Schedule::parse("@every 90s", "Europe/Berlin").unwrap();
        assert_eq!(s.next_after(t("2026-03-08T09:00:00Z")), Some(t("2026-03-08T09:01:30Z")));
        assert!(Schedule::parse("@every nope", "UTC").is_err());
        assert!(Schedule::parse("@fortnightly", "UTC").is_err());
    }

    #[test]
    fn every_is_bounded_from_one_second_to_366_days() {
        assert!(Schedule::parse("@every 1s", "").is_ok());
        assert!(Schedule::parse("@every 8784h", "").is_ok());
        for bad in [
            "@every 0s",
            "@every 999ms",
            "@every 8785h",
            "@every 5000000000h",
            "@every 0",
        ] {
            assert!(Schedule::parse(bad, "").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_schedule_without_a_next_run_is_invalid() {
        let now = t("2026-03-08T09:00:00Z");
        assert!(validate_schedule("0 9 * * *", "UTC", now).is_ok());
        assert!(validate_schedule("0 0 30 2 *", "UTC", now).is_err());
        assert!(validate_schedule("nope", "UTC", now).is_err());
    }

    #[test]
    fn next_after_near_the_end_of_time_is_none_not_a_panic() {
        let end = DateTime::<Utc>::MAX_UTC;
        assert_eq!(Schedule::Every(EVERY_MAX).next_after(end), None);
        assert!(!is_due("@every 1s", "", end, end));
    }

    #[test]
    fn zone_prefix_wins_and_bad_zones_are_rejected() {
        let s = Schedule::parse("CRON_TZ=America/New_York 0 9 * * *", "Asia/Tokyo").unwrap();
        assert_eq!(s.next_after(t("2026-01-10T00:00:00Z")), Some(t("2026-01-10T14:00:00Z")));
        assert!(Schedule::parse("0 9 * * *", "Mars/Olympus").is_err());
    }

    #[test]
    fn five_fields_only() {
        assert!(Schedule::parse("0 0 9 * * *", "UTC").is_err());
        assert!(Schedule::parse("9 * *", "UTC").is_err());
        assert!(Schedule::parse("61 * * * *", "UTC").is_err());
    }

    #[test]
    fn day_of_month_or_day_of_week() {
        // 1st of the month OR a Monday
        let s = Schedule::parse("0 0 1 * 1", "UTC").unwrap();
        // 2026-03-02 is a Monday
        assert_eq!(s.next_after(t("2026-03-01T12:00:00Z")), Some(t("2026-03-02T00:00:00Z")));
    }

    #[test]
    fn due_rule_missed_slot_and_blank() {
        let anchor = t("2026-03-08T08:30:00Z");
        assert!(!is_due("0 9 * * *", "UTC", anchor, t("2026-03-08T08:59:59Z")));
        assert!(is_due("0 9 * * *", "UTC", anchor, t("2026-03-08T09:00:00Z")));
        // down for three days: still due (once; the caller moves the anchor to now)
        assert!(is_due("0 9 * * *", "UTC", anchor, t("2026-03-11T12:00:00Z")));
        assert!(!is_due(
            "0 9 * * *",
            "UTC",
            t("2026-03-11T12:00:00Z"),
            t("2026-03-11T12:00:30Z")
        ));
        assert!(!is_due("", "UTC", anchor, t("2030-01-01T00:00:00Z")));
        assert!(!is_due("bad", "UTC", anchor, t("2030-01-01T00:00:00Z")));
    }

    #[test]
    fn upcoming_lists_consecutive_runs() {
        let runs = upcoming("0 */6 * * *", "UTC", t("2026-03-08T01:00:00Z"), 3);
        assert_eq!(
            runs,
            vec![
                t("2026-03-08T06:00:00Z"),
                t("2026-03-08T12:00:00Z"),
                t("2026-03-08T18:00:00Z")
            ]
        );
    }

    #[test]
    fn preview_lists_the_scheduler_runs_or_says_why_not() {
        let now = t("2026-01-10T08:30:00Z");
        assert_eq!(
            preview("0 9 * * *", "Europe/Berlin", now, 2),
            Ok(vec![t("2026-01-11T08:00:00Z"), t("2026-01-12T08:00:00Z")])
        );
        assert_eq!(
            preview("0 9 * * *", "Europe/Berlin", now, 2).unwrap(),
            upcoming("0 9 * * *", "Europe/Berlin", now, 2)
        );
        assert_eq!(
            preview("0 9 * *", "", now, 3),
            Err(CronError("expected exactly 5 fields".into()))
        );
        assert_eq!(
            preview("@daily", "Mars/Olympus", now, 3),
            Err(CronError("unknown time zone \"Mars/Olympus\"".into()))
        );
        assert_eq!(
            preview("0 0 30 2 *", "", now, 3),
            Err(CronError("the schedule never runs".into()))
        );
    }

    #[test]
    fn scheduled_dedup_key_is_per_minute() {
        assert_eq!(scheduled_dedup_key("tr1", t("1970-01-01T00:02:59Z")), "scheduled:tr1:2");
    }
    #[test]
    fn presets_and_zone_helpers() {
        assert_eq!(preset_of("0 * * * *"), Some("@hourly"));
        assert_eq!(preset_of(" @daily "), Some("@daily"));
        assert_eq!(preset_of("*/5 * * * *"), None);
        assert!(matching_timezones("berlin", 5).contains(&"Europe/Berlin"));
        assert_eq!(matching_timezones("", 3).len(), 3);
        assert_eq!(
            format_in_zone(t("2026-01-10T08:00:00Z"), "Europe/Berlin"),
            "Sat 2026-01-10 09:00 CET"
        );
        assert_eq!(
            format_in_zone(t("2026-01-10T08:00:00Z"), ""),
            "Sat 2026-01-10 08:00 UTC"
        );
    }
}
