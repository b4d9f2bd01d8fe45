//! The guard's reads: who a credential names and, in the same statement,
//! where the resource a route names lives and the caller's role there. A
//! member's request costs one read, not one for the caller and one for the
//! place.

use chrono::{DateTime, Utc};
use kandev_core::access::{Role, Scope};
use kandev_core::api::User;

use super::members::parse_role;
use super::rows::RowExt;
use super::users::user;
use super::{Store, StoreResult, time_to_text};

/// `$1`, `$2`, … by position: the guard's statements take at most three
/// parameters (the inline and gathered reads bind by these names).
pub(super) const PARAMETER_NAMES: [&str; 4] = ["$1", "$2", "$3", "$4"];

/// A resource's workspace as the guard sees it (see [`Store::place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub workspace_id: String,
    pub role: Option<Role>,
    /// The workspace's board version when this was read.
    pub board_version: i64,
}

/// A credential a request carried, as stored: the SHA-256 hash.
#[derive(Debug, Clone, Copy)]
pub enum Credential<'a> {
    ApiToken(&'a str),
    WebSession(&'a str),
}

/// The user a credential names and, when a place was asked for, that place
/// (`None`: the resource does not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerAt {
    pub user: User,
    pub place: Option<Place>,
}

/// Static SQL per scope (sqlx refuses built SQL): `$sql!` gets the resource
/// joined to its workspace `w` and the resource's key column.
macro_rules! by_scope {
    ($scope:expr, $sql:ident $(, $arg:tt)*) => {
        match $scope {
            Scope::Workspace | Scope::QueryWorkspace => $sql!($($arg,)* "workspaces w", "w.id"),
            Scope::Task => $sql!($($arg,)* "tasks x JOIN workspaces w ON w.id = x.workspace_id", "x.id"),
            Scope::Automation => $sql!($($arg,)* "automations x JOIN workspaces w ON w.id = x.workspace_id", "x.id"),
            Scope::Trigger => $sql!(
                $($arg,)*
                "automation_triggers x JOIN automations a ON a.id = x.automation_id JOIN workspaces w ON w.id = a.workspace_id",
                "x.id"
            ),
            Scope::Run => $sql!(
                $($arg,)*
                "automation_runs x JOIN automations a ON a.id = x.automation_id JOIN workspaces w ON w.id = a.workspace_id",
                "x.id"
            ),
            Scope::Session => $sql!(
                $($arg,)*
                "agent_sessions x JOIN tasks t ON t.id = x.task_id JOIN workspaces w ON w.id = t.workspace_id",
                "x.id"
            ),
        }
    };
}

/// The workspace's board version: the row's count plus its stripes.
macro_rules! board_version {
    () => {
        "CAST(w.board_version + (SELECT COALESCE(SUM(b.n), 0) FROM board_version_stripes b \
         WHERE b.workspace_id = w.id) AS BIGINT) AS board_version"
    };
}

/// The place alone, for a caller known without a read (`$2`: its user id).
macro_rules! place_sql {
    ($from:literal, $key:literal) => {
        concat!(
            "SELECT w.id AS ws, m.role AS role, ",
            board_version!(),
            " FROM ",
            $from,
            " LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2 WHERE ",
            $key,
            " = $1"
        )
    };
}

/// How each credential finds its user, in parts: its columns, its tables
/// and its condition (`$1`: the hash; sessions, which expire, take now as
/// the parameter after the resource's id, if any).
macro_rules! credential_sql {
    (token cols) => {
        "SELECT t.id AS token_id, t.last_used_at AS token_used_at, u.id, u.username, u.password_hash, u.admin, u.created_at"
    };
    (token from) => {
        " FROM api_tokens t JOIN users u ON u.id = t.user_id"
    };
    (token where) => {
        " WHERE t.token_hash = $1"
    };
    (token where_at) => {
        " WHERE t.token_hash = $1"
    };
    (session cols) => {
        "SELECT u.id, u.username, u.password_hash, u.admin, u.created_at"
    };
    (session from) => {
        " FROM web_sessions s JOIN users u ON u.id = s.user_id"
    };
    (session where) => {
        " WHERE s.id_hash = $1 AND s.expires_at > $2"
    };
    (session where_at) => {
        " WHERE s.id_hash = $1 AND s.expires_at > $3"
    };
}

/// The credential's user alone.
macro_rules! caller_sql {
    ($cred:ident) => {
        concat!(
            credential_sql!($cred cols),
            credential_sql!($cred from),
            credential_sql!($cred where)
        )
    };
}

/// The credential's user, then the resource (`$2`: its id) with the user's
/// membership; the resource's columns are null when it does not exist.
macro_rules! caller_at_sql {
    ($cred:ident, $from:literal, $key:literal) => {
        concat!(
            credential_sql!($cred cols),
            ", p.ws AS ws, m.role AS role, p.board_version AS board_version",
            credential_sql!($cred from),
            " LEFT JOIN (SELECT w.id AS ws, ",
            board_version!(),
            " FROM ",
            $from,
            " WHERE ",
            $key,
            " = $2) p ON 1 = 1 LEFT JOIN workspace_members m ON m.workspace_id = p.ws AND m.user_id = u.id",
            credential_sql!($cred where_at)
        )
    };
}

/// A place from a row's `ws`, `role` and `board_version` (`None` when `ws` is null).
fn place_of(r: &impl RowExt) -> StoreResult<Option<Place>> {
    let Some(workspace_id) = r.opt_text("ws")? else {
        return Ok(None);
    };
    Ok(Some(Place {
        workspace_id,
        role: r.opt_text("role")?.as_deref().map(parse_role).transpose()?,
        board_version: r.int("board_version")?,
    }))
}

/// What `caller` reads from its row: the caller, the place when asked for,
/// and for an API token its id and when its use was last noted.
struct CallerRow {
    found: CallerAt,
    token: Option<(String, Option<DateTime<Utc>>)>,
}

fn caller_row(row: &impl RowExt, api_token: bool, at: bool) -> StoreResult<CallerRow> {
    Ok(CallerRow {
        found: CallerAt {
            user: user(row)?.user,
            place: if at { place_of(row)? } else { None },
        },
        token: if api_token {
            Some((row.text("token_id")?, row.opt_time("token_used_at")?))
        } else {
            None
        },
    })
}

impl Store {
    /// What the guard needs about the resource a route's scope names, in one
    /// read: its workspace, the caller's role there (`user_id` `None`: no
    /// role) and the workspace's board version. `None` when the resource does
    /// not exist.
    pub async fn place(&self, scope: Scope, id: &str, user_id: Option<&str>) -> StoreResult<Option<Place>> {
        let sql = by_scope!(scope, place_sql);
        // No user binds an id no member has (ids are never empty).
        let params = [id, user_id.unwrap_or_default()];
        if let Some(inline) = &self.inline
            && let Some(read) = inline.first_row(sql, &params, |r| place_of(r))
        {
            return read.map(Option::flatten);
        }
        if let Some(gathered) = &self.gathered
            && let Some(row) = gathered.first_row(sql, &params).await
        {
            return row?.as_ref().map(place_of).transpose().map(Option::flatten);
        }
        let row = sqlx::query(sql)
            .bind(params[0])
            .bind(params[1])
            .fetch_optional(&mut *self.read().await?)
            .await?;
        row.as_ref().map(place_of).transpose().map(Option::flatten)
    }

    /// The user a credential names (`None`: nobody — unknown, or an expired
    /// session) and, with `at`, the place of the resource a route names, all
    /// in one read. A token's use is noted at most once a minute, so a request
    /// is otherwise a pure read and never waits for the write turn.
    pub async fn caller(
        &self,
        credential: Credential<'_>,
        at: Option<(Scope, &str)>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<CallerAt>> {
        let sql = match (credential, at) {
            (Credential::ApiToken(_), None) => caller_sql!(token),
            (Credential::WebSession(_), None) => caller_sql!(session),
            (Credential::ApiToken(_), Some((scope, _))) => by_scope!(scope, caller_at_sql, token),
            (Credential::WebSession(_), Some((scope, _))) => by_scope!(scope, caller_at_sql, session),
        };
        let (hash, api_token) = match credential {
            Credential::ApiToken(h) => (h, true),
            Credential::WebSession(h) => (h, false),
        };
        // In `$n` order: the hash, the resource's id if any, now for a session.
        let now_text = time_to_text(now);
        let mut params = vec![hash];
        params.extend(at.map(|(_, id)| id));
        if !api_token {
            params.push(&now_text);
        }
        let place = at.is_some();
        let inline = self
            .inline
            .as_ref()
            .and_then(|i| i.first_row(sql, &params, |r| caller_row(r, api_token, place)));
        let gathered = match (&inline, &self.gathered) {
            (None, Some(g)) => g.first_row(sql, &params).await,
            _ => None,
        };
        let found = match (inline, gathered) {
            (Some(found), _) => found?,
            (None, Some(row)) => row?.as_ref().map(|r| caller_row(r, api_token, place)).transpose()?,
            (None, None) => {
                let mut query = sqlx::query(sql);
                for p in &params {
                    query = query.bind(*p);
                }
                let row = query.fetch_optional(&mut *self.read().await?).await?;
                row.as_ref().map(|r| caller_row(r, api_token, place)).transpose()?
            }
        };
        let Some(found) = found else { return Ok(None) };
        if let Some((token_id, used_at)) = found.token {
            self.note_token_use(&token_id, used_at, now).await?;
        }
        Ok(Some(found.found))
    }

    /// Records a token's use when the recorded one is stale. Two replicas'
    /// touches cannot move it backwards.
    async fn note_token_use(
        &self,
        token_id: &str,
        used_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        if !kandev_core::access::token_use_due(used_at, now) {
            return Ok(());
        }
        let stale = now - chrono::Duration::seconds(kandev_core::access::TOKEN_USE_RESOLUTION_SECS);
        sqlx::query(
            "UPDATE api_tokens SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)",
        )
        .bind(token_id)
        .bind(time_to_text(now))
        .bind(time_to_text(stale))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }
}
