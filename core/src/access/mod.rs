//! Who may do what: workspace roles, what each API route needs, and the one
//! verdict function both the server's guard and the web app ask.
//!
//! The server resolves the caller and the resource's workspace, then calls
//! [`decide`]; the web app calls [`allows`] to hide exactly the controls the
//! server would refuse. Neither decides on its own.

mod login;
mod network;
mod routes;
mod streams;
mod tokens;

pub use login::{
    LOGIN_CHECK_HOLD_SECS, LOGIN_FREE_FAILURES, LOGIN_MAX_DELAY_SECS, login_delay_secs, login_retry_after_secs,
    normalise_username,
};
pub use network::{PublicOrigin, host_allowed, is_loopback_host, origin_allowed};
pub use routes::{Need, Scope, known_routes, methods_for, route_need};
pub use streams::{STREAMS_PER_CALLER, STREAMS_PER_REPLICA, StreamRefusal, admit_stream};
pub use tokens::{TOKEN_USE_RESOLUTION_SECS, token_use_due};

use serde::{Deserialize, Serialize};

/// A member's role in one workspace, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads everything in the workspace, changes nothing.
    Viewer,
    /// Tasks, reviews, approve/reject, automations, PR links.
    Member,
    /// Everything a member does, plus members, settings, repositories and webhook secrets.
    Owner,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Member, Role::Owner];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Member => "member",
            Role::Owner => "owner",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The least role that may act at `level`.
    pub fn least_for(level: Level) -> Role {
        match level {
            Level::Read => Role::Viewer,
            Level::Write => Role::Member,
            Level::Manage => Role::Owner,
        }
    }
}

/// How much a workspace route asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Looking: any member, viewers included.
    Read,
    /// Changing tasks, reviews, automations and PR links.
    Write,
    /// Members, settings, repositories, webhook secrets.
    Manage,
}

/// The guard's answer for a workspace resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// 403 `forbidden`: the caller sees the resource but may not do this.
    Forbidden,
    /// 404, worded exactly as for a resource that does not exist.
    Hidden,
}

/// The one rule for workspace resources. An instance admin may do anything;
/// a non-member does not see the workspace at all; a member acts up to its role.
pub fn decide(admin: bool, role: Option<Role>, level: Level) -> Verdict {
    if admin {
        return Verdict::Allow;
    }
    match role {
        None => Verdict::Hidden,
        Some(r) if r >= Role::least_for(level) => Verdict::Allow,
        Some(_) => Verdict::Forbidden,
    }
}

/// Whether a caller with this standing may act at `level` (for the web app's buttons).
pub fn allows(admin: bool, role: Option<Role>, level: Level) -> bool {
    decide(admin, role, level) == Verdict::Allow
}

/// A change of members that would leave a workspace without an owner is refused.
pub fn leaves_an_owner(owners_now: usize, target_is_owner: bool, target_new_role: Option<Role>) -> bool {
    let loses_one = target_is_owner && target_new_role != Some(Role::Owner);
    !(loses_one && owners_now <= 1)
}

#[cfg(test)]
mod tests;
