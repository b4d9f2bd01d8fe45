//! What every API route needs of its caller, in one table. The server's guard
//! looks each request's route up here and fails closed on a route it lacks.

use super::Level;

/// How the guard finds the workspace a route's resource lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `{ws}` in the path is the workspace itself.
    Workspace,
    /// `{id}` is a task.
    Task,
    /// `{id}` is an automation.
    Automation,
    /// `{id}` is an automation trigger.
    Trigger,
    /// `{id}` is an automation run.
    Run,
    /// `{id}` is an agent session.
    Session,
    /// The `workspace_id` query parameter names the workspace.
    QueryWorkspace,
}

impl Scope {
    /// The path parameter (or query parameter) holding the resource id.
    pub fn param(self) -> &'static str {
        match self {
            Scope::Workspace => "ws",
            Scope::QueryWorkspace => "workspace_id",
            _ => "id",
        }
    }

    /// The noun of the 404 message, the same whether the resource is missing or hidden.
    pub fn noun(self) -> &'static str {
        match self {
            Scope::Workspace | Scope::QueryWorkspace => "workspace",
            Scope::Task => "task",
            Scope::Automation => "automation",
            Scope::Trigger => "trigger",
            Scope::Run => "run",
            Scope::Session => "session",
        }
    }
}

/// What a route asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Need {
    /// No credential: health, metrics, the API description, sign-in, and the
    /// two webhook receivers (which check their own secret or signature).
    Open,
    /// Its own credential in the URL: an agent session's MCP endpoint.
    SessionToken,
    /// Any signed-in caller; the handler confines what it returns to the caller.
    Signed,
    /// A bearer token, not a browser cookie (local MCP clients).
    Bearer,
    /// An instance admin.
    Admin,
    /// A role in the workspace the resource belongs to.
    In(Scope, Level),
}

use Level::{Manage, Read, Write};
use Scope::*;

/// `(method, route template, need)`; `*` matches any method.
const TABLE: &[(&str, &str, Need)] = &[
    ("GET", "/healthz", Need::Open),
    ("GET", "/metrics", Need::Open),
    ("GET", "/api/v1/openapi.json", Need::Open),
    ("POST", "/api/v1/auth/login", Need::Open),
    ("POST", "/api/v1/auth/logout", Need::Open),
    ("POST", "/api/v1/automations/webhook/{id}", Need::Open),
    ("POST", "/api/v1/github/webhook", Need::Open),
    ("*", "/mcp/{token}", Need::SessionToken),
    ("*", "/mcp", Need::Bearer),
    ("GET", "/api/v1/me", Need::Signed),
    ("GET", "/api/v1/tokens", Need::Signed),
    ("POST", "/api/v1/tokens", Need::Signed),
    ("DELETE", "/api/v1/tokens/{id}", Need::Signed),
    ("GET", "/api/v1/users", Need::Admin),
    ("POST", "/api/v1/users", Need::Admin),
    ("DELETE", "/api/v1/users/{id}", Need::Admin),
    ("GET", "/api/v1/workspaces", Need::Signed),
    ("POST", "/api/v1/workspaces", Need::Signed),
    ("GET", "/api/v1/workspaces/{ws}", Need::In(Workspace, Read)),
    ("GET", "/api/v1/workspaces/{ws}/members", Need::In(Workspace, Read)),
    (
        "PUT",
        "/api/v1/workspaces/{ws}/members/{user_id}",
        Need::In(Workspace, Manage),
    ),
    (
        "DELETE",
        "/api/v1/workspaces/{ws}/members/{user_id}",
        Need::In(Workspace, Manage),
    ),
    ("GET", "/api/v1/workspaces/{ws}/repositories", Need::In(Workspace, Read)),
    (
        "POST",
        "/api/v1/workspaces/{ws}/repositories",
        Need::In(Workspace, Manage),
    ),
    (
        "PATCH",
        "/api/v1/workspaces/{ws}/repositories/{id}",
        Need::In(Workspace, Manage),
    ),
    // Target URLs are secrets of their own (a Slack hook URL is a credential).
    (
        "GET",
        "/api/v1/workspaces/{ws}/notification-targets",
        Need::In(Workspace, Manage),
    ),
    (
        "POST",
        "/api/v1/workspaces/{ws}/notification-targets",
        Need::In(Workspace, Manage),
    ),
    (
        "DELETE",
        "/api/v1/workspaces/{ws}/notification-targets/{id}",
        Need::In(Workspace, Manage),
    ),
    (
        "POST",
        "/api/v1/workspaces/{ws}/notification-targets/{id}/test",
        Need::In(Workspace, Manage),
    ),
    (
        "GET",
        "/api/v1/workspaces/{ws}/notification-deliveries",
        Need::In(Workspace, Read),
    ),
    ("GET", "/api/v1/workspaces/{ws}/tasks", Need::In(Workspace, Read)),
    ("POST", "/api/v1/workspaces/{ws}/tasks", Need::In(Workspace, Write)),
    ("GET", "/api/v1/workspaces/{ws}/stream", Need::In(Workspace, Read)),
    ("GET", "/api/v1/workspaces/{ws}/task-prs", Need::In(Workspace, Read)),
    ("GET", "/api/v1/workspaces/{ws}/board-prs", Need::In(Workspace, Read)),
    ("GET", "/api/v1/workspaces/{ws}/automations", Need::In(Workspace, Read)),
    (
        "GET",
        "/api/v1/workspaces/{ws}/automations/export",
        Need::In(Workspace, Read),
    ),
    (
        "POST",
        "/api/v1/workspaces/{ws}/automations/import",
        Need::In(Workspace, Write),
    ),
    (
        "POST",
        "/api/v1/workspaces/{ws}/automations",
        Need::In(Workspace, Write),
    ),
    (
        "GET",
        "/api/v1/workspaces/{ws}/automation-runs",
        Need::In(Workspace, Read),
    ),
    ("GET", "/api/v1/tasks/{id}", Need::In(Task, Read)),
    ("PATCH", "/api/v1/tasks/{id}", Need::In(Task, Write)),
    ("DELETE", "/api/v1/tasks/{id}", Need::In(Task, Write)),
    ("POST", "/api/v1/tasks/{id}/archive", Need::In(Task, Write)),
    ("POST", "/api/v1/tasks/{id}/unarchive", Need::In(Task, Write)),
    ("GET", "/api/v1/tasks/{id}/comments", Need::In(Task, Read)),
    ("POST", "/api/v1/tasks/{id}/comments", Need::In(Task, Write)),
    ("GET", "/api/v1/tasks/{id}/events", Need::In(Task, Read)),
    ("POST", "/api/v1/tasks/{id}/review", Need::In(Task, Write)),
    ("POST", "/api/v1/tasks/{id}/approve", Need::In(Task, Write)),
    ("POST", "/api/v1/tasks/{id}/reject", Need::In(Task, Write)),
    ("POST", "/api/v1/tasks/{id}/cancel-merge", Need::In(Task, Write)),
    ("GET", "/api/v1/tasks/{id}/sessions", Need::In(Task, Read)),
    ("GET", "/api/v1/tasks/{id}/prs", Need::In(Task, Read)),
    ("POST", "/api/v1/tasks/{id}/prs", Need::In(Task, Write)),
    ("POST", "/api/v1/tasks/{id}/prs/refresh", Need::In(Task, Write)),
    (
        "DELETE",
        "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}",
        Need::In(Task, Write),
    ),
    (
        "POST",
        "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}/restore",
        Need::In(Task, Write),
    ),
    ("GET", "/api/v1/sessions/{id}/messages", Need::In(Session, Read)),
    ("POST", "/api/v1/sessions/{id}/prompt", Need::In(Session, Write)),
    ("GET", "/api/v1/automation-trigger-types", Need::Signed),
    ("GET", "/api/v1/automation-schedule-preview", Need::Signed),
    // The home's feed and agenda: the handlers confine them to the caller's workspaces.
    ("GET", "/api/v1/automation-runs", Need::Signed),
    ("GET", "/api/v1/automation-agenda", Need::Signed),
    ("GET", "/api/v1/automations/{id}", Need::In(Automation, Read)),
    ("PATCH", "/api/v1/automations/{id}", Need::In(Automation, Write)),
    ("DELETE", "/api/v1/automations/{id}", Need::In(Automation, Write)),
    ("POST", "/api/v1/automations/{id}/triggers", Need::In(Automation, Write)),
    ("PATCH", "/api/v1/automation-triggers/{id}", Need::In(Trigger, Write)),
    ("DELETE", "/api/v1/automation-triggers/{id}", Need::In(Trigger, Write)),
    ("POST", "/api/v1/automations/{id}/run", Need::In(Automation, Write)),
    ("GET", "/api/v1/automations/{id}/runs", Need::In(Automation, Read)),
    ("DELETE", "/api/v1/automations/{id}/runs", Need::In(Automation, Write)),
    ("DELETE", "/api/v1/automation-runs/{id}", Need::In(Run, Write)),
    (
        "GET",
        "/api/v1/automations/{id}/evaluations",
        Need::In(Automation, Read),
    ),
    (
        "GET",
        "/api/v1/automations/{id}/webhook-secret",
        Need::In(Automation, Manage),
    ),
    (
        "POST",
        "/api/v1/automations/{id}/webhook-secret/rotate",
        Need::In(Automation, Manage),
    ),
    ("GET", "/api/v1/agent-profiles", Need::Signed),
    ("GET", "/api/v1/executors", Need::Signed),
    ("POST", "/api/v1/agent-profiles", Need::Admin),
    ("PATCH", "/api/v1/agent-profiles/{id}", Need::Admin),
    ("DELETE", "/api/v1/agent-profiles/{id}", Need::Admin),
    ("GET", "/api/v1/github/orgs", Need::In(QueryWorkspace, Read)),
    ("GET", "/api/v1/github/repos/search", Need::In(QueryWorkspace, Read)),
    (
        "GET",
        "/api/v1/github/workspace-settings",
        Need::In(QueryWorkspace, Read),
    ),
    (
        "PUT",
        "/api/v1/github/workspace-settings",
        Need::In(QueryWorkspace, Manage),
    ),
    // Unknown API paths: 404 for the signed-in, 401 for everybody else.
    ("*", "/api/{*rest}", Need::Signed),
];

/// What `method` on the route `template` needs, or `None` for a route this
/// table does not know (the guard then refuses it).
/// `HEAD` asks what `GET` would.
pub fn route_need(method: &str, template: &str) -> Option<Need> {
    let method = if method.eq_ignore_ascii_case("HEAD") {
        "GET"
    } else {
        method
    };
    TABLE
        .iter()
        .find(|(m, t, _)| *t == template && (*m == "*" || m.eq_ignore_ascii_case(method)))
        .map(|(_, _, need)| *need)
}

/// The methods a route template serves, for a 405's `Allow` (empty for an
/// unknown template).
pub fn methods_for(template: &str) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|(_, t, _)| *t == template)
        .map(|(m, _, _)| *m)
        .collect()
}

/// Every `(method, template)` the table knows.
pub fn known_routes() -> impl Iterator<Item = (&'static str, &'static str)> {
    TABLE.iter().map(|(m, t, _)| (*m, *t))
}
