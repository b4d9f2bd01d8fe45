//! A watched PR link GitHub answers 404 for — a PR or repository deleted, a
//! number mistyped, a private repository the token may not see — is read
//! by the sweep less and less often, so a few dead links cannot spend a
//! request each every sweep for ever. A first miss is retried at once
//! (GitHub's reads lag a new PR); webhooks and "refresh PR" still read it
//! whenever they come.

/// The most sweeps a dead link sits out between tries (about half an hour
/// at the default interval).
pub const MAX_SKIPPED_SWEEPS: u32 = 31;

/// How many sweeps to skip after `misses` 404s in a row: 0, 1, 3, 7, 15, 31.
pub fn sweeps_to_skip(misses: u32) -> u32 {
    match misses {
        0 | 1 => 0,
        n => ((1u32 << (n - 1).min(5)) - 1).min(MAX_SKIPPED_SWEEPS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_miss_is_retried_at_once_and_later_ones_back_off_to_a_cap() {
        let skips: Vec<u32> = (0..9).map(sweeps_to_skip).collect();
        assert_eq!(skips, [0, 0, 1, 3, 7, 15, 31, 31, 31]);
        assert_eq!(sweeps_to_skip(u32::MAX), MAX_SKIPPED_SWEEPS);
    }
}
