//! Users (instance admins only).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use kandev_core::api::{CreateUser, User};

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath};
use super::{ApiRoutes, AppState};
use crate::access::Caller;
use crate::access::bootstrap::add_user;
use crate::error::ServiceError;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/users", list)
        .post("/api/v1/users", create)
        .delete("/api/v1/users/{id}", delete)
}

#[utoipa::path(get, path = "/api/v1/users", responses((status = 200, body = [User])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<User>>> {
    Ok(Json(s.store.list_users().await?))
}

#[utoipa::path(post, path = "/api/v1/users", request_body = CreateUser, responses((status = 201, body = User)))]
pub async fn create(
    State(s): State<AppState>,
    ApiJson(req): ApiJson<CreateUser>,
) -> HttpResult<(StatusCode, Json<User>)> {
    let admin = req.admin.unwrap_or(false);
    let (user, _) = add_user(&s.store, &req.username, Some(&req.password), admin, s.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(user)))
}

/// Deletes a user with its tokens, sessions and memberships. Nobody deletes
/// their own account here (an admin could lock the instance out), nor the
/// only owner of a workspace (409, naming the workspaces).
#[utoipa::path(delete, path = "/api/v1/users/{id}", params(("id" = String, Path)),
    responses((status = 204), (status = 409, body = kandev_core::api::ApiError)))]
pub async fn delete(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    if caller.user_id.as_deref() == Some(id.as_str()) {
        return Err(ServiceError::Conflict("you cannot delete your own account".into()).into());
    }
    s.store
        .delete_user(&id)
        .await
        .map_err(ServiceError::not_found("user"))?;
    Ok(StatusCode::NO_CONTENT)
}
