//! The API client: typed calls with the request and response types from
//! `kandev_core::api`, over `gloo-net`.

use gloo_net::http::{Request, RequestBuilder, Response};
use kandev_core::api::*;
// `index.html` preloads these addresses: build them from the same source.
use kandev_core::api::first_reads;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// An API failure, with the server's code and message when it sent them.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiFailure {
    pub status: u16,
    /// One of `kandev_core::api::ERROR_CODES`; empty when the request never
    /// got an answer.
    pub code: String,
    pub message: String,
}

/// What to show a person: the server's own words in English (they name the
/// field or rule), otherwise the code's message in the interface's language,
/// so the German interface never shows raw server English.
impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let english = leptos::prelude::GetUntracked::get_untracked(&crate::i18n::use_locale()).starts_with("en");
        if english || self.code.is_empty() {
            f.write_str(&self.message)
        } else {
            f.write_str(&crate::i18n::t(&format!("error-{}", self.code)))
        }
    }
}

pub type ApiResult<T> = Result<T, ApiFailure>;

fn transport(e: gloo_net::Error) -> ApiFailure {
    ApiFailure {
        status: 0,
        code: String::new(),
        message: e.to_string(),
    }
}

/// A 401 anywhere but on the sign-in form means the session ended: go sign in,
/// and come back here afterwards.
fn on_unauthenticated(url: &str) {
    if url.starts_with("/api/v1/auth/") {
        return;
    }
    let Some(window) = web_sys::window() else { return };
    let location = window.location();
    let here = location.pathname().unwrap_or_default();
    if here.starts_with("/login") {
        return;
    }
    let search = location.search().unwrap_or_default();
    let next = enc(&format!("{here}{search}"));
    let _ = location.set_href(&format!("/login?next={next}"));
}

/// A response's status and body text, or its failure. Not generic: one copy
/// of the reading code serves every type (the bundle's size is a feature).
async fn body(resp: Response) -> ApiResult<(u16, String)> {
    let status = resp.status();
    if status == 401 {
        on_unauthenticated(&resp.url().replace(&origin(), ""));
    }
    let text = resp.text().await.map_err(transport)?;
    if resp.ok() {
        // No body: 204, and the 202 of work queued for later.
        let text = if status == 204 || status == 202 {
            String::new()
        } else {
            text
        };
        return Ok((status, text));
    }
    let (code, message) = match serde_json::from_str::<ApiError>(&text) {
        Ok(e) => (e.error.code, e.error.message),
        Err(_) => (String::new(), format!("HTTP {status}")),
    };
    Err(ApiFailure { status, code, message })
}

/// The one deserialisation path (`from_str`), so each type's decoder is
/// instantiated once.
fn parse<T: DeserializeOwned>(status: u16, text: &str) -> ApiResult<T> {
    let text = if text.trim().is_empty() { "null" } else { text };
    serde_json::from_str(text).map_err(|e| ApiFailure {
        status,
        code: String::new(),
        message: e.to_string(),
    })
}

async fn send_raw(req: RequestBuilder) -> ApiResult<(u16, String)> {
    body(req.send().await.map_err(transport)?).await
}

async fn send<T: DeserializeOwned>(req: RequestBuilder) -> ApiResult<T> {
    let (status, text) = body(req.send().await.map_err(transport)?).await?;
    parse(status, &text)
}

async fn send_json<B: Serialize, T: DeserializeOwned>(req: RequestBuilder, payload: &B) -> ApiResult<T> {
    let json = serde_json::to_string(payload).map_err(|e| ApiFailure {
        status: 0,
        code: String::new(),
        message: e.to_string(),
    })?;
    let req = req
        .header("content-type", "application/json")
        .body(json)
        .map_err(transport)?;
    let (status, text) = body(req.send().await.map_err(transport)?).await?;
    parse(status, &text)
}

fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

pub fn enc(s: &str) -> String {
    js_sys::encode_uri_component(s).as_string().unwrap_or_default()
}

pub async fn get<T: DeserializeOwned>(path: &str) -> ApiResult<T> {
    send(Request::get(path)).await
}

pub async fn post<B: Serialize, T: DeserializeOwned>(path: &str, body: &B) -> ApiResult<T> {
    send_json(Request::post(path), body).await
}

pub async fn patch<B: Serialize, T: DeserializeOwned>(path: &str, body: &B) -> ApiResult<T> {
    send_json(Request::patch(path), body).await
}

pub async fn delete(path: &str) -> ApiResult<()> {
    send_raw(Request::delete(path)).await.map(|_| ())
}

pub async fn put<B: Serialize, T: DeserializeOwned>(path: &str, body: &B) -> ApiResult<T> {
    send_json(Request::put(path), body).await
}

// --- typed helpers ---

pub async fn workspaces() -> ApiResult<Vec<Workspace>> {
    get(first_reads::WORKSPACES).await
}

pub async fn repositories(ws: &str) -> ApiResult<Vec<Repository>> {
    get(&first_reads::repositories(ws)).await
}

pub async fn tasks(ws: &str, archived: bool) -> ApiResult<Vec<Task>> {
    get(&first_reads::tasks(ws, archived)).await
}

/// Every PR link of the tasks the board shows, in one request.
pub async fn board_prs(ws: &str, archived: bool) -> ApiResult<Vec<TaskPr>> {
    get(&first_reads::board_prs(ws, archived)).await
}

pub async fn task_prs(task: &str) -> ApiResult<Vec<TaskPr>> {
    get(&first_reads::task_prs(task)).await
}

pub async fn automations(ws: &str) -> ApiResult<Vec<Automation>> {
    get(&format!("/api/v1/workspaces/{ws}/automations")).await
}

pub async fn automation(id: &str) -> ApiResult<Automation> {
    get(&first_reads::automation(id)).await
}

pub async fn runs(id: &str) -> ApiResult<Vec<Run>> {
    get(&first_reads::automation_runs(id)).await
}

/// The automations home's feed: newest runs across the caller's workspaces.
pub async fn all_runs() -> ApiResult<Vec<Run>> {
    get("/api/v1/automation-runs?limit=100").await
}

/// The automations home's agenda: upcoming scheduled runs.
pub async fn agenda() -> ApiResult<Vec<AgendaEntry>> {
    get("/api/v1/automation-agenda?limit=20").await
}

pub async fn evaluations(id: &str) -> ApiResult<Vec<Evaluation>> {
    get(&first_reads::evaluations(id)).await
}

pub async fn me() -> ApiResult<Me> {
    get(first_reads::ME).await
}

pub async fn agent_profiles() -> ApiResult<Vec<AgentProfileInfo>> {
    get("/api/v1/agent-profiles").await
}

pub async fn sessions(task: &str) -> ApiResult<Vec<Session>> {
    get(&first_reads::sessions(task)).await
}

pub async fn messages(session: &str) -> ApiResult<Vec<TranscriptMessage>> {
    get(&format!("/api/v1/sessions/{session}/messages")).await
}

pub async fn github_settings(ws: &str) -> ApiResult<GithubWorkspaceSettings> {
    get(&format!("/api/v1/github/workspace-settings?workspace_id={}", enc(ws))).await
}

pub async fn orgs(ws: &str) -> ApiResult<Orgs> {
    get(&format!("/api/v1/github/orgs?workspace_id={}", enc(ws))).await
}

pub async fn search_repos(ws: &str, org: &str, q: &str) -> ApiResult<RepoSearch> {
    get(&format!(
        "/api/v1/github/repos/search?workspace_id={}&org={}&q={}",
        enc(ws),
        enc(org),
        enc(q)
    ))
    .await
}

pub async fn merged_prs(ws: &str) -> ApiResult<Vec<TaskPrPreview>> {
    get(&format!("/api/v1/workspaces/{ws}/task-prs?state=merged&limit=10")).await
}

/// The next runs of a schedule, by the server's scheduler rule.
pub async fn schedule_preview(expr: &str, zone: &str) -> ApiResult<SchedulePreview> {
    get(&format!(
        "/api/v1/automation-schedule-preview?cron_expression={}&timezone={}&count=3",
        enc(expr),
        enc(zone)
    ))
    .await
}

/// Imports a YAML document of automations (`dry_run`: only the diff).
pub async fn import_automations(
    ws: &str,
    yaml: String,
    dry_run: bool,
) -> ApiResult<kandev_core::portable::ImportResult> {
    let req = Request::post(&format!("/api/v1/workspaces/{ws}/automations/import?dry_run={dry_run}"))
        .header("content-type", "application/yaml")
        .body(yaml)
        .map_err(transport)?;
    let (status, text) = body(req.send().await.map_err(transport)?).await?;
    parse(status, &text)
}
