//! Access: who the caller is (API token, browser session, or
//! `KANDEV_ADMIN_TOKEN`), sign-in with its throttle, and the caller's role in
//! a workspace. The rules (role × level → verdict, which route needs what)
//! are `kandev_core::access`; the HTTP guard (`http::guard`) applies them.

pub mod bootstrap;
pub mod credentials;
mod login;

pub use login::{SESSION_DAYS, password_check_slots};

use std::sync::Arc;

use kandev_core::access::{PublicOrigin, Role, Scope};
use kandev_core::api::{Actor, MyWorkspace};
use subtle::ConstantTimeEq;

use crate::clock::Clock;
use crate::error::ServiceResult;
use crate::store::{Credential, Place, Store};

/// How a caller proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `KANDEV_ADMIN_TOKEN`.
    AdminToken,
    /// A `kdv_…` API token.
    ApiToken,
    /// A browser session cookie (its changes need a same-origin `Origin`).
    Cookie,
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// `None` for the admin token, which is no user.
    pub user_id: Option<String>,
    pub username: String,
    pub admin: bool,
    pub via: Via,
}

impl Caller {
    /// What task events record for this caller.
    pub fn actor(&self) -> Actor {
        match &self.user_id {
            Some(id) => Actor::User {
                id: id.clone(),
                username: self.username.clone(),
            },
            None => Actor::admin_token(),
        }
    }
}

/// Settings the access layer reads once at start.
#[derive(Debug, Clone, Default)]
pub struct AccessSettings {
    pub admin_token: Option<String>,
    pub public: Option<PublicOrigin>,
}

pub struct Access {
    store: Store,
    clock: Arc<dyn Clock>,
    settings: AccessSettings,
    login: login::Throttle,
}

impl Access {
    pub fn new(store: Store, clock: Arc<dyn Clock>, settings: AccessSettings) -> ServiceResult<Access> {
        Ok(Access {
            login: login::Throttle::new()?,
            store,
            clock,
            settings,
        })
    }

    pub fn has_admin_token(&self) -> bool {
        self.settings.admin_token.is_some()
    }

    pub fn public(&self) -> Option<&PublicOrigin> {
        self.settings.public.as_ref()
    }

    /// Resolves a bearer token (admin token or API token) or, without one, a
    /// session cookie. A bearer that matches nothing is `None`: it never falls
    /// back to the cookie.
    pub async fn authenticate(&self, bearer: Option<&str>, cookie: Option<&str>) -> ServiceResult<Option<Caller>> {
        Ok(self
            .authenticate_at(bearer, cookie, None)
            .await?
            .map(|(caller, _)| caller))
    }

    /// As [`Access::authenticate`], and with `at` (a scope and the id it
    /// names), in the same read the place of that resource with the caller's
    /// role there (`None`: it does not exist).
    pub async fn authenticate_at(
        &self,
        bearer: Option<&str>,
        cookie: Option<&str>,
        at: Option<(Scope, &str)>,
    ) -> ServiceResult<Option<(Caller, Option<Place>)>> {
        let (hash, via) = if let Some(token) = bearer.map(str::trim).filter(|t| !t.is_empty()) {
            if let Some(admin) = self.settings.admin_token.as_deref()
                && bool::from(admin.as_bytes().ct_eq(token.as_bytes()))
            {
                // No user to read: the place alone, with no role.
                let place = match at {
                    Some((scope, id)) => self.store.place(scope, id, None).await?,
                    None => None,
                };
                let caller = Caller {
                    user_id: None,
                    username: kandev_core::api::ADMIN_TOKEN_ACTOR_ID.into(),
                    admin: true,
                    via: Via::AdminToken,
                };
                return Ok(Some((caller, place)));
            }
            (credentials::hash_secret(token), Via::ApiToken)
        } else {
            match cookie.filter(|c| !c.is_empty()) {
                Some(cookie) => (credentials::hash_secret(cookie), Via::Cookie),
                None => return Ok(None),
            }
        };
        let credential = match via {
            Via::Cookie => Credential::WebSession(&hash),
            _ => Credential::ApiToken(&hash),
        };
        let admitted = self.store.caller(credential, at, self.clock.now()).await?;
        Ok(admitted.map(|a| {
            let caller = Caller {
                user_id: Some(a.user.id),
                username: a.user.username,
                admin: a.user.admin,
                via,
            };
            (caller, a.place)
        }))
    }

    /// The workspaces a caller sees, with its role in each. Admins see every
    /// workspace and act as owners in all of them.
    pub async fn workspaces(&self, caller: &Caller) -> ServiceResult<Vec<MyWorkspace>> {
        if caller.admin {
            return Ok(self
                .store
                .list_workspaces()
                .await?
                .into_iter()
                .map(|w| MyWorkspace {
                    id: w.id,
                    name: w.name,
                    role: Role::Owner,
                })
                .collect());
        }
        match &caller.user_id {
            Some(user) => Ok(self.store.user_workspaces(user).await?),
            None => Ok(vec![]),
        }
    }
}
