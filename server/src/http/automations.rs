//! Automations, their triggers, runs, evaluations, the registry and the
//! inbound webhook.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use kandev_core::api::{
    AgendaEntry, Automation, CreateAutomation, CreatedAutomation, Evaluation, ManualRunResult, NewTrigger,
    PatchAutomation, PatchTrigger, Run, SchedulePreview, Trigger, TriggerTypeInfo, WebhookResult, WebhookSecret,
};
use kandev_core::registry::registry;
use kandev_core::webhook::MAX_BODY_BYTES;
use serde::Deserialize;

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::{ApiRoutes, AppState};
use crate::access::Caller;
use crate::automation::WebhookHeaders;
use crate::error::ServiceError;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .get("/api/v1/automation-trigger-types", trigger_types)
        .get("/api/v1/automation-schedule-preview", schedule_preview)
        .get("/api/v1/workspaces/{ws}/automations", list)
        .post("/api/v1/workspaces/{ws}/automations", create)
        .get("/api/v1/workspaces/{ws}/automation-runs", workspace_runs)
        .get("/api/v1/automation-runs", all_runs)
        .get("/api/v1/automation-agenda", agenda)
        .get("/api/v1/automations/{id}", show)
        .patch("/api/v1/automations/{id}", patch)
        .delete("/api/v1/automations/{id}", delete)
        .post("/api/v1/automations/{id}/triggers", add_trigger)
        .patch("/api/v1/automation-triggers/{id}", patch_trigger)
        .delete("/api/v1/automation-triggers/{id}", delete_trigger)
        .post("/api/v1/automations/{id}/run", run_now)
        .get("/api/v1/automations/{id}/runs", runs)
        .delete("/api/v1/automations/{id}/runs", delete_runs)
        .delete("/api/v1/automation-runs/{id}", delete_run)
        .get("/api/v1/automations/{id}/evaluations", evaluations)
        .get("/api/v1/automations/{id}/webhook-secret", webhook_secret)
        .post("/api/v1/automations/{id}/webhook-secret/rotate", rotate_webhook_secret)
        .with(
            "/api/v1/automations/webhook/{id}",
            &["POST"],
            // Read one byte past the limit so an oversized body is refused, never cut.
            post(webhook).layer(DefaultBodyLimit::max(MAX_BODY_BYTES + 1)),
        )
        .merge(super::portable::routes())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LimitParams {
    /// How many, newest first (1–500; default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

impl LimitParams {
    pub fn limit(&self) -> Result<i64, ServiceError> {
        kandev_core::bounds::limit(self.limit, 50).map_err(|e| ServiceError::Invalid(e.0))
    }
}

#[utoipa::path(get, path = "/api/v1/automation-trigger-types", responses((status = 200, body = [TriggerTypeInfo])))]
pub async fn trigger_types() -> Json<Vec<TriggerTypeInfo>> {
    Json(registry())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScheduleParams {
    /// The expression as the scheduled trigger would store it.
    pub cron_expression: String,
    /// An IANA zone; empty means UTC.
    #[serde(default)]
    pub timezone: String,
    /// How many runs (1–20; default 3).
    #[param(minimum = 1, maximum = 20)]
    pub count: Option<i64>,
}

/// The editor asks here rather than carrying the zone database to the browser.
#[utoipa::path(get, path = "/api/v1/automation-schedule-preview", params(ScheduleParams),
    responses((status = 200, body = SchedulePreview), (status = 422, description = "count out of range", body = kandev_core::api::ApiError)))]
pub async fn schedule_preview(
    State(s): State<AppState>,
    ApiQuery(p): ApiQuery<ScheduleParams>,
) -> HttpResult<Json<SchedulePreview>> {
    let count = kandev_core::bounds::preview_runs(p.count).map_err(|e| ServiceError::Invalid(e.0))?;
    // The request is fine even when the schedule is not: the preview says why.
    Ok(Json(
        match kandev_core::cron::preview(&p.cron_expression, &p.timezone, s.clock.now(), count) {
            Ok(runs) => SchedulePreview { runs, error: None },
            Err(e) => SchedulePreview {
                runs: vec![],
                error: Some(format!("invalid schedule: {e}")),
            },
        },
    ))
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/automations", params(("ws" = String, Path)), responses((status = 200, body = [Automation])))]
pub async fn list(State(s): State<AppState>, ApiPath(ws): ApiPath<String>) -> HttpResult<Json<Vec<Automation>>> {
    Ok(Json(s.automation.list(&ws).await?))
}

#[utoipa::path(post, path = "/api/v1/workspaces/{ws}/automations", params(("ws" = String, Path)), request_body = CreateAutomation,
    responses((status = 201, body = CreatedAutomation), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiJson(req): ApiJson<CreateAutomation>,
) -> HttpResult<(StatusCode, Json<CreatedAutomation>)> {
    Ok((StatusCode::CREATED, Json(s.automation.create(&ws, req).await?)))
}

#[utoipa::path(get, path = "/api/v1/automations/{id}", params(("id" = String, Path)), responses((status = 200, body = Automation)))]
pub async fn show(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<Automation>> {
    Ok(Json(s.automation.get(&id).await?))
}

#[utoipa::path(patch, path = "/api/v1/automations/{id}", params(("id" = String, Path)), request_body = PatchAutomation,
    responses((status = 200, body = Automation), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn patch(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<PatchAutomation>,
) -> HttpResult<Json<Automation>> {
    Ok(Json(s.automation.patch(&id, req).await?))
}

#[utoipa::path(delete, path = "/api/v1/automations/{id}", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    s.automation.delete(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/automations/{id}/triggers", params(("id" = String, Path)), request_body = NewTrigger,
    responses((status = 201, body = Trigger), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn add_trigger(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<NewTrigger>,
) -> HttpResult<(StatusCode, Json<Trigger>)> {
    Ok((StatusCode::CREATED, Json(s.automation.add_trigger(&id, req).await?)))
}

#[utoipa::path(patch, path = "/api/v1/automation-triggers/{id}", params(("id" = String, Path)), request_body = PatchTrigger,
    responses((status = 200, body = Trigger)))]
pub async fn patch_trigger(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<PatchTrigger>,
) -> HttpResult<Json<Trigger>> {
    Ok(Json(s.automation.patch_trigger(&id, req).await?))
}

#[utoipa::path(delete, path = "/api/v1/automation-triggers/{id}", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete_trigger(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    s.automation.delete_trigger(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/automations/{id}/run", params(("id" = String, Path)), responses((status = 200, body = ManualRunResult)))]
pub async fn run_now(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<Json<ManualRunResult>> {
    Ok(Json(s.automation.run_manually(&id).await?))
}

#[utoipa::path(get, path = "/api/v1/automations/{id}/runs", params(("id" = String, Path), LimitParams), responses((status = 200, body = [Run])))]
pub async fn runs(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(p): ApiQuery<LimitParams>,
) -> HttpResult<Json<Vec<Run>>> {
    Ok(Json(s.automation.runs(&id, p.limit()?).await?))
}

#[utoipa::path(delete, path = "/api/v1/automations/{id}/runs", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete_runs(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    s.automation.delete_runs(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/automation-runs", params(("ws" = String, Path), LimitParams), responses((status = 200, body = [Run])))]
pub async fn workspace_runs(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiQuery(p): ApiQuery<LimitParams>,
) -> HttpResult<Json<Vec<Run>>> {
    Ok(Json(s.automation.workspace_runs(&ws, p.limit()?).await?))
}

/// The ids of the workspaces the caller may read.
async fn readable(s: &AppState, caller: &Caller) -> Result<Vec<String>, ServiceError> {
    Ok(s.access.workspaces(caller).await?.into_iter().map(|w| w.id).collect())
}

/// The automations home's feed: the newest runs across the caller's workspaces.
#[utoipa::path(get, path = "/api/v1/automation-runs", params(LimitParams), responses((status = 200, body = [Run])))]
pub async fn all_runs(
    State(s): State<AppState>,
    caller: Caller,
    ApiQuery(p): ApiQuery<LimitParams>,
) -> HttpResult<Json<Vec<Run>>> {
    let limit = p.limit()?;
    Ok(Json(s.automation.feed(&readable(&s, &caller).await?, limit).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AgendaParams {
    /// How many upcoming runs, soonest first (1–100; default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// The automations home's agenda: upcoming scheduled runs across the
/// caller's workspaces, by the scheduler's own rule.
#[utoipa::path(get, path = "/api/v1/automation-agenda", params(AgendaParams),
    responses((status = 200, body = [AgendaEntry]), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn agenda(
    State(s): State<AppState>,
    caller: Caller,
    ApiQuery(p): ApiQuery<AgendaParams>,
) -> HttpResult<Json<Vec<AgendaEntry>>> {
    let limit = kandev_core::bounds::agenda_limit(p.limit).map_err(|e| ServiceError::Invalid(e.0))?;
    Ok(Json(s.automation.agenda(&readable(&s, &caller).await?, limit).await?))
}

#[utoipa::path(delete, path = "/api/v1/automation-runs/{id}", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete_run(State(s): State<AppState>, ApiPath(id): ApiPath<String>) -> HttpResult<StatusCode> {
    s.automation.delete_run(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/v1/automations/{id}/evaluations", params(("id" = String, Path), LimitParams),
    responses((status = 200, body = [Evaluation])))]
pub async fn evaluations(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(p): ApiQuery<LimitParams>,
) -> HttpResult<Json<Vec<Evaluation>>> {
    Ok(Json(s.automation.evaluations(&id, p.limit()?).await?))
}

#[utoipa::path(get, path = "/api/v1/automations/{id}/webhook-secret", params(("id" = String, Path)), responses((status = 200, body = WebhookSecret)))]
pub async fn webhook_secret(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<Json<WebhookSecret>> {
    Ok(Json(WebhookSecret {
        webhook_secret: s.automation.webhook_secret(&id).await?,
    }))
}

#[utoipa::path(post, path = "/api/v1/automations/{id}/webhook-secret/rotate", params(("id" = String, Path)), responses((status = 200, body = WebhookSecret)))]
pub async fn rotate_webhook_secret(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<Json<WebhookSecret>> {
    Ok(Json(WebhookSecret {
        webhook_secret: s.automation.rotate_webhook_secret(&id).await?,
    }))
}

#[utoipa::path(post, path = "/api/v1/automations/webhook/{id}", params(("id" = String, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "names the delivery: one run per name, however often it is sent (else X-GitHub-Delivery)")),
    responses((status = 202, body = WebhookResult), (status = 200, body = WebhookResult), (status = 400, body = kandev_core::api::ApiError), (status = 401, body = kandev_core::api::ApiError),
        (status = 413, body = kandev_core::api::ApiError)))]
pub async fn webhook(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResult<(StatusCode, Json<WebhookResult>)> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let raw = |name: &str| headers.get(name).map(|v| v.as_bytes());
    let auth = WebhookHeaders {
        secret: header("x-webhook-secret"),
        signature: header("x-hub-signature-256"),
        idempotency_key: raw("idempotency-key"),
        github_delivery: raw("x-github-delivery"),
    };
    let (triggered, result) = s.automation.receive_webhook(&id, auth, &body).await?;
    let status = if triggered {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(result)))
}
