//! Overload protection for the API: at most `KANDEV_MAX_IN_FLIGHT` requests
//! run at once and each may take `KANDEV_REQUEST_TIMEOUT`. Past either, the
//! caller gets a fast 503 with `retry-after` instead of a place in an
//! unbounded queue. Live streams are long-lived by design and sit outside
//! both; so do the web app's files.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use super::error::HttpError;
use crate::error::ServiceError;
use crate::state::AppState;

/// The in-flight budget and the per-request deadline.
pub struct Admission {
    permits: Arc<Semaphore>,
    timeout: Duration,
}

impl Admission {
    pub fn new(max_in_flight: usize, timeout: Duration) -> Self {
        Admission {
            permits: Arc::new(Semaphore::new(max_in_flight)),
            timeout,
        }
    }
}

fn exempt(path: &str) -> bool {
    !path.starts_with("/api/") || path.ends_with("/stream")
}

fn unavailable(message: &str) -> Response {
    let mut r = HttpError(ServiceError::Unavailable(message.into())).into_response();
    r.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    r
}

pub async fn admit(State(s): State<AppState>, req: Request, next: Next) -> Response {
    if exempt(req.uri().path()) {
        return next.run(req).await;
    }
    let Ok(_permit) = s.admission.permits.clone().try_acquire_owned() else {
        s.metrics.shed("in_flight");
        return unavailable("the server is at capacity; retry shortly");
    };
    // A handler cut off here rolls its transaction back; what it already
    // committed stays, as after a crash (the outbox relays its events).
    match tokio::time::timeout(s.admission.timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => {
            s.metrics.shed("timeout");
            tracing::warn!(timeout = ?s.admission.timeout, "a request ran past its deadline");
            unavailable("the request took too long; retry shortly")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::exempt;

    #[test]
    fn streams_and_web_files_are_exempt_and_the_api_is_not() {
        assert!(exempt("/api/v1/workspaces/w/stream"));
        assert!(exempt("/"));
        assert!(exempt("/assets/app.wasm"));
        assert!(!exempt("/api/v1/workspaces/w/tasks"));
        assert!(exempt("/healthz"), "health checks are never shed");
    }
}
