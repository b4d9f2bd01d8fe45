//! `X-Hub-Signature-256` (HMAC-SHA256 of the raw body, hex) and constant-time
//! secret comparison, shared by the automation webhook, the GitHub webhook and
//! the simulator that signs deliveries.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

/// `sha256=<hex>` for a body.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Verifies a `sha256=<hex>` header against the body, in constant time.
pub fn verify(secret: &str, body: &[u8], header: &str) -> bool {
    let Some(hex_sig) = header.trim().strip_prefix("sha256=") else {
        return false;
    };
    let Ok(expected) = hex::decode(hex_sig) else {
        return false;
    };
    let Ok(mut mac) = HmacSha256::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

/// Constant-time equality of two secrets.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_round_trip_and_reject_tampering() {
        let sig = sign("s3cret", b"{\"a\":1}");
        assert!(sig.starts_with("sha256="));
        assert!(verify("s3cret", b"{\"a\":1}", &sig));
        assert!(!verify("s3cret", b"{\"a\":2}", &sig));
        assert!(!verify("other", b"{\"a\":1}", &sig));
        assert!(!verify("s3cret", b"{\"a\":1}", "sha1=abc"));
        assert!(!verify("s3cret", b"{\"a\":1}", "sha256=zz"));
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }
}
