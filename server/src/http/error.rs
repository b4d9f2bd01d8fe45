//! Errors become `{"error": {"code", "message"}}` with the contract's status
//! codes, in this one place.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kandev_core::api::ApiError;

use crate::error::ServiceError;

pub struct HttpError(pub ServiceError);

impl From<ServiceError> for HttpError {
    fn from(e: ServiceError) -> Self {
        HttpError(e)
    }
}

impl From<crate::store::StoreError> for HttpError {
    fn from(e: crate::store::StoreError) -> Self {
        HttpError(e.into())
    }
}

pub fn status_and_code(e: &ServiceError) -> (StatusCode, &'static str) {
    match e {
        ServiceError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
        ServiceError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthenticated"),
        ServiceError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
        ServiceError::Csrf(_) => (StatusCode::FORBIDDEN, "csrf"),
        ServiceError::Misdirected(_) => (StatusCode::MISDIRECTED_REQUEST, "misdirected_request"),
        ServiceError::Throttled(_) => (StatusCode::TOO_MANY_REQUESTS, "too_many_attempts"),
        ServiceError::TooManyStreams(_) => (StatusCode::TOO_MANY_REQUESTS, "too_many_streams"),
        ServiceError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
        ServiceError::MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
        ServiceError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
        ServiceError::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        ServiceError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        ServiceError::Upstream(_) => (StatusCode::BAD_GATEWAY, "upstream_error"),
        ServiceError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        ServiceError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let (status, code) = status_and_code(&self.0);
        let message = match &self.0 {
            // Internal details stay in the log.
            ServiceError::Internal(m) => {
                tracing::error!(error = %m, "internal error");
                "internal error".to_string()
            }
            other => other.to_string(),
        };
        let mut response = (status, Json(ApiError::new(code, message))).into_response();
        if let ServiceError::Throttled(secs) = &self.0
            && let Ok(v) = axum::http::HeaderValue::from_str(&secs.to_string())
        {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, v);
        }
        if matches!(self.0, ServiceError::Unauthorized(_)) {
            // RFC 9110: a 401 names the scheme it wants.
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"kandev\""),
            );
        }
        response
    }
}

pub type HttpResult<T> = Result<T, HttpError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The browser translates codes, so the server may only answer with the
    /// codes core lists.
    #[test]
    fn every_error_code_is_one_core_lists() {
        let all = [
            ServiceError::BadRequest(String::new()),
            ServiceError::Unauthorized(String::new()),
            ServiceError::Forbidden(String::new()),
            ServiceError::Csrf(String::new()),
            ServiceError::Misdirected(String::new()),
            ServiceError::Throttled(1),
            ServiceError::TooManyStreams(String::new()),
            ServiceError::NotFound(String::new()),
            ServiceError::MethodNotAllowed(String::new()),
            ServiceError::Conflict(String::new()),
            ServiceError::TooLarge(String::new()),
            ServiceError::Invalid(String::new()),
            ServiceError::Upstream(String::new()),
            ServiceError::Unavailable(String::new()),
            ServiceError::Internal(String::new()),
        ];
        let codes: std::collections::BTreeSet<_> = all.iter().map(|e| status_and_code(e).1).collect();
        let listed: std::collections::BTreeSet<_> = kandev_core::api::ERROR_CODES.into_iter().collect();
        assert_eq!(codes, listed);
    }
}
