//! Sign-in, sign-out, `GET /me` and the caller's API tokens.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use kandev_core::api::{CreateToken, CreatedToken, LoginRequest, Me, SESSION_COOKIE, TokenInfo};

use super::error::HttpResult;
use super::extract::{ApiJson, ApiPath};
use super::{ApiRoutes, AppState};
use crate::access::{Caller, SESSION_DAYS, bootstrap};
use crate::error::ServiceError;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new()
        .post("/api/v1/auth/login", login)
        .post("/api/v1/auth/logout", logout)
        .get("/api/v1/me", me)
        .get("/api/v1/tokens", list_tokens)
        .post("/api/v1/tokens", create_token)
        .delete("/api/v1/tokens/{id}", delete_token)
}

/// The session cookie: HttpOnly, SameSite=Lax, and `Secure` behind https.
fn session_cookie(s: &AppState, value: String, max_age_days: i64) -> Cookie<'static> {
    let secure = s.access.public().is_some_and(|p| p.is_https());
    Cookie::build((SESSION_COOKIE, value))
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .path("/")
        .max_age(cookie::time::Duration::days(max_age_days))
        .build()
}

async fn me_of(s: &AppState, caller: &Caller) -> Result<Me, ServiceError> {
    Ok(Me {
        id: caller
            .user_id
            .clone()
            .unwrap_or_else(|| kandev_core::api::ADMIN_TOKEN_ACTOR_ID.into()),
        username: caller.username.clone(),
        admin: caller.admin,
        workspaces: s.access.workspaces(caller).await?,
    })
}

/// Signs in with a username and password; the answer sets the session cookie.
#[utoipa::path(post, path = "/api/v1/auth/login", request_body = LoginRequest, security(()),
    responses((status = 200, body = Me, headers(("set-cookie" = String, description = "the HttpOnly session cookie")))))]
pub async fn login(
    State(s): State<AppState>,
    jar: CookieJar,
    ApiJson(req): ApiJson<LoginRequest>,
) -> HttpResult<(CookieJar, Json<Me>)> {
    let session = s.access.login(&req.username, &req.password).await?;
    let me = me_of(&s, &session.caller).await?;
    Ok((jar.add(session_cookie(&s, session.cookie, SESSION_DAYS)), Json(me)))
}

/// Ends the browser session (if any) and clears its cookie.
#[utoipa::path(post, path = "/api/v1/auth/logout", security(()), responses((status = 204)))]
pub async fn logout(State(s): State<AppState>, jar: CookieJar) -> HttpResult<(CookieJar, StatusCode)> {
    if let Some(c) = jar.get(SESSION_COOKIE) {
        s.access.logout(c.value()).await?;
    }
    Ok((jar.add(session_cookie(&s, String::new(), 0)), StatusCode::NO_CONTENT))
}

/// Who the caller is, and its workspaces with its role in each.
#[utoipa::path(get, path = "/api/v1/me", responses((status = 200, body = Me)))]
pub async fn me(State(s): State<AppState>, caller: Caller) -> HttpResult<Json<Me>> {
    Ok(Json(me_of(&s, &caller).await?))
}

#[utoipa::path(get, path = "/api/v1/tokens", responses((status = 200, body = [TokenInfo])))]
pub async fn list_tokens(State(s): State<AppState>, caller: Caller) -> HttpResult<Json<Vec<TokenInfo>>> {
    match &caller.user_id {
        Some(user) => Ok(Json(s.store.list_tokens(user).await?)),
        None => Ok(Json(vec![])),
    }
}

/// A new API token for the caller, shown only in this answer.
#[utoipa::path(post, path = "/api/v1/tokens", request_body = CreateToken, responses((status = 201, body = CreatedToken)))]
pub async fn create_token(
    State(s): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<CreateToken>,
) -> HttpResult<(StatusCode, Json<CreatedToken>)> {
    let user = caller.user_id.as_deref().ok_or_else(|| {
        ServiceError::Forbidden("the admin token is no user: sign in as a user to make tokens".into())
    })?;
    let created = bootstrap::create_token(&s.store, user, &req.name, s.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Revokes one of the caller's tokens; anyone else's is not found.
#[utoipa::path(delete, path = "/api/v1/tokens/{id}", params(("id" = String, Path)), responses((status = 204)))]
pub async fn delete_token(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> HttpResult<StatusCode> {
    let user = caller
        .user_id
        .as_deref()
        .ok_or_else(|| ServiceError::NotFound("token not found".into()))?;
    s.store
        .delete_token(user, &id)
        .await
        .map_err(ServiceError::not_found("token"))?;
    Ok(StatusCode::NO_CONTENT)
}
