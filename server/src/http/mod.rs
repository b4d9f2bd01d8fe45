//! The HTTP shell: one router per resource, merged here, then the built web
//! app as a fallback for every other path.

mod agents;
mod auth;
mod automations;
mod embedded;
pub mod error;
mod extract;
mod github;
pub mod guard;
mod members;
mod notifications;
mod openapi;
pub mod overload;
mod portable;
pub mod routes;
mod stream;
pub mod stream_slots;
mod system;
mod tasks;
mod users;
mod workspaces;

use std::path::Path;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use tower_http::compression::CompressionLayer;
use tower_http::services::{ServeDir, ServeFile};

pub use openapi::ApiDoc;
pub use routes::ApiRoutes;

pub use crate::state::AppState;

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

/// Every API route, with `extra` (routes other components own: MCP).
pub fn api_routes(extra: ApiRoutes) -> ApiRoutes {
    ApiRoutes::new()
        .merge(auth::routes())
        .merge(users::routes())
        .merge(workspaces::routes())
        .merge(members::routes())
        .merge(tasks::routes())
        .merge(automations::routes())
        .merge(agents::routes())
        .merge(github::routes())
        .merge(notifications::routes())
        .merge(stream::routes())
        .merge(system::routes())
        .merge(extra)
        .with("/api/{*rest}", &["*"], axum::routing::any(unknown_api))
}

/// Whether the binary carries a built web app (see `build.rs`).
pub fn embedded_app_present() -> bool {
    embedded::present()
}

/// The full application router over `routes` (from [`api_routes`]).
pub fn router(state: AppState, routes: ApiRoutes, web_dir: Option<&Path>) -> Router {
    let api = routes
        .into_router()
        // Only routed requests pass the guard; the web app's files are open.
        .route_layer(middleware::from_fn_with_state(state.clone(), guard::guard));
    // The single-page app: real files first, index.html for client routes;
    // from a directory when one is named, else the app built into the binary.
    let api = match web_dir {
        Some(dir) => {
            let index = ServeFile::new(dir.join("index.html"));
            // A missing script or chunk is a 404, as in `embedded::serve`.
            let pages = axum::routing::get_service(index).route_layer(middleware::from_fn(
                |req: Request, next: Next| async move {
                    if embedded::asset_path(req.uri().path()) {
                        return axum::response::IntoResponse::into_response(axum::http::StatusCode::NOT_FOUND);
                    }
                    next.run(req).await
                },
            ));
            let spa = ServeDir::new(dir)
                .precompressed_br()
                .precompressed_gzip()
                .fallback(pages);
            api.fallback_service(spa)
        }
        None => api.fallback(embedded::serve),
    };
    api.layer(middleware::from_fn_with_state(state.clone(), overload::admit))
        .layer(middleware::from_fn_with_state(state.clone(), record_metrics))
        .layer(middleware::from_fn_with_state(state.clone(), guard::host_check))
        .layer(compression())
        .layer(middleware::map_response(security_headers))
        .with_state(state)
}

/// `kandev_core::page_policy::RESPONSE_HEADERS` on every answer: the API's,
/// the app's files, errors and refusals alike. A header a route set stays.
async fn security_headers(mut res: Response) -> Response {
    for (name, value) in kandev_core::page_policy::RESPONSE_HEADERS {
        res.headers_mut()
            .entry(axum::http::HeaderName::from_static(name))
            .or_insert(axum::http::HeaderValue::from_static(value));
    }
    res
}

/// Responses smaller than this go out as they are. Compressing one sets up
/// a fresh deflate state of about 300 KiB; under load, doing that for every
/// small JSON answer cost more server time than anything else in a request,
/// to save a few hundred bytes.
pub const COMPRESS_FROM_BYTES: u16 = 1024;

/// gzip for the answers large enough to gain from it (never for event
/// streams, images or gRPC, as tower-http's default).
fn compression() -> CompressionLayer<impl tower_http::compression::Predicate> {
    use tower_http::compression::predicate::{DefaultPredicate, Predicate, SizeAbove};
    CompressionLayer::new().compress_when(DefaultPredicate::new().and(SizeAbove::new(COMPRESS_FROM_BYTES)))
}
