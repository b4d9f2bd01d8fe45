//! `/workspaces/{ws}/notification-targets` and `…/notification-deliveries`:
//! where a workspace's notifications go, a test send, and the delivery log.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use kandev_core::api::{CreateNotificationTarget, NotificationDelivery, NotificationTarget};

use super::automations::LimitParams;
use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::{ApiRoutes, AppState};
use crate::error::ServiceError;

const TARGETS: &str = "/api/v1/workspaces/{ws}/notification-targets";

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get(TARGETS, list_targets)
        .post(TARGETS, create_target)
        .delete("/api/v1/workspaces/{ws}/notification-targets/{id}", delete_target)
        .post("/api/v1/workspaces/{ws}/notification-targets/{id}/test", test_target)
        .get("/api/v1/workspaces/{ws}/notification-deliveries", deliveries)
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/notification-targets", params(("ws" = String, Path)),
    responses((status = 200, body = [NotificationTarget])))]
pub async fn list_targets(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
) -> HttpResult<Json<Vec<NotificationTarget>>> {
    Ok(Json(s.store.notification_targets(&ws).await?))
}

#[utoipa::path(post, path = "/api/v1/workspaces/{ws}/notification-targets", params(("ws" = String, Path)),
    request_body = CreateNotificationTarget,
    responses((status = 201, body = NotificationTarget), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create_target(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiJson(req): ApiJson<CreateNotificationTarget>,
) -> HttpResult<(StatusCode, Json<NotificationTarget>)> {
    let mut events = req.events.clone();
    events.dedup();
    kandev_core::notify::validate_target(&req.url, &events, req.secret.as_deref()).map_err(ServiceError::Invalid)?;
    // A literal internal address is refused now; a name is checked on each send.
    if !s.settings.notify_private_addresses
        && let Some(ip) = crate::notify::internal_literal(&req.url)
    {
        return Err(ServiceError::Invalid(format!(
            "url points at {ip}, a loopback, private or link-local address; notifications go to public addresses only"
        ))
        .into());
    }
    let secret = req.secret.unwrap_or_default();
    let t = s
        .store
        .create_notification_target(&ws, req.kind, &req.url, &events, &secret, s.clock.now())
        .await?;
    Ok((StatusCode::CREATED, Json(t)))
}

#[utoipa::path(delete, path = "/api/v1/workspaces/{ws}/notification-targets/{id}", params(("ws" = String, Path), ("id" = String, Path)),
    responses((status = 204), (status = 404, body = kandev_core::api::ApiError)))]
pub async fn delete_target(
    State(s): State<AppState>,
    ApiPath((ws, id)): ApiPath<(String, String)>,
) -> HttpResult<StatusCode> {
    s.store.delete_notification_target(&ws, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/workspaces/{ws}/notification-targets/{id}/test", params(("ws" = String, Path), ("id" = String, Path)),
    responses((status = 202), (status = 404, body = kandev_core::api::ApiError)))]
pub async fn test_target(
    State(s): State<AppState>,
    ApiPath((ws, id)): ApiPath<(String, String)>,
) -> HttpResult<StatusCode> {
    s.store.notification_target(&ws, &id).await?;
    s.store.enqueue_test(&ws, &id, s.clock.now()).await?;
    Ok(StatusCode::ACCEPTED)
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/notification-deliveries", params(("ws" = String, Path), LimitParams),
    responses((status = 200, body = [NotificationDelivery])))]
pub async fn deliveries(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiQuery(p): ApiQuery<LimitParams>,
) -> HttpResult<Json<Vec<NotificationDelivery>>> {
    Ok(Json(s.store.notification_deliveries(&ws, p.limit()?).await?))
}
