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
        ServiceError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
        ServiceError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
        ServiceError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
        ServiceError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
        ServiceError::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        ServiceError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "unprocessable"),
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
        (status, Json(ApiError::new(code, message))).into_response()
    }
}

pub type HttpResult<T> = Result<T, HttpError>;
