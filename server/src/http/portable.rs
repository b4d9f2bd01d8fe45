//! Automations as YAML: export, and import with a dry-run diff.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use kandev_core::portable::{Document, ImportResult};
use serde::Deserialize;

use super::error::HttpResult;
use super::extract::{ApiPath, ApiQuery};
use super::{ApiRoutes, AppState};
use crate::error::ServiceError;

/// An import document's size limit.
pub const MAX_IMPORT_BYTES: usize = 1024 * 1024;

/// What every export starts with: what the file is and how to bring it back.
const PREAMBLE: &str = "# Kandev automations. Import with POST /api/v1/workspaces/{ws}/automations/import\n# (add ?dry_run=true to see the changes first). Webhook secrets are not included.\n";

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .with("/api/v1/workspaces/{ws}/automations/export", &["GET"], get(export))
        .with(
            "/api/v1/workspaces/{ws}/automations/import",
            &["POST"],
            // One byte past the limit, so an oversized document is refused, never cut.
            post(import).layer(DefaultBodyLimit::max(MAX_IMPORT_BYTES + 1)),
        )
}

#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/automations/export", params(("ws" = String, Path)),
    responses((status = 200, content_type = "application/yaml", body = String)))]
pub async fn export(State(s): State<AppState>, ApiPath(ws): ApiPath<String>) -> HttpResult<Response> {
    let doc = s.automation.export(&ws).await?;
    let yaml = yaml_serde::to_string(&doc).map_err(|e| ServiceError::Internal(format!("cannot write YAML: {e}")))?;
    let mut response = format!("{PREAMBLE}{yaml}").into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/yaml; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"kandev-automations.yaml\""),
    );
    Ok(response)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ImportParams {
    /// Report the changes without writing them.
    #[serde(default)]
    pub dry_run: bool,
}

/// Reads the document: YAML (JSON is YAML too), strict about unknown fields.
pub fn read_document(body: &[u8]) -> Result<Document, ServiceError> {
    if body.len() > MAX_IMPORT_BYTES {
        return Err(ServiceError::TooLarge(format!(
            "an import document is at most {MAX_IMPORT_BYTES} bytes"
        )));
    }
    let text = std::str::from_utf8(body).map_err(|_| ServiceError::Invalid("the document is not UTF-8 text".into()))?;
    yaml_serde::from_str(text).map_err(|e| ServiceError::Invalid(format!("not a Kandev automations document: {e}")))
}

#[utoipa::path(post, path = "/api/v1/workspaces/{ws}/automations/import", params(("ws" = String, Path), ImportParams),
    request_body(content = String, content_type = "application/yaml"),
    responses((status = 200, body = ImportResult), (status = 409, body = kandev_core::api::ApiError),
        (status = 413, body = kandev_core::api::ApiError), (status = 422, body = kandev_core::api::ApiError)))]
pub async fn import(
    State(s): State<AppState>,
    ApiPath(ws): ApiPath<String>,
    ApiQuery(p): ApiQuery<ImportParams>,
    body: Bytes,
) -> HttpResult<Json<ImportResult>> {
    let doc = read_document(&body)?;
    Ok(Json(s.automation.import(&ws, doc, p.dry_run).await?))
}
