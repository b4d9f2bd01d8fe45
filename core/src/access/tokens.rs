//! API-token bookkeeping that must not cost a write per request.

use chrono::{DateTime, Duration, Utc};

/// How finely a token's `last_used_at` is kept: it moves at most once a
/// minute, so authenticating with a token is a read, not a write, for all
/// but one request a minute.
pub const TOKEN_USE_RESOLUTION_SECS: i64 = 60;

/// Whether a use at `now` should move `last_used_at`: never used yet, or
/// last recorded a full resolution step ago (a clock that went back counts
/// as not due).
pub fn token_use_due(last_used: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    match last_used {
        None => true,
        Some(at) => now - at >= Duration::seconds(TOKEN_USE_RESOLUTION_SECS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).expect("time")
    }

    #[test]
    fn a_token_never_used_is_due() {
        assert!(token_use_due(None, at(0)));
    }

    #[test]
    fn a_use_within_the_minute_is_not_recorded_again() {
        assert!(!token_use_due(Some(at(0)), at(59)));
        assert!(token_use_due(Some(at(0)), at(60)));
    }

    #[test]
    fn a_clock_that_went_back_does_not_record() {
        assert!(!token_use_due(Some(at(100)), at(0)));
    }
}
