//! Workspaces and their repositories.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use kandev_core::api::{CreateRepository, CreateWorkspace, Repository, Workspace};

use super::AppState;
use super::error::HttpResult;
use super::extract::ApiJson;
use crate::error::ServiceError;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/workspaces", get(list).post(create))
        .route("/api/v1/workspaces/{ws}", get(show))
        .route(
            "/api/v1/workspaces/{ws}/repositories",
            get(list_repositories).post(create_repository),
        )
}

#[utoipa::path(post, path = "/api/v1/workspaces", request_body = CreateWorkspace,
    responses((status = 201, body = Workspace), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    ApiJson(req): ApiJson<CreateWorkspace>,
) -> HttpResult<(StatusCode, Json<Workspace>)> {
    let name = req.name.trim();
    if name.is_empty() {
        return Err(ServiceError::Invalid("name is required".into()).into());
    }
    let w = s.store.create_workspace(name, s.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(w)))
}

#[utoipa::path(get, path = "/api/v1/workspaces", responses((status = 200, body = [Workspace])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<Workspace>>> {
    Ok(Json(s.store.list_workspaces().await?))
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}", params(("ws" = String, Path)),
    responses((status = 200, body = Workspace), (status = 404, body = kandev_core::api::ApiError)))]
pub async fn show(State(s): State<AppState>, Path(ws): Path<String>) -> HttpResult<Json<Workspace>> {
    Ok(Json(
        s.store
            .get_workspace(&ws)
            .await
            .map_err(ServiceError::not_found("workspace"))?,
    ))
}

#[utoipa::path(post, path = "/api/v1/workspaces/{ws}/repositories", params(("ws" = String, Path)), request_body = CreateRepository,
    responses((status = 201, body = Repository), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create_repository(
    State(s): State<AppState>,
    Path(ws): Path<String>,
    ApiJson(req): ApiJson<CreateRepository>,
) -> HttpResult<(StatusCode, Json<Repository>)> {
    s.store
        .get_workspace(&ws)
        .await
        .map_err(ServiceError::not_found("workspace"))?;
    let (owner, name) = (req.owner.trim(), req.name.trim());
    if owner.is_empty() || name.is_empty() {
        return Err(ServiceError::Invalid("owner and name are required".into()).into());
    }
    let valid = |v: &str| {
        v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !valid(owner) || !valid(name) {
        return Err(
            ServiceError::Invalid("owner and name may hold letters, digits, '-', '_' and '.' only".into()).into(),
        );
    }
    let repo = Repository {
        id: String::new(),
        workspace_id: ws,
        provider: req
            .provider
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| "github".into()),
        owner: owner.into(),
        name: name.into(),
        default_branch: req
            .default_branch
            .filter(|b| !b.trim().is_empty())
            .unwrap_or_else(|| "main".into()),
        local_path: req.local_path.unwrap_or_default(),
    };
    let created = s.store.create_repository(&repo, s.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/repositories", params(("ws" = String, Path)),
    responses((status = 200, body = [Repository])))]
pub async fn list_repositories(State(s): State<AppState>, Path(ws): Path<String>) -> HttpResult<Json<Vec<Repository>>> {
    s.store
        .get_workspace(&ws)
        .await
        .map_err(ServiceError::not_found("workspace"))?;
    Ok(Json(s.store.list_repositories(&ws).await?))
}
