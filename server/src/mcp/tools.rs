//! The MCP tools. Every parameter is described; the caller comes from the
//! request (URL token or bearer), never from an argument, and every tool is
//! confined to what that caller may reach (`scope`).

use std::sync::Arc;

use axum::http::request::Parts;
use kandev_core::access::Level;
use kandev_core::api::PatchTask;
use kandev_core::board::TaskStatus;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::McpCaller;
use super::archive::archive;
use super::scope::{Scope, actor};
use crate::board::BoardService;
use crate::store::Store;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct TaskIdArgs {
    /// The id of the Kandev task.
    pub task_id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListTasksArgs {
    /// Workspace to list; defaults to the calling session's workspace.
    #[serde(default)]
    pub workspace_id: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CommentArgs {
    /// The id of the Kandev task.
    pub task_id: String,
    /// The comment text.
    pub body: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MoveArgs {
    /// The id of the Kandev task.
    pub task_id: String,
    /// Target status: triage, todo, ready, running, review, done or blocked (board rules apply).
    pub status: String,
}

#[derive(Clone)]
pub struct KandevTools {
    store: Store,
    board: Arc<BoardService>,
    scope: Scope,
    tool_router: ToolRouter<Self>,
}

/// The caller the endpoint established. Without one (never expected) the
/// tools refuse (`no_caller`) rather than act for nobody.
fn caller(parts: &Parts) -> Option<McpCaller> {
    parts.extensions.get::<McpCaller>().cloned()
}

fn no_caller() -> Result<CallToolResult, rmcp::ErrorData> {
    tool_error("the caller of this MCP request is unknown")
}

fn ok(text: String) -> Result<CallToolResult, rmcp::ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

fn tool_error(text: impl Into<String>) -> Result<CallToolResult, rmcp::ErrorData> {
    Ok(CallToolResult::error(vec![ContentBlock::text(text.into())]))
}

#[tool_router]
impl KandevTools {
    pub fn new(store: Store, board: Arc<BoardService>) -> Self {
        KandevTools {
            scope: Scope::new(store.clone()),
            store,
            board,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "archive_task_kandev",
        description = "Archive a Kandev task. Archiving hides the task from the board but keeps it and its history; \
            calling it again for an archived task succeeds with already_archived: true. Only a user can unarchive."
    )]
    async fn archive_task_kandev(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<TaskIdArgs>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let Some(caller) = caller(&parts) else {
            return no_caller();
        };
        match archive(&self.store, &self.board, &self.scope, &caller, &args.task_id).await {
            Ok(text) => ok(text),
            Err(e) => tool_error(e),
        }
    }

    #[tool(description = "List the tasks on a workspace's board (id, title, status).")]
    async fn list_tasks(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<ListTasksArgs>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let Some(caller) = caller(&parts) else {
            return no_caller();
        };
        let ws = match (args.workspace_id, &caller) {
            (Some(ws), _) => ws,
            (None, McpCaller::Session { workspace_id, .. }) => workspace_id.clone(),
            (None, McpCaller::User(_)) => return tool_error("workspace_id is required"),
        };
        if let Err(r) = self.scope.workspace(&caller, &ws, Level::Read).await {
            return tool_error(r.message("workspace"));
        }
        match self.board.list(&ws, false, false).await {
            Ok(tasks) => {
                let items: Vec<_> = tasks
                    .iter()
                    .map(|t| json!({"id": t.id, "title": t.title, "status": t.status.as_str()}))
                    .collect();
                ok(serde_json::to_string_pretty(&items).unwrap_or_default())
            }
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(description = "Read one task: title, description, status and whether it is archived.")]
    async fn get_task(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<TaskIdArgs>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let Some(caller) = caller(&parts) else {
            return no_caller();
        };
        match self.scope.task(&caller, &args.task_id, Level::Read).await {
            Ok(t) => ok(serde_json::to_string_pretty(&json!({
                "id": t.id, "title": t.title, "description": t.description, "status": t.status.as_str(),
                "archived": t.archived_at.is_some(),
            }))
            .unwrap_or_default()),
            Err(r) => tool_error(r.message("task")),
        }
    }

    #[tool(description = "Add a comment to a task.")]
    async fn add_comment(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<CommentArgs>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let Some(caller) = caller(&parts) else {
            return no_caller();
        };
        if let Err(r) = self.scope.task(&caller, &args.task_id, Level::Write).await {
            return tool_error(r.message("task"));
        }
        match self.board.add_comment(&args.task_id, &args.body, &actor(&caller)).await {
            Ok(c) => ok(serde_json::to_string_pretty(&json!({"id": c.id})).unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        description = "Move a task to another status. The board's rules apply; human_review is entered and left only through review, approve and reject."
    )]
    async fn move_task(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<MoveArgs>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let Some(caller) = caller(&parts) else {
            return no_caller();
        };
        let Some(status) = TaskStatus::parse(&args.status) else {
            return tool_error(format!("unknown status {}", args.status));
        };
        if let Err(r) = self.scope.task(&caller, &args.task_id, Level::Write).await {
            return tool_error(r.message("task"));
        }
        let patch = PatchTask {
            status: Some(status),
            ..Default::default()
        };
        match self.board.patch(&args.task_id, patch, &actor(&caller)).await {
            Ok(t) => {
                ok(serde_json::to_string_pretty(&json!({"id": t.id, "status": t.status.as_str()})).unwrap_or_default())
            }
            Err(e) => tool_error(e.to_string()),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for KandevTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "Kandev task-board tools. The calling agent session is identified by the URL it was given.",
        )
    }
}
