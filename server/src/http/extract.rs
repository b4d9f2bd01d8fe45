//! Extractors whose rejections use the API's error shape.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::HttpError;
use crate::error::ServiceError;

/// A JSON body; anything malformed is a 400 with the contract's body.
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // Every body of this API is a JSON object; serde would also read a
        // struct from an array, which the document does not allow.
        match axum::Json::<serde_json::Value>::from_request(req, state).await {
            Ok(axum::Json(v)) if v.is_object() => serde_json::from_value(v)
                .map(ApiJson)
                .map_err(|e| HttpError(ServiceError::BadRequest(format!("invalid JSON body: {e}")))),
            Ok(_) => Err(HttpError(ServiceError::BadRequest(
                "the body must be a JSON object".into(),
            ))),
            Err(JsonRejection::BytesRejection(e)) if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
                Err(HttpError(ServiceError::TooLarge("request body is too large".into())))
            }
            Err(e) => Err(HttpError(ServiceError::BadRequest(e.body_text()))),
        }
    }
}

/// Query parameters; malformed ones are a 400.
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| ApiQuery(q.0))
            .map_err(|e: QueryRejection| HttpError(ServiceError::BadRequest(e.body_text())))
    }
}

/// A body that may be empty: empty means the type's default.
pub fn optional_json<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, HttpError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(HttpError(ServiceError::BadRequest(
            "the body must be a JSON object".into(),
        )));
    }
    serde_json::from_slice(body).map_err(|e| HttpError(ServiceError::BadRequest(format!("invalid JSON body: {e}"))))
}

/// Path parameters; one that does not parse (a PR number that is no number)
/// is a 400 with the contract's body.
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|e: PathRejection| HttpError(ServiceError::BadRequest(e.body_text())))
    }
}
