//! `GET /repos/{o}/{r}/pulls` with GitHub's `state` and `base` filters, and
//! what deleting a branch does to the PRs based on it: GitHub closes them.

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use chrono::Utc;
use serde::Deserialize;
use serde_json::Value;

use super::Simulator;
use super::api::{Answer, Op, Paging, api, not_found};
use super::shapes::API;
use super::state::SimState;
use super::webhooks;

#[derive(Deserialize)]
pub struct PullFilter {
    /// `open` (GitHub's default), `closed` or `all`.
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    base: Option<String>,
}

pub async fn list_pulls(
    State(sim): State<Simulator>,
    Path((o, r)): Path<(String, String)>,
    Query(filter): Query<PullFilter>,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("pulls", &o, &r), |s| {
        let Some(repo) = s.repo(&o, &r) else { return not_found() };
        let state = filter.state.as_deref().unwrap_or("open");
        // Newest first, as GitHub's default sort (created, descending).
        let listed: Vec<Value> = repo
            .prs
            .values()
            .rev()
            .map(|pr| pr.as_read())
            .filter(|pr| state == "all" || pr.state == state)
            .filter(|pr| filter.base.as_deref().is_none_or(|b| pr.base_ref == b))
            .map(|pr| simple(repo.pull_json(pr)))
            .collect();
        let (page, link) = paging.page(listed, &format!("{API}/repos/{o}/{r}/pulls"));
        let mut a = Answer::ok(Value::Array(page));
        a.link = link;
        a
    })
    .await
}

/// A list item: GitHub's `pull-request-simple`, whose labels always carry a
/// string description.
fn simple(mut pull: Value) -> Value {
    if let Some(labels) = pull["labels"].as_array_mut() {
        for label in labels {
            if label["description"].is_null() {
                label["description"] = Value::String(String::new());
            }
        }
    }
    pull
}

impl SimState {
    /// Closes the open PRs of `owner/name` based on `branch`, as GitHub does
    /// when that branch is deleted; returns their `closed` deliveries.
    pub fn close_based_on(&mut self, owner: &str, name: &str, branch: &str) -> Vec<Option<Value>> {
        let numbers: Vec<i64> = self
            .repo(owner, name)
            .map(|repo| {
                repo.prs
                    .values()
                    .filter(|p| p.state == "open" && p.base_ref == branch)
                    .map(|p| p.number)
                    .collect()
            })
            .unwrap_or_default();
        numbers
            .into_iter()
            .map(|n| self.close_unmerged(owner, name, n))
            .collect()
    }

    /// Closes a PR without merging it (by hand, or under a deleted base);
    /// returns its `closed` delivery.
    pub fn close_unmerged(&mut self, owner: &str, name: &str, n: i64) -> Option<Value> {
        let before = self.pr_mut(owner, name, n)?.clone();
        self.lag_reads(owner, name, n, before);
        let pr = self.pr_mut(owner, name, n)?;
        pr.state = "closed".into();
        pr.closed_at = Some(Utc::now());
        pr.updated_at = pr.closed_at;
        pr.queue = None;
        webhooks::pull_request(self, owner, name, n, "closed")
    }
}
