//! Users from outside the API: the first-start admin, and the `kandev user
//! add` / `kandev token create` commands, against the configured database.

use chrono::{DateTime, Utc};
use kandev_core::access::normalise_username;
use kandev_core::api::{CreatedToken, User};

use super::credentials::{check_password, hash_password, new_api_token, new_password};
use crate::error::{ServiceError, ServiceResult};
use crate::store::{Store, StoreError};

/// The first-start admin's name.
pub const FIRST_ADMIN: &str = "admin";

/// Creates a user; `password` `None` generates one. Returns the user and the
/// generated password (to be shown once).
pub async fn add_user(
    store: &Store,
    username: &str,
    password: Option<&str>,
    admin: bool,
    now: DateTime<Utc>,
) -> ServiceResult<(User, Option<String>)> {
    let name = normalise_username(username).map_err(ServiceError::Invalid)?;
    let generated = match password {
        Some(_) => None,
        None => Some(new_password()?),
    };
    let password = password.or(generated.as_deref()).unwrap_or_default();
    check_password(password)?;
    let owned = password.to_string();
    let hash = tokio::task::spawn_blocking(move || hash_password(&owned))
        .await
        .map_err(|e| ServiceError::Internal(e.to_string()))??;
    match store.create_user(&name, &hash, admin, now).await {
        Ok(u) => Ok((u, generated)),
        Err(StoreError::Conflict(_)) => Err(ServiceError::Conflict(format!("user {name} already exists"))),
        Err(e) => Err(e.into()),
    }
}

/// A new API token for a user; the token is in the answer and nowhere else.
pub async fn create_token(store: &Store, user_id: &str, name: &str, now: DateTime<Utc>) -> ServiceResult<CreatedToken> {
    let name = kandev_core::bounds::required_name("name", name).map_err(|e| ServiceError::Invalid(e.0))?;
    let (token, hash) = new_api_token()?;
    let info = store.create_token(user_id, name, &hash, now).await?;
    Ok(CreatedToken {
        id: info.id,
        name: info.name,
        token,
        created_at: info.created_at,
    })
}

/// On a first start (no users, and no `KANDEV_ADMIN_TOKEN` to get in with),
/// creates `admin` with a random password and returns the password. Two
/// replicas starting at once race on the unique username: one wins, the
/// other returns `None`.
pub async fn first_admin(store: &Store, has_admin_token: bool, now: DateTime<Utc>) -> ServiceResult<Option<String>> {
    if has_admin_token || store.count_users().await? > 0 {
        return Ok(None);
    }
    match add_user(store, FIRST_ADMIN, None, true, now).await {
        Ok((_, password)) => Ok(password),
        Err(ServiceError::Conflict(_)) => Ok(None),
        Err(e) => Err(e),
    }
}
