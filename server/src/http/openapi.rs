//! The OpenAPI document: paths and schemas from the handlers' annotations,
//! then what every route shares filled in from the access table — the
//! security it needs and the errors the guard, the extractors and the bounds
//! can answer — so the document names every status the server sends.

use std::sync::OnceLock;

use kandev_core::access::{Level, Need, route_need};
use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use super::{agents, auth, automations, github, members, stream, system, tasks, users, workspaces};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Kandev API",
        version = "1",
        description = "The Kandev HTTP API (v1). Errors are {\"error\": {\"code\", \"message\"}}. \
            Authenticate with `Authorization: Bearer kdv_…` (an API token) or the browser session cookie."
    ),
    paths(
        system::healthz,
        system::metrics,
        system::openapi,
        auth::login,
        auth::logout,
        auth::me,
        auth::list_tokens,
        auth::create_token,
        auth::delete_token,
        users::list,
        users::create,
        users::delete,
        workspaces::create,
        workspaces::list,
        workspaces::show,
        workspaces::create_repository,
        workspaces::list_repositories,
        members::list,
        members::put,
        members::remove,
        tasks::create,
        tasks::list,
        tasks::show,
        tasks::patch,
        tasks::delete,
        tasks::archive,
        tasks::unarchive,
        tasks::add_comment,
        tasks::comments,
        tasks::events,
        tasks::review,
        tasks::approve,
        tasks::reject,
        automations::trigger_types,
        automations::list,
        automations::create,
        automations::show,
        automations::patch,
        automations::delete,
        automations::add_trigger,
        automations::patch_trigger,
        automations::delete_trigger,
        automations::run_now,
        automations::runs,
        automations::delete_runs,
        automations::workspace_runs,
        automations::delete_run,
        automations::evaluations,
        automations::webhook_secret,
        automations::rotate_webhook_secret,
        automations::webhook,
        agents::list,
        agents::create,
        agents::update,
        agents::delete,
        agents::sessions,
        agents::messages,
        agents::reply,
        github::link_pr,
        github::list_prs,
        github::refresh_prs,
        github::detach_pr,
        github::restore_pr,
        github::workspace_task_prs,
        github::orgs,
        github::search_repos,
        github::get_settings,
        github::put_settings,
        github::webhook,
        stream::stream,
    ),
    components(schemas(kandev_core::api::ApiError, kandev_core::api::ErrorBody))
)]
pub struct ApiDoc;

/// Routes whose handlers can refuse with 409 (a state conflict).
const CONFLICTS: &[(&str, &str)] = &[
    ("patch", "/api/v1/tasks/{id}"),
    ("post", "/api/v1/tasks/{id}/review"),
    ("post", "/api/v1/tasks/{id}/approve"),
    ("post", "/api/v1/tasks/{id}/reject"),
    ("post", "/api/v1/sessions/{id}/prompt"),
    ("post", "/api/v1/users"),
    ("delete", "/api/v1/users/{id}"),
    ("put", "/api/v1/workspaces/{ws}/members/{user_id}"),
    ("delete", "/api/v1/workspaces/{ws}/members/{user_id}"),
    ("patch", "/api/v1/agent-profiles/{id}"),
    ("delete", "/api/v1/agent-profiles/{id}"),
    ("post", "/api/v1/automations/webhook/{id}"),
];

/// Routes that reach GitHub: 502 when it fails, 503 when it is not configured.
const GITHUB: &[(&str, &str)] = &[
    ("post", "/api/v1/tasks/{id}/prs"),
    ("post", "/api/v1/tasks/{id}/prs/refresh"),
    ("post", "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}/restore"),
    ("get", "/api/v1/github/orgs"),
    ("get", "/api/v1/github/repos/search"),
    ("post", "/api/v1/tasks/{id}/approve"),
];

/// The document served at `/api/v1/openapi.json`, built once.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(build)
}

fn error(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}}
    })
}

fn build() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_else(|_| json!({}));
    doc["components"]["securitySchemes"] = json!({
        "bearer": {"type": "http", "scheme": "bearer", "description": "an API token (`kdv_…`) or KANDEV_ADMIN_TOKEN"},
        "cookie": {"type": "apiKey", "in": "cookie", "name": kandev_core::api::SESSION_COOKIE,
            "description": "the browser session from POST /api/v1/auth/login; changes need a same-origin Origin"}
    });
    doc["security"] = json!([{"bearer": []}, {"cookie": []}]);
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else { continue };
            for (method, op) in item.iter_mut() {
                if let Some(op) = op.as_object_mut() {
                    complete(path, method, op);
                }
            }
        }
    }
    doc
}

/// Adds the security and shared error answers of one operation.
fn complete(path: &str, method: &str, op: &mut Map<String, Value>) {
    let need = route_need(method, path);
    let has_body = op.contains_key("requestBody");
    let params = op
        .get("parameters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has_query = params.iter().any(|p| p["in"] == "query");
    let has_path = params.iter().any(|p| p["in"] == "path");
    let change = method != "get";
    match need {
        Some(Need::Open) | Some(Need::SessionToken) => {
            op.insert("security".into(), json!([{}]));
        }
        Some(Need::Bearer) => {
            op.insert("security".into(), json!([{"bearer": []}]));
        }
        _ => {}
    }
    let responses = op
        .entry("responses")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut responses = responses;
    let mut add = |status: &str, description: &str| {
        responses
            .entry(status.to_string())
            .or_insert_with(|| error(description));
    };
    let signed = !matches!(need, Some(Need::Open) | Some(Need::SessionToken));
    let is_login = path == "/api/v1/auth/login";
    let is_webhook = path.contains("/webhook");
    if path != "/healthz" {
        add(
            "421",
            "the Host is neither a loopback name nor KANDEV_PUBLIC_URL's host",
        );
    }
    if signed || is_login || is_webhook {
        add("401", "no valid credential (or a wrong secret or signature)");
    }
    let role_bound = matches!(
        need,
        Some(Need::Admin) | Some(Need::In(_, Level::Write | Level::Manage))
    );
    if role_bound || (signed && change) || path.starts_with("/api/v1/auth/") {
        add(
            "403",
            "not allowed (role), or a cookie change from another origin (code csrf)",
        );
    }
    if matches!(need, Some(Need::In(..))) || has_path {
        add("404", "not found, or in a workspace the caller is no member of");
    }
    if has_body
        || has_query
        || has_path
        || matches!(need, Some(Need::In(kandev_core::access::Scope::QueryWorkspace, _)))
    {
        add("400", "a malformed request (JSON, query or path)");
    }
    if has_body || is_webhook {
        add("413", "the body is too large");
    }
    if has_body || has_query {
        add("422", "valid JSON or parameters that break a rule or a bound");
    }
    if is_login {
        add(
            "429",
            "too many failed sign-ins for this username: wait Retry-After seconds",
        );
    }
    if CONFLICTS.contains(&(method, path)) {
        add("409", "the current state does not allow it");
    }
    if GITHUB.contains(&(method, path)) {
        add("502", "GitHub failed");
        add("503", "GitHub (or the merger) is not available");
    }
    op.insert("responses".into(), Value::Object(responses));
}
