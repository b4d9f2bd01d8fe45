//! Credentials in `KANDEV_NATS_URL` (`nats://user:password@host:4222`, or
//! `nats://token@host:4222`). async-nats connects to a URL's host but ignores
//! its user and password, so without this a NATS that requires credentials —
//! the only kind that keeps others from reading and acknowledging Kandev's
//! events — could not be used.

use async_nats::ConnectOptions;
use percent_encoding::percent_decode_str;
use reqwest::Url;

use super::BusError;

/// A NATS server's address without credentials, and the options that carry them.
pub struct NatsAddress {
    pub server: String,
    pub options: ConnectOptions,
    /// Whether the URL gave credentials.
    pub credentialed: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum Credentials {
    None,
    Token(String),
    UserPassword(String, String),
}

fn decoded(s: &str) -> Result<String, BusError> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| BusError::Connect("the NATS URL's credentials are not UTF-8 once decoded".into()))
}

/// The server (credentials removed, so no error or log line shows them) and
/// the credentials the URL held.
fn split(url: &str) -> Result<(String, Credentials), BusError> {
    // As async-nats reads it: `host:port` alone means `nats://host:port`.
    let full = if url.contains("://") {
        url.to_string()
    } else {
        format!("nats://{url}")
    };
    let mut parsed = Url::parse(&full).map_err(|e| BusError::Connect(format!("the NATS URL is not a URL: {e}")))?;
    let credentials = match (parsed.username(), parsed.password()) {
        ("", None) => Credentials::None,
        (token, None) => Credentials::Token(decoded(token)?),
        (user, Some(password)) => Credentials::UserPassword(decoded(user)?, decoded(password)?),
    };
    if credentials == Credentials::None {
        return Ok((url.to_string(), credentials));
    }
    // Cannot fail on a URL that had credentials: it has a host.
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    Ok((parsed.to_string(), credentials))
}

/// `url` as async-nats takes it: its credentials moved into `base`.
pub fn nats_address(url: &str, base: ConnectOptions) -> Result<NatsAddress, BusError> {
    let (server, credentials) = split(url)?;
    let credentialed = credentials != Credentials::None;
    let options = match credentials {
        Credentials::None => base,
        Credentials::Token(token) => base.token(token),
        Credentials::UserPassword(user, password) => base.user_and_password(user, password),
    };
    Ok(NatsAddress {
        server,
        options,
        credentialed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_credentials_is_kept_as_it_is() {
        let (server, c) = split("nats://127.0.0.1:4222").unwrap();
        assert_eq!(server, "nats://127.0.0.1:4222");
        assert_eq!(c, Credentials::None);
    }

    #[test]
    fn a_user_and_password_are_taken_out_and_decoded() {
        let (server, c) = split("nats://kandev:s3cr%3At%40x@nats:4222").unwrap();
        assert_eq!(server, "nats://nats:4222");
        assert_eq!(c, Credentials::UserPassword("kandev".into(), "s3cr:t@x".into()));
    }

    #[test]
    fn a_url_without_a_scheme_is_nats_as_async_nats_reads_it() {
        for plain in ["localhost:4222", "127.0.0.1:4222"] {
            let (server, c) = split(plain).unwrap();
            assert_eq!(server, plain);
            assert_eq!(c, Credentials::None);
        }
        let (server, c) = split("kandev:pw@nats:4222").unwrap();
        assert_eq!(server, "nats://nats:4222");
        assert_eq!(c, Credentials::UserPassword("kandev".into(), "pw".into()));
    }

    #[test]
    fn a_user_alone_is_a_token() {
        let (server, c) = split("tls://t0k%2Fen@nats.example.com").unwrap();
        assert_eq!(server, "tls://nats.example.com");
        assert_eq!(c, Credentials::Token("t0k/en".into()));
    }

    #[test]
    fn a_url_that_does_not_parse_says_so_without_echoing_it() {
        let err = split("nats://kandev:secret@[::1").err().unwrap().to_string();
        assert!(err.contains("not a URL"), "{err}");
        assert!(!err.contains("secret"), "{err}");
    }
}
