//! Which tasks and workspaces an MCP caller may reach: an agent session only
//! its run's workspace, a user only its workspaces at its role there. A task
//! outside the caller's reach answers exactly as a missing one.

use kandev_core::access::{Level, Scope as AccessScope, Verdict, decide};
use kandev_core::api::{Actor, Task};

use super::McpCaller;
use crate::store::Store;

/// Why a tool may not act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// As if it did not exist.
    Hidden,
    /// Visible, but the caller's role may not change it.
    Forbidden,
}

impl Refusal {
    pub fn message(&self, what: &str) -> String {
        match self {
            Refusal::Hidden => format!("{what} not found"),
            Refusal::Forbidden => format!("your role may not change this {what}"),
        }
    }
}

#[derive(Clone)]
pub struct Scope {
    store: Store,
}

impl Scope {
    pub fn new(store: Store) -> Self {
        Scope { store }
    }

    /// Whether the caller may act at `level` in a workspace.
    pub async fn workspace(&self, caller: &McpCaller, workspace_id: &str, level: Level) -> Result<(), Refusal> {
        match caller {
            McpCaller::Session { workspace_id: own, .. } if own == workspace_id => Ok(()),
            McpCaller::Session { .. } => Err(Refusal::Hidden),
            McpCaller::User(c) => {
                // One read; a workspace that does not exist is hidden even from an admin.
                let place = self
                    .store
                    .place(AccessScope::Workspace, workspace_id, c.user_id.as_deref())
                    .await
                    .map_err(|_| Refusal::Hidden)?
                    .ok_or(Refusal::Hidden)?;
                match decide(c.admin, place.role, level) {
                    Verdict::Allow => Ok(()),
                    Verdict::Hidden => Err(Refusal::Hidden),
                    Verdict::Forbidden => Err(Refusal::Forbidden),
                }
            }
        }
    }

    /// The task, if the caller may act on it at `level`.
    pub async fn task(&self, caller: &McpCaller, task_id: &str, level: Level) -> Result<Task, Refusal> {
        let task = self.store.get_task(task_id).await.map_err(|_| Refusal::Hidden)?;
        self.workspace(caller, &task.workspace_id, level).await?;
        Ok(task)
    }
}

/// What task events record for an MCP caller: the run's automation, or the user.
pub fn actor(caller: &McpCaller) -> Actor {
    match caller {
        McpCaller::Session { automation_id, .. } => Actor::Automation {
            id: automation_id.clone(),
        },
        McpCaller::User(c) => c.actor(),
    }
}
