//! Agent profiles, sessions and transcripts.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use kandev_core::api::{AgentProfile, CreateAgentProfile, Session, TranscriptMessage};

use super::AppState;
use super::error::HttpResult;
use super::extract::ApiJson;
use crate::agent::profiles;
use crate::error::ServiceError;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/agent-profiles", get(list).post(create))
        .route("/api/v1/tasks/{id}/sessions", get(sessions))
        .route("/api/v1/sessions/{id}/messages", get(messages))
        .route("/api/v1/sessions/{id}/prompt", axum::routing::post(reply))
}

#[utoipa::path(get, path = "/api/v1/agent-profiles", responses((status = 200, body = [AgentProfile])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<AgentProfile>>> {
    Ok(Json(profiles::list(&s.store).await?))
}

#[utoipa::path(post, path = "/api/v1/agent-profiles", request_body = CreateAgentProfile,
    responses((status = 201, body = AgentProfile), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    ApiJson(req): ApiJson<CreateAgentProfile>,
) -> HttpResult<(StatusCode, Json<AgentProfile>)> {
    Ok((
        StatusCode::CREATED,
        Json(profiles::create(&s.store, req, s.clock.now()).await?),
    ))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}/sessions", params(("id" = String, Path)), responses((status = 200, body = [Session])))]
pub async fn sessions(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Vec<Session>>> {
    s.board.get(&id).await?;
    Ok(Json(s.store.list_sessions(&id).await?))
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/messages", params(("id" = String, Path)), responses((status = 200, body = [TranscriptMessage])))]
pub async fn messages(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Vec<TranscriptMessage>>> {
    s.store
        .get_session(&id)
        .await
        .map_err(ServiceError::not_found("session"))?;
    Ok(Json(s.store.list_messages(&id).await?))
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct ReplyRequest {
    /// The follow-up prompt.
    pub text: String,
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/prompt", params(("id" = String, Path)), request_body = ReplyRequest,
    responses((status = 202), (status = 409, body = kandev_core::api::ApiError)))]
pub async fn reply(
    State(s): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ReplyRequest>,
) -> HttpResult<StatusCode> {
    if req.text.trim().is_empty() {
        return Err(ServiceError::Invalid("text is required".into()).into());
    }
    s.runtime.reply(&id, &req.text).await?;
    Ok(StatusCode::ACCEPTED)
}
