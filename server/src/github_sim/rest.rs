//! GitHub's REST endpoints, as Kandev uses them, with rate-limit headers,
//! ETags and 304s for conditional requests.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, put};
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Simulator;
use super::state::SimState;
use super::webhooks;

type Outcome = (StatusCode, Value, Option<(&'static str, Option<Value>)>);

fn not_found() -> Outcome {
    (
        StatusCode::NOT_FOUND,
        json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
        None,
    )
}

fn message(status: StatusCode, m: &str) -> Outcome {
    (status, json!({"message": m}), None)
}

fn etag_of(body: &str) -> String {
    let mut h = DefaultHasher::new();
    body.hash(&mut h);
    format!("\"{:016x}\"", h.finish())
}

/// Accounts for one request: authentication, the budget, conditional reads.
fn api(sim: &Simulator, headers: &HeaderMap, search: bool, f: impl FnOnce(&mut SimState) -> Outcome) -> Response {
    let (response, delivery) = {
        let mut s = sim.lock();
        s.counters.requests += 1;
        let now = Utc::now().timestamp();
        if now >= s.reset {
            s.remaining = s.limit;
            s.reset = now + 3600;
        }
        let limits = |s: &SimState, mut r: Response| {
            let h = r.headers_mut();
            let put = |h: &mut HeaderMap, k: &'static str, v: String| {
                if let Ok(v) = HeaderValue::from_str(&v) {
                    h.insert(k, v);
                }
            };
            put(h, "x-ratelimit-limit", s.limit.to_string());
            put(h, "x-ratelimit-remaining", s.remaining.max(0).to_string());
            put(h, "x-ratelimit-reset", s.reset.to_string());
            put(h, "x-ratelimit-used", (s.limit - s.remaining.max(0)).to_string());
            put(
                h,
                "x-ratelimit-resource",
                if search { "search".into() } else { "core".into() },
            );
            r
        };
        if headers.get(header::AUTHORIZATION).is_none() {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"message": "Requires authentication"})),
            )
                .into_response();
        }
        if s.faults.revoked_token {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})),
            )
                .into_response();
        }
        if s.faults.server_errors > 0 {
            s.faults.server_errors -= 1;
            return (StatusCode::BAD_GATEWAY, axum::Json(json!({"message": "Server Error"}))).into_response();
        }
        if s.remaining <= 0 {
            let r = (
                StatusCode::FORBIDDEN,
                axum::Json(json!({"message": "API rate limit exceeded for user."})),
            )
                .into_response();
            return limits(&s, r);
        }
        let (status, body, delivery) = f(&mut s);
        let text = body.to_string();
        let etag = etag_of(&text);
        let matches = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str());
        if status == StatusCode::OK && matches {
            s.counters.not_modified += 1;
            let mut r = StatusCode::NOT_MODIFIED.into_response();
            if let Ok(v) = HeaderValue::from_str(&etag) {
                r.headers_mut().insert(header::ETAG, v);
            }
            (limits(&s, r), None)
        } else {
            s.remaining -= 1;
            s.counters.rate_limited += 1;
            let mut r = (
                status,
                [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
                text,
            )
                .into_response();
            if status == StatusCode::OK
                && let Ok(v) = HeaderValue::from_str(&etag)
            {
                r.headers_mut().insert(header::ETAG, v);
            }
            (limits(&s, r), delivery)
        }
    };
    if let Some((event, payload)) = delivery {
        sim.deliver(event, payload);
    }
    response
}

pub fn router(sim: Simulator) -> Router {
    Router::new()
        .route("/repos/{owner}/{repo}/pulls/{number}", get(pull))
        .route("/repos/{owner}/{repo}/pulls/{number}/reviews", get(reviews))
        .route("/repos/{owner}/{repo}/pulls/{number}/merge", put(merge))
        .route("/repos/{owner}/{repo}/pulls/{number}/update-branch", put(update_branch))
        .route("/repos/{owner}/{repo}/commits/{git_ref}/check-runs", get(check_runs))
        .route("/repos/{owner}/{repo}/commits/{git_ref}/status", get(combined_status))
        .route(
            "/repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks",
            get(required_checks),
        )
        .route("/repos/{owner}/{repo}/git/refs/heads/{*branch}", delete(delete_branch))
        .route("/search/issues", get(search_issues))
        .route("/search/repositories", get(search_repositories))
        .route("/user/orgs", get(orgs))
        .route("/rate_limit", get(rate_limit))
        .with_state(sim)
}

async fn pull(State(sim): State<Simulator>, Path((o, r, n)): Path<(String, String, i64)>, h: HeaderMap) -> Response {
    api(&sim, &h, false, |s| {
        match s
            .repo(&o, &r)
            .and_then(|repo| repo.prs.get(&n).map(|pr| repo.pull_json(pr)))
        {
            Some(body) => (StatusCode::OK, body, None),
            None => not_found(),
        }
    })
}

async fn reviews(State(sim): State<Simulator>, Path((o, r, n)): Path<(String, String, i64)>, h: HeaderMap) -> Response {
    api(&sim, &h, false, |s| {
        match s.repo(&o, &r).and_then(|repo| repo.prs.get(&n)) {
            Some(pr) => {
                let list: Vec<Value> = pr
                .reviews
                .iter()
                .map(|rv| json!({"id": rv.id, "user": {"login": rv.user}, "state": rv.state, "commit_id": pr.head_sha}))
                .collect();
                (StatusCode::OK, json!(list), None)
            }
            None => not_found(),
        }
    })
}

/// A ref is a sha, or a branch name that is some open PR's head.
fn resolve_sha(s: &SimState, o: &str, r: &str, git_ref: &str) -> Option<String> {
    let repo = s.repo(o, r)?;
    if let Some(pr) = repo.prs.values().find(|p| p.head_ref == git_ref && p.state == "open") {
        return Some(pr.head_sha.clone());
    }
    Some(git_ref.to_string())
}

async fn check_runs(
    State(sim): State<Simulator>,
    Path((o, r, git_ref)): Path<(String, String, String)>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, false, |s| {
        let Some(sha) = resolve_sha(s, &o, &r, &git_ref) else {
            return not_found();
        };
        let runs: Vec<Value> = s
            .repo(&o, &r)
            .and_then(|repo| repo.check_runs.get(&sha))
            .map(|v| {
                v.iter()
                    .map(|c| {
                        json!({"id": c.id, "name": c.name, "status": c.status, "conclusion": c.conclusion,
                                    "html_url": c.html_url, "head_sha": sha})
                    })
                    .collect()
            })
            .unwrap_or_default();
        (
            StatusCode::OK,
            json!({"total_count": runs.len(), "check_runs": runs}),
            None,
        )
    })
}

async fn combined_status(
    State(sim): State<Simulator>,
    Path((o, r, git_ref)): Path<(String, String, String)>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, false, |s| {
        let Some(sha) = resolve_sha(s, &o, &r, &git_ref) else {
            return not_found();
        };
        let list = s
            .repo(&o, &r)
            .and_then(|repo| repo.statuses.get(&sha))
            .cloned()
            .unwrap_or_default();
        let state = if list.iter().any(|x| x.state == "failure" || x.state == "error") {
            "failure"
        } else if list.is_empty() || list.iter().any(|x| x.state == "pending") {
            "pending"
        } else {
            "success"
        };
        let statuses: Vec<Value> = list
            .iter()
            .map(|x| json!({"context": x.context, "state": x.state, "target_url": x.target_url}))
            .collect();
        (
            StatusCode::OK,
            json!({"state": state, "sha": sha, "total_count": statuses.len(), "statuses": statuses}),
            None,
        )
    })
}

async fn required_checks(
    State(sim): State<Simulator>,
    Path((o, r, _branch)): Path<(String, String, String)>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, false, |s| match s.repo(&o, &r) {
        Some(repo) => match &repo.required_checks {
            Some(list) => {
                let checks: Vec<Value> = list.iter().map(|c| json!({"context": c, "app_id": null})).collect();
                (
                    StatusCode::OK,
                    json!({"strict": true, "contexts": list, "checks": checks}),
                    None,
                )
            }
            None => message(StatusCode::NOT_FOUND, "Branch not protected"),
        },
        None => not_found(),
    })
}

#[derive(Deserialize, Default)]
struct MergeBody {
    #[serde(default)]
    merge_method: Option<String>,
    #[serde(default)]
    sha: Option<String>,
}

async fn merge(
    State(sim): State<Simulator>,
    Path((o, r, n)): Path<(String, String, i64)>,
    h: HeaderMap,
    body: Bytes,
) -> Response {
    let req: MergeBody = serde_json::from_slice(&body).unwrap_or_default();
    api(&sim, &h, false, |s| {
        let sha = s.new_sha();
        let fail_after = s.faults.merge_error_after_merge;
        let Some(repo) = s.repo_mut(&o, &r) else {
            return not_found();
        };
        let Some(pr) = repo.prs.get(&n) else { return not_found() };
        if pr.state != "open" {
            return message(StatusCode::METHOD_NOT_ALLOWED, "Pull Request is not mergeable");
        }
        if pr.draft {
            return message(StatusCode::METHOD_NOT_ALLOWED, "Pull Request is still a draft");
        }
        if pr.conflict {
            return message(StatusCode::METHOD_NOT_ALLOWED, "Pull Request is not mergeable");
        }
        if let Some(expected) = req.sha.as_deref().filter(|x| !x.is_empty())
            && expected != pr.head_sha
        {
            return message(
                StatusCode::CONFLICT,
                "Head branch was modified. Review and try the merge again.",
            );
        }
        if let Err(e) = repo.required_green(&pr.head_sha) {
            return message(StatusCode::METHOD_NOT_ALLOWED, &e);
        }
        let method = req.merge_method.unwrap_or_else(|| "merge".into());
        let Some(pr) = repo.prs.get_mut(&n) else {
            return not_found();
        };
        pr.state = "closed".into();
        pr.merged = true;
        pr.merged_at = Some(Utc::now());
        pr.closed_at = pr.merged_at;
        pr.merge_commit_sha = Some(sha.clone());
        pr.merge_method = Some(method);
        pr.merge_count += 1;
        s.counters.merges += 1;
        let delivery = Some(("pull_request", webhooks::pull_request(s, &o, &r, n, "closed")));
        if fail_after {
            s.faults.merge_error_after_merge = false;
            return (StatusCode::BAD_GATEWAY, json!({"message": "Server Error"}), delivery);
        }
        (
            StatusCode::OK,
            json!({"sha": sha, "merged": true, "message": "Pull Request successfully merged"}),
            delivery,
        )
    })
}

#[derive(Deserialize, Default)]
struct UpdateBody {
    #[serde(default)]
    expected_head_sha: Option<String>,
}

async fn update_branch(
    State(sim): State<Simulator>,
    Path((o, r, n)): Path<(String, String, i64)>,
    h: HeaderMap,
    body: Bytes,
) -> Response {
    let req: UpdateBody = serde_json::from_slice(&body).unwrap_or_default();
    api(&sim, &h, false, |s| {
        let sha = s.new_sha();
        let Some(pr) = s.pr_mut(&o, &r, n) else {
            return not_found();
        };
        if pr.state != "open" {
            return message(StatusCode::UNPROCESSABLE_ENTITY, "Pull request is not open.");
        }
        if let Some(expected) = req.expected_head_sha.as_deref().filter(|x| !x.is_empty())
            && expected != pr.head_sha
        {
            return message(
                StatusCode::UNPROCESSABLE_ENTITY,
                "expected head sha didn't match current head ref.",
            );
        }
        if pr.conflict {
            return message(StatusCode::UNPROCESSABLE_ENTITY, "merge conflict between base and head");
        }
        if !pr.behind {
            return message(
                StatusCode::UNPROCESSABLE_ENTITY,
                "There are no new commits on the base branch.",
            );
        }
        pr.head_sha = sha;
        pr.behind = false;
        pr.update_branch_count += 1;
        let delivery = Some(("pull_request", webhooks::pull_request(s, &o, &r, n, "synchronize")));
        (
            StatusCode::ACCEPTED,
            json!({"message": "Updating pull request branch.", "url": format!("https://github.com/{o}/{r}/pull/{n}")}),
            delivery,
        )
    })
}

async fn delete_branch(
    State(sim): State<Simulator>,
    Path((o, r, branch)): Path<(String, String, String)>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, false, |s| {
        // The branch lives where the PR's head does: the base repository, or
        // its fork. A fork's branch is never in the base repository.
        let here = format!("{o}/{r}").to_lowercase();
        let known_repo = s.repo_mut(&o, &r).is_some()
            || s.repos.values().any(|repo| {
                repo.prs
                    .values()
                    .any(|p| p.head_repo.as_deref().is_some_and(|f| f.to_lowercase() == here))
            });
        if !known_repo {
            return not_found();
        }
        let found = s.repos.iter_mut().find_map(|((owner, name), repo)| {
            let base = format!("{owner}/{name}").to_lowercase();
            repo.prs.values_mut().find(|p| {
                let lives_in = p
                    .head_repo
                    .as_deref()
                    .map(str::to_lowercase)
                    .unwrap_or_else(|| base.clone());
                lives_in == here && p.head_ref == branch && !p.head_branch_deleted
            })
        });
        match found {
            Some(pr) => {
                pr.head_branch_deleted = true;
                (StatusCode::NO_CONTENT, Value::Null, None)
            }
            None => message(StatusCode::UNPROCESSABLE_ENTITY, "Reference does not exist"),
        }
    })
}

#[derive(Deserialize)]
struct SearchQuery {
    #[serde(default)]
    q: String,
}

async fn search_issues(State(sim): State<Simulator>, Query(q): Query<SearchQuery>, h: HeaderMap) -> Response {
    api(&sim, &h, true, |s| {
        let mut repo_filter: Option<(String, String)> = None;
        let mut want_open = None;
        for token in q.q.split_whitespace() {
            if let Some(full) = token.strip_prefix("repo:")
                && let Some((o, n)) = full.split_once('/')
            {
                repo_filter = Some((o.to_string(), n.to_string()));
            }
            match token {
                "is:open" | "state:open" => want_open = Some(true),
                "is:closed" | "state:closed" => want_open = Some(false),
                _ => {}
            }
        }
        let mut items = vec![];
        for repo in s.repos.values() {
            if let Some((o, n)) = &repo_filter
                && !(repo.owner.eq_ignore_ascii_case(o) && repo.name.eq_ignore_ascii_case(n))
            {
                continue;
            }
            for pr in repo.prs.values() {
                if want_open.is_some_and(|open| open != (pr.state == "open")) {
                    continue;
                }
                let html = format!("https://github.com/{}/{}/pull/{}", repo.owner, repo.name, pr.number);
                items.push(
                    json!({"number": pr.number, "title": pr.title, "html_url": html, "state": pr.state,
                    "user": {"login": pr.author}, "draft": pr.draft,
                    "repository_url": format!("https://api.github.com/repos/{}/{}", repo.owner, repo.name),
                    "labels": pr.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>(),
                    "pull_request": {"html_url": html}}),
                );
            }
        }
        (
            StatusCode::OK,
            json!({"total_count": items.len(), "incomplete_results": false, "items": items}),
            None,
        )
    })
}

async fn search_repositories(State(sim): State<Simulator>, Query(q): Query<SearchQuery>, h: HeaderMap) -> Response {
    api(&sim, &h, true, |s| {
        let mut owner = None;
        let mut words = vec![];
        for token in q.q.split_whitespace() {
            if let Some(o) = token.strip_prefix("org:").or_else(|| token.strip_prefix("user:")) {
                owner = Some(o.to_lowercase());
            } else if !token.starts_with("in:") {
                words.push(token.to_lowercase());
            }
        }
        let mut items: Vec<Value> = s
            .repos
            .values()
            .filter(|r| owner.as_ref().is_none_or(|o| r.owner.to_lowercase() == *o))
            .filter(|r| words.iter().all(|w| r.name.to_lowercase().contains(w)))
            .map(|r| json!({"name": r.name, "full_name": format!("{}/{}", r.owner, r.name), "owner": {"login": r.owner}, "private": r.private}))
            .collect();
        items.sort_by_key(|v| v["full_name"].as_str().unwrap_or_default().to_string());
        (
            StatusCode::OK,
            json!({"total_count": items.len(), "incomplete_results": false, "items": items}),
            None,
        )
    })
}

async fn orgs(State(sim): State<Simulator>, h: HeaderMap) -> Response {
    api(&sim, &h, false, |s| {
        let list: Vec<Value> = s.orgs.iter().map(|o| json!({"login": o})).collect();
        (StatusCode::OK, json!(list), None)
    })
}

async fn rate_limit(State(sim): State<Simulator>) -> Response {
    let s = sim.lock();
    let core = json!({"limit": s.limit, "remaining": s.remaining, "reset": s.reset, "used": s.limit - s.remaining});
    axum::Json(json!({"resources": {"core": core, "search": core}, "rate": core})).into_response()
}
