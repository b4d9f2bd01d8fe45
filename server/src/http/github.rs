//! Linked pull requests, the repository-selector helpers, workspace GitHub
//! settings and GitHub webhook deliveries.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use kandev_core::api::{
    GithubWorkspaceSettings, LinkPrRequest, MERGE_METHODS, Org, Orgs, RepoHit, RepoSearch, TaskPr, TaskPrPreview,
};
use kandev_core::board::PrRef;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::guard::InWorkspace;
use super::{ApiRoutes, AppState};
use crate::error::ServiceError;
use crate::github::{Delivery, DeliveryAck, GithubError};

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/tasks/{id}/prs", list_prs)
        .post("/api/v1/tasks/{id}/prs", link_pr)
        .post("/api/v1/tasks/{id}/prs/refresh", refresh_prs)
        .delete("/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}", detach_pr)
        .post("/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}/restore", restore_pr)
        .get("/api/v1/workspaces/{ws}/task-prs", workspace_task_prs)
        .get("/api/v1/workspaces/{ws}/board-prs", board_prs)
        .get("/api/v1/github/orgs", orgs)
        .get("/api/v1/github/repos/search", search_repos)
        .get("/api/v1/github/workspace-settings", get_settings)
        .put("/api/v1/github/workspace-settings", put_settings)
        .post("/api/v1/github/webhook", webhook)
}

fn upstream(e: GithubError) -> ServiceError {
    match e {
        GithubError::NotConfigured => ServiceError::Unavailable("GitHub is not configured: set GITHUB_TOKEN".into()),
        other => ServiceError::Upstream(other.to_string()),
    }
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/prs", params(("id" = String, Path)), request_body = LinkPrRequest,
    responses((status = 201, body = TaskPr), (status = 422, body = kandev_core::api::ApiError), (status = 503, body = kandev_core::api::ApiError)))]
pub async fn link_pr(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<LinkPrRequest>,
) -> HttpResult<(StatusCode, Json<TaskPr>)> {
    let task = s.board.get(&id).await?;
    let pr = crate::github::requested_pr(&req)?;
    Ok((StatusCode::CREATED, Json(s.github.associate(&task, &pr).await?)))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}/prs", params(("id" = String, Path)), responses((status = 200, body = [TaskPr])))]
pub async fn list_prs(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Vec<TaskPr>>> {
    Ok(Json(s.github.list(&id).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/prs/refresh", params(("id" = String, Path)), responses((status = 200, body = [TaskPr])))]
pub async fn refresh_prs(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Vec<TaskPr>>> {
    Ok(Json(s.github.refresh(&id).await?))
}

#[utoipa::path(delete, path = "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}",
    params(("id" = String, Path), ("owner" = String, Path), ("repo" = String, Path), ("number" = i64, Path)), responses((status = 204)))]
pub async fn detach_pr(
    State(s): State<AppState>,
    ApiPath((id, owner, repo, number)): ApiPath<(String, String, String, i64)>,
) -> HttpResult<StatusCode> {
    s.github.detach(&id, &PrRef::new(&owner, &repo, number)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}/restore",
    params(("id" = String, Path), ("owner" = String, Path), ("repo" = String, Path), ("number" = i64, Path)), responses((status = 200, body = TaskPr)))]
pub async fn restore_pr(
    State(s): State<AppState>,
    ApiPath((id, owner, repo, number)): ApiPath<(String, String, String, i64)>,
) -> HttpResult<Json<TaskPr>> {
    Ok(Json(s.github.restore(&id, &PrRef::new(&owner, &repo, number)).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskPrParams {
    /// `open`, `closed` or `merged`; all when absent.
    state: Option<String>,
    /// How many, newest first (1–500; default 20).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/task-prs", params(("ws" = String, Path), TaskPrParams),
    responses((status = 200, body = [TaskPrPreview])))]
pub async fn workspace_task_prs(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiQuery(p): ApiQuery<TaskPrParams>,
) -> HttpResult<Json<Vec<TaskPrPreview>>> {
    let limit = kandev_core::bounds::limit(p.limit, 20).map_err(|e| ServiceError::Invalid(e.0))?;
    Ok(Json(
        s.store
            .list_workspace_task_prs(&ws, p.state.as_deref().filter(|x| !x.is_empty()), limit)
            .await?,
    ))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BoardPrParams {
    /// Include the links of archived tasks (as the board's own toggle does).
    #[serde(default)]
    include_archived: bool,
}

/// Every PR link of the tasks the board shows, in one request: the board
/// reads these once, not once per card.
#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/board-prs", params(("ws" = String, Path), BoardPrParams),
    responses((status = 200, body = [TaskPr])))]
pub async fn board_prs(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiQuery(p): ApiQuery<BoardPrParams>,
) -> HttpResult<Json<Vec<TaskPr>>> {
    Ok(Json(s.store.list_board_task_prs(&ws, p.include_archived).await?))
}

/// The workspace the helper acts for (the guard has checked the caller may).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WorkspaceParam {
    #[allow(dead_code)]
    workspace_id: String,
}

async fn workspace_settings(
    s: &AppState,
    place: &InWorkspace,
) -> Result<(String, GithubWorkspaceSettings), ServiceError> {
    let ws = place.workspace_id.clone();
    let settings = s.store.github_settings(&ws).await?;
    Ok((ws, settings))
}

#[utoipa::path(get, path = "/api/v1/github/orgs", params(WorkspaceParam), responses((status = 200, body = Orgs)))]
pub async fn orgs(State(s): State<AppState>, place: InWorkspace) -> HttpResult<Json<Orgs>> {
    let (_, settings) = workspace_settings(&s, &place).await?;
    let orgs = s.github.client().user_orgs().await.map_err(upstream)?;
    let orgs = orgs
        .into_iter()
        .filter(|o| settings.allows_org(&o.login))
        .map(|o| Org { login: o.login })
        .collect();
    Ok(Json(Orgs { orgs }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    #[allow(dead_code)]
    workspace_id: String,
    /// The organisation (or user) whose repositories to search.
    org: String,
    /// Part of the repository name.
    #[serde(default)]
    q: String,
}

#[utoipa::path(get, path = "/api/v1/github/repos/search", params(SearchParams), responses((status = 200, body = RepoSearch)))]
pub async fn search_repos(
    State(s): State<AppState>,
    place: InWorkspace,
    ApiQuery(p): ApiQuery<SearchParams>,
) -> HttpResult<Json<RepoSearch>> {
    let (ws, settings) = workspace_settings(&s, &place).await?;
    if kandev_core::schema::is_blank(&p.org) {
        return Err(ServiceError::BadRequest("org is required".into()).into());
    }
    if p.org.chars().count() > 100 || p.q.chars().count() > 256 {
        return Err(ServiceError::Invalid("org or q is too long".into()).into());
    }
    let org = kandev_core::schema::trim_space(&p.org).to_string();
    tracing::info!(workspace_id = %ws, org = %org, q = %p.q, "repository search");
    let query = format!("user:{org} {} in:name", kandev_core::schema::trim_space(&p.q));
    let found = s.github.client().search_repositories(&query).await.map_err(upstream)?;
    let repos = found
        .items
        .into_iter()
        .filter(|r| settings.allows_repo(&r.owner.login, &r.name))
        .take(10)
        .map(|r| RepoHit {
            owner: r.owner.login,
            name: r.name,
            private: r.private,
        })
        .collect();
    Ok(Json(RepoSearch { repos }))
}

#[utoipa::path(get, path = "/api/v1/github/workspace-settings", params(WorkspaceParam), responses((status = 200, body = GithubWorkspaceSettings)))]
pub async fn get_settings(State(s): State<AppState>, place: InWorkspace) -> HttpResult<Json<GithubWorkspaceSettings>> {
    Ok(Json(workspace_settings(&s, &place).await?.1))
}

#[utoipa::path(put, path = "/api/v1/github/workspace-settings", params(WorkspaceParam), request_body = GithubWorkspaceSettings,
    responses((status = 200, body = GithubWorkspaceSettings), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn put_settings(
    State(s): State<AppState>,
    place: InWorkspace,
    ApiJson(body): ApiJson<GithubWorkspaceSettings>,
) -> HttpResult<Json<GithubWorkspaceSettings>> {
    let ws = place.workspace_id.clone();
    if !MERGE_METHODS.contains(&body.merge_method.as_str()) {
        return Err(ServiceError::Invalid(format!("merge_method must be one of {}", MERGE_METHODS.join(", "))).into());
    }
    if let Some(m) = body.ci_wait_timeout_minutes {
        kandev_core::bounds::ci_wait_minutes(m).map_err(|e| ServiceError::Invalid(e.0))?;
    }
    s.store.put_github_settings(&ws, &body).await?;
    Ok(Json(s.store.github_settings(&ws).await?))
}

#[utoipa::path(post, path = "/api/v1/github/webhook", responses((status = 202), (status = 200), (status = 401, body = kandev_core::api::ApiError)))]
pub async fn webhook(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResult<(StatusCode, Json<Value>)> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let delivery = Delivery {
        event: header("x-github-event"),
        delivery_id: header("x-github-delivery"),
        signature: header("x-hub-signature-256"),
        body: &body,
    };
    Ok(match s.github.receive(delivery).await? {
        DeliveryAck::Accepted(what) => (
            StatusCode::ACCEPTED,
            Json(json!({"status": "accepted", "detail": what})),
        ),
        DeliveryAck::Duplicate => (StatusCode::OK, Json(json!({"status": "duplicate"}))),
        DeliveryAck::Ignored(why) => (StatusCode::OK, Json(json!({"status": "ignored", "reason": why}))),
    })
}
