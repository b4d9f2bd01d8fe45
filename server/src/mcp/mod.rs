//! Kandev's MCP server (rmcp, streamable HTTP), mounted in the axum app.
//!
//! `/mcp/{session_token}` serves one agent session: the caller (its run task) is
//! known from the token in the URL alone, never from a tool argument. `/mcp`
//! serves the local user's own MCP clients with the same tools and no binding.

mod archive;
mod tools;

pub use archive::{ARCHIVE_CALLER_UNRESOLVED, ARCHIVE_FAILED, ARCHIVE_NOT_BOUND, ARCHIVE_TASK_ID_REQUIRED};
pub use tools::KandevTools;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower::ServiceExt;

use crate::board::BoardService;
use crate::error::ServiceError;
use crate::http::AppState;
use crate::http::error::HttpError;
use crate::store::Store;
use crate::store::agents::session_state;

/// Who is calling, as established by the URL before rmcp sees the request.
#[derive(Debug, Clone)]
pub enum McpCaller {
    /// An agent session, identified by its token.
    Session { session_id: String, task_id: String },
    /// The local user's MCP client on `/mcp`.
    External,
}

type Service = StreamableHttpService<KandevTools, LocalSessionManager>;

/// The two MCP endpoints. Each has its own session manager, so an MCP session
/// opened on one URL can never be continued on the other.
#[derive(Clone)]
pub struct McpEndpoints {
    bound: Service,
    external: Service,
    store: Store,
}

impl McpEndpoints {
    pub fn new(store: Store, board: Arc<BoardService>) -> Self {
        let make = || {
            let (store, board) = (store.clone(), board.clone());
            StreamableHttpService::new(
                move || Ok(KandevTools::new(store.clone(), board.clone())),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            )
        };
        McpEndpoints {
            bound: make(),
            external: make(),
            store,
        }
    }

    pub fn router(self) -> Router<AppState> {
        let bound = self.clone();
        let external = self;
        Router::new()
            .route(
                "/mcp/{token}",
                any(move |Path(token): Path<String>, req: Request| {
                    let me = bound.clone();
                    async move { me.serve_session(token, req).await }
                }),
            )
            .route(
                "/mcp",
                any(move |mut req: Request| {
                    let me = external.clone();
                    async move {
                        req.extensions_mut().insert(McpCaller::External);
                        forward(me.external.clone(), req).await
                    }
                }),
            )
    }

    async fn serve_session(&self, token: String, mut req: Request) -> Response {
        let session = match self.store.session_by_token(&token).await {
            Ok(Some(s)) => s,
            Ok(None) => return HttpError(ServiceError::NotFound("unknown MCP session".into())).into_response(),
            Err(e) => return HttpError(e.into()).into_response(),
        };
        // Only a session whose turn is in progress may use its tools.
        if session.session.state != session_state::RUNNING {
            return HttpError(ServiceError::Unauthorized("this agent session is not running".into())).into_response();
        }
        req.extensions_mut().insert(McpCaller::Session {
            session_id: session.session.id,
            task_id: session.session.task_id,
        });
        forward(self.bound.clone(), req).await
    }
}

async fn forward(service: Service, req: Request) -> Response {
    match service.oneshot(req).await {
        Ok(resp) => resp.map(Body::new),
        Err(e) => match e {},
    }
}
