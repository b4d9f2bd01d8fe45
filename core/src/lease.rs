//! How long a replica may act under a lease: a lease lives [`TTL`] from the
//! last time the database confirmed it, and work under it stops
//! [`STOP_AHEAD`] before that, so an agent working under it is gone before
//! another replica can take the lease. The server's clock reads `now`; the
//! keeper of a confined agent gets the same answer as a deadline.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// How long a lease lives without renewal.
pub const TTL: Duration = Duration::from_secs(9);

/// How often held leases are renewed: often enough that several renewals
/// can fail or come late before the work under a lease must stop.
pub const RENEW_INTERVAL: Duration = Duration::from_secs(1);

/// How long before a lease could run out the work under it stops: time to
/// end an agent and all it started, and for a check that comes late.
pub const STOP_AHEAD: Duration = Duration::from_secs(2);

/// How long from `now` work may go on under a lease last confirmed at
/// `confirmed`: none once it is within [`STOP_AHEAD`] of running out.
pub fn left(confirmed: DateTime<Utc>, now: DateTime<Utc>) -> Option<Duration> {
    let age = (now - confirmed).to_std().unwrap_or(Duration::ZERO);
    (TTL - STOP_AHEAD).checked_sub(age).filter(|d| !d.is_zero())
}

/// Whether a lease the database could not renew at `asked` still vouches
/// for its work until the next renewal pass: else it is let go now.
pub fn outlives_next_pass(confirmed: DateTime<Utc>, asked: DateTime<Utc>) -> bool {
    left(confirmed, asked).is_some_and(|left| left > RENEW_INTERVAL)
}

/// How far a replica's clock may be from the database's while it takes and
/// renews leases. Expiries are written and compared in each replica's own
/// time, so two replicas must agree within less than [`STOP_AHEAD`]: each
/// within this of the database's, they agree within twice it.
pub const MAX_SKEW: Duration = Duration::from_millis(500);

/// What one reading of the database's clock says of this replica's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockReading {
    Agrees,
    /// Off by at least this much (milliseconds; positive: ahead).
    Disagrees {
        ahead_ms: i64,
    },
    /// The reading took too long to tell.
    Unclear,
}

/// The database's clock read as `db` between `before` and `after` on this
/// replica's: this clock's offset lies between `before - db` and
/// `after - db`, and only a whole range inside (or outside) [`MAX_SKEW`]
/// says anything.
pub fn read_clock(before: DateTime<Utc>, db: DateTime<Utc>, after: DateTime<Utc>) -> ClockReading {
    let skew = i64::try_from(MAX_SKEW.as_millis()).unwrap_or(i64::MAX);
    let (low, high) = ((before - db).num_milliseconds(), (after - db).num_milliseconds());
    if low > high {
        // This clock ran back during the reading: it places nothing.
        ClockReading::Unclear
    } else if low > skew {
        ClockReading::Disagrees { ahead_ms: low }
    } else if high < -skew {
        ClockReading::Disagrees { ahead_ms: high }
    } else if low >= -skew && high <= skew {
        ClockReading::Agrees
    } else {
        ClockReading::Unclear
    }
}

/// The deadline a keeper holds its agent to, given a later word: words
/// can arrive late or out of order, so an earlier deadline never replaces
/// a later one.
pub fn later_deadline(held: Option<u64>, word: u64) -> u64 {
    held.map_or(word, |held| held.max(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000 + secs, 0).expect("a time")
    }

    fn ms(n: i64) -> chrono::Duration {
        chrono::Duration::milliseconds(n)
    }

    #[test]
    fn a_lease_vouches_for_its_work_until_stop_ahead_of_running_out() {
        assert_eq!(left(at(0), at(0)), Some(Duration::from_secs(7)));
        assert_eq!(left(at(0), at(3)), Some(Duration::from_secs(4)));
        assert_eq!(left(at(0), at(7) - ms(1)), Some(Duration::from_millis(1)));
        assert_eq!(left(at(0), at(7)), None);
        assert_eq!(left(at(0), at(9)), None);
    }

    #[test]
    fn a_confirmation_the_clock_sees_in_the_future_vouches_for_no_more_than_a_fresh_one() {
        assert_eq!(left(at(5), at(0)), Some(TTL - STOP_AHEAD));
    }

    #[test]
    fn a_lease_that_could_not_be_renewed_is_kept_only_while_it_vouches_past_the_next_pass() {
        assert!(outlives_next_pass(at(0), at(1)));
        assert!(outlives_next_pass(at(0), at(6) - ms(1)));
        // It would stop vouching before the next pass.
        assert!(!outlives_next_pass(at(0), at(6)));
    }

    #[test]
    fn a_clock_within_max_skew_of_the_database_s_agrees() {
        assert_eq!(read_clock(at(0), at(0) + ms(10), at(0) + ms(20)), ClockReading::Agrees);
        assert_eq!(read_clock(at(0), at(0) - ms(490), at(0) + ms(5)), ClockReading::Agrees);
    }

    #[test]
    fn a_clock_surely_off_the_database_s_disagrees_by_how_much() {
        assert_eq!(
            read_clock(at(10), at(0), at(10) + ms(30)),
            ClockReading::Disagrees { ahead_ms: 10_000 }
        );
        assert_eq!(
            read_clock(at(0), at(10), at(0) + ms(30)),
            ClockReading::Disagrees { ahead_ms: -9_970 }
        );
        // However long the reading took: the whole range is off.
        assert_eq!(
            read_clock(at(10), at(0), at(20)),
            ClockReading::Disagrees { ahead_ms: 10_000 }
        );
    }

    #[test]
    fn a_reading_too_slow_to_place_the_clock_says_nothing() {
        assert_eq!(read_clock(at(0), at(0) + ms(300), at(2)), ClockReading::Unclear);
        assert_eq!(read_clock(at(1), at(1), at(0)), ClockReading::Unclear, "time ran back");
    }

    #[test]
    fn a_late_word_never_shortens_a_keeper_s_deadline() {
        assert_eq!(later_deadline(None, 10), 10);
        assert_eq!(later_deadline(Some(10), 12), 12);
        assert_eq!(later_deadline(Some(12), 10), 12);
    }
}
