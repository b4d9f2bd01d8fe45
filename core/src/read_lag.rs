//! GitHub's API can lag its own webhooks: a `closed` delivery for a merged PR
//! may be followed, for a second or two, by reads that still say `open`. A
//! delivery says what it saw; a read older than that is read again after a
//! short, bounded wait, so a merge still lands in seconds rather than at the
//! poller's next sweep (which remains the backstop).

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::task_pr::STATE_MERGED;

/// What a `pull_request` (or `pull_request_review`) delivery said of its PR.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrSeen {
    /// The payload said the PR is merged.
    pub merged: bool,
    /// The payload's `pull_request.updated_at`, when it parsed.
    pub updated_at: Option<DateTime<Utc>>,
}

impl PrSeen {
    /// From a payload's `merged` and `updated_at` (unparseable times are dropped).
    pub fn new(merged: bool, updated_at: Option<&str>) -> PrSeen {
        PrSeen {
            merged,
            updated_at: updated_at.and_then(parse_time),
        }
    }

    /// The newer knowledge of two deliveries of one PR: merged is final, and
    /// the later `updated_at` wins.
    pub fn later(&self, other: &PrSeen) -> PrSeen {
        PrSeen {
            merged: self.merged || other.merged,
            updated_at: self.updated_at.max(other.updated_at),
        }
    }
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc))
}

/// Whether a read of the PR — its state as a link row holds it (`open`,
/// `closed`, `merged`) and GitHub's `updated_at` — is older than what the
/// delivery saw. A read that is as new or newer (a delivery arriving late, out
/// of order) is not; equal times are not either, since GitHub's are whole
/// seconds and two changes in one second cannot be told apart.
pub fn read_behind(seen: &PrSeen, read_state: &str, read_updated_at: Option<&str>) -> bool {
    if seen.merged && read_state != STATE_MERGED {
        return true;
    }
    match (seen.updated_at, read_updated_at.and_then(parse_time)) {
        (Some(seen), Some(read)) => read < seen,
        _ => false,
    }
}

/// Waits before each re-read of a PR whose read lagged what Kandev knows
/// (a delivery, a merge call): 7.5 s in all, well past GitHub's usual lag.
/// Then a delivery is left to the poller's sweep, and a merge call's own
/// outcome stands.
const REREAD_DELAYS_MS: [u64; 4] = [500, 1_000, 2_000, 4_000];

/// The wait before re-read number `attempt` (from 0); `None` once they are spent.
pub fn reread_delay(attempt: usize) -> Option<Duration> {
    REREAD_DELAYS_MS.get(attempt).map(|ms| Duration::from_millis(*ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EARLY: &str = "2026-12-05T10:00:00Z";
    const LATE: &str = "2026-12-05T10:00:02Z";

    #[test]
    fn a_merged_delivery_read_back_open_or_closed_is_behind() {
        let seen = PrSeen::new(true, Some(LATE));
        assert!(read_behind(&seen, "open", Some(EARLY)));
        assert!(read_behind(&seen, "closed", Some(LATE)));
        assert!(!read_behind(&seen, "merged", Some(LATE)));
        // Merged is final: no time is needed to know the read is older.
        assert!(read_behind(&PrSeen::new(true, None), "open", None));
    }

    #[test]
    fn a_read_older_than_the_delivery_is_behind_and_a_newer_or_equal_one_is_not() {
        let seen = PrSeen::new(false, Some(LATE));
        assert!(read_behind(&seen, "open", Some(EARLY)));
        assert!(!read_behind(&seen, "open", Some(LATE)));
        assert!(!read_behind(&PrSeen::new(false, Some(EARLY)), "merged", Some(LATE)));
    }

    #[test]
    fn missing_or_hostile_times_never_ask_for_a_re_read() {
        for (seen, read) in [
            (None, Some(LATE)),
            (Some(LATE), None),
            (Some("yesterday"), Some(EARLY)),
            (Some(LATE), Some("not a time")),
        ] {
            assert!(
                !read_behind(&PrSeen::new(false, seen), "open", read),
                "{seen:?} / {read:?}"
            );
        }
    }

    #[test]
    fn later_keeps_merged_and_the_newest_time() {
        let a = PrSeen::new(true, Some(EARLY));
        let b = PrSeen::new(false, Some(LATE));
        assert_eq!(a.later(&b), PrSeen::new(true, Some(LATE)));
        assert_eq!(b.later(&a), PrSeen::new(true, Some(LATE)));
        assert_eq!(b.later(&PrSeen::default()), b);
    }

    #[test]
    fn re_reads_are_few_growing_and_end() {
        let waits: Vec<Duration> = (0..).map_while(reread_delay).collect();
        assert_eq!(waits.len(), 4);
        assert!(waits.windows(2).all(|w| w[0] < w[1]));
        assert!(waits.iter().sum::<Duration>() < Duration::from_secs(10));
    }
}
