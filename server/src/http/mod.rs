//! The HTTP shell: one router per resource, merged here, then the built web
//! app as a fallback for every other path.

mod agents;
mod automations;
pub mod error;
mod extract;
mod github;
mod openapi;
mod stream;
mod system;
mod tasks;
mod workspaces;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use tower_http::compression::CompressionLayer;
use tower_http::services::{ServeDir, ServeFile};

pub use openapi::ApiDoc;

use crate::app::Services;

pub type AppState = Arc<Services>;

async fn record_metrics(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "static".into());
    let response = next.run(req).await;
    s.metrics.http_request(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

async fn unknown_api() -> error::HttpError {
    error::HttpError(crate::error::ServiceError::NotFound("no such API route".into()))
}

/// The full application router. `extra` carries routes owned by other
/// components (MCP, GitHub) that the composition root mounts.
pub fn router(state: AppState, extra: Router<AppState>, web_dir: &Path) -> Router {
    let api = Router::new()
        .merge(workspaces::router())
        .merge(tasks::router())
        .merge(automations::router())
        .merge(agents::router())
        .merge(github::router())
        .merge(stream::router())
        .merge(system::router())
        .merge(extra)
        .route("/api/{*rest}", axum::routing::any(unknown_api));
    // The single-page app: real files first, index.html for client routes.
    let index = web_dir.join("index.html");
    let spa = ServeDir::new(web_dir)
        .precompressed_gzip()
        .fallback(ServeFile::new(index));
    api.fallback_service(spa)
        .layer(middleware::from_fn_with_state(state.clone(), record_metrics))
        .layer(CompressionLayer::new())
        .with_state(state)
}
