//! Workspace members: who may see and change a workspace, and how much.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use kandev_core::api::{Member, PutMember};

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath};
use super::{ApiRoutes, AppState};
use crate::error::ServiceError;
use crate::store::StoreError;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/workspaces/{ws}/members", list)
        .put("/api/v1/workspaces/{ws}/members/{user_id}", put)
        .delete("/api/v1/workspaces/{ws}/members/{user_id}", remove)
}

fn member_error(e: StoreError) -> ServiceError {
    match e {
        StoreError::NotFound => ServiceError::NotFound("member not found".into()),
        other => other.into(),
    }
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/members", params(("ws" = String, Path)),
    responses((status = 200, body = [Member])))]
pub async fn list(State(s): State<AppState>, ApiPath(ws): ApiPath<String>) -> HttpResult<Json<Vec<Member>>> {
    Ok(Json(s.store.list_members(&ws).await?))
}

/// Adds a user to the workspace or changes its role (owners only). `user_id`
/// may also be a username, so an owner can add a person by name.
#[utoipa::path(put, path = "/api/v1/workspaces/{ws}/members/{user_id}",
    params(("ws" = String, Path), ("user_id" = String, Path, description = "a user id or a username")),
    request_body = PutMember, responses((status = 200, body = Member)))]
pub async fn put(
    State(s): State<AppState>,
    ApiPath((ws, user_id)): ApiPath<(String, String)>,
    ApiJson(req): ApiJson<PutMember>,
) -> HttpResult<Json<Member>> {
    let user = match s.store.get_user(&user_id).await {
        Ok(u) => Some(u),
        Err(StoreError::NotFound) => match kandev_core::access::normalise_username(&user_id) {
            Ok(name) => s.store.user_by_name(&name).await?,
            Err(_) => None,
        },
        Err(e) => return Err(e.into()),
    }
    .ok_or_else(|| ServiceError::Invalid(format!("no user {user_id}")))?;
    let user_id = user.user.id.clone();
    s.store
        .change_member(&ws, &user_id, Some(req.role), s.clock.now())
        .await
        .map_err(member_error)?;
    Ok(Json(Member {
        user_id,
        username: user.user.username,
        role: req.role,
    }))
}

/// Removes a member (owners only); the last owner cannot be removed.
#[utoipa::path(delete, path = "/api/v1/workspaces/{ws}/members/{user_id}", params(("ws" = String, Path), ("user_id" = String, Path)),
    responses((status = 204)))]
pub async fn remove(
    State(s): State<AppState>,
    ApiPath((ws, user_id)): ApiPath<(String, String)>,
) -> HttpResult<StatusCode> {
    s.store
        .change_member(&ws, &user_id, None, s.clock.now())
        .await
        .map_err(member_error)?;
    Ok(StatusCode::NO_CONTENT)
}
