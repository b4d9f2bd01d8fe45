//! Sign-in rules: usernames, and how repeated failures slow one username down.

/// Failures for one username that cost nothing; later ones wait.
pub const LOGIN_FREE_FAILURES: u32 = 4;
/// The longest wait between two attempts for one username.
pub const LOGIN_MAX_DELAY_SECS: u64 = 300;

/// How long the next attempt for a username must wait after `failures`
/// consecutive failures: nothing for the first few, then doubling from one
/// second up to five minutes.
pub fn login_delay_secs(failures: u32) -> u64 {
    if failures <= LOGIN_FREE_FAILURES {
        return 0;
    }
    let exp = (failures - LOGIN_FREE_FAILURES - 1).min(16);
    (1u64 << exp).min(LOGIN_MAX_DELAY_SECS)
}

/// How long an attempt, counted before its password is checked, holds
/// further attempts for its username; if the checking process dies, the
/// hold lapses by itself.
pub const LOGIN_CHECK_HOLD_SECS: u64 = 15;

/// What a refused attempt is told to wait (`Retry-After`), given the failure
/// count on record and the milliseconds left of the recorded wait. A wait
/// longer than the count earns is another attempt's check still running (its
/// hold), which ends in moments: one second, not the hold's length.
pub fn login_retry_after_secs(failures: u32, remaining_ms: i64) -> u64 {
    let remaining = u64::try_from(remaining_ms.max(0)).unwrap_or(0).div_ceil(1000);
    if remaining > login_delay_secs(failures) {
        return 1;
    }
    remaining.max(1)
}

/// A username as stored and compared: lowercase, 1–64 characters of letters,
/// digits, `.`, `_` and `-` (`crate::schema::USERNAME`).
pub fn normalise_username(input: &str) -> Result<String, String> {
    let name = input.to_ascii_lowercase();
    if name.is_empty() || name.chars().count() > 64 {
        return Err("username must be 1 to 64 characters".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err("username may hold letters, digits, '.', '_' and '-' only".into());
    }
    Ok(name)
}
