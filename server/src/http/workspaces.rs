//! Workspaces and their repositories.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use kandev_core::api::{CreateRepository, CreateWorkspace, Repository, UpdateRepository, Workspace};

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath};
use super::{ApiRoutes, AppState};
use crate::access::Caller;
use crate::error::ServiceError;
use kandev_core::schema::is_repo_segment;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/workspaces", list)
        .post("/api/v1/workspaces", create)
        .get("/api/v1/workspaces/{ws}", show)
        .get("/api/v1/workspaces/{ws}/repositories", list_repositories)
        .post("/api/v1/workspaces/{ws}/repositories", create_repository)
        .patch("/api/v1/workspaces/{ws}/repositories/{id}", update_repository)
}

#[utoipa::path(post, path = "/api/v1/workspaces", request_body = CreateWorkspace,
    responses((status = 201, body = Workspace), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<CreateWorkspace>,
) -> HttpResult<(StatusCode, Json<Workspace>)> {
    let name = kandev_core::bounds::required_name("name", &req.name).map_err(|e| ServiceError::Invalid(e.0))?;
    // The creator owns it; the admin token is nobody, so its workspaces start without members.
    let w = s
        .store
        .create_workspace(name, caller.user_id.as_deref(), s.clock.now())
        .await?;
    Ok((StatusCode::CREATED, Json(w)))
}

#[utoipa::path(get, path = "/api/v1/workspaces", responses((status = 200, body = [Workspace])))]
/// The caller's workspaces only.
pub async fn list(State(s): State<AppState>, caller: Caller) -> HttpResult<Json<Vec<Workspace>>> {
    let mine: std::collections::HashSet<String> =
        s.access.workspaces(&caller).await?.into_iter().map(|w| w.id).collect();
    let all = s.store.list_workspaces().await?;
    Ok(Json(all.into_iter().filter(|w| mine.contains(&w.id)).collect()))
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}", params(("ws" = String, Path)),
    responses((status = 200, body = Workspace), (status = 404, body = kandev_core::api::ApiError)))]
pub async fn show(State(s): State<AppState>, ApiPath(ws): ApiPath<String>) -> HttpResult<Json<Workspace>> {
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
    ApiPath(ws): ApiPath<String>,
    ApiJson(req): ApiJson<CreateRepository>,
) -> HttpResult<(StatusCode, Json<Repository>)> {
    let (owner, name) = (req.owner.as_str(), req.name.as_str());
    // Identifiers, taken as given (`kandev_core::schema::REPO_SEGMENT`).
    if !is_repo_segment(owner) || !is_repo_segment(name) {
        return Err(ServiceError::Invalid(
            "owner and name are 1 to 100 of letters, digits, '-', '_' and '.' (not only dots)".into(),
        )
        .into());
    }
    if let Some(m) = req.ci_wait_timeout_minutes {
        kandev_core::bounds::ci_wait_minutes(m).map_err(|e| ServiceError::Invalid(e.0))?;
    }
    for (field, value) in [
        ("default_branch", req.default_branch.as_deref()),
        ("provider", req.provider.as_deref()),
        ("local_path", req.local_path.as_deref()),
    ] {
        kandev_core::bounds::name(field, value.unwrap_or_default()).map_err(|e| ServiceError::Invalid(e.0))?;
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
        ci_wait_timeout_minutes: req.ci_wait_timeout_minutes,
    };
    let created = s.store.create_repository(&repo, s.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(patch, path = "/api/v1/workspaces/{ws}/repositories/{id}", params(("ws" = String, Path), ("id" = String, Path)),
    request_body = UpdateRepository,
    responses((status = 200, body = Repository), (status = 404, body = kandev_core::api::ApiError), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn update_repository(
    State(s): State<AppState>,
    ApiPath((ws, id)): ApiPath<(String, String)>,
    ApiJson(req): ApiJson<UpdateRepository>,
) -> HttpResult<Json<Repository>> {
    let Some(minutes) = req.ci_wait_timeout_minutes else {
        return Ok(Json(s.store.repository_in(&ws, &id).await?));
    };
    if let Some(m) = minutes {
        kandev_core::bounds::ci_wait_minutes(m).map_err(|e| ServiceError::Invalid(e.0))?;
    }
    Ok(Json(s.store.set_repository_ci_wait(&ws, &id, minutes).await?))
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/repositories", params(("ws" = String, Path)),
    responses((status = 200, body = [Repository])))]
pub async fn list_repositories(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
) -> HttpResult<Json<Vec<Repository>>> {
    Ok(Json(s.store.list_repositories(&ws).await?))
}
