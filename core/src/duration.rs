//! Go-style durations (`60s`, `500ms`, `1h30m`, `1.5h`), used by settings and
//! by the `@every` schedule descriptor.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}")]
pub struct DurationError(pub String);

const UNITS: [(&str, f64); 7] = [
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
];

/// Parses a non-negative duration made of `<number><unit>` parts.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let err = || DurationError(input.to_string());
    let s = input.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(err());
    }
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(err)?;
        if num_len == 0 {
            return Err(err());
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let (_, scale) = UNITS.iter().find(|(u, _)| *u == unit).ok_or_else(err)?;
        total += value * scale;
        rest = &rest[unit_len..];
    }
    // `try_from` refuses what `Duration` cannot hold instead of panicking.
    Duration::try_from_secs_f64(total).map_err(|_| err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_settings_use() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "s",
            "10",
            "10x",
            "-5s",
            "1h 30m",
            "abc",
            "1.2.3s",
            "99999999999999999999999h",
            "1e400h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
