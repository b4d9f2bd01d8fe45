//! A thin GitHub REST client: token auth, timeouts, retries with backoff for
//! idempotent reads only, primary and secondary rate limits, and conditional
//! requests (a 304 costs no rate limit) for everything the poller re-reads.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{ACCEPT, AUTHORIZATION, ETAG, HeaderMap, IF_NONE_MATCH, RETRY_AFTER, USER_AGENT};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::etags::{DEFAULT_BUDGET, EtagCache};
use super::model::*;
use crate::metrics::Metrics;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GithubError {
    #[error("GitHub is not configured (no token)")]
    NotConfigured,
    #[error("GitHub refused the credentials")]
    Unauthorized,
    #[error("not found on GitHub")]
    NotFound,
    #[error("GitHub answered 403: {0}")]
    Forbidden(String),
    /// 405: e.g. a PR that cannot be merged.
    #[error("not allowed: {0}")]
    NotAllowed(String),
    /// 409: e.g. the head moved.
    #[error("conflict: {0}")]
    Conflict(String),
    /// 422
    #[error("unprocessable: {0}")]
    Unprocessable(String),
    /// Until when, in epoch seconds.
    #[error("rate limited until {}", utc_text(*.0))]
    RateLimited(u64),
    #[error("GitHub server error {0}")]
    Server(u16),
    #[error("GitHub did not answer in time")]
    Timeout,
    #[error("transport: {0}")]
    Transport(String),
    #[error("unexpected response: {0}")]
    Decode(String),
    /// A GraphQL `errors` answer.
    #[error("GitHub GraphQL: {0}")]
    Graphql(String),
    /// A read GitHub answered only in part (a GraphQL query that timed out
    /// on its side, a commit one API knows and the other not yet): asking
    /// again later may complete it.
    #[error("GitHub answered in part: {0}")]
    Incomplete(String),
    /// A name that cannot be put in a GitHub URL (`..`, empty): nothing was sent.
    #[error("{0}")]
    BadName(String),
}

impl From<kandev_core::github_path::BadName> for GithubError {
    fn from(e: kandev_core::github_path::BadName) -> Self {
        GithubError::BadName(e.0)
    }
}

use kandev_core::checks::{Check, Requirement, from_commit_status};
use kandev_core::github_path::{PER_PAGE, git_ref as ref_path, graphql_url, next_page, query_value, repo as repo_path};
use kandev_core::merger::ProtectionReviews;

/// Epoch seconds as a time a person reads in a block reason.
fn utc_text(epoch: u64) -> String {
    i64::try_from(epoch)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map_or_else(|| epoch.to_string(), |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
}

impl GithubError {
    /// Whether a request may have been applied even though it failed.
    pub fn is_uncertain(&self) -> bool {
        matches!(
            self,
            GithubError::Server(_) | GithubError::Timeout | GithubError::Transport(_)
        )
    }

    pub fn is_rate_limit(&self) -> bool {
        matches!(self, GithubError::RateLimited(_))
    }
}

pub type GithubResult<T> = Result<T, GithubError>;

const GATE_QUERY: &str = "query MergeGate($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id
      state
      merged
      reviewDecision
      reviewThreads(first: 100, after: $after) { totalCount nodes { isResolved } pageInfo { hasNextPage endCursor } }
      reviewRequests(first: 100) {
        nodes { asCodeOwner requestedReviewer { __typename ... on User { login } ... on Team { combinedSlug } } }
      }
      mergeQueueEntry { id position state }
      timelineItems(last: 1, itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT]) {
        nodes { ... on RemovedFromMergeQueueEvent { reason } }
      }
    }
  }
}";

const ENQUEUE: &str = "mutation Enqueue($id: ID!, $sha: GitObjectID!) {
  enqueuePullRequest(input: {pullRequestId: $id, expectedHeadOid: $sha}) { mergeQueueEntry { id position state } }
}";

const DEQUEUE: &str = "mutation Dequeue($id: ID!) {
  dequeuePullRequest(input: {id: $id}) { mergeQueueEntry { id } }
}";

#[derive(Debug, Clone, Copy, Default)]
struct Budget {
    remaining: i64,
    reset: u64,
}

pub struct GithubClient {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
    metrics: Metrics,
    /// URL → (ETag, body) of the last 200, for conditional re-reads.
    etags: Mutex<EtagCache>,
    budgets: Mutex<HashMap<String, Budget>>,
    /// Branch → when GitHub last said it requires no reviews. A 404 has no
    /// ETag, so without this every sweep would pay for it on every PR.
    no_review_rule: Mutex<HashMap<String, std::time::Instant>>,
    github_clock: std::sync::atomic::AtomicI64,
}

/// How long a "no review rule" answer is believed.
const NO_RULE_TTL: Duration = Duration::from_secs(60);

pub(crate) fn epoch_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn header_i64(h: &HeaderMap, name: &str) -> Option<i64> {
    h.get(name)?.to_str().ok()?.parse().ok()
}

impl GithubClient {
    pub fn new(base: &str, token: Option<String>, timeout: Duration, metrics: Metrics) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .build()
            .unwrap_or_default();
        GithubClient {
            http,
            // Concatenate onto a trimmed base so an Enterprise `/api/v3` prefix survives.
            base: base.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.trim().is_empty()),
            metrics,
            etags: Mutex::new(EtagCache::new(DEFAULT_BUDGET)),
            no_review_rule: Mutex::new(HashMap::new()),
            budgets: Mutex::new(HashMap::new()),
            github_clock: Default::default(),
        }
    }

    pub fn is_configured(&self) -> bool {
        self.token.is_some()
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn bucket(path: &str) -> &'static str {
        if path.starts_with("/search/") {
            "search"
        } else if path.ends_with("/graphql") {
            "graphql"
        } else {
            "core"
        }
    }

    fn note_budget(&self, headers: &HeaderMap, path: &str) {
        let (Some(remaining), Some(reset)) = (
            header_i64(headers, "x-ratelimit-remaining"),
            header_i64(headers, "x-ratelimit-reset"),
        ) else {
            return;
        };
        let bucket = headers
            .get("x-ratelimit-resource")
            .and_then(|v| v.to_str().ok())
            .map(|s| match s {
                "search" => "search",
                "graphql" => "graphql",
                _ => "core",
            })
            .unwrap_or(Self::bucket(path));
        let limit = header_i64(headers, "x-ratelimit-limit").unwrap_or(0);
        self.metrics.github_budget(bucket, remaining);
        let previous = self.budgets.lock().unwrap_or_else(|p| p.into_inner()).insert(
            bucket.to_string(),
            Budget {
                remaining,
                reset: reset.max(0) as u64,
            },
        );
        // Say so once when the budget runs low, not on every request.
        let was_low = previous.is_some_and(|b| limit > 0 && b.remaining * 10 < limit);
        if limit > 0 && remaining * 10 < limit && !was_low {
            tracing::warn!(bucket, remaining, limit, reset, "GitHub rate-limit budget is low");
        } else {
            tracing::debug!(bucket, remaining, limit, "GitHub rate-limit budget");
        }
    }

    fn exhausted(&self, path: &str) -> Option<u64> {
        let budgets = self.budgets.lock().unwrap_or_else(|p| p.into_inner());
        let b = budgets.get(Self::bucket(path))?;
        (b.remaining <= 0 && b.reset > epoch_now()).then_some(b.reset)
    }

    /// Seconds left of the budget window of a bucket, for the poller to defer.
    pub fn blocked_until(&self, bucket: &str) -> Option<u64> {
        self.exhausted(match bucket {
            "search" => "/search/",
            "graphql" => "/graphql",
            _ => "/",
        })
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
        conditional: bool,
    ) -> GithubResult<(StatusCode, bytes::Bytes)> {
        let token = self.token.as_ref().ok_or(GithubError::NotConfigured)?;
        if let Some(reset) = self.exhausted(path) {
            return Err(GithubError::RateLimited(reset));
        }
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{}", self.base, path)
        };
        let mut req = self
            .http
            .request(method.clone(), &url)
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .header(ACCEPT, "application/vnd.github+json")
            .header(USER_AGENT, "kandev")
            .header("X-GitHub-Api-Version", "2022-11-28");
        let cached = if conditional {
            self.etags.lock().unwrap_or_else(|p| p.into_inner()).get(&url)
        } else {
            None
        };
        if let Some((etag, _)) = &cached {
            req = req.header(IF_NONE_MATCH, etag);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.map_err(|e| {
            if e.is_timeout() {
                GithubError::Timeout
            } else {
                GithubError::Transport(e.to_string())
            }
        })?;
        let status = resp.status();
        self.metrics.github_request(status.as_u16());
        let headers = resp.headers().clone();
        self.note_clock(&headers);
        if status != StatusCode::NOT_MODIFIED {
            self.note_budget(&headers, path);
        }
        let bytes = resp.bytes().await.map_err(|e| GithubError::Transport(e.to_string()))?;
        if status == StatusCode::NOT_MODIFIED
            && let Some((_, body)) = cached
        {
            return Ok((StatusCode::OK, body));
        }
        if status.is_success() {
            if conditional && let Some(etag) = headers.get(ETAG).and_then(|v| v.to_str().ok()) {
                self.etags
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .put(url, etag.to_string(), bytes.clone());
            }
            return Ok((status, bytes));
        }
        let message = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_string))
            .unwrap_or_default();
        let limited = header_i64(&headers, "x-ratelimit-remaining") == Some(0)
            || headers.contains_key(RETRY_AFTER)
            || message.to_lowercase().contains("rate limit");
        Err(match status {
            StatusCode::UNAUTHORIZED => GithubError::Unauthorized,
            StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS if limited => {
                let wait = header_i64(&headers, "retry-after").map(|s| epoch_now() + s.max(0) as u64);
                let reset = header_i64(&headers, "x-ratelimit-reset").map(|r| r.max(0) as u64);
                if let Some(until) = wait {
                    // A secondary limit: nothing more on this bucket until it says.
                    self.budgets.lock().unwrap_or_else(|p| p.into_inner()).insert(
                        Self::bucket(path).to_string(),
                        Budget {
                            remaining: 0,
                            reset: until,
                        },
                    );
                }
                GithubError::RateLimited(wait.or(reset).unwrap_or(epoch_now() + 60))
            }
            StatusCode::FORBIDDEN => GithubError::Forbidden(message),
            StatusCode::NOT_FOUND => GithubError::NotFound,
            StatusCode::METHOD_NOT_ALLOWED => GithubError::NotAllowed(message),
            StatusCode::CONFLICT => GithubError::Conflict(message),
            StatusCode::UNPROCESSABLE_ENTITY => GithubError::Unprocessable(message),
            s if s.is_server_error() => GithubError::Server(s.as_u16()),
            s => GithubError::Decode(format!("status {s}: {message}")),
        })
    }

    /// An idempotent read: retried with backoff on server errors and
    /// timeouts, and after a short secondary rate-limit wait.
    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str, conditional: bool) -> GithubResult<T> {
        let mut delay = Duration::from_millis(200);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.send(Method::GET, path, None, conditional).await {
                Ok((_, bytes)) => {
                    return serde_json::from_slice(&bytes).map_err(|e| GithubError::Decode(e.to_string()));
                }
                Err(GithubError::RateLimited(until)) if attempt < 3 && until.saturating_sub(epoch_now()) <= 5 => {
                    tokio::time::sleep(Duration::from_secs(until.saturating_sub(epoch_now()).max(1))).await;
                }
                Err(e) if e.is_uncertain() && attempt < 3 => {
                    tracing::debug!(path, error = %e, attempt, "retrying a GitHub read");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// A write is sent once: it is never retried blindly.
    async fn write<T: DeserializeOwned, B: Serialize>(&self, method: Method, path: &str, body: &B) -> GithubResult<T> {
        let value = serde_json::to_value(body).map_err(|e| GithubError::Decode(e.to_string()))?;
        let (_, bytes) = self.send(method, path, Some(value), false).await?;
        if bytes.is_empty() {
            return serde_json::from_value(serde_json::Value::Null).map_err(|e| GithubError::Decode(e.to_string()));
        }
        serde_json::from_slice(&bytes).map_err(|e| GithubError::Decode(e.to_string()))
    }

    pub async fn pull(&self, owner: &str, repo: &str, number: i64) -> GithubResult<PullRequest> {
        self.get(&format!("{}/pulls/{number}", repo_path(owner, repo)?), true)
            .await
    }

    /// Every page of a list: `split` takes one decoded page apart into its
    /// items and GitHub's total, when it gives one.
    async fn pages<P: DeserializeOwned, I>(
        &self,
        path: &str,
        split: impl Fn(P) -> (Vec<I>, Option<usize>),
    ) -> GithubResult<Vec<I>> {
        let mut all = vec![];
        let mut page = 1;
        loop {
            let sep = if path.contains('?') { '&' } else { '?' };
            let one: P = self
                .get(&format!("{path}{sep}per_page={PER_PAGE}&page={page}"), true)
                .await?;
            let (items, total) = split(one);
            let got = items.len();
            all.extend(items);
            match next_page(page, got, all.len(), total) {
                Some(next) => page = next,
                None => return Ok(all),
            }
        }
    }

    pub async fn reviews(&self, owner: &str, repo: &str, number: i64) -> GithubResult<Vec<Review>> {
        self.pages(
            &format!("{}/pulls/{number}/reviews", repo_path(owner, repo)?),
            |page: Vec<Review>| (page, None),
        )
        .await
    }

    /// What `head` changes against `base` (a branch) since they parted: a
    /// PR's diff, pinned to a commit. Conditional: a commit's diff against
    /// an unmoved base is answered from the ETag cache.
    pub async fn compare(&self, owner: &str, repo: &str, base: &str, head: &str) -> GithubResult<Comparison> {
        let basehead = format!("{}...{}", ref_path(base)?, ref_path(head)?);
        self.get(
            &format!("{}/compare/{basehead}?per_page=1", repo_path(owner, repo)?),
            true,
        )
        .await
    }

    /// A commit's (or tree's) whole tree. Not conditional: a large tree
    /// would push many small answers out of the ETag cache, and it is read
    /// only for a new head of a diff compare cannot state.
    pub async fn tree(&self, owner: &str, repo: &str, sha: &str) -> GithubResult<GitTree> {
        self.get(
            &format!("{}/git/trees/{}?recursive=1", repo_path(owner, repo)?, ref_path(sha)?),
            false,
        )
        .await
    }

    /// A commit's checks as they count: each check's newest run (GitHub
    /// lists superseded re-runs too), then the combined status's contexts.
    pub async fn commit_checks(&self, owner: &str, repo: &str, sha: &str) -> GithubResult<Vec<Check>> {
        let mut checks = self.check_runs(owner, repo, sha).await?.current();
        let status = self.combined_status(owner, repo, sha).await?;
        checks.extend(
            status
                .statuses
                .iter()
                .map(|s| from_commit_status(&s.context, &s.state, s.target_url.as_deref().unwrap_or(""))),
        );
        Ok(checks)
    }

    /// Every check run of a commit, all pages.
    pub async fn check_runs(&self, owner: &str, repo: &str, git_ref: &str) -> GithubResult<CheckRuns> {
        let runs = self
            .pages(
                &format!("{}/commits/{}/check-runs", repo_path(owner, repo)?, ref_path(git_ref)?),
                |page: CheckRuns| {
                    let total = usize::try_from(page.total_count).ok();
                    (page.check_runs, total)
                },
            )
            .await?;
        Ok(CheckRuns {
            total_count: runs.len() as i64,
            check_runs: runs,
        })
    }

    /// A commit's combined status with every status, all pages.
    pub async fn combined_status(&self, owner: &str, repo: &str, git_ref: &str) -> GithubResult<CombinedStatus> {
        let first = std::sync::Mutex::new(None::<(String, String)>);
        let statuses = self
            .pages(
                &format!("{}/commits/{}/status", repo_path(owner, repo)?, ref_path(git_ref)?),
                |page: CombinedStatus| {
                    let mut f = first.lock().unwrap_or_else(|p| p.into_inner());
                    f.get_or_insert((page.state.clone(), page.sha.clone()));
                    (page.statuses, usize::try_from(page.total_count).ok())
                },
            )
            .await?;
        let (state, sha) = first
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_default();
        Ok(CombinedStatus {
            state,
            sha,
            total_count: statuses.len() as i64,
            statuses,
        })
    }

    /// The rules active on a branch (rulesets); empty when they cannot be
    /// read (an older GitHub Enterprise, or no permission).
    pub async fn branch_rules(&self, owner: &str, repo: &str, branch: &str) -> GithubResult<Vec<Rule>> {
        match self
            .pages(
                &format!("{}/rules/branches/{}", repo_path(owner, repo)?, ref_path(branch)?),
                |page: Vec<Rule>| (page, None),
            )
            .await
        {
            Ok(rules) => Ok(rules),
            Err(GithubError::NotFound | GithubError::Forbidden(_)) => Ok(vec![]),
            Err(e) => Err(e),
        }
    }

    /// A GraphQL request; a query is a read (retried like one), a mutation
    /// is sent once. GitHub's `errors` come back as [`GithubError::Graphql`].
    pub(crate) async fn graphql<T: DeserializeOwned>(
        &self,
        query: &str,
        variables: serde_json::Value,
        read: bool,
    ) -> GithubResult<T> {
        let (data, errors) = self.graphql_raw(query, variables, read).await?;
        if let Some(e) = errors.first() {
            return Err(if e.kind == "NOT_FOUND" {
                GithubError::NotFound
            } else {
                GithubError::Graphql(e.message.clone())
            });
        }
        let data = data.ok_or_else(|| GithubError::Decode("GraphQL answered without data".into()))?;
        serde_json::from_value(data).map_err(|e| GithubError::Decode(e.to_string()))
    }

    /// A GraphQL request answered with its data and its errors side by side:
    /// a batch keeps what resolved when some of it did not. Running out of
    /// points is [`GithubError::RateLimited`].
    pub(crate) async fn graphql_raw(
        &self,
        query: &str,
        variables: serde_json::Value,
        read: bool,
    ) -> GithubResult<(Option<serde_json::Value>, Vec<GraphqlError>)> {
        let url = graphql_url(&self.base);
        let body = serde_json::json!({"query": query, "variables": variables});
        let mut delay = Duration::from_millis(200);
        let mut attempt = 0;
        let bytes = loop {
            attempt += 1;
            match self.send(Method::POST, &url, Some(body.clone()), false).await {
                Ok((_, bytes)) => break bytes,
                Err(e) if read && e.is_uncertain() && attempt < 3 => {
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
                Err(e) => return Err(e),
            }
        };
        let answer: GraphqlAnswer<serde_json::Value> =
            serde_json::from_slice(&bytes).map_err(|e| GithubError::Decode(e.to_string()))?;
        if answer.errors.iter().any(|e| e.kind == "RATE_LIMITED") {
            let reset = self.blocked_until("graphql").unwrap_or(epoch_now() + 60);
            return Err(GithubError::RateLimited(reset));
        }
        Ok((answer.data, answer.errors))
    }

    /// GitHub's clock from an answer's `Date` header (whole seconds).
    fn note_clock(&self, headers: &HeaderMap) {
        let date = headers
            .get(reqwest::header::DATE)
            .and_then(|v| v.to_str().ok())
            .and_then(|d| chrono::DateTime::parse_from_rfc2822(d).ok());
        if let Some(d) = date {
            self.github_clock
                .fetch_max(d.timestamp(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The latest time GitHub's answers have carried (epoch seconds; 0:
    /// none yet). Edits GitHub stamps with this second or the one before
    /// may still be followed by more in the same second.
    pub fn github_clock(&self) -> i64 {
        self.github_clock.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Points left in GraphQL's budget as GitHub last reported them, with
    /// when the budget refills.
    pub fn graphql_budget(&self) -> Option<(i64, u64)> {
        let budgets = self.budgets.lock().unwrap_or_else(|p| p.into_inner());
        budgets.get("graphql").map(|b| (b.remaining, b.reset))
    }

    /// What GraphQL says about a PR's reviews, conversations and merge-queue
    /// entry; review threads are read page by page.
    pub async fn gate(&self, owner: &str, repo: &str, number: i64) -> GithubResult<GatePull> {
        let mut after: Option<String> = None;
        let mut pull: Option<GatePull> = None;
        for _ in 0..kandev_core::github_path::MAX_PAGES {
            let vars = serde_json::json!({"owner": owner, "name": repo, "number": number, "after": after});
            let data: GateData = self.graphql(GATE_QUERY, vars, true).await?;
            let page = data
                .repository
                .and_then(|r| r.pull_request)
                .ok_or(GithubError::NotFound)?;
            let next = page
                .review_threads
                .page_info
                .has_next_page
                .then(|| page.review_threads.page_info.end_cursor.clone())
                .flatten();
            match &mut pull {
                None => pull = Some(page),
                Some(p) => p.review_threads.nodes.extend(page.review_threads.nodes),
            }
            match next {
                Some(cursor) => after = Some(cursor),
                None => break,
            }
        }
        pull.ok_or(GithubError::NotFound)
    }

    /// Puts a PR in its merge queue, pinned to `head_sha`.
    pub async fn enqueue(&self, pr_node_id: &str, head_sha: &str) -> GithubResult<QueueEntry> {
        let vars = serde_json::json!({"id": pr_node_id, "sha": head_sha});
        let data: QueueMutation = self.graphql(ENQUEUE, vars, false).await?;
        data.enqueue
            .and_then(|p| p.merge_queue_entry)
            .ok_or_else(|| GithubError::Decode("enqueuePullRequest answered without an entry".into()))
    }

    /// Takes a PR out of its merge queue.
    pub async fn dequeue(&self, pr_node_id: &str) -> GithubResult<()> {
        let vars = serde_json::json!({"id": pr_node_id});
        let _: QueueMutation = self.graphql(DEQUEUE, vars, false).await?;
        Ok(())
    }

    /// Approving reviews classic protection requires of a branch; 0 when it
    /// requires none or cannot be read (403/404).
    pub async fn required_approvals(&self, owner: &str, repo: &str, branch: &str) -> GithubResult<u32> {
        Ok(self.required_reviews(owner, repo, branch).await?.approvals)
    }

    /// What classic protection's review rule requires of a branch; nothing
    /// when it has none or it cannot be read (403/404).
    pub async fn required_reviews(&self, owner: &str, repo: &str, branch: &str) -> GithubResult<ProtectionReviews> {
        let path = format!(
            "{}/branches/{}/protection/required_pull_request_reviews",
            repo_path(owner, repo)?,
            ref_path(branch)?
        );
        let lock = || self.no_review_rule.lock().unwrap_or_else(|p| p.into_inner());
        if lock().get(&path).is_some_and(|at| at.elapsed() < NO_RULE_TTL) {
            return Ok(ProtectionReviews::default());
        }
        match self.get::<RequiredReviews>(&path, true).await {
            Ok(r) => Ok(ProtectionReviews {
                approvals: r.required_approving_review_count,
                last_push_approval: r.require_last_push_approval,
                code_owner_review: r.require_code_owner_reviews,
            }),
            Err(GithubError::NotFound | GithubError::Forbidden(_)) => {
                let mut seen = lock();
                seen.retain(|_, at| at.elapsed() < NO_RULE_TTL);
                seen.insert(path, std::time::Instant::now());
                Ok(ProtectionReviews::default())
            }
            Err(e) => Err(e),
        }
    }

    /// The required checks of a branch; `None` when they cannot be read
    /// (403/404: no protection, or no permission to see it).
    pub async fn required_checks(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
    ) -> GithubResult<Option<Vec<Requirement>>> {
        match self
            .get::<RequiredStatusChecks>(
                &format!(
                    "{}/branches/{}/protection/required_status_checks",
                    repo_path(owner, repo)?,
                    ref_path(branch)?
                ),
                true,
            )
            .await
        {
            Ok(r) => Ok(Some(r.requirements())),
            Err(GithubError::NotFound | GithubError::Forbidden(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn merge(
        &self,
        owner: &str,
        repo: &str,
        number: i64,
        method: &str,
        sha: &str,
    ) -> GithubResult<MergeResponse> {
        let body = MergeRequest {
            merge_method: method.to_string(),
            sha: sha.to_string(),
        };
        self.write(
            Method::PUT,
            &format!("{}/pulls/{number}/merge", repo_path(owner, repo)?),
            &body,
        )
        .await
    }

    pub async fn update_branch(
        &self,
        owner: &str,
        repo: &str,
        number: i64,
        expected_head_sha: &str,
    ) -> GithubResult<serde_json::Value> {
        let body = serde_json::json!({"expected_head_sha": expected_head_sha});
        self.write(
            Method::PUT,
            &format!("{}/pulls/{number}/update-branch", repo_path(owner, repo)?),
            &body,
        )
        .await
    }

    /// Open PRs whose base is `base` (the first hundred: enough to know
    /// whether deleting that branch would close any).
    pub async fn open_pulls_based_on(&self, owner: &str, repo: &str, base: &str) -> GithubResult<Vec<PullRequest>> {
        let base = query_value(base);
        self.get(
            &format!("{}/pulls?state=open&base={base}&per_page=100", repo_path(owner, repo)?),
            true,
        )
        .await
    }

    pub async fn delete_branch(&self, owner: &str, repo: &str, branch: &str) -> GithubResult<()> {
        self.send(
            Method::DELETE,
            &format!("{}/git/refs/heads/{}", repo_path(owner, repo)?, ref_path(branch)?),
            None,
            false,
        )
        .await
        .map(|_| ())
    }

    pub async fn search_issues(&self, query: &str) -> GithubResult<IssueSearch> {
        let q = query_value(query);
        self.get(&format!("/search/issues?q={q}&per_page=50"), true).await
    }

    pub async fn user_orgs(&self) -> GithubResult<Vec<OrgItem>> {
        self.get("/user/orgs?per_page=100", true).await
    }

    pub async fn search_repositories(&self, query: &str) -> GithubResult<RepoSearchResult> {
        let q = query_value(query);
        self.get(&format!("/search/repositories?q={q}&per_page=20"), false)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::GithubError;

    #[test]
    fn a_rate_limit_says_until_when_in_words_a_person_reads() {
        assert_eq!(
            GithubError::RateLimited(1_796_535_400).to_string(),
            "rate limited until 2026-12-06 05:36:40 UTC"
        );
        assert_eq!(
            GithubError::RateLimited(u64::MAX).to_string(),
            format!("rate limited until {}", u64::MAX)
        );
    }
}
