//! Small text rules: title truncation and number formatting.

/// Task titles hold at most 60 Unicode scalars; longer ones become the first
/// 59 plus `…`.
pub fn truncate_title(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX - 1).collect();
    out.push('…');
    out
}

/// Formats a JSON number the engine's way: integral values print bare (`7`,
/// never `7.0`); others use the shortest `%g` form (`0.5`, `1e-07`).
pub fn format_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.2e18 {
        return (f as i64).to_string();
    }
    format_g(f)
}

/// Go's `%g` with the shortest representation: exponent form when the decimal
/// exponent is below -4 or at least 6 (Go's `eprec` for shortest), else plain.
fn format_g(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let sci = format!("{f:e}"); // shortest round-trip digits, e.g. "1.5e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(v: serde_json::Value) -> String {
        format_number(v.as_number().unwrap())
    }

    #[test]
    fn numbers_print_like_the_engine() {
        assert_eq!(n(json!(7)), "7");
        assert_eq!(n(json!(7.0)), "7");
        assert_eq!(n(json!(-3)), "-3");
        assert_eq!(n(json!(0.5)), "0.5");
        assert_eq!(n(json!(1e-7)), "1e-07");
        assert_eq!(n(json!(0.0001)), "0.0001");
        assert_eq!(n(json!(1234567.5)), "1.2345675e+06");
        assert_eq!(n(json!(123.456)), "123.456");
    }

    #[test]
    fn titles_truncate_at_sixty_scalars() {
        let short = "a".repeat(60);
        assert_eq!(truncate_title(&short), short);
        let long = "é".repeat(61);
        let t = truncate_title(&long);
        assert_eq!(t.chars().count(), 60);
        assert!(t.ends_with('…'));
        assert!(t.starts_with(&"é".repeat(59)));
    }
}

/// A coarse age for "5 min ago" style labels: the unit and the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Age {
    JustNow,
    Minutes(i64),
    Hours(i64),
    Days(i64),
}

pub fn age(then: chrono::DateTime<chrono::Utc>, now: chrono::DateTime<chrono::Utc>) -> Age {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        s if s < 60 => Age::JustNow,
        s if s < 3600 => Age::Minutes(s / 60),
        s if s < 86_400 => Age::Hours(s / 3600),
        s => Age::Days(s / 86_400),
    }
}

#[cfg(test)]
mod age_tests {
    use super::*;
    use chrono::{DateTime, Duration, Utc};

    #[test]
    fn ages_round_down_to_their_unit() {
        let now = DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(age(now - Duration::seconds(30), now), Age::JustNow);
        assert_eq!(age(now - Duration::minutes(5), now), Age::Minutes(5));
        assert_eq!(age(now - Duration::hours(3), now), Age::Hours(3));
        assert_eq!(age(now - Duration::days(2), now), Age::Days(2));
        assert_eq!(
            age(now + Duration::minutes(5), now),
            Age::JustNow,
            "clock skew reads as now"
        );
    }
}
