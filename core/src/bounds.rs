//! The API's bounds (API.md, "Bounds"): every number and size a request may
//! carry, checked at the API and again where a stored value is used.

use std::ops::RangeInclusive;

/// List `limit`s.
pub const LIMIT: RangeInclusive<i64> = 1..=500;
/// Names and titles, in characters.
pub const MAX_NAME_CHARS: usize = 500;
/// Prompts (and other long text: descriptions, comments), in bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// `max_concurrent_runs`.
pub const MAX_CONCURRENT_RUNS: RangeInclusive<i64> = 1..=100;
/// How many next runs a schedule preview lists.
pub const PREVIEW_RUNS: RangeInclusive<i64> = 1..=20;
/// The agenda's limit.
pub const AGENDA: RangeInclusive<i64> = 1..=100;
/// `ci_wait_timeout_minutes`.
pub const CI_WAIT_MINUTES: RangeInclusive<i64> = 1..=1440;

/// A bound broken: the message names the field and the allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfBounds(pub String);

fn in_range(field: &str, value: i64, range: &RangeInclusive<i64>) -> Result<i64, OutOfBounds> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(OutOfBounds(format!(
            "{field} must be from {} to {}",
            range.start(),
            range.end()
        )))
    }
}

/// A list's `limit`: the default when absent, else 1–500.
pub fn limit(requested: Option<i64>, default: i64) -> Result<i64, OutOfBounds> {
    in_range("limit", requested.unwrap_or(default), &LIMIT)
}

/// A schedule preview's `count`: 3 when absent, else 1–20.
pub fn preview_runs(requested: Option<i64>) -> Result<usize, OutOfBounds> {
    in_range("count", requested.unwrap_or(3), &PREVIEW_RUNS).map(|n| n as usize)
}

/// The automations home's agenda `limit`: 20 when absent, else 1–100.
pub fn agenda_limit(requested: Option<i64>) -> Result<usize, OutOfBounds> {
    in_range("limit", requested.unwrap_or(20), &AGENDA).map(|n| n as usize)
}

/// A name or title: at most 500 characters.
pub fn name(field: &str, value: &str) -> Result<(), OutOfBounds> {
    if value.chars().count() > MAX_NAME_CHARS {
        return Err(OutOfBounds(format!(
            "{field} must be at most {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(())
}

/// A required name or title: not blank, at most 500 characters as given, and
/// stored without surrounding whitespace (`crate::schema::NOT_BLANK`).
pub fn required_name<'a>(field: &str, value: &'a str) -> Result<&'a str, OutOfBounds> {
    if crate::schema::is_blank(value) {
        return Err(OutOfBounds(format!("{field} is required")));
    }
    name(field, value)?;
    Ok(crate::schema::trim_space(value))
}

/// A prompt or other long text: at most 64 KiB.
pub fn text(field: &str, value: &str) -> Result<(), OutOfBounds> {
    if value.len() > MAX_TEXT_BYTES {
        return Err(OutOfBounds(format!("{field} must be at most 64 KiB")));
    }
    Ok(())
}

pub fn max_concurrent_runs(value: i64) -> Result<i64, OutOfBounds> {
    in_range("max_concurrent_runs", value, &MAX_CONCURRENT_RUNS)
}

pub fn ci_wait_minutes(value: i64) -> Result<i64, OutOfBounds> {
    in_range("ci_wait_timeout_minutes", value, &CI_WAIT_MINUTES)
}

/// A stored `max_concurrent_runs` as the engine uses it: out-of-range values
/// (from an older version, or written by hand) are pulled into range.
pub fn stored_max_concurrent_runs(value: i64) -> i64 {
    value.clamp(*MAX_CONCURRENT_RUNS.start(), *MAX_CONCURRENT_RUNS.end())
}

/// A stored CI wait as the merger uses it, in minutes: pulled into range.
pub fn stored_ci_wait_minutes(value: i64) -> i64 {
    value.clamp(*CI_WAIT_MINUTES.start(), *CI_WAIT_MINUTES.end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_default_and_stay_within_one_to_five_hundred() {
        assert_eq!(limit(None, 50), Ok(50));
        assert_eq!(limit(Some(500), 50), Ok(500));
        assert_eq!(limit(Some(1), 50), Ok(1));
        assert_eq!(
            limit(Some(501), 50),
            Err(OutOfBounds("limit must be from 1 to 500".into()))
        );
        assert!(limit(Some(0), 50).is_err());
        assert!(limit(Some(-3), 50).is_err());
        assert!(limit(Some(i64::MAX), 50).is_err());
    }

    #[test]
    fn names_count_characters_and_text_counts_bytes() {
        assert!(name("title", &"é".repeat(500)).is_ok());
        assert_eq!(
            name("title", &"x".repeat(501)),
            Err(OutOfBounds("title must be at most 500 characters".into()))
        );
        assert!(text("prompt", &"x".repeat(64 * 1024)).is_ok());
        assert!(text("prompt", &"x".repeat(64 * 1024 + 1)).is_err());
        assert!(text("prompt", &"é".repeat(32 * 1024 + 1)).is_err());
    }

    #[test]
    fn required_names_are_trimmed_and_bounded_as_given() {
        assert_eq!(required_name("name", "  Ship  "), Ok("Ship"));
        assert_eq!(
            required_name("name", " \u{a0}\u{1c} "),
            Err(OutOfBounds("name is required".into()))
        );
        assert!(required_name("name", &format!("{} ", "x".repeat(500))).is_err());
    }

    #[test]
    fn run_caps_and_ci_waits_have_ranges() {
        assert_eq!(max_concurrent_runs(1), Ok(1));
        assert_eq!(max_concurrent_runs(100), Ok(100));
        assert!(max_concurrent_runs(0).is_err());
        assert!(max_concurrent_runs(101).is_err());
        assert_eq!(ci_wait_minutes(1440), Ok(1440));
        assert!(ci_wait_minutes(1441).is_err());
        assert!(ci_wait_minutes(0).is_err());
    }

    #[test]
    fn stored_values_are_pulled_into_range() {
        assert_eq!(stored_max_concurrent_runs(-7), 1);
        assert_eq!(stored_max_concurrent_runs(i64::MAX), 100);
        assert_eq!(stored_ci_wait_minutes(i64::MIN), 1);
        assert_eq!(stored_ci_wait_minutes(5_000_000_000), 1440);
        assert_eq!(stored_ci_wait_minutes(30), 30);
    }
}
