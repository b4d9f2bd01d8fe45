//! Secrets: random tokens from the operating system, their SHA-256 for
//! storage, and argon2id password hashes. No cryptography is written here:
//! `rand`'s `OsRng`, `sha2` and `argon2` do the work.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use kandev_core::api::TOKEN_PREFIX;
use rand::TryRngCore;
use rand::rngs::OsRng;
use sha2::{Digest, Sha256};

use crate::error::{ServiceError, ServiceResult};

/// Longest password accepted: hashing cost grows with it.
pub const MAX_PASSWORD_CHARS: usize = 1024;
/// Shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 8;

/// `n` random bytes from the operating system. No fallback: if the system's
/// randomness fails, whatever needed the secret fails.
pub fn random_bytes<const N: usize>() -> ServiceResult<[u8; N]> {
    let mut bytes = [0u8; N];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| ServiceError::Internal(format!("no randomness from the operating system: {e}")))?;
    Ok(bytes)
}

/// `N` random bytes as lowercase hex.
pub fn random_hex<const N: usize>() -> ServiceResult<String> {
    random_bytes::<N>().map(hex::encode)
}

/// SHA-256 of a high-entropy secret (token, session id), as stored.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A new API token (`kdv_` + 32 random bytes in hex) and its stored hash.
pub fn new_api_token() -> ServiceResult<(String, String)> {
    let token = format!("{TOKEN_PREFIX}{}", random_hex::<32>()?);
    let hash = hash_secret(&token);
    Ok((token, hash))
}

/// A random password for generated accounts: 18 bytes, 36 hex characters.
pub fn new_password() -> ServiceResult<String> {
    random_hex::<18>()
}

/// Whether a password may be set.
pub fn check_password(password: &str) -> ServiceResult<()> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ServiceError::Invalid(format!(
            "password must be at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    if password.chars().count() > MAX_PASSWORD_CHARS {
        return Err(ServiceError::Invalid("password must be at most 1024 characters".into()));
    }
    Ok(())
}

/// An argon2id PHC string (the crate's default parameters).
pub fn hash_password(password: &str) -> ServiceResult<String> {
    let salt =
        SaltString::encode_b64(&random_bytes::<16>()?).map_err(|e| ServiceError::Internal(format!("salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ServiceError::Internal(format!("password hashing failed: {e}")))
}

/// Whether `password` matches a stored PHC string. A malformed hash never matches.
pub fn verify_password(password: &str, phc: &str) -> bool {
    // Anything longer was never accepted; do not spend a hash on it.
    if password.len() > 4 * MAX_PASSWORD_CHARS {
        return false;
    }
    PasswordHash::new(phc)
        .map(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_the_prefix_and_32_random_bytes_and_differ() {
        let (a, ha) = new_api_token().unwrap();
        let (b, _) = new_api_token().unwrap();
        assert!(a.starts_with("kdv_"));
        assert_eq!(a.len(), 4 + 64);
        assert_ne!(a, b);
        assert_eq!(ha, hash_secret(&a));
        assert_ne!(ha, a);
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong horse", &h));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn password_rules() {
        assert!(check_password("short").is_err());
        assert!(check_password("long enough").is_ok());
        assert!(check_password(&"x".repeat(2000)).is_err());
    }
}
