//! Tasks on the board: CRUD, moves, archive, comments, events, review,
//! approve and reject.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use kandev_core::api::{
    ApproveRequest, ApproveResponse, ArchiveResult, Comment, CreateComment, CreateTask, PatchTask, RejectRequest,
    ReviewRequest, Task, TaskEvent,
};
use serde::Deserialize;

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath, ApiQuery, optional_json};
use super::guard::InWorkspace;
use super::{ApiRoutes, AppState};
use crate::access::Caller;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/workspaces/{ws}/tasks", list)
        .post("/api/v1/workspaces/{ws}/tasks", create)
        .get("/api/v1/tasks/{id}", show)
        .patch("/api/v1/tasks/{id}", patch)
        .delete("/api/v1/tasks/{id}", delete)
        .post("/api/v1/tasks/{id}/archive", archive)
        .post("/api/v1/tasks/{id}/unarchive", unarchive)
        .get("/api/v1/tasks/{id}/comments", comments)
        .post("/api/v1/tasks/{id}/comments", add_comment)
        .get("/api/v1/tasks/{id}/events", events)
        .post("/api/v1/tasks/{id}/review", review)
        .post("/api/v1/tasks/{id}/approve", approve)
        .post("/api/v1/tasks/{id}/reject", reject)
        .post("/api/v1/tasks/{id}/cancel-merge", cancel_merge)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    #[serde(default)]
    include_archived: bool,
    #[serde(default)]
    include_runs: bool,
}

#[utoipa::path(post, path = "/api/v1/workspaces/{ws}/tasks", params(("ws" = String, Path)), request_body = CreateTask,
    responses((status = 201, body = Task), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(ws): ApiPath<String>,
    ApiJson(req): ApiJson<CreateTask>,
) -> HttpResult<(StatusCode, Json<Task>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.board.create(&ws, req, &caller.actor()).await?),
    ))
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/tasks", params(("ws" = String, Path), ListParams),
    responses((status = 200, body = [Task])))]
pub async fn list(
    State(s): State<AppState>,
    place: InWorkspace,
    headers: axum::http::HeaderMap,
    ApiQuery(p): ApiQuery<ListParams>,
) -> HttpResult<axum::response::Response> {
    use axum::http::header;
    use axum::response::IntoResponse;
    let body = s
        .board
        .list_json(
            &place.workspace_id,
            place.board_version,
            p.include_archived,
            p.include_runs,
        )
        .await?;
    // The kept gzip form; the compression layer leaves an encoded body alone.
    if super::embedded::accepts(&headers, "gzip") {
        let headers = [
            (header::CONTENT_TYPE, "application/json"),
            (header::CONTENT_ENCODING, "gzip"),
            (header::VARY, "accept-encoding"),
        ];
        return Ok((headers, body.gzip().await).into_response());
    }
    Ok(([(header::CONTENT_TYPE, "application/json")], body.plain).into_response())
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}", params(("id" = String, Path)), responses((status = 200, body = Task)))]
pub async fn show(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Task>> {
    Ok(Json(s.board.get(&id).await?))
}

#[utoipa::path(patch, path = "/api/v1/tasks/{id}", params(("id" = String, Path)), request_body = PatchTask,
    responses((status = 200, body = Task), (status = 409, body = kandev_core::api::ApiError)))]
pub async fn patch(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<PatchTask>,
) -> HttpResult<Json<Task>> {
    Ok(Json(s.board.patch(&id, req, &caller.actor()).await?))
}

#[utoipa::path(delete, path = "/api/v1/tasks/{id}", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    s.board.delete(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/archive", params(("id" = String, Path)), responses((status = 200, body = ArchiveResult)))]
pub async fn archive(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<Json<ArchiveResult>> {
    Ok(Json(s.board.archive(&id, &caller.actor()).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/unarchive", params(("id" = String, Path)), responses((status = 200, body = Task)))]
pub async fn unarchive(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<Json<Task>> {
    Ok(Json(s.board.unarchive(&id, &caller.actor()).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/comments", params(("id" = String, Path)), request_body = CreateComment,
    responses((status = 201, body = Comment)))]
pub async fn add_comment(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<CreateComment>,
) -> HttpResult<(StatusCode, Json<Comment>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.board.add_comment(&id, &req.body, &caller.actor()).await?),
    ))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}/comments", params(("id" = String, Path)), responses((status = 200, body = [Comment])))]
pub async fn comments(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Vec<Comment>>> {
    Ok(Json(s.board.comments(&id).await?))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}/events", params(("id" = String, Path)), responses((status = 200, body = [TaskEvent])))]
pub async fn events(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Vec<TaskEvent>>> {
    Ok(Json(s.board.events(&id).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/review", params(("id" = String, Path)), request_body = ReviewRequest,
    responses((status = 200, body = Task), (status = 409, body = kandev_core::api::ApiError), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn review(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<ReviewRequest>,
) -> HttpResult<Json<Task>> {
    Ok(Json(s.board.request_review(&id, req, &caller.actor()).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/approve", params(("id" = String, Path)), request_body = ApproveRequest,
    responses((status = 200, body = ApproveResponse), (status = 409, body = kandev_core::api::ApiError)))]
pub async fn approve(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    body: axum::body::Bytes,
) -> HttpResult<Json<ApproveResponse>> {
    let req: ApproveRequest = optional_json(&body)?;
    Ok(Json(s.board.approve(&id, req, &caller.actor()).await?))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/reject", params(("id" = String, Path)), request_body = RejectRequest,
    responses((status = 200, body = Task), (status = 409, body = kandev_core::api::ApiError)))]
pub async fn reject(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<RejectRequest>,
) -> HttpResult<Json<Task>> {
    Ok(Json(s.board.reject(&id, req, &caller.actor()).await?))
}

/// Stops the merger's work on an approved task and returns it to human
/// review; the pull request is left as it is.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/cancel-merge", params(("id" = String, Path)),
    responses((status = 200, body = Task)))]
pub async fn cancel_merge(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<Json<Task>> {
    Ok(Json(s.board.cancel_merge(&id, &caller.actor()).await?))
}
