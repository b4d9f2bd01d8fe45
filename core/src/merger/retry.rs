//! Backing off from GitHub reads that failed for a reason that may pass.

use std::time::Duration;

/// How long the merger waits before its `attempt`-th retry (from 0) of a
/// GitHub read that failed for a reason that may pass (5xx, timeout, a lost
/// connection): doubling from one second up to `cap`, with `jitter` (in
/// `0.0..1.0`, drawn by the caller) spreading up to a quarter more so
/// replicas and jobs do not retry in step. A `retry_after` GitHub named (a
/// secondary rate limit) is honoured instead, whatever the cap.
pub fn retry_delay(attempt: u32, cap: Duration, jitter: f64, retry_after: Option<Duration>) -> Duration {
    if let Some(wait) = retry_after {
        return wait;
    }
    let base = Duration::from_secs(1u64 << attempt.min(16)).min(cap);
    base.mul_f64(1.0 + 0.25 * jitter.clamp(0.0, 1.0))
}

/// The block reason when GitHub kept failing for the whole CI wait.
pub fn kept_failing(minutes: u64, last: &str) -> super::Said {
    super::Said::new("kept-failing")
        .with("minutes", minutes)
        .with("last", last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_the_cap_with_bounded_jitter() {
        let cap = Duration::from_secs(30);
        assert_eq!(retry_delay(0, cap, 0.0, None), Duration::from_secs(1));
        assert_eq!(retry_delay(3, cap, 0.0, None), Duration::from_secs(8));
        assert_eq!(retry_delay(10, cap, 0.0, None), cap);
        assert_eq!(retry_delay(u32::MAX, cap, 0.0, None), cap);
        assert_eq!(retry_delay(2, cap, 1.0, None), Duration::from_secs(5));
        assert_eq!(
            retry_delay(2, cap, 7.0, None),
            Duration::from_secs(5),
            "jitter is clamped"
        );
    }

    #[test]
    fn a_secondary_rate_limit_retry_after_is_honoured() {
        let cap = Duration::from_secs(2);
        assert_eq!(
            retry_delay(0, cap, 0.5, Some(Duration::from_secs(60))),
            Duration::from_secs(60)
        );
    }
}
