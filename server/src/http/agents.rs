//! Agent profiles, sessions and transcripts.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use kandev_core::api::{AgentProfileInfo, CreateAgentProfile, PatchAgentProfile, Session, TranscriptMessage};
use kandev_core::executors::Executor;

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath};
use super::{ApiRoutes, AppState};
use crate::agent::profiles;
use crate::error::ServiceError;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/agent-profiles", list)
        .post("/api/v1/agent-profiles", create)
        .patch("/api/v1/agent-profiles/{id}", update)
        .delete("/api/v1/agent-profiles/{id}", delete)
        .get("/api/v1/executors", executors)
        .get("/api/v1/tasks/{id}/sessions", sessions)
        .get("/api/v1/sessions/{id}/messages", messages)
        .post("/api/v1/sessions/{id}/prompt", reply)
}

/// Profiles with their environment's keys; the values (often secrets) never leave the server.
#[utoipa::path(get, path = "/api/v1/agent-profiles", responses((status = 200, body = [AgentProfileInfo])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<AgentProfileInfo>>> {
    let all = profiles::list(&s.store).await?;
    Ok(Json(all.iter().map(AgentProfileInfo::from).collect()))
}

/// The executors this server runs agents with; an automation names one or none.
#[utoipa::path(get, path = "/api/v1/executors", responses((status = 200, body = [Executor])))]
pub async fn executors() -> Json<Vec<Executor>> {
    Json(kandev_core::executors::known())
}

#[utoipa::path(post, path = "/api/v1/agent-profiles", request_body = CreateAgentProfile,
    responses((status = 201, body = AgentProfileInfo)))]
pub async fn create(
    State(s): State<AppState>,
    ApiJson(req): ApiJson<CreateAgentProfile>,
) -> HttpResult<(StatusCode, Json<AgentProfileInfo>)> {
    let p = profiles::create(&s.store, req, s.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(AgentProfileInfo::from(&p))))
}

#[utoipa::path(patch, path = "/api/v1/agent-profiles/{id}", params(("id" = String, Path)), request_body = PatchAgentProfile,
    responses((status = 200, body = AgentProfileInfo)))]
pub async fn update(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<PatchAgentProfile>,
) -> HttpResult<Json<AgentProfileInfo>> {
    let p = profiles::update(&s.store, &id, req).await?;
    Ok(Json(AgentProfileInfo::from(&p)))
}

#[utoipa::path(delete, path = "/api/v1/agent-profiles/{id}", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    profiles::delete(&s.store, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}/sessions", params(("id" = String, Path)), responses((status = 200, body = [Session])))]
pub async fn sessions(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Vec<Session>>> {
    Ok(Json(s.store.list_sessions(&id).await?))
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/messages", params(("id" = String, Path)), responses((status = 200, body = [TranscriptMessage])))]
pub async fn messages(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<Json<Vec<TranscriptMessage>>> {
    Ok(Json(s.store.list_messages(&id).await?))
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyRequest {
    /// The follow-up prompt.
    pub text: String,
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/prompt", params(("id" = String, Path)), request_body = ReplyRequest,
    responses((status = 202)))]
pub async fn reply(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<ReplyRequest>,
) -> HttpResult<StatusCode> {
    if kandev_core::schema::is_blank(&req.text) {
        return Err(ServiceError::Invalid("text is required".into()).into());
    }
    kandev_core::bounds::text("text", &req.text).map_err(|e| ServiceError::Invalid(e.0))?;
    s.runtime.reply(&id, &req.text).await?;
    Ok(StatusCode::ACCEPTED)
}
