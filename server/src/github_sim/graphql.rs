//! GitHub's GraphQL endpoint over the simulated world: pull requests' review
//! decision, review threads and merge-queue entries, repositories' merge
//! queues, and the enqueue and dequeue mutations. Errors come back as GitHub
//! sends them: status 200 with an `errors` list.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Simulator;
use super::api::{Answer, Op, api};
use super::gql_parse::{Field, cost, parse, project};
use super::gql_pull;
use super::shapes::ts;
use super::state::{QueueEntry, SimPr, SimRepo, SimState};

#[derive(Deserialize, Default)]
struct Request {
    #[serde(default)]
    query: String,
    #[serde(default)]
    variables: Option<Map<String, Value>>,
}

fn error(message: &str, kind: &str) -> Answer {
    Answer::ok(json!({"data": null, "errors": [{"type": kind, "message": message}]}))
}

/// The repository a request names, for per-repository faults (a batch's
/// first repository).
fn named_repo(req: &Request) -> Option<(String, String)> {
    let v = req.variables.as_ref()?;
    let pair = |o: &str, n: &str| Some((v.get(o)?.as_str()?.to_string(), v.get(n)?.as_str()?.to_string()));
    pair("owner", "name").or_else(|| pair("o0", "n0"))
}

pub async fn endpoint(State(sim): State<Simulator>, h: HeaderMap, body: Bytes) -> Response {
    let req: Request = serde_json::from_slice(&body).unwrap_or_default();
    let named = named_repo(&req);
    let op = match &named {
        Some((o, n)) => Op::repo("graphql", o, n),
        None => Op::global("graphql"),
    };
    api(&sim, &h, op, |s| {
        s.counters.graphql += 1;
        let vars = req.variables.clone().unwrap_or_default();
        let op = match parse(&req.query, &vars) {
            Ok(op) => op,
            Err(e) => {
                return Answer::new(
                    StatusCode::OK,
                    json!({"errors": [{"message": format!("Parse error: {e}")}]}),
                );
            }
        };
        if !op.mutation && s.faults.graphql_timeouts > 0 {
            s.faults.graphql_timeouts -= 1;
            return Answer::ok(json!({"data": null, "errors": [{"message":
                "Something went wrong while executing your query. This may be the result of a timeout, \
                 or it could be a GitHub bug. Please include `0400:3B2F:1A2B3C:4D5E6F:67890ABC` when reporting this issue."}]}));
        }
        if op.mutation && s.faults.mutations_rate_limited > 0 {
            s.faults.mutations_rate_limited -= 1;
            return Answer::secondary_limit(1);
        }
        // Points, as GitHub charges them: a query by the connections it may
        // read, a mutation one.
        let points = if op.mutation { 1 } else { cost(&op.selection) };
        let now = Utc::now().timestamp();
        if now >= s.gql_reset {
            s.gql_remaining = s.gql_limit;
            s.gql_reset = now + 3600;
        }
        if s.gql_remaining < points {
            return Answer::ok(json!({"errors": [{"type": "RATE_LIMITED",
                "message": format!("API rate limit exceeded for user ID 1. Resets at {}.", s.gql_reset)}]}));
        }
        s.gql_remaining -= points;
        s.gql_last_cost = points;
        s.counters.graphql_points += points as u64;
        let mut errors = vec![];
        let mut data = Map::new();
        for field in &op.selection {
            let resolved = if op.mutation {
                mutate(s, field)
            } else {
                query(s, field, &mut errors)
            };
            match resolved {
                Ok(v) => {
                    data.insert(field.key().to_string(), v);
                }
                Err((m, kind)) => return error(&m, kind),
            }
        }
        if errors.is_empty() {
            Answer::ok(json!({"data": data}))
        } else {
            Answer::ok(json!({"data": data, "errors": errors}))
        }
    })
    .await
}

/// A field that resolved to nothing: `null` in the data, its error beside
/// it with the path to it (GitHub answers the rest of the query).
fn missing(errors: &mut Vec<Value>, path: &[&str], message: String) -> Value {
    errors.push(json!({"type": "NOT_FOUND", "path": path, "message": message,
                       "locations": [{"line": 1, "column": 1}]}));
    Value::Null
}

type Resolved = Result<Value, (String, &'static str)>;

fn invalid(m: String) -> (String, &'static str) {
    (m, "INVALID")
}

fn arg<'a>(f: &'a Field, name: &str) -> Option<&'a Value> {
    f.args.get(name)
}

fn query(s: &SimState, f: &Field, errors: &mut Vec<Value>) -> Resolved {
    match f.name.as_str() {
        "repository" => {
            let (Some(owner), Some(name)) = (
                arg(f, "owner").and_then(Value::as_str),
                arg(f, "name").and_then(Value::as_str),
            ) else {
                return Err(invalid("repository needs owner and name".into()));
            };
            // `followRenames` defaults to true: an old name finds the repository.
            let Some(repo) = s.repo(owner, name) else {
                let m = format!("Could not resolve to a Repository with the name '{owner}/{name}'.");
                return Ok(missing(errors, &[f.key()], m));
            };
            repository(repo, f, errors)
        }
        "rateLimit" => Ok(project(
            &json!({"__typename": "RateLimit", "limit": s.gql_limit, "remaining": s.gql_remaining,
                    "used": s.gql_limit - s.gql_remaining, "cost": s.gql_last_cost,
                    "resetAt": ts(chrono::DateTime::from_timestamp(s.gql_reset, 0))}),
            &f.selection,
        )
        .map_err(invalid)?),
        other => Err(invalid(format!("Field '{other}' doesn't exist on type 'Query'"))),
    }
}

fn repository(repo: &SimRepo, f: &Field, errors: &mut Vec<Value>) -> Resolved {
    let mut out = Map::new();
    for sel in &f.selection {
        let v = match sel.name.as_str() {
            "pullRequest" => {
                let n = arg(sel, "number").and_then(Value::as_i64).unwrap_or(0);
                match repo.prs.get(&n) {
                    Some(pr) => pull_request(repo, pr.as_read(), sel)?,
                    None => missing(
                        errors,
                        &[f.key(), sel.key()],
                        format!("Could not resolve to a PullRequest with the number of {n}."),
                    ),
                }
            }
            "mergeQueue" => {
                let branch = arg(sel, "branch")
                    .and_then(Value::as_str)
                    .unwrap_or(&repo.default_branch);
                if repo.merge_queue(branch) {
                    let entries = queue_of(repo, branch).len();
                    project(
                        &json!({"__typename": "MergeQueue", "id": format!("MQ_{}_{branch}", repo.id),
                                "url": format!("https://github.com/{}/{}/queue/{branch}", repo.owner, repo.name),
                                "entries": {"__typename": "MergeQueueEntryConnection", "totalCount": entries}}),
                        &sel.selection,
                    )
                    .map_err(invalid)?
                } else {
                    Value::Null
                }
            }
            "object" => {
                let expression = arg(sel, "expression").and_then(Value::as_str).unwrap_or_default();
                match super::trees::directory(repo, expression) {
                    Some(tree) => project(&tree, &sel.selection).map_err(invalid)?,
                    None => Value::Null,
                }
            }
            "nameWithOwner" => json!(format!("{}/{}", repo.owner, repo.name)),
            "id" => json!(format!("R_kgDO{}", repo.id)),
            other => return Err(invalid(format!("Field '{other}' doesn't exist on type 'Repository'"))),
        };
        out.insert(sel.key().to_string(), v);
    }
    Ok(Value::Object(out))
}

/// The open, queued PRs of a base branch, front first.
fn queue_of<'a>(repo: &'a SimRepo, base: &str) -> Vec<&'a SimPr> {
    let mut q: Vec<&SimPr> = repo
        .prs
        .values()
        .filter(|p| p.base_ref == base && p.state == "open" && p.queue.is_some())
        .collect();
    q.sort_by_key(|p| p.queue.as_ref().map(|e| e.id));
    q
}

fn entry_json(repo: &SimRepo, pr: &SimPr, e: &QueueEntry) -> Value {
    let position = queue_of(repo, &pr.base_ref)
        .iter()
        .position(|p| p.number == pr.number)
        .map(|i| i + 1)
        .unwrap_or(0);
    let state = if e.merge_group_sha.is_some() {
        "AWAITING_CHECKS"
    } else {
        "QUEUED"
    };
    json!({"__typename": "MergeQueueEntry", "id": format!("MQE_{}", e.id), "state": state,
           "position": position, "enqueuedAt": ts(e.enqueued_at), "headCommit": {"oid": pr.head_sha}})
}

/// The fields of a selection on `kind`, fragments on it spread in place.
fn fields_on<'a>(selection: &'a [Field], kind: &str) -> Vec<&'a Field> {
    selection
        .iter()
        .flat_map(|f| match &f.on_type {
            Some(on) if on == kind => fields_on(&f.selection, kind),
            Some(_) => vec![],
            None => vec![f],
        })
        .collect()
}

fn pull_request(repo: &SimRepo, pr: &SimPr, f: &Field) -> Resolved {
    let mut out = Map::new();
    let mut full: Option<Value> = None;
    for sel in fields_on(&f.selection, "PullRequest") {
        let v = match sel.name.as_str() {
            "timelineItems" => {
                let nodes: Vec<Value> = pr
                    .dequeued_reason
                    .iter()
                    .map(|r| json!({"__typename": "RemovedFromMergeQueueEvent", "reason": r}))
                    .collect();
                project(
                    &json!({"__typename": "PullRequestTimelineItemsConnection", "nodes": nodes}),
                    &sel.selection,
                )
                .map_err(invalid)?
            }
            "mergeQueueEntry" => match (&pr.queue, pr.state == "open") {
                (Some(e), true) => project(&entry_json(repo, pr, e), &sel.selection).map_err(invalid)?,
                _ => Value::Null,
            },
            _ => {
                let whole = full.get_or_insert_with(|| gql_pull::pull(repo, pr));
                match project(whole, std::slice::from_ref(sel)).map_err(invalid)? {
                    Value::Object(mut m) => m.remove(sel.key()).unwrap_or(Value::Null),
                    _ => Value::Null,
                }
            }
        };
        out.insert(sel.key().to_string(), v);
    }
    Ok(Value::Object(out))
}

/// The (owner, name, number) of a PR's node id.
fn find_node(s: &SimState, id: &str) -> Option<(String, String, i64)> {
    s.repos.values().find_map(|r| {
        r.prs
            .values()
            .find(|p| p.node_id() == id)
            .map(|p| (r.owner.clone(), r.name.clone(), p.number))
    })
}

fn mutate(s: &mut SimState, f: &Field) -> Resolved {
    let input = arg(f, "input").cloned().unwrap_or(Value::Null);
    let node = match f.name.as_str() {
        "enqueuePullRequest" => input.get("pullRequestId"),
        "dequeuePullRequest" => input.get("id"),
        other => return Err(invalid(format!("Field '{other}' doesn't exist on type 'Mutation'"))),
    }
    .and_then(Value::as_str)
    .unwrap_or_default()
    .to_string();
    let Some((o, r, n)) = find_node(s, &node) else {
        return Err((
            format!("Could not resolve to a node with the global id of '{node}'"),
            "NOT_FOUND",
        ));
    };
    let id = s.next_id();
    let Some(repo) = s.repo_mut(&o, &r) else {
        return Err(invalid("no repository".into()));
    };
    let snapshot = repo.prs.get(&n).cloned().unwrap_or_default();
    if f.name == "dequeuePullRequest" {
        if snapshot.queue.is_none() {
            return Err(invalid("Pull request is not in the merge queue".into()));
        }
        let entry = snapshot.queue.clone().unwrap_or_default();
        let payload = json!({"__typename": "DequeuePullRequestPayload",
                             "mergeQueueEntry": entry_json(repo, &snapshot, &entry)});
        if let Some(pr) = repo.prs.get_mut(&n) {
            pr.queue = None;
            pr.dequeued_reason = Some("Removed by a person (dequeued)".into());
        }
        return project(&payload, &f.selection).map_err(invalid);
    }
    if !repo.merge_queue(&snapshot.base_ref) {
        return Err(invalid("Merge queue is not enabled for this branch".into()));
    }
    if let Some(expected) = input.get("expectedHeadOid").and_then(Value::as_str)
        && expected != snapshot.head_sha
    {
        return Err(invalid(
            "Expected head oid does not match the pull request's head".into(),
        ));
    }
    if snapshot.state != "open" || snapshot.conflict || snapshot.draft {
        return Err(invalid("Pull request is not in a mergeable state".into()));
    }
    if let Some(m) = repo.review_blocker(&snapshot) {
        return Err(invalid(m));
    }
    if let Some(pr) = repo.prs.get_mut(&n)
        && pr.queue.is_none()
    {
        pr.queue = Some(QueueEntry {
            id,
            enqueued_at: Some(Utc::now()),
            merge_group_sha: None,
        });
        pr.dequeued_reason = None;
        pr.enqueue_count += 1;
    }
    let Some(pr) = repo.prs.get(&n) else {
        return Err(invalid("no pull request".into()));
    };
    let entry = pr.queue.clone().unwrap_or_default();
    project(
        &json!({"__typename": "EnqueuePullRequestPayload", "mergeQueueEntry": entry_json(repo, pr, &entry)}),
        &f.selection,
    )
    .map_err(invalid)
}
