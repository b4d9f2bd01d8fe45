//! A pull request as GitHub's GraphQL schema shows it: scalars, its author,
//! reviews, review requests and threads, the head commit's check rollup
//! (through `commits` and `headRef`), and the base branch's protection and
//! ruleset rules. Connections carry every node; the projector pages them by
//! the query's `first`/`last`, and refuses a connection read without either.

use serde_json::{Value, json};

use super::rules::Verdict;
use super::shapes::{app_slug, ts};
use super::state::{SimPr, SimRepo};

pub fn connection(kind: &str, nodes: Vec<Value>) -> Value {
    json!({"__typename": kind, "__connection": true, "totalCount": nodes.len(), "nodes": nodes})
}

fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}

fn author(login: &str) -> Value {
    // A deleted account is `null` in GraphQL (REST says "ghost").
    if login.is_empty() {
        Value::Null
    } else {
        json!({"__typename": "User", "login": login})
    }
}

/// Counts per state, as `checkRunCountsByState` and `statusContextCountsByState` give them.
fn counts(states: &[String]) -> Value {
    let mut out: Vec<(String, usize)> = vec![];
    for s in states {
        match out.iter_mut().find(|(k, _)| k == s) {
            Some(e) => e.1 += 1,
            None => out.push((s.clone(), 1)),
        }
    }
    Value::Array(
        out.into_iter()
            .map(|(state, count)| json!({"__typename": "CheckRunStateCount", "state": state, "count": count}))
            .collect(),
    )
}

/// A commit with its check rollup: `null` when nothing reported on it.
fn commit(repo: &SimRepo, sha: &str) -> Value {
    let runs = repo.check_runs.get(sha).cloned().unwrap_or_default();
    let statuses = repo.statuses.get(sha).cloned().unwrap_or_default();
    let run_states: Vec<String> = runs
        .iter()
        .map(|r| match (&r.status[..], &r.conclusion) {
            ("completed", Some(c)) => upper(c),
            (s, _) => upper(s),
        })
        .collect();
    let status_states: Vec<String> = statuses.iter().map(|s| upper(&s.state)).collect();
    // GitHub's rollup state, like its merge box, judges each check's newest run.
    let latest = repo.latest_checks(sha);
    let failed = latest.iter().any(|c| c.verdict == Verdict::Failure);
    let pending = latest.iter().any(|c| c.verdict == Verdict::Pending);
    let mut nodes: Vec<Value> = runs
        .iter()
        .map(|r| {
            json!({"__typename": "CheckRun", "databaseId": r.id, "name": r.name, "status": upper(&r.status),
                   "conclusion": r.conclusion.as_deref().map(upper), "detailsUrl": r.html_url,
                   "checkSuite": {"__typename": "CheckSuite", "app": {"__typename": "App",
                                  "databaseId": r.app, "slug": app_slug(r.app)}}})
        })
        .collect();
    nodes.extend(statuses.iter().map(|s| {
        json!({"__typename": "StatusContext", "context": s.context, "state": upper(&s.state),
               "targetUrl": s.target_url})
    }));
    let rollup = if nodes.is_empty() {
        Value::Null
    } else {
        let mut contexts = connection("StatusCheckRollupContextConnection", nodes);
        contexts["checkRunCount"] = json!(runs.len());
        contexts["checkRunCountsByState"] = counts(&run_states);
        contexts["statusContextCount"] = json!(statuses.len());
        contexts["statusContextCountsByState"] = counts(&status_states);
        let state = if failed {
            "FAILURE"
        } else if pending {
            "PENDING"
        } else {
            "SUCCESS"
        };
        json!({"__typename": "StatusCheckRollup", "state": state, "contexts": contexts})
    };
    json!({"__typename": "Commit", "oid": sha, "statusCheckRollup": rollup})
}

/// The base branch: classic protection (when any) and the ruleset rules on it.
fn base_ref(repo: &SimRepo, pr: &SimPr) -> Value {
    let protection = (repo.required_approvals > 0 || repo.required_checks.is_some()).then(|| {
        json!({"__typename": "BranchProtectionRule", "requiresApprovingReviews": repo.required_approvals > 0,
               "requiredApprovingReviewCount": repo.required_approvals,
               "requiredStatusCheckContexts": repo.required_checks.iter().flatten().map(|c| &c.context).collect::<Vec<_>>(),
               "requiredStatusChecks": repo.required_checks.iter().flatten()
                   .map(|c| json!({"__typename": "RequiredStatusCheckDescription", "context": c.context,
                                   "app": c.app_id.map(|id| json!({"__typename": "App", "databaseId": id,
                                                                   "slug": app_slug(id)}))}))
                   .collect::<Vec<_>>()})
    });
    let mut rules = vec![];
    if pr.base_ref.eq_ignore_ascii_case(&repo.default_branch) {
        for r in &repo.rulesets {
            rules.push(json!({"__typename": "RepositoryRule", "type": "PULL_REQUEST",
                "parameters": {"__typename": "PullRequestParameters",
                               "requiredApprovingReviewCount": r.required_approvals,
                               "requiredReviewThreadResolution": r.thread_resolution}}));
            if !r.required_checks.is_empty() {
                let checks: Vec<Value> = r
                    .required_checks
                    .iter()
                    .map(|c| {
                        json!({"__typename": "StatusCheckConfiguration", "context": c.context,
                                    "integrationId": c.app_id})
                    })
                    .collect();
                rules.push(json!({"__typename": "RepositoryRule", "type": "REQUIRED_STATUS_CHECKS",
                    "parameters": {"__typename": "RequiredStatusChecksParameters", "requiredStatusChecks": checks}}));
            }
            if r.merge_queue {
                rules.push(json!({"__typename": "RepositoryRule", "type": "MERGE_QUEUE",
                    "parameters": {"__typename": "MergeQueueParameters"}}));
            }
        }
    }
    json!({"__typename": "Ref", "name": pr.base_ref, "branchProtectionRule": protection,
           "rules": connection("RepositoryRuleConnection", rules)})
}

/// Every field of a PR the simulator answers, except the merge-queue ones
/// (resolved beside it).
pub fn pull(repo: &SimRepo, pr: &SimPr) -> Value {
    let known = super::rules::mergeable_known(pr);
    let state = if pr.merged {
        "MERGED".to_string()
    } else {
        upper(&pr.state)
    };
    let mergeable = match (pr.state == "open" && known, pr.conflict) {
        (false, _) => "UNKNOWN",
        (true, true) => "CONFLICTING",
        (true, false) => "MERGEABLE",
    };
    let reviews: Vec<Value> = pr
        .reviews
        .iter()
        .map(|r| json!({"__typename": "PullRequestReview", "author": author(&r.user), "state": r.state}))
        .collect();
    let requests: Vec<Value> = repo
        .review_requests(pr)
        .into_iter()
        .map(|(l, as_owner)| {
            json!({"__typename": "ReviewRequest", "requestedReviewer": author(&l), "asCodeOwner": as_owner})
        })
        .collect();
    let threads: Vec<Value> = pr
        .threads
        .iter()
        .map(|t| {
            json!({"__typename": "PullRequestReviewThread", "id": format!("PRRT_{}", t.id),
                   "isResolved": t.resolved, "path": t.path, "isOutdated": false})
        })
        .collect();
    let head = commit(repo, &pr.head_sha);
    let head_ref =
        (!pr.head_branch_deleted).then(|| json!({"__typename": "Ref", "name": pr.head_ref, "target": head.clone()}));
    json!({
        "__typename": "PullRequest", "id": pr.node_id(), "number": pr.number,
        "url": repo.pr_html(pr.number), "title": pr.title, "state": state, "merged": pr.merged,
        "isDraft": pr.draft, "mergedAt": ts(pr.merged_at), "closedAt": ts(pr.closed_at),
        "createdAt": ts(pr.created_at), "updatedAt": ts(pr.updated_at),
        "headRefName": pr.head_ref, "headRefOid": pr.head_sha, "baseRefName": pr.base_ref,
        "author": author(&pr.author), "additions": pr.additions, "deletions": pr.deletions,
        "mergeable": mergeable, "mergeStateStatus": upper(repo.mergeable_state(pr)),
        "reviewDecision": repo.review_decision(pr),
        "isInMergeQueue": pr.queue.is_some() && pr.state == "open",
        "reviews": connection("PullRequestReviewConnection", reviews),
        "reviewRequests": connection("ReviewRequestConnection", requests),
        "reviewThreads": connection("PullRequestReviewThreadConnection", threads),
        "commits": connection("PullRequestCommitConnection",
                              vec![json!({"__typename": "PullRequestCommit", "commit": head})]),
        "headRef": head_ref,
        "baseRef": base_ref(repo, pr),
    })
}
