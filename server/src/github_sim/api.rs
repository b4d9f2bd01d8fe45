//! One request's accounting, as GitHub does it: latency, authentication,
//! injected faults (global and per repository), the primary rate limit,
//! ETags and 304s, pagination links.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Simulator;
use super::state::{SimState, key};

/// What a handler answers.
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
    /// Webhooks to deliver once the answer is decided.
    pub deliveries: Vec<(&'static str, Option<Value>)>,
    /// The `Link` header of a paginated list.
    pub link: Option<String>,
    /// The `retry-after` header of a secondary rate limit, in seconds.
    pub retry_after: Option<u64>,
}

static SECONDARY_LIMIT: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    json!({"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
           "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
});

impl Answer {
    pub fn ok(body: Value) -> Self {
        Answer::new(StatusCode::OK, body)
    }

    pub fn new(status: StatusCode, body: Value) -> Self {
        Answer {
            status,
            body,
            deliveries: vec![],
            link: None,
            retry_after: None,
        }
    }

    /// GitHub's secondary rate limit: 403, wait `secs` before trying again.
    pub fn secondary_limit(secs: u64) -> Self {
        Answer {
            retry_after: Some(secs),
            ..Answer::new(StatusCode::FORBIDDEN, SECONDARY_LIMIT.clone())
        }
    }

    pub fn with_delivery(mut self, event: &'static str, payload: Option<Value>) -> Self {
        self.deliveries.push((event, payload));
        self
    }
}

pub fn not_found() -> Answer {
    Answer::new(
        StatusCode::NOT_FOUND,
        json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
    )
}

pub fn message(status: StatusCode, m: &str) -> Answer {
    Answer::new(
        status,
        json!({"message": m, "documentation_url": "https://docs.github.com/rest"}),
    )
}

/// Which request this is, for faults and the rate-limit bucket.
pub struct Op<'a> {
    pub name: &'static str,
    pub repo: Option<(&'a str, &'a str)>,
    pub search: bool,
}

impl<'a> Op<'a> {
    pub fn repo(name: &'static str, owner: &'a str, repo: &'a str) -> Self {
        Op {
            name,
            repo: Some((owner, repo)),
            search: false,
        }
    }

    pub fn global(name: &'static str) -> Self {
        Op {
            name,
            repo: None,
            search: name.starts_with("search"),
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Paging {
    #[serde(default)]
    pub per_page: Option<usize>,
    #[serde(default)]
    pub page: Option<usize>,
}

impl Paging {
    /// One page of `items` (GitHub's default 30 a page, at most 100) and the
    /// `Link` header pointing at the next and last pages.
    pub fn page(&self, items: Vec<Value>, path: &str) -> (Vec<Value>, Option<String>) {
        let per = self.per_page.unwrap_or(30).clamp(1, 100);
        let page = self.page.unwrap_or(1).max(1);
        let last = items.len().div_ceil(per).max(1);
        let slice: Vec<Value> = items.into_iter().skip((page - 1) * per).take(per).collect();
        let link = (page < last).then(|| {
            format!(
                "<{path}?per_page={per}&page={}>; rel=\"next\", <{path}?per_page={per}&page={last}>; rel=\"last\"",
                page + 1
            )
        });
        (slice, link)
    }
}

fn etag_of(body: &str) -> String {
    let mut h = DefaultHasher::new();
    body.hash(&mut h);
    format!("\"{:016x}\"", h.finish())
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn put(h: &mut HeaderMap, k: &'static str, v: String) {
    if let Ok(v) = HeaderValue::from_str(&v) {
        h.insert(k, v);
    }
}

fn with_limits(s: &SimState, op: &Op, mut r: Response) -> Response {
    let h = r.headers_mut();
    let (limit, remaining, reset, resource) = if op.name == "graphql" {
        (s.gql_limit, s.gql_remaining, s.gql_reset, "graphql")
    } else {
        (s.limit, s.remaining, s.reset, if op.search { "search" } else { "core" })
    };
    put(h, "x-ratelimit-limit", limit.to_string());
    put(h, "x-ratelimit-remaining", remaining.max(0).to_string());
    put(h, "x-ratelimit-reset", reset.to_string());
    put(h, "x-ratelimit-used", (limit - remaining.max(0)).to_string());
    put(h, "x-ratelimit-resource", resource.into());
    r
}

fn status_message(status: u16) -> &'static str {
    match status {
        401 => "Bad credentials",
        403 => "Resource not accessible by integration",
        404 => "Not Found",
        422 => "Validation Failed",
        503 => "Service Unavailable",
        s if s >= 500 => "Server Error",
        _ => "Error",
    }
}

/// Before the handler: what a fault or a refusal answers instead, and how
/// long to wait first.
enum Gate {
    Answer(Response),
    Proceed,
}

fn gate(s: &mut SimState, headers: &HeaderMap, op: &Op) -> (Gate, Duration) {
    s.counters.requests += 1;
    let jitter = rand::random::<u64>() % (s.timing.latency_ms + 1);
    let mut wait = Duration::from_millis(s.timing.latency_ms + jitter);
    if headers.get(header::AUTHORIZATION).is_none() {
        let r = json_response(StatusCode::UNAUTHORIZED, json!({"message": "Requires authentication"}));
        return (Gate::Answer(r), wait);
    }
    if s.faults.revoked_token {
        let r = json_response(
            StatusCode::UNAUTHORIZED,
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}),
        );
        return (Gate::Answer(r), wait);
    }
    if s.faults.server_errors > 0 {
        s.faults.server_errors -= 1;
        let r = json_response(StatusCode::BAD_GATEWAY, json!({"message": "Server Error"}));
        return (Gate::Answer(r), wait);
    }
    if op.name == "graphql" && s.faults.graphql_errors > 0 {
        s.faults.graphql_errors -= 1;
        let r = json_response(StatusCode::BAD_GATEWAY, json!({"message": "Server Error"}));
        return (Gate::Answer(r), wait);
    }
    if let Some((o, n)) = op.repo {
        let k = key(o, n);
        let hit = s
            .repo_faults
            .get(&k)
            .filter(|f| f.operation.as_deref().is_none_or(|x| x == op.name))
            .cloned();
        if let Some(f) = hit {
            if f.times > 0 {
                let left = f.times - 1;
                if left == 0 {
                    s.repo_faults.remove(&k);
                } else if let Some(x) = s.repo_faults.get_mut(&k) {
                    x.times = left;
                }
            }
            wait += Duration::from_millis(f.delay_ms);
            if let Some(secs) = f.retry_after {
                let mut r = json_response(StatusCode::FORBIDDEN, SECONDARY_LIMIT.clone());
                put(r.headers_mut(), "retry-after", secs.to_string());
                return (Gate::Answer(r), wait);
            }
            if f.status != 0 {
                let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let r = json_response(
                    status,
                    json!({"message": f.message.as_deref().unwrap_or(status_message(f.status)),
                           "documentation_url": "https://docs.github.com/rest"}),
                );
                return (Gate::Answer(r), wait);
            }
        }
    }
    // GraphQL charges points from its own budget, in its handler.
    if op.name == "graphql" {
        return (Gate::Proceed, wait);
    }
    let now = Utc::now().timestamp();
    if now >= s.reset {
        s.remaining = s.limit;
        s.reset = now + 3600;
    }
    if s.remaining <= 0 {
        let r = json_response(
            StatusCode::FORBIDDEN,
            json!({"message": "API rate limit exceeded for user."}),
        );
        return (Gate::Answer(with_limits(s, op, r)), wait);
    }
    (Gate::Proceed, wait)
}

/// Runs one request: the gate, the wait, then the handler on the world.
pub async fn api(
    sim: &Simulator,
    headers: &HeaderMap,
    op: Op<'_>,
    f: impl FnOnce(&mut SimState) -> Answer,
) -> Response {
    let (gated, wait) = gate(&mut sim.lock(), headers, &op);
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    if let Gate::Answer(r) = gated {
        return r;
    }
    let (response, deliveries) = {
        let mut s = sim.lock();
        let answer = f(&mut s);
        let text = answer.body.to_string();
        let etag = etag_of(&text);
        let matches = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str());
        if answer.status == StatusCode::OK && matches {
            s.counters.not_modified += 1;
            let mut r = StatusCode::NOT_MODIFIED.into_response();
            put(r.headers_mut(), "etag", etag);
            (with_limits(&s, &op, r), vec![])
        } else {
            if op.name != "graphql" {
                s.remaining -= 1;
            }
            s.counters.rate_limited += 1;
            let body = if answer.status == StatusCode::NO_CONTENT {
                String::new()
            } else {
                text
            };
            let mut r = (
                answer.status,
                [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
                body,
            )
                .into_response();
            if answer.status == StatusCode::OK {
                put(r.headers_mut(), "etag", etag);
            }
            if let Some(link) = answer.link {
                put(r.headers_mut(), "link", link);
            }
            if let Some(secs) = answer.retry_after {
                put(r.headers_mut(), "retry-after", secs.to_string());
            }
            (with_limits(&s, &op, r), answer.deliveries)
        }
    };
    for (event, payload) in deliveries {
        sim.deliver(event, payload);
    }
    response
}
