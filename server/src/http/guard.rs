//! The access guard: one middleware in front of every route, so a new route
//! cannot forget it. It refuses foreign `Host`s (421), resolves the caller
//! (401 without one), checks `Origin` on cookie-authenticated changes (403
//! `csrf`), then asks `kandev_core::access` what the route needs: a resource
//! in a workspace the caller cannot see is the same 404 as a missing one; a
//! role too weak for the change is a 403.

use std::collections::HashMap;

use axum::extract::{MatchedPath, Query, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use kandev_core::access::{
    Level, Need, Role, Scope, Verdict, decide, host_allowed, methods_for, origin_allowed, route_need,
};
use kandev_core::api::SESSION_COOKIE;

use super::AppState;
use super::error::HttpError;
use crate::access::{Caller, Via};
use crate::error::{ServiceError, ServiceResult};
use crate::store::Place;

/// The workspace a guarded request acts in, and the caller's standing there.
#[derive(Debug, Clone)]
pub struct InWorkspace {
    pub workspace_id: String,
    pub role: Option<Role>,
    pub admin: bool,
    /// The workspace's board version, read with the admission: a board read
    /// needs no second look.
    pub board_version: i64,
}

/// Every request, routed or not: the `Host` must be a loopback name or the
/// public origin's host. `/healthz` is exempt so probes that address the pod
/// by IP keep working; it tells nothing a rebinding page could use.
pub async fn host_check(State(s): State<AppState>, req: Request, next: Next) -> Response {
    if req.uri().path() != "/healthz" && !host_allowed(request_host(&req), s.access.public()) {
        return HttpError(ServiceError::Misdirected(
            "this server does not answer for that host: set KANDEV_PUBLIC_URL to the address you use".into(),
        ))
        .into_response();
    }
    next.run(req).await
}

fn request_host(req: &Request) -> &str {
    req.headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default()
}

/// Every routed request.
pub async fn guard(State(s): State<AppState>, mut req: Request, next: Next) -> Response {
    if let Some(refusal) = method_not_allowed(&req) {
        return refusal;
    }
    match admit(&s, &mut req).await {
        Ok(()) => next.run(req).await,
        Err(e) => HttpError(e).into_response(),
    }
}

/// A known route asked with a method it does not serve: 405 with `Allow`,
/// before any credential is looked at (it reveals nothing).
fn method_not_allowed(req: &Request) -> Option<Response> {
    let template = req.extensions().get::<MatchedPath>()?.as_str();
    if route_need(req.method().as_str(), template).is_some() {
        return None;
    }
    let methods = methods_for(template);
    if methods.is_empty() || methods.contains(&"*") {
        return None;
    }
    let mut allow: Vec<&str> = methods.clone();
    if allow.contains(&"GET") {
        allow.push("HEAD");
    }
    let mut response = HttpError(ServiceError::MethodNotAllowed(format!(
        "{} is not served here; use {}",
        req.method(),
        allow.join(", ")
    )))
    .into_response();
    if let Ok(v) = axum::http::HeaderValue::from_str(&allow.join(", ")) {
        response.headers_mut().insert(header::ALLOW, v);
    }
    Some(response)
}

fn is_change(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The `Origin` check: a change whose credential a browser attaches on its
/// own (the session cookie) must come from this server's own pages.
fn check_origin(s: &AppState, headers: &HeaderMap, required: bool) -> ServiceResult<()> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        Some(origin) if origin_allowed(origin, host, s.access.public()) => Ok(()),
        None if !required => Ok(()),
        _ => Err(ServiceError::Csrf(
            "a browser change must come from this server's own pages (Origin check)".into(),
        )),
    }
}

/// `Authorization: Bearer …`. `Err` for any other scheme, which is never
/// silently ignored in favour of a cookie.
fn bearer(headers: &HeaderMap) -> ServiceResult<Option<&str>> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| ServiceError::Unauthorized("unreadable Authorization header".into()))?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => Ok(Some(token)),
        _ => Err(ServiceError::Unauthorized(
            "Authorization must be `Bearer <token>`".into(),
        )),
    }
}

async fn admit(s: &AppState, req: &mut Request) -> ServiceResult<()> {
    let method = req.method().clone();
    let Some(template) = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()) else {
        return Err(ServiceError::NotFound("no such route".into()));
    };
    let Some(need) = route_need(method.as_str(), &template) else {
        // Fail closed: a route the access table does not know serves nobody.
        tracing::error!(%method, route = %template, "route has no access rule; refused");
        return Err(ServiceError::NotFound("no such route".into()));
    };
    let headers = req.headers();
    match need {
        Need::SessionToken => return Ok(()),
        Need::Open => {
            // Sign-in and sign-out are cookie writes too: a foreign page may not log anyone in or out.
            if template.starts_with("/api/v1/auth/") {
                check_origin(s, headers, false)?;
            }
            return Ok(());
        }
        _ => {}
    }
    let jar = CookieJar::from_headers(headers);
    let cookie = jar.get(SESSION_COOKIE).map(|c| c.value().to_string());
    let bearer = bearer(headers)?.map(str::to_string);
    // A route in a workspace reads the caller and the resource's place in one
    // statement. A bad resource id is answered where it was before: after
    // the caller (401) and the Origin check (403).
    let at = match need {
        Need::In(scope, _) => Some(resource_id(req, scope).await.map(|id| (scope, id))),
        _ => None,
    };
    let place_of = at
        .as_ref()
        .and_then(|a| a.as_ref().ok())
        .map(|(scope, id)| (*scope, id.as_str()));
    let (caller, place) = s
        .access
        .authenticate_at(bearer.as_deref(), cookie.as_deref(), place_of)
        .await?
        .ok_or_else(|| ServiceError::Unauthorized("sign in, or send `Authorization: Bearer <token>`".into()))?;
    if caller.via == Via::Cookie && is_change(&method) {
        check_origin(s, req.headers(), true)?;
    }
    if let Some(Err(bad_id)) = at {
        return Err(bad_id);
    }
    match need {
        Need::Bearer if caller.via == Via::Cookie => {
            return Err(ServiceError::Unauthorized("this endpoint needs a bearer token".into()));
        }
        Need::Admin if !caller.admin => {
            return Err(ServiceError::Forbidden("only an instance admin may do this".into()));
        }
        Need::In(scope, level) => {
            let place = workspace_access(&caller, scope, level, place)?;
            req.extensions_mut().insert(place);
        }
        _ => {}
    }
    req.extensions_mut().insert(caller);
    Ok(())
}

/// The guard's verdict on a caller at a resource's place (`None`: no such
/// resource, the same 404 as one the caller may not see).
fn workspace_access(caller: &Caller, scope: Scope, level: Level, place: Option<Place>) -> ServiceResult<InWorkspace> {
    let hidden = || ServiceError::NotFound(format!("{} not found", scope.noun()));
    let place = place.ok_or_else(hidden)?;
    let role = place.role;
    match decide(caller.admin, role, level) {
        Verdict::Allow => Ok(InWorkspace {
            workspace_id: place.workspace_id,
            role,
            admin: caller.admin,
            board_version: place.board_version,
        }),
        Verdict::Hidden => Err(hidden()),
        Verdict::Forbidden => Err(ServiceError::Forbidden(format!(
            "a {} of this workspace may not do this",
            role.map(Role::as_str).unwrap_or("visitor")
        ))),
    }
}

/// The id a scope names: a path parameter, or the `workspace_id` query parameter.
async fn resource_id(req: &mut Request, scope: Scope) -> ServiceResult<String> {
    if scope == Scope::QueryWorkspace {
        let query: Query<HashMap<String, String>> =
            Query::try_from_uri(req.uri()).map_err(|e| ServiceError::BadRequest(format!("bad query string: {e}")))?;
        return query
            .0
            .get(scope.param())
            .filter(|v| !v.is_empty())
            .cloned()
            .ok_or_else(|| ServiceError::BadRequest("workspace_id is required".into()));
    }
    let (mut parts, body) = std::mem::take(req).into_parts();
    let params = <RawPathParams as axum::extract::FromRequestParts<()>>::from_request_parts(&mut parts, &()).await;
    *req = Request::from_parts(parts, body);
    let params: RawPathParams = params.map_err(|_| ServiceError::NotFound("no such route".into()))?;
    params
        .iter()
        .find(|(k, _)| *k == scope.param())
        .map(|(_, v)| v.to_string())
        .ok_or_else(|| ServiceError::NotFound("no such route".into()))
}

/// What the guard put in the request for the handler; its absence means the
/// route was not guarded as the handler expects, which fails closed.
fn admitted<T: Clone + Send + Sync + 'static>(parts: &Parts, missing: ServiceError) -> Result<T, HttpError> {
    parts.extensions.get::<T>().cloned().ok_or(HttpError(missing))
}

/// Handlers take the caller the guard admitted.
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        admitted(parts, ServiceError::Unauthorized("not signed in".into()))
    }
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for InWorkspace {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        admitted(parts, ServiceError::NotFound("no such route".into()))
    }
}
