//! The service layer's error: what went wrong, in terms the HTTP layer maps to
//! status codes in one place (`http::error`).

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// 400: the request itself is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// 401
    #[error("{0}")]
    Unauthorized(String),
    /// 403
    #[error("{0}")]
    Forbidden(String),
    /// 403 `csrf`: a cookie-authenticated change from another origin.
    #[error("{0}")]
    Csrf(String),
    /// 421: the `Host` names neither a loopback name nor the public origin.
    #[error("{0}")]
    Misdirected(String),
    /// 429: sign-in attempts for this username must wait this many seconds.
    #[error("too many failed sign-ins: try again in {0} s")]
    Throttled(u64),
    /// 429 `too_many_streams`: the caller holds as many live streams as it may.
    #[error("{0}")]
    TooManyStreams(String),
    /// 404 (also for things in a workspace the caller may not see).
    #[error("{0}")]
    NotFound(String),
    /// 405: the route exists, the method does not.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409: the current state forbids it.
    #[error("{0}")]
    Conflict(String),
    /// 413
    #[error("{0}")]
    TooLarge(String),
    /// 422: valid JSON that breaks a rule.
    #[error("{0}")]
    Invalid(String),
    /// 502: an upstream (GitHub) failed.
    #[error("{0}")]
    Upstream(String),
    /// 503: a needed component is not configured.
    #[error("{0}")]
    Unavailable(String),
    /// 500
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ServiceError::NotFound("not found".into()),
            StoreError::Conflict(m) => ServiceError::Conflict(m),
            other => ServiceError::Internal(other.to_string()),
        }
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::from(e).into()
    }
}

impl ServiceError {
    /// Maps a store not-found to a specific message.
    pub fn not_found(what: &str) -> impl FnOnce(StoreError) -> ServiceError + '_ {
        move |e| match e {
            StoreError::NotFound => ServiceError::NotFound(format!("{what} not found")),
            other => other.into(),
        }
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;
