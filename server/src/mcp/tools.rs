//! The MCP tools. Every parameter is described; the caller comes from the
//! request (URL token), never from an argument.

use std::sync::Arc;

use axum::http::request::Parts;
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
    tool_router: ToolRouter<Self>,
}

fn caller(parts: &Parts) -> McpCaller {
    parts
        .extensions
        .get::<McpCaller>()
        .cloned()
        .unwrap_or(McpCaller::External)
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
        match archive(&self.store, &self.board, &caller(&parts), &args.task_id).await {
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
        let ws = match (args.workspace_id, caller(&parts)) {
            (Some(ws), _) => ws,
            (None, McpCaller::Session { task_id, .. }) => match self.store.get_task(&task_id).await {
                Ok(t) => t.workspace_id,
                Err(_) => return tool_error("the calling task cannot be resolved"),
            },
            (None, McpCaller::External) => return tool_error("workspace_id is required"),
        };
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
    async fn get_task(&self, Parameters(args): Parameters<TaskIdArgs>) -> Result<CallToolResult, rmcp::ErrorData> {
        match self.board.get(&args.task_id).await {
            Ok(t) => ok(serde_json::to_string_pretty(&json!({
                "id": t.id, "title": t.title, "description": t.description, "status": t.status.as_str(),
                "archived": t.archived_at.is_some(),
            }))
            .unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(description = "Add a comment to a task.")]
    async fn add_comment(&self, Parameters(args): Parameters<CommentArgs>) -> Result<CallToolResult, rmcp::ErrorData> {
        match self.board.add_comment(&args.task_id, &args.body, "agent").await {
            Ok(c) => ok(serde_json::to_string_pretty(&json!({"id": c.id})).unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        description = "Move a task to another status. The board's rules apply; human_review is entered and left only through review, approve and reject."
    )]
    async fn move_task(&self, Parameters(args): Parameters<MoveArgs>) -> Result<CallToolResult, rmcp::ErrorData> {
        let Some(status) = TaskStatus::parse(&args.status) else {
            return tool_error(format!("unknown status {}", args.status));
        };
        match self
            .board
            .patch(
                &args.task_id,
                PatchTask {
                    status: Some(status),
                    ..Default::default()
                },
            )
            .await
        {
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
