//! Linked pull requests, the repository-selector helpers, workspace GitHub
//! settings and GitHub webhook deliveries.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete as delete_route, get, post};
use axum::{Json, Router};
use kandev_core::api::{
    GithubWorkspaceSettings, LinkPrRequest, MERGE_METHODS, Org, Orgs, RepoHit, RepoSearch, TaskPr, TaskPrPreview,
};
use kandev_core::board::PrRef;
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::HttpResult;
use super::extract::{ApiJson, ApiQuery};
use crate::error::ServiceError;
use crate::github::{Delivery, DeliveryAck, GithubError};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/tasks/{id}/prs", get(list_prs).post(link_pr))
        .route("/api/v1/tasks/{id}/prs/refresh", post(refresh_prs))
        .route(
            "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}",
            delete_route(detach_pr),
        )
        .route(
            "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}/restore",
            post(restore_pr),
        )
        .route("/api/v1/workspaces/{ws}/task-prs", get(workspace_task_prs))
        .route("/api/v1/github/orgs", get(orgs))
        .route("/api/v1/github/repos/search", get(search_repos))
        .route("/api/v1/github/workspace-settings", get(get_settings).put(put_settings))
        .route("/api/v1/github/webhook", post(webhook))
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
    Path(id): Path<String>,
    ApiJson(req): ApiJson<LinkPrRequest>,
) -> HttpResult<(StatusCode, Json<TaskPr>)> {
    let task = s.board.get(&id).await?;
    let pr = crate::github::requested_pr(&req)?;
    Ok((StatusCode::CREATED, Json(s.github.associate(&task, &pr).await?)))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}/prs", params(("id" = String, Path)), responses((status = 200, body = [TaskPr])))]
pub async fn list_prs(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Vec<TaskPr>>> {
    Ok(Json(s.github.list(&id).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/prs/refresh", params(("id" = String, Path)), responses((status = 200, body = [TaskPr])))]
pub async fn refresh_prs(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Vec<TaskPr>>> {
    Ok(Json(s.github.refresh(&id).await?))
}

#[utoipa::path(delete, path = "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}",
    params(("id" = String, Path), ("owner" = String, Path), ("repo" = String, Path), ("number" = i64, Path)), responses((status = 204)))]
pub async fn detach_pr(
    State(s): State<AppState>,
    Path((id, owner, repo, number)): Path<(String, String, String, i64)>,
) -> HttpResult<StatusCode> {
    s.github.detach(&id, &PrRef::new(&owner, &repo, number)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/prs/{owner}/{repo}/{number}/restore",
    params(("id" = String, Path), ("owner" = String, Path), ("repo" = String, Path), ("number" = i64, Path)), responses((status = 200, body = TaskPr)))]
pub async fn restore_pr(
    State(s): State<AppState>,
    Path((id, owner, repo, number)): Path<(String, String, String, i64)>,
) -> HttpResult<Json<TaskPr>> {
    Ok(Json(s.github.restore(&id, &PrRef::new(&owner, &repo, number)).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct TaskPrParams {
    state: Option<String>,
    limit: Option<i64>,
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/task-prs", params(("ws" = String, Path), TaskPrParams),
    responses((status = 200, body = [TaskPrPreview])))]
pub async fn workspace_task_prs(
    State(s): State<AppState>,
    Path(ws): Path<String>,
    ApiQuery(p): ApiQuery<TaskPrParams>,
) -> HttpResult<Json<Vec<TaskPrPreview>>> {
    s.store
        .get_workspace(&ws)
        .await
        .map_err(ServiceError::not_found("workspace"))?;
    let limit = p.limit.unwrap_or(20).clamp(1, 100);
    Ok(Json(
        s.store
            .list_workspace_task_prs(&ws, p.state.as_deref().filter(|x| !x.is_empty()), limit)
            .await?,
    ))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct WorkspaceParam {
    workspace_id: Option<String>,
}

async fn workspace_settings(s: &AppState, ws: Option<&str>) -> Result<(String, GithubWorkspaceSettings), ServiceError> {
    let ws = ws
        .filter(|w| !w.is_empty())
        .ok_or_else(|| ServiceError::BadRequest("workspace_id is required".into()))?;
    s.store
        .get_workspace(ws)
        .await
        .map_err(ServiceError::not_found("workspace"))?;
    Ok((ws.to_string(), s.store.github_settings(ws).await?))
}

#[utoipa::path(get, path = "/api/v1/github/orgs", params(WorkspaceParam), responses((status = 200, body = Orgs)))]
pub async fn orgs(State(s): State<AppState>, ApiQuery(p): ApiQuery<WorkspaceParam>) -> HttpResult<Json<Orgs>> {
    let (_, settings) = workspace_settings(&s, p.workspace_id.as_deref()).await?;
    let orgs = s.github.client().user_orgs().await.map_err(upstream)?;
    let orgs = orgs
        .into_iter()
        .filter(|o| settings.allows_org(&o.login))
        .map(|o| Org { login: o.login })
        .collect();
    Ok(Json(Orgs { orgs }))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct SearchParams {
    workspace_id: Option<String>,
    org: Option<String>,
    #[serde(default)]
    q: String,
}

#[utoipa::path(get, path = "/api/v1/github/repos/search", params(SearchParams), responses((status = 200, body = RepoSearch)))]
pub async fn search_repos(
    State(s): State<AppState>,
    ApiQuery(p): ApiQuery<SearchParams>,
) -> HttpResult<Json<RepoSearch>> {
    let (ws, settings) = workspace_settings(&s, p.workspace_id.as_deref()).await?;
    let org = p
        .org
        .filter(|o| !o.trim().is_empty())
        .ok_or_else(|| ServiceError::BadRequest("org is required".into()))?;
    tracing::info!(workspace_id = %ws, org = %org, q = %p.q, "repository search");
    let query = format!("user:{} {} in:name", org.trim(), p.q.trim());
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
pub async fn get_settings(
    State(s): State<AppState>,
    ApiQuery(p): ApiQuery<WorkspaceParam>,
) -> HttpResult<Json<GithubWorkspaceSettings>> {
    Ok(Json(workspace_settings(&s, p.workspace_id.as_deref()).await?.1))
}

#[utoipa::path(put, path = "/api/v1/github/workspace-settings", params(WorkspaceParam), request_body = GithubWorkspaceSettings,
    responses((status = 200, body = GithubWorkspaceSettings), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn put_settings(
    State(s): State<AppState>,
    ApiQuery(p): ApiQuery<WorkspaceParam>,
    ApiJson(body): ApiJson<GithubWorkspaceSettings>,
) -> HttpResult<Json<GithubWorkspaceSettings>> {
    let (ws, _) = workspace_settings(&s, p.workspace_id.as_deref()).await?;
    if !MERGE_METHODS.contains(&body.merge_method.as_str()) {
        return Err(ServiceError::Invalid(format!("merge_method must be one of {}", MERGE_METHODS.join(", "))).into());
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
