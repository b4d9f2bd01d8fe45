//! `/healthz`, `/metrics` and `/api/v1/openapi.json`.

use std::sync::atomic::Ordering;

use super::{ApiRoutes, AppState};
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/healthz", healthz)
        .get("/metrics", metrics)
        .get("/api/v1/openapi.json", openapi)
}

/// 200 once every component has started; 503 before that and while stopping.
/// A replica standing down (no lease, so no background work) still answers
/// 200, as everything it serves is right, and names why in `standing_down`:
/// restarting it mends neither a clock nor a name another process holds.
#[utoipa::path(get, path = "/healthz", responses(
    (status = 200, description = "every component has started", body = Object),
    (status = 503, description = "starting or stopping", body = Object)))]
pub async fn healthz(State(s): State<AppState>) -> impl IntoResponse {
    if s.ready.load(Ordering::SeqCst) {
        let why: Vec<&str> = s
            .leases
            .standing_down_for()
            .into_iter()
            .filter_map(|(reason, is)| is.then_some(reason))
            .collect();
        let body = if why.is_empty() {
            serde_json::json!({"status": "ok"})
        } else {
            serde_json::json!({"status": "ok", "standing_down": why})
        };
        (StatusCode::OK, Json(body))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status": "starting"})),
        )
    }
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String)))]
pub async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    s.metrics
        .lone_writes_waiting(s.store.lone_writes_waiting().unwrap_or(0));
    let gathered = s.store.gathered_counts();
    s.metrics.guard_reads_gathered(gathered.reads, gathered.statements);
    for (reason, is) in s.leases.standing_down_for() {
        s.metrics.standing_down(reason, is);
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        s.metrics.render(),
    )
}

/// This document.
#[utoipa::path(get, path = "/api/v1/openapi.json", responses((status = 200, description = "the OpenAPI document", body = Object)))]
pub async fn openapi() -> impl IntoResponse {
    Json(super::openapi::document().clone())
}
