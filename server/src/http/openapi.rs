//! The OpenAPI document: paths and schemas from the handlers' annotations,
//! then what every route shares filled in from the access table — the
//! security it needs and the errors the guard, the extractors and the bounds
//! can answer — so the document names every status the server sends.

use std::sync::OnceLock;

use kandev_core::access::{Level, Need, route_need};
use kandev_core::board::TaskStatus;
use kandev_core::schema::{ENV_KEY, NOT_BLANK, PR_REF, REPO_SEGMENT, SCHEDULE, TARGET_URL, USERNAME};
use kandev_core::trigger::TriggerType;
use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use super::{
    agents, auth, automations, github, members, notifications, portable, stream, system, tasks, users, workspaces,
};

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
        workspaces::update_repository,
        notifications::list_targets,
        notifications::create_target,
        notifications::delete_target,
        notifications::test_target,
        notifications::deliveries,
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
        tasks::cancel_merge,
        automations::trigger_types,
        automations::schedule_preview,
        automations::all_runs,
        automations::agenda,
        portable::export,
        portable::import,
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
        agents::executors,
        agents::sessions,
        agents::messages,
        agents::reply,
        github::link_pr,
        github::list_prs,
        github::refresh_prs,
        github::detach_pr,
        github::restore_pr,
        github::workspace_task_prs,
        github::board_prs,
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
    ("post", "/api/v1/tasks/{id}/cancel-merge"),
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

/// A required name or title: `kandev_core::bounds::required_name`.
/// A CI wait in minutes (the type, integer or null, comes from the struct).
fn ci_wait_rule() -> Value {
    json!({"minimum": 1, "maximum": 1440})
}

fn name_rule() -> Value {
    json!({"minLength": 1, "maxLength": 500, "pattern": NOT_BLANK})
}

/// The request fields whose rules the server checks beyond their type, so
/// the document is as strict as the server (and never stricter).
fn field_rules() -> Vec<(&'static str, &'static str, Value)> {
    let creatable: Vec<&str> = TaskStatus::ALL
        .into_iter()
        .filter(|s| *s != TaskStatus::HumanReview)
        .map(TaskStatus::as_str)
        .collect();
    let long = "at most 64 KiB (UTF-8)";
    vec![
        ("CreateWorkspace", "name", name_rule()),
        (
            "CreateRepository",
            "owner",
            json!({"maxLength": 100, "pattern": REPO_SEGMENT}),
        ),
        (
            "CreateRepository",
            "name",
            json!({"maxLength": 100, "pattern": REPO_SEGMENT}),
        ),
        ("CreateRepository", "default_branch", json!({"maxLength": 500})),
        ("CreateRepository", "provider", json!({"maxLength": 500})),
        ("CreateRepository", "local_path", json!({"maxLength": 500})),
        ("CreateTask", "title", name_rule()),
        ("CreateTask", "description", json!({"description": long})),
        (
            "CreateTask",
            "status",
            json!({"oneOf": [{"type": "string", "enum": creatable}, {"type": "null"}]}),
        ),
        ("PatchTask", "title", name_rule()),
        ("PatchTask", "description", json!({"description": long})),
        (
            "CreateComment",
            "body",
            json!({"pattern": NOT_BLANK, "description": long}),
        ),
        ("ReviewRequest", "pr_url", json!({"pattern": PR_REF})),
        ("ReviewRequest", "summary", json!({"description": long})),
        (
            "RejectRequest",
            "reason",
            json!({"pattern": NOT_BLANK, "description": long}),
        ),
        ("ApproveRequest", "reason", json!({"description": long})),
        ("CreateAutomation", "name", name_rule()),
        ("CreateAutomation", "task_title_template", json!({"maxLength": 500})),
        ("CreateAutomation", "prompt", json!({"description": long})),
        ("CreateAutomation", "description", json!({"description": long})),
        (
            "CreateAutomation",
            "max_concurrent_runs",
            json!({"minimum": i64::MIN, "maximum": 100,
            "description": "1 to 100 (default 1); 0 or less becomes 1"}),
        ),
        ("PatchAutomation", "name", name_rule()),
        ("PatchAutomation", "task_title_template", json!({"maxLength": 500})),
        (
            "PatchAutomation",
            "max_concurrent_runs",
            json!({"minimum": 1, "maximum": 100}),
        ),
        ("CreateAgentProfile", "name", name_rule()),
        ("CreateAgentProfile", "command", name_rule()),
        ("CreateAgentProfile", "args", json!({"maxItems": 64})),
        (
            "CreateAgentProfile",
            "env",
            json!({"maxProperties": 64, "propertyNames": {"pattern": ENV_KEY, "maxLength": 500}}),
        ),
        ("PatchAgentProfile", "name", name_rule()),
        ("PatchAgentProfile", "command", name_rule()),
        ("PatchAgentProfile", "args", json!({"maxItems": 64})),
        (
            "PatchAgentProfile",
            "env",
            json!({"maxProperties": 64, "propertyNames": {"pattern": ENV_KEY, "maxLength": 500}}),
        ),
        ("CreateToken", "name", name_rule()),
        ("CreateUser", "username", json!({"pattern": USERNAME})),
        ("CreateUser", "password", json!({"minLength": 8, "maxLength": 1024})),
        ("GithubWorkspaceSettings", "ci_wait_timeout_minutes", ci_wait_rule()),
        (
            "CreateNotificationTarget",
            "url",
            json!({"pattern": TARGET_URL, "maxLength": 2048}),
        ),
        (
            "CreateNotificationTarget",
            "events",
            json!({"minItems": 1, "items": {"type": "string", "enum": kandev_core::notify::EVENTS}}),
        ),
        ("CreateNotificationTarget", "secret", json!({"maxLength": 256})),
        ("CreateRepository", "ci_wait_timeout_minutes", ci_wait_rule()),
        ("UpdateRepository", "ci_wait_timeout_minutes", ci_wait_rule()),
        (
            "GithubWorkspaceSettings",
            "merge_method",
            json!({"enum": kandev_core::api::MERGE_METHODS}),
        ),
        // A null reads as empty (`kandev_core::lenient`).
        ("RepoFilter", "owner", json!({"type": ["string", "null"]})),
        ("RepoFilter", "name", json!({"type": ["string", "null"]})),
        (
            "ReplyRequest",
            "text",
            json!({"pattern": NOT_BLANK, "description": long}),
        ),
    ]
}

/// `NewTrigger`: a scheduled trigger's config is checked at save; the others'
/// are stored as given.
fn new_trigger_schema() -> Value {
    let others: Vec<&str> = TriggerType::ALL
        .into_iter()
        .filter(|t| *t != TriggerType::Scheduled)
        .map(TriggerType::as_str)
        .collect();
    let mut zones: Vec<&str> = vec![""];
    zones.extend(kandev_core::cron::timezone_names());
    let enabled = json!({"type": ["boolean", "null"]});
    json!({"oneOf": [
        {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {
            "type": {"type": "string", "const": "scheduled"},
            "config": {"type": "object", "properties": {
                "cron_expression": {"type": ["string", "null"], "pattern": SCHEDULE,
                    "description": "blank (never fires), a descriptor, `@every <duration>` (1 s to 366 days), \
                        or a 5-field cron expression that has a next run, optionally prefixed `TZ=<zone> `"},
                "timezone": {"oneOf": [{"type": "string", "enum": zones}, {"type": "null"}]}
            }},
            "enabled": enabled
        }},
        {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {
            "type": {"type": "string", "enum": others},
            "config": {"description": "stored as given"},
            "enabled": enabled
        }}
    ]})
}

/// Merges each rule into its property; returns the rules that found no
/// property (a renamed field must not silently lose its rule).
fn apply_rules(doc: &mut Value) -> Vec<String> {
    let mut missing = vec![];
    for (schema, field, rule) in field_rules() {
        let pointer = format!("/components/schemas/{schema}/properties/{field}");
        match (doc.pointer_mut(&pointer), rule) {
            (Some(Value::Object(target)), Value::Object(extra)) => {
                if extra.contains_key("oneOf") {
                    target.remove("type");
                    target.remove("$ref");
                }
                target.extend(extra);
            }
            _ => missing.push(pointer),
        }
    }
    match doc.pointer_mut("/components/schemas/NewTrigger") {
        Some(s) => *s = new_trigger_schema(),
        None => missing.push("NewTrigger".into()),
    }
    for (pointer, name, rule) in parameter_rules() {
        let Some(Value::Array(params)) = doc.pointer_mut(pointer) else {
            missing.push(format!("{pointer} {name}"));
            continue;
        };
        let target = params
            .iter_mut()
            .find(|p| p["name"] == name)
            .and_then(|p| p.get_mut("schema"));
        match (target, rule) {
            (Some(Value::Object(schema)), Value::Object(rule)) => schema.extend(rule),
            _ => missing.push(format!("{pointer} {name}")),
        }
    }
    missing
}

/// Parameters with rules beyond their type: `(operation's parameters, name, rule)`.
fn parameter_rules() -> Vec<(&'static str, &'static str, Value)> {
    let ws = json!({"minLength": 1});
    vec![
        (
            "/paths/~1api~1v1~1github~1repos~1search/get/parameters",
            "org",
            json!({"pattern": NOT_BLANK, "maxLength": 100}),
        ),
        (
            "/paths/~1api~1v1~1github~1repos~1search/get/parameters",
            "q",
            json!({"maxLength": 256}),
        ),
        (
            "/paths/~1api~1v1~1github~1repos~1search/get/parameters",
            "workspace_id",
            ws.clone(),
        ),
        (
            "/paths/~1api~1v1~1github~1orgs/get/parameters",
            "workspace_id",
            ws.clone(),
        ),
        (
            "/paths/~1api~1v1~1github~1workspace-settings/get/parameters",
            "workspace_id",
            ws.clone(),
        ),
        (
            "/paths/~1api~1v1~1github~1workspace-settings/put/parameters",
            "workspace_id",
            ws,
        ),
        (
            "/paths/~1api~1v1~1automations~1webhook~1{id}/post/parameters",
            "id",
            json!({"pattern": NOT_BLANK}),
        ),
    ]
}

fn build() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_else(|_| json!({}));
    for pointer in apply_rules(&mut doc) {
        tracing::error!(%pointer, "an OpenAPI field rule found no field");
    }
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
    if is_webhook {
        add("403", "deliveries are refused: no webhook secret is configured");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_rule_lands_on_a_field() {
        let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        assert_eq!(apply_rules(&mut doc), Vec::<String>::new());
        assert_eq!(
            doc["components"]["schemas"]["CreateUser"]["properties"]["username"]["pattern"],
            USERNAME
        );
    }
}
