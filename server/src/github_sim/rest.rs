//! GitHub's REST endpoints, as Kandev uses them, answered from the world
//! with GitHub's statuses and messages.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{Answer, Op, Paging, api, message, not_found};
use super::rules::mergeable_known;
use super::shapes::{self, API};
use super::state::{SimPr, SimState};
use super::webhooks;
use super::{Simulator, moves};

type PrPath = Path<(String, String, i64)>;
type RefPath = Path<(String, String, String)>;

pub fn router(sim: Simulator) -> Router {
    let named = routes(sim.clone()).layer(axum::middleware::from_fn_with_state(sim.clone(), moves::redirect_moved));
    Router::new()
        .route(
            "/repositories/{id}/{*rest}",
            axum::routing::any_service(moves::by_id(sim, named.clone())),
        )
        .merge(named)
}

fn routes(sim: Simulator) -> Router {
    Router::new()
        .route("/repos/{owner}/{repo}/pulls", get(super::pull_list::list_pulls))
        .route("/repos/{owner}/{repo}/pulls/{number}", get(pull))
        .route("/repos/{owner}/{repo}/pulls/{number}/reviews", get(reviews))
        .route("/repos/{owner}/{repo}/pulls/{number}/merge", put(merge))
        .route("/repos/{owner}/{repo}/pulls/{number}/update-branch", put(update_branch))
        .route(
            "/repos/{owner}/{repo}/compare/{*basehead}",
            get(super::compare::compare),
        )
        .route("/repos/{owner}/{repo}/git/trees/{*sha}", get(super::trees::tree))
        .route("/repos/{owner}/{repo}/commits/{git_ref}/check-runs", get(check_runs))
        .route("/repos/{owner}/{repo}/commits/{git_ref}/status", get(combined_status))
        .route(
            "/repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks",
            get(required_checks),
        )
        .route(
            "/repos/{owner}/{repo}/branches/{branch}/protection/required_pull_request_reviews",
            get(required_reviews),
        )
        .route("/repos/{owner}/{repo}/rules/branches/{branch}", get(branch_rules))
        .route(
            "/repos/{owner}/{repo}/deployments",
            get(super::deployments::deployments),
        )
        .route(
            "/repos/{owner}/{repo}/deployments/{id}/statuses",
            get(super::deployments::statuses),
        )
        .route("/repos/{owner}/{repo}/git/refs/heads/{*branch}", delete(delete_branch))
        .route("/search/issues", get(search_issues))
        .route("/search/repositories", get(search_repositories))
        .route("/user/orgs", get(orgs))
        .route("/rate_limit", get(rate_limit))
        .route("/graphql", post(super::graphql::endpoint))
        .with_state(sim)
}

async fn pull(State(sim): State<Simulator>, Path((o, r, n)): PrPath, h: HeaderMap) -> Response {
    api(&sim, &h, Op::repo("pull", &o, &r), |s| {
        match s
            .repo(&o, &r)
            .and_then(|repo| repo.prs.get(&n).map(|pr| repo.pull_json(pr.as_read())))
        {
            Some(body) => Answer::ok(body),
            None => not_found(),
        }
    })
    .await
}

async fn reviews(
    State(sim): State<Simulator>,
    Path((o, r, n)): PrPath,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("reviews", &o, &r), |s| {
        let Some((repo, pr)) = s.repo(&o, &r).and_then(|repo| Some((repo, repo.prs.get(&n)?))) else {
            return not_found();
        };
        let all: Vec<Value> = pr.reviews.iter().map(|rv| repo.review_json(pr, rv)).collect();
        let (page, link) = paging.page(all, &format!("{API}/repos/{o}/{r}/pulls/{n}/reviews"));
        let mut a = Answer::ok(json!(page));
        a.link = link;
        a
    })
    .await
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
    Path((o, r, git_ref)): RefPath,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("check_runs", &o, &r), |s| {
        let (Some(sha), Some(repo)) = (resolve_sha(s, &o, &r, &git_ref), s.repo(&o, &r)) else {
            return not_found();
        };
        let runs: Vec<Value> = repo
            .check_runs
            .get(&sha)
            .into_iter()
            .flatten()
            .map(|c| repo.check_run_json(&sha, c))
            .collect();
        let total = runs.len();
        let (page, link) = paging.page(runs, &format!("{API}/repos/{o}/{r}/commits/{git_ref}/check-runs"));
        let mut a = Answer::ok(json!({"total_count": total, "check_runs": page}));
        a.link = link;
        a
    })
    .await
}

async fn combined_status(
    State(sim): State<Simulator>,
    Path((o, r, git_ref)): RefPath,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("status", &o, &r), |s| {
        let (Some(sha), Some(repo)) = (resolve_sha(s, &o, &r, &git_ref), s.repo(&o, &r)) else {
            return not_found();
        };
        let list = repo.statuses.get(&sha).cloned().unwrap_or_default();
        let state = if list.iter().any(|x| x.state == "failure" || x.state == "error") {
            "failure"
        } else if list.is_empty() || list.iter().any(|x| x.state == "pending") {
            "pending"
        } else {
            "success"
        };
        let total = list.len();
        let all: Vec<Value> = list.iter().map(|x| repo.status_json(x)).collect();
        let url = format!("{API}/repos/{o}/{r}/commits/{sha}/status");
        let (page, link) = paging.page(all, &url);
        let mut a = Answer::ok(json!({
            "state": state, "sha": sha, "total_count": total, "statuses": page, "repository": repo.json(),
            "commit_url": format!("{API}/repos/{o}/{r}/commits/{sha}"), "url": url,
        }));
        a.link = link;
        a
    })
    .await
}

async fn required_checks(State(sim): State<Simulator>, Path((o, r, branch)): RefPath, h: HeaderMap) -> Response {
    api(&sim, &h, Op::repo("protection", &o, &r), |s| match s.repo(&o, &r) {
        Some(repo) => match &repo.required_checks {
            Some(list) => {
                let checks: Vec<Value> = list
                    .iter()
                    .map(|c| json!({"context": c.context, "app_id": c.app_id}))
                    .collect();
                let contexts: Vec<&String> = list.iter().map(|c| &c.context).collect();
                let url = format!("{API}/repos/{o}/{r}/branches/{branch}/protection/required_status_checks");
                Answer::ok(json!({"url": url.clone(), "contexts_url": format!("{url}/contexts"),
                                  "strict": repo.strict, "contexts": contexts, "checks": checks}))
            }
            None => message(StatusCode::NOT_FOUND, "Branch not protected"),
        },
        None => not_found(),
    })
    .await
}

/// Classic protection's review rule: 404 when the branch requires none.
async fn required_reviews(State(sim): State<Simulator>, Path((o, r, branch)): RefPath, h: HeaderMap) -> Response {
    api(&sim, &h, Op::repo("protection", &o, &r), |s| match s.repo(&o, &r) {
        Some(repo)
            if repo.required_approvals > 0
                || repo.protection_last_push_approval
                || repo.protection_code_owner_review =>
        {
            Answer::ok(json!({
                "url": format!("{API}/repos/{o}/{r}/branches/{branch}/protection/required_pull_request_reviews"),
                "dismiss_stale_reviews": false, "require_code_owner_reviews": repo.protection_code_owner_review,
                "require_last_push_approval": repo.protection_last_push_approval,
                "required_approving_review_count": repo.required_approvals,
            }))
        }
        Some(_) => message(StatusCode::NOT_FOUND, "Required pull request reviews not enabled."),
        None => not_found(),
    })
    .await
}

/// `GET /repos/{owner}/{repo}/rules/branches/{branch}`: the active rules.
async fn branch_rules(
    State(sim): State<Simulator>,
    Path((o, r, branch)): RefPath,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("rules", &o, &r), |s| {
        let Some(repo) = s.repo(&o, &r) else {
            return not_found();
        };
        let mut rules = vec![];
        if branch.eq_ignore_ascii_case(&repo.default_branch) {
            for rs in &repo.rulesets {
                let info = |kind: &str, params: Value| {
                    json!({"type": kind, "parameters": params, "ruleset_source_type": "Repository",
                           "ruleset_source": format!("{}/{}", repo.owner, repo.name), "ruleset_id": rs.id})
                };
                if !rs.required_checks.is_empty() {
                    let checks: Vec<Value> = rs
                        .required_checks
                        .iter()
                        .map(|c| match c.app_id {
                            Some(id) => json!({"context": c.context, "integration_id": id}),
                            None => json!({"context": c.context}),
                        })
                        .collect();
                    rules.push(info(
                        "required_status_checks",
                        json!({"required_status_checks": checks, "strict_required_status_checks_policy": rs.strict}),
                    ));
                }
                if rs.required_approvals > 0
                    || rs.thread_resolution
                    || rs.last_push_approval
                    || rs.code_owner_review
                    || rs.allowed_merge_methods.is_some()
                {
                    let methods = rs
                        .allowed_merge_methods
                        .clone()
                        .unwrap_or_else(|| vec!["merge".into(), "squash".into(), "rebase".into()]);
                    rules.push(info(
                        "pull_request",
                        json!({"required_approving_review_count": rs.required_approvals,
                               "required_review_thread_resolution": rs.thread_resolution,
                               "dismiss_stale_reviews_on_push": false, "require_code_owner_review": rs.code_owner_review,
                               "require_last_push_approval": rs.last_push_approval,
                               "allowed_merge_methods": methods}),
                    ));
                }
                // Rules without parameters.
                for (on, kind) in [(rs.linear_history, "required_linear_history"), (rs.signatures, "required_signatures")] {
                    if on {
                        rules.push(json!({"type": kind, "ruleset_source_type": "Repository",
                                          "ruleset_source": format!("{}/{}", repo.owner, repo.name), "ruleset_id": rs.id}));
                    }
                }
                if !rs.required_deployments.is_empty() {
                    rules.push(info(
                        "required_deployments",
                        json!({"required_deployment_environments": rs.required_deployments}),
                    ));
                }
                if rs.merge_queue {
                    rules.push(info(
                        "merge_queue",
                        json!({"check_response_timeout_minutes": 60, "grouping_strategy": "ALLGREEN",
                               "max_entries_to_build": 5, "max_entries_to_merge": 5, "merge_method": "SQUASH",
                               "min_entries_to_merge": 1, "min_entries_to_merge_wait_minutes": 0}),
                    ));
                }
            }
        }
        let (page, link) = paging.page(rules, &format!("{API}/repos/{o}/{r}/rules/branches/{branch}"));
        let mut a = Answer::ok(json!(page));
        a.link = link;
        a
    })
    .await
}

#[derive(Deserialize, Default)]
struct MergeBody {
    #[serde(default)]
    merge_method: Option<String>,
    #[serde(default)]
    sha: Option<String>,
}

async fn merge(State(sim): State<Simulator>, Path((o, r, n)): PrPath, h: HeaderMap, body: Bytes) -> Response {
    let req: MergeBody = serde_json::from_slice(&body).unwrap_or_default();
    api(&sim, &h, Op::repo("merge", &o, &r), |s| {
        s.counters.merge_calls += 1;
        let sha = s.new_sha();
        let fail_after = s.faults.merge_error_after_merge;
        if s.faults.base_moves_before_merge > 0
            && let Some(base) = s.repo(&o, &r).and_then(|x| x.prs.get(&n)).map(|p| p.base_ref.clone())
        {
            s.faults.base_moves_before_merge -= 1;
            s.base_moved(&o, &r, &base, None);
        }
        let Some(repo) = s.repo(&o, &r) else {
            return not_found();
        };
        let Some(pr) = repo.prs.get(&n) else { return not_found() };
        if let Some(expected) = req.sha.as_deref().filter(|x| !x.is_empty())
            && expected != pr.head_sha
            && pr.state == "open"
        {
            return message(
                StatusCode::CONFLICT,
                "Head branch was modified. Review and try the merge again.",
            );
        }
        let method = req.merge_method.clone().unwrap_or_else(|| "merge".into());
        if !["merge", "squash", "rebase"].contains(&method.as_str()) {
            return message(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
        }
        if pr.state == "open"
            && let Some((status, refusal)) = repo.method_refusal(&pr.base_ref, &method)
        {
            return message(status, &refusal);
        }
        if pr.state == "open" && pr.behind && repo.up_to_date_required(&pr.base_ref) {
            return message(
                StatusCode::CONFLICT,
                "Head branch is out of date. Review and try the merge again.",
            );
        }
        if pr.state == "open" && pr.base_moved && !mergeable_known(pr) {
            return message(
                StatusCode::METHOD_NOT_ALLOWED,
                "Base branch was modified. Review and try the merge again.",
            );
        }
        if let Some(refusal) = repo.merge_refusal(pr) {
            return message(StatusCode::METHOD_NOT_ALLOWED, &refusal);
        }
        s.close_merged(&o, &r, n, sha.clone(), &method);
        s.counters.merges += 1;
        let delivery = webhooks::pull_request(s, &o, &r, n, "closed");
        if fail_after {
            s.faults.merge_error_after_merge = false;
            return Answer::new(StatusCode::BAD_GATEWAY, json!({"message": "Server Error"}))
                .with_delivery("pull_request", delivery);
        }
        Answer::ok(json!({"sha": sha, "merged": true, "message": "Pull Request successfully merged"}))
            .with_delivery("pull_request", delivery)
    })
    .await
}

impl SimState {
    /// Marks a PR merged (by the API, the queue or a person); the caller
    /// counts merges made through the API.
    pub fn close_merged(&mut self, o: &str, r: &str, n: i64, sha: String, method: &str) {
        let Some(before) = self.pr_mut(o, r, n).map(|pr| pr.clone()) else {
            return;
        };
        self.lag_reads(o, r, n, before);
        let Some(pr) = self.pr_mut(o, r, n) else {
            return;
        };
        pr.state = "closed".into();
        pr.merged = true;
        pr.merged_at = Some(Utc::now());
        pr.closed_at = pr.merged_at;
        pr.updated_at = pr.merged_at;
        pr.merge_commit_sha = Some(sha);
        pr.merge_method = Some(method.to_string());
        pr.merge_count += 1;
        pr.queue = None;
        let base = pr.base_ref.clone();
        self.base_moved(o, r, &base, Some(n));
    }
}

#[derive(Deserialize, Default)]
struct UpdateBody {
    #[serde(default)]
    expected_head_sha: Option<String>,
}

/// GitHub answers 202 and merges the base into the head later: until then
/// reads show the old head, still behind.
async fn update_branch(State(sim): State<Simulator>, Path((o, r, n)): PrPath, h: HeaderMap, body: Bytes) -> Response {
    let req: UpdateBody = serde_json::from_slice(&body).unwrap_or_default();
    api(&sim, &h, Op::repo("update_branch", &o, &r), |s| {
        let delay = chrono::Duration::milliseconds(s.timing.update_branch_delay_ms as i64);
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
        // Nobody but the fork's author may push there. (GitHub's exact words
        // are not documented; Kandev reads `maintainer_can_modify` first.)
        if pr.head_repo.is_some() && pr.maintainers_locked_out {
            return message(StatusCode::FORBIDDEN, "Resource not accessible by integration");
        }
        if !pr.behind && pr.update_lands_at.is_none() {
            return message(
                StatusCode::UNPROCESSABLE_ENTITY,
                "There are no new commits on the base branch.",
            );
        }
        if pr.update_lands_at.is_none() {
            pr.update_lands_at = Some(Utc::now() + delay);
            pr.update_branch_count += 1;
        }
        Answer::new(
            StatusCode::ACCEPTED,
            json!({"message": "Updating pull request branch.", "url": format!("https://github.com/{o}/{r}/pull/{n}")}),
        )
    })
    .await
}

async fn delete_branch(State(sim): State<Simulator>, Path((o, r, branch)): RefPath, h: HeaderMap) -> Response {
    api(&sim, &h, Op::repo("delete_branch", &o, &r), |s| {
        // The branch lives where the PR's head does: the base repository, or
        // its fork. A fork's branch is never in the base repository.
        let here = format!("{o}/{r}").to_lowercase();
        let known_repo = s.repo(&o, &r).is_some()
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
            Some(pr) => pr.head_branch_deleted = true,
            None => return message(StatusCode::UNPROCESSABLE_ENTITY, "Reference does not exist"),
        }
        // GitHub closes the PRs based on a deleted branch (only its own
        // auto-delete retargets them first).
        let mut answer = Answer::new(StatusCode::NO_CONTENT, Value::Null);
        for delivery in s.close_based_on(&o, &r, &branch) {
            answer = answer.with_delivery("pull_request", delivery);
        }
        answer
    })
    .await
}

#[derive(Deserialize)]
struct SearchQuery {
    #[serde(default)]
    q: String,
}

async fn search_issues(State(sim): State<Simulator>, Query(q): Query<SearchQuery>, h: HeaderMap) -> Response {
    api(&sim, &h, Op::global("search_issues"), |s| {
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
            for pr in repo.prs.values().map(SimPr::as_read) {
                if want_open.is_some_and(|open| open != (pr.state == "open")) {
                    continue;
                }
                items.push(repo.issue_item_json(pr));
            }
        }
        Answer::ok(
            json!({"total_count": items.len(), "incomplete_results": false, "items": items,
                          "search_type": "lexical"}),
        )
    })
    .await
}

async fn search_repositories(State(sim): State<Simulator>, Query(q): Query<SearchQuery>, h: HeaderMap) -> Response {
    api(&sim, &h, Op::global("search_repositories"), |s| {
        let mut owner = None;
        let mut words = vec![];
        for token in q.q.split_whitespace() {
            if let Some(o) = token.strip_prefix("org:").or_else(|| token.strip_prefix("user:")) {
                owner = Some(o.to_lowercase());
            } else if !token.starts_with("in:") {
                words.push(token.to_lowercase());
            }
        }
        let mut repos: Vec<_> = s
            .repos
            .values()
            .filter(|r| owner.as_ref().is_none_or(|o| r.owner.to_lowercase() == *o))
            .filter(|r| words.iter().all(|w| r.name.to_lowercase().contains(w)))
            .collect();
        repos.sort_by_key(|r| format!("{}/{}", r.owner, r.name));
        let items: Vec<Value> = repos.into_iter().map(shapes::repo_search_item).collect();
        Answer::ok(json!({"total_count": items.len(), "incomplete_results": false, "items": items}))
    })
    .await
}

async fn orgs(State(sim): State<Simulator>, h: HeaderMap) -> Response {
    api(&sim, &h, Op::global("orgs"), |s| {
        Answer::ok(json!(s.orgs.iter().map(|o| shapes::org(o)).collect::<Vec<_>>()))
    })
    .await
}

async fn rate_limit(State(sim): State<Simulator>) -> Response {
    let s = sim.lock();
    let core = json!({"limit": s.limit, "remaining": s.remaining, "reset": s.reset, "used": s.limit - s.remaining});
    axum::Json(json!({"resources": {"core": core, "search": core}, "rate": core})).into_response()
}
