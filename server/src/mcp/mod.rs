//! Kandev's MCP server (rmcp, streamable HTTP), mounted in the axum app.
//!
//! `/mcp/{session_token}` serves one agent session: the caller (its run task) is
//! known from the token in the URL alone, never from a tool argument, and every
//! tool is confined to the run's workspace. `/mcp` serves a user's own MCP
//! clients with the same tools: the guard has admitted its bearer token, and
//! every tool acts as that user, within that user's workspaces and roles.

mod archive;
mod scope;
mod tools;

pub use archive::{ARCHIVE_CALLER_UNRESOLVED, ARCHIVE_FAILED, ARCHIVE_NOT_BOUND, ARCHIVE_TASK_ID_REQUIRED};
pub use tools::KandevTools;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower::ServiceExt;

use crate::access::Caller;
use crate::access::credentials::hash_secret;
use crate::board::BoardService;
use crate::error::ServiceError;
use crate::http::ApiRoutes;
use crate::http::error::HttpError;
use crate::store::Store;
use crate::store::agents::session_state;

/// Who is calling, as established before rmcp sees the request.
#[derive(Debug, Clone)]
pub enum McpCaller {
    /// An agent session, identified by its token: its run task and workspace.
    Session {
        session_id: String,
        task_id: String,
        workspace_id: String,
        automation_id: String,
    },
    /// A user's MCP client on `/mcp`, admitted by its bearer token.
    User(Caller),
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

    pub fn routes(self) -> ApiRoutes {
        let bound = self.clone();
        let external = self;
        ApiRoutes::new()
            .with(
                "/mcp/{token}",
                &["*"],
                any(move |Path(token): Path<String>, req: Request| {
                    let me = bound.clone();
                    async move { me.serve_session(token, req).await }
                }),
            )
            .with(
                "/mcp",
                &["*"],
                any(move |caller: Caller, mut req: Request| {
                    let me = external.clone();
                    async move {
                        req.extensions_mut().insert(McpCaller::User(caller));
                        forward(me.external.clone(), req).await
                    }
                }),
            )
    }

    async fn serve_session(&self, token: String, mut req: Request) -> Response {
        let session = match self.store.session_by_token_hash(&hash_secret(&token)).await {
            Ok(Some(s)) => s,
            Ok(None) => return HttpError(ServiceError::NotFound("unknown MCP session".into())).into_response(),
            Err(e) => return HttpError(e.into()).into_response(),
        };
        // Only a session whose turn is in progress may use its tools.
        if session.session.state != session_state::RUNNING {
            return HttpError(ServiceError::Unauthorized("this agent session is not running".into())).into_response();
        }
        // The run's workspace and automation, read now: the tools confine every call to them.
        let run_task = match self.store.get_task(&session.session.task_id).await {
            Ok(t) => t,
            Err(_) => return HttpError(ServiceError::NotFound("unknown MCP session".into())).into_response(),
        };
        let automation_id = run_task
            .metadata
            .get(kandev_core::api::META_AUTOMATION_ID)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        req.extensions_mut().insert(McpCaller::Session {
            session_id: session.session.id,
            task_id: session.session.task_id,
            workspace_id: run_task.workspace_id,
            automation_id,
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
