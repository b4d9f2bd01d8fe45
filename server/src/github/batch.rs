//! Batched PR reads over GraphQL for the sweep. A *probe* reads a few
//! scalars of up to 100 PRs for one point; only the PRs whose probe changed
//! (or whose last full read is old) get a *detail* read, also up to 100 a
//! query, which carries everything a link row holds. A PR GraphQL cannot
//! answer comes back `None` and is read over REST instead.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::client::{GithubClient, GithubResult};
use super::model::{GitRef, PullRequest, User};
use super::sync::PrParts;
use kandev_core::checks::{Check, ListedRun, current_runs, from_commit_status};
use kandev_core::merger::{Rule, branch_rules, unresolved_threads};

/// PRs per query: GitHub's page size, and what keeps a query's cost low.
pub const BATCH: usize = 100;

/// One PR to read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrKey {
    pub owner: String,
    pub repo: String,
    pub number: i64,
}

/// What changes when anything on the row may have changed, for one point
/// per hundred PRs: state, head, mergeability, the review decision, the
/// PR's own edits (`updatedAt`) and the head commit's check counts.
const PROBE: &str = "fragment P on PullRequest { number state merged updatedAt headRefOid mergeStateStatus \
reviewDecision headRef { target { ... on Commit { statusCheckRollup { state contexts(first: 1) { \
checkRunCountsByState { state count } statusContextCountsByState { state count } } } } } } }";

/// Everything a link row holds.
const DETAIL: &str = "fragment P on PullRequest { number url title state merged mergedAt closedAt headRefName \
headRefOid baseRefName author { login } additions deletions mergeStateStatus \
reviewRequests(first: 100) { totalCount nodes { requestedReviewer { __typename } } } \
reviews(first: 100) { totalCount nodes { author { login } state } } \
reviewThreads(first: 100) { totalCount nodes { isResolved } } \
commits(last: 1) { totalCount nodes { commit { oid statusCheckRollup { contexts(first: 100) { totalCount nodes { \
__typename ... on CheckRun { databaseId name status conclusion detailsUrl checkSuite { app { databaseId } } } ... on StatusContext { context state targetUrl } } } } } } } \
baseRef { branchProtectionRule { requiredApprovingReviewCount } rules(first: 100) { totalCount nodes { type \
parameters { __typename ... on PullRequestParameters { requiredApprovingReviewCount } } } } } }";

/// The query for `keys` (aliases `r<i>` per repository, `p<k>` per key) and its variables.
fn query(keys: &[PrKey], fragment: &str) -> (String, Value) {
    let mut repos: Vec<(String, String, Vec<usize>)> = vec![];
    for (k, key) in keys.iter().enumerate() {
        let same = |r: &&mut (String, String, Vec<usize>)| {
            r.0.eq_ignore_ascii_case(&key.owner) && r.1.eq_ignore_ascii_case(&key.repo)
        };
        match repos.iter_mut().find(same) {
            Some(r) => r.2.push(k),
            None => repos.push((key.owner.clone(), key.repo.clone(), vec![k])),
        }
    }
    let mut params = vec![];
    let mut body = String::from("rateLimit { cost remaining resetAt } ");
    let mut vars = Map::new();
    for (i, (owner, repo, ks)) in repos.iter().enumerate() {
        params.push(format!("$o{i}: String!, $n{i}: String!"));
        vars.insert(format!("o{i}"), json!(owner));
        vars.insert(format!("n{i}"), json!(repo));
        body.push_str(&format!("r{i}: repository(owner: $o{i}, name: $n{i}) {{ "));
        for k in ks {
            body.push_str(&format!("p{k}: pullRequest(number: {}) {{ ...P }} ", keys[*k].number));
        }
        body.push_str("} ");
    }
    let text = format!("query Sweep({}) {{ {body}}} {fragment}", params.join(", "));
    (text, Value::Object(vars))
}

/// Each key's PR node, `None` where GraphQL answered it with an error.
fn nodes(keys: &[PrKey], data: Option<Value>) -> Vec<Option<Value>> {
    let data = data.unwrap_or(Value::Null);
    let mut out = vec![None; keys.len()];
    let Some(obj) = data.as_object() else { return out };
    for repo in obj.iter().filter(|(k, _)| k.starts_with('r') && *k != "rateLimit") {
        let Some(prs) = repo.1.as_object() else { continue };
        for (alias, node) in prs {
            if let Some(k) = alias.strip_prefix('p').and_then(|n| n.parse::<usize>().ok())
                && k < out.len()
                && !node.is_null()
            {
                out[k] = Some(node.clone());
            }
        }
    }
    out
}

/// GitHub's cost of a batch: `connections` per PR, a hundred requests a point.
fn points(prs: usize, connections: usize) -> i64 {
    (((prs * connections) as f64 / 100.0).round() as i64).max(1)
}

impl GithubClient {
    /// Sends one batch unless GraphQL's budget, as GitHub last reported it,
    /// cannot pay for it: then it waits for the refill without asking.
    async fn batch(&self, keys: &[PrKey], fragment: &str, connections: usize) -> GithubResult<Vec<Option<Value>>> {
        if let Some((remaining, reset)) = self.graphql_budget()
            && remaining < points(keys.len(), connections)
            && reset > super::client::epoch_now()
        {
            return Err(super::client::GithubError::RateLimited(reset));
        }
        let (text, vars) = query(keys, fragment);
        let (data, errors) = self.graphql_raw(&text, vars, true).await?;
        if data.is_none()
            && let Some(e) = errors.first()
        {
            return Err(super::client::GithubError::Graphql(e.message.clone()));
        }
        Ok(nodes(keys, data))
    }

    /// The probe of each PR, as its JSON (compared as a whole).
    pub async fn probe_prs(&self, keys: &[PrKey]) -> GithubResult<Vec<Option<Value>>> {
        self.batch(keys, PROBE, 1).await
    }

    /// The full read of each PR; `None` where GraphQL could not answer it
    /// whole (an error, or more than a page of reviews, checks or threads).
    pub(crate) async fn detail_prs(&self, keys: &[PrKey]) -> GithubResult<Vec<Option<PrParts>>> {
        Ok(self
            .batch(keys, DETAIL, 6)
            .await?
            .into_iter()
            .map(|n| {
                n.and_then(|v| {
                    serde_json::from_value::<Detail>(v)
                        .inspect_err(|e| tracing::warn!(error = %e, "a PR's GraphQL answer did not decode; reading it over REST"))
                        .ok()
                })
                .and_then(Detail::parts)
            })
            .collect())
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Login {
    login: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Conn<T> {
    total_count: usize,
    nodes: Vec<T>,
}

impl<T> Conn<T> {
    /// Every node is here (no second page to read).
    fn whole(&self) -> bool {
        self.nodes.len() >= self.total_count
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    requested_reviewer: Option<Typed>,
}

#[derive(Deserialize)]
struct Typed {
    #[serde(rename = "__typename")]
    kind: String,
}

#[derive(Deserialize)]
struct ReviewNode {
    author: Option<Login>,
    state: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Thread {
    is_resolved: bool,
}

#[derive(Deserialize)]
struct CommitNode {
    commit: Commit,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Commit {
    status_check_rollup: Option<Rollup>,
}

#[derive(Deserialize)]
struct Rollup {
    contexts: Conn<Context>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Context {
    #[serde(rename = "__typename")]
    kind: String,
    name: String,
    status: String,
    conclusion: Option<String>,
    details_url: Option<String>,
    context: String,
    state: String,
    target_url: Option<String>,
    database_id: Option<i64>,
    check_suite: Option<Suite>,
}

#[derive(Deserialize, Default)]
struct Suite {
    app: Option<App>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct App {
    database_id: Option<i64>,
}

/// The rollup's contexts as the REST read folds them: the newest run of each
/// check (the rollup keeps superseded re-runs too), then the commit statuses.
fn contexts_checks(contexts: &[Context]) -> Vec<Check> {
    let lower = |s: &str| s.to_ascii_lowercase();
    let (statuses, runs): (Vec<&Context>, Vec<&Context>) = contexts.iter().partition(|c| c.kind == "StatusContext");
    let lowered: Vec<(String, Option<String>)> = runs
        .iter()
        .map(|c| (lower(&c.status), c.conclusion.as_deref().map(lower)))
        .collect();
    let mut checks = current_runs(runs.iter().zip(&lowered).map(|(c, (status, conclusion))| {
        ListedRun {
            id: c.database_id.unwrap_or(0),
            app: c
                .check_suite
                .as_ref()
                .and_then(|s| s.app.as_ref())
                .and_then(|a| a.database_id)
                .unwrap_or(0),
            name: &c.name,
            status,
            conclusion: conclusion.as_deref(),
            url: c.details_url.as_deref().unwrap_or(""),
        }
    }));
    checks.extend(
        statuses
            .iter()
            .map(|c| from_commit_status(&c.context, &lower(&c.state), c.target_url.as_deref().unwrap_or(""))),
    );
    checks
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BaseRef {
    branch_protection_rule: Option<Protection>,
    rules: Conn<RuleNode>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Protection {
    required_approving_review_count: Option<u32>,
}

#[derive(Deserialize)]
struct RuleNode {
    #[serde(rename = "type")]
    kind: String,
    parameters: Option<RuleParams>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RuleParams {
    required_approving_review_count: u32,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    number: i64,
    url: String,
    title: String,
    state: String,
    merged: bool,
    merged_at: Option<String>,
    closed_at: Option<String>,
    head_ref_name: String,
    head_ref_oid: String,
    base_ref_name: String,
    author: Option<Login>,
    additions: i64,
    deletions: i64,
    merge_state_status: String,
    review_requests: Conn<Request>,
    reviews: Conn<ReviewNode>,
    review_threads: Conn<Thread>,
    commits: Conn<CommitNode>,
    base_ref: Option<BaseRef>,
}

impl Detail {
    /// The row's parts, as REST would have read them; `None` when a list
    /// has more than one page (REST reads those whole).
    fn parts(self) -> Option<PrParts> {
        let rollup = self
            .commits
            .nodes
            .into_iter()
            .next()
            .and_then(|c| c.commit.status_check_rollup);
        let complete = self.review_requests.whole()
            && self.reviews.whole()
            && self.review_threads.whole()
            && rollup.as_ref().is_none_or(|r| r.contexts.whole())
            && self.base_ref.as_ref().is_none_or(|b| b.rules.whole());
        if !complete {
            return None;
        }
        let contexts = rollup.map(|r| r.contexts.nodes).unwrap_or_default();
        let checks = contexts_checks(&contexts);
        let state = if self.merged || self.state == "MERGED" {
            "closed"
        } else {
            &self.state
        }
        .to_ascii_lowercase();
        let open = state == "open";
        let (required_reviews, unresolved) = match (&self.base_ref, open) {
            (Some(base), true) => {
                let rules: Vec<Rule> = base
                    .rules
                    .nodes
                    .iter()
                    .map(|r| Rule {
                        kind: r.kind.to_ascii_lowercase(),
                        required_checks: vec![],
                        required_approvals: r.parameters.as_ref().map_or(0, |p| p.required_approving_review_count),
                        ..Default::default()
                    })
                    .collect();
                let protection = base
                    .branch_protection_rule
                    .as_ref()
                    .and_then(|p| p.required_approving_review_count)
                    .unwrap_or(0);
                let required = branch_rules(&rules)
                    .with_protection_approvals(protection)
                    .required_approvals;
                let unresolved = unresolved_threads(self.review_threads.nodes.iter().map(|t| t.is_resolved));
                (i64::from(required), i64::from(unresolved))
            }
            _ => (0, 0),
        };
        let users = self
            .review_requests
            .nodes
            .iter()
            .filter(|r| r.requested_reviewer.as_ref().is_some_and(|t| t.kind == "User"))
            .map(|_| User::default())
            .collect();
        let pr = PullRequest {
            number: self.number,
            state,
            title: self.title,
            html_url: self.url,
            user: User {
                login: self.author.map(|a| a.login).unwrap_or_else(|| "ghost".into()),
            },
            head: GitRef {
                branch: self.head_ref_name,
                sha: self.head_ref_oid,
                ..Default::default()
            },
            base: GitRef {
                branch: self.base_ref_name,
                ..Default::default()
            },
            merged: self.merged,
            merged_at: self.merged_at,
            closed_at: self.closed_at,
            mergeable_state: self.merge_state_status.to_ascii_lowercase(),
            additions: self.additions,
            deletions: self.deletions,
            requested_reviewers: users,
            ..Default::default()
        };
        Some(PrParts {
            pr,
            reviews: self
                .reviews
                .nodes
                .into_iter()
                .map(|r| (r.author.map(|a| a.login).unwrap_or_default(), r.state))
                .collect(),
            checks,
            required_reviews,
            unresolved_review_threads: unresolved,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(owner: &str, repo: &str, number: i64) -> PrKey {
        PrKey {
            owner: owner.into(),
            repo: repo.into(),
            number,
        }
    }

    #[test]
    fn a_batch_groups_prs_by_repository_and_aliases_each_by_its_index() {
        let keys = [key("acme", "api", 7), key("other", "web", 1), key("ACME", "API", 9)];
        let (text, vars) = query(&keys, "fragment P on PullRequest { number }");
        assert!(text.contains(
            "r0: repository(owner: $o0, name: $n0) { p0: pullRequest(number: 7) { ...P } p2: pullRequest(number: 9)"
        ));
        assert!(text.contains("r1: repository(owner: $o1, name: $n1) { p1: pullRequest(number: 1)"));
        assert_eq!(vars, json!({"o0": "acme", "n0": "api", "o1": "other", "n1": "web"}));
        let data = json!({"rateLimit": {"cost": 1}, "r0": {"p0": {"number": 7}, "p2": null}, "r1": null});
        assert_eq!(nodes(&keys, Some(data)), vec![Some(json!({"number": 7})), None, None]);
    }
}
