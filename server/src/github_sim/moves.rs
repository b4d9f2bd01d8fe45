//! Renamed and transferred repositories, as GitHub keeps them reachable: the
//! old name answers REST with a redirect to `/repositories/{id}/…` (301 for
//! GET and HEAD, 307 for writes, which must be repeated as they were),
//! GraphQL's `repository(owner, name)` follows renames, and a `repository`
//! delivery says what changed. Every payload after the move names the new one.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;
use tower::ServiceExt;

use super::state::key;
use super::{SimError, SimResult, Simulator, missing};

/// `/repos/{owner}/{repo}` and what follows, split off a path.
fn repo_path(path: &str) -> Option<(&str, &str, &str)> {
    let rest = path.strip_prefix("/repos/")?;
    let (owner, rest) = rest.split_once('/')?;
    let (name, tail) = rest.split_once('/').map_or((rest, ""), |(n, t)| (n, t));
    Some((owner, name, tail))
}

impl Simulator {
    /// Renames a repository or transfers it to another owner (or both), as
    /// on github.com's settings page; delivers `repository` `renamed` and/or
    /// `transferred`.
    pub fn move_repo(&self, owner: &str, name: &str, new_owner: &str, new_name: &str) -> SimResult<()> {
        let payloads = {
            let mut s = self.lock();
            // A rename that only changes case keeps the repository's key.
            let same = key(new_owner, new_name) == key(owner, name);
            if !same && s.repos.contains_key(&key(new_owner, new_name)) {
                return Err(SimError(format!("{new_owner}/{new_name} already exists")));
            }
            let current = s.repo(owner, name).map(|r| key(&r.owner, &r.name));
            let mut repo = current
                .and_then(|k| s.repos.remove(&k))
                .ok_or_else(|| missing("repository"))?;
            let (old_owner, old_name) = (repo.owner.clone(), repo.name.clone());
            repo.owner = new_owner.to_string();
            repo.name = new_name.to_string();
            let id = repo.id;
            s.moved.insert(key(&old_owner, &old_name), id);
            s.moved.remove(&key(new_owner, new_name));
            for due in s
                .ci_due
                .iter_mut()
                .filter(|d| key(&d.0, &d.1) == key(&old_owner, &old_name))
            {
                (due.0, due.1) = (new_owner.to_string(), new_name.to_string());
            }
            let repository = repo.json();
            s.repos.insert(key(new_owner, new_name), repo);
            let sender = super::shapes::user(new_owner);
            let mut payloads = vec![];
            if old_name != new_name {
                payloads.push(
                    json!({"action": "renamed", "changes": {"repository": {"name": {"from": old_name}}},
                                     "repository": repository, "sender": sender}),
                );
            }
            if !old_owner.eq_ignore_ascii_case(new_owner) {
                let from = json!({"login": old_owner, "type": "Organization"});
                payloads.push(
                    json!({"action": "transferred", "changes": {"owner": {"from": {"organization": from}}},
                                     "repository": repository, "sender": sender}),
                );
            }
            payloads
        };
        for p in payloads {
            self.deliver("repository", Some(p));
        }
        Ok(())
    }
}

/// Before a REST handler: an old name answers with GitHub's redirect.
pub async fn redirect_moved(State(sim): State<Simulator>, req: Request, next: Next) -> Response {
    let found = repo_path(req.uri().path()).and_then(|(o, n, tail)| {
        let id = sim.lock().moved_id(o, n)?;
        Some((id, tail.to_string()))
    });
    let Some((id, tail)) = found else {
        return next.run(req).await;
    };
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    let location = format!("http://{host}/repositories/{id}/{tail}{query}");
    let status = if matches!(*req.method(), Method::GET | Method::HEAD) {
        StatusCode::MOVED_PERMANENTLY
    } else {
        StatusCode::TEMPORARY_REDIRECT
    };
    let message = if status == StatusCode::MOVED_PERMANENTLY {
        "Moved Permanently"
    } else {
        "Temporary Redirect"
    };
    let mut r = (
        status,
        Json(json!({"message": message, "url": location,
                    "documentation_url": "https://docs.github.com/v3/#http-redirects"})),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// `/repositories/{id}/…`: the same endpoint under the repository's name now.
pub fn by_id(sim: Simulator, named: Router) -> Router {
    Router::new().fallback(move |req: Request| {
        let (sim, named) = (sim.clone(), named.clone());
        async move { answer_by_id(&sim, named, req).await }
    })
}

async fn answer_by_id(sim: &Simulator, named: Router, req: Request) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, Json(json!({"message": "Not Found"}))).into_response();
    let path = req.uri().path().to_string();
    let Some((id, tail)) = path
        .strip_prefix("/repositories/")
        .and_then(|rest| rest.split_once('/'))
        .and_then(|(id, tail)| Some((id.parse::<i64>().ok()?, tail.to_string())))
    else {
        return not_found();
    };
    let Some((owner, name)) = sim.lock().repo_by_id(id).map(|r| (r.owner.clone(), r.name.clone())) else {
        return not_found();
    };
    let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    let Ok(uri) = format!("/repos/{owner}/{name}/{tail}{query}").parse::<Uri>() else {
        return not_found();
    };
    // A fresh request: the outer route's path parameters must not reach the inner one.
    let (parts, body) = req.into_parts();
    let mut inner = Request::new(Body::new(body));
    *inner.method_mut() = parts.method;
    *inner.uri_mut() = uri;
    *inner.headers_mut() = parts.headers;
    match named.oneshot(inner).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}
