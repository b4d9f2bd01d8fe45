//! Deployments and their statuses (`GET /repos/{o}/{r}/deployments`, newest
//! first, filtered by `sha` and `environment`; `GET …/{id}/statuses`), and
//! the `required_deployments` rule they satisfy: a PR into a branch whose
//! rules name environments is blocked until its head's newest deployment to
//! each has succeeded.

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::api::{Answer, Op, Paging, api, not_found};
use super::shapes::{API, WEB, user};
use super::state::{SimPr, SimRepo};
use super::{SimResult, Simulator, missing};

/// One deployment of a commit to an environment, with its statuses.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SimDeployment {
    pub id: i64,
    pub sha: String,
    pub environment: String,
    /// Its statuses' states, oldest first.
    pub states: Vec<String>,
}

const AT: &str = "2026-01-01T00:00:00Z";

impl SimRepo {
    /// The first environment the rules require that `pr`'s head has not
    /// deployed to successfully, as GitHub's refusal names it.
    pub fn undeployed(&self, pr: &SimPr) -> Option<String> {
        if !pr.base_ref.eq_ignore_ascii_case(&self.default_branch) {
            return None;
        }
        let newest = |env: &str| {
            self.deployments
                .iter()
                .rev()
                .find(|d| d.sha == pr.head_sha && d.environment == env)
                .and_then(|d| d.states.last())
        };
        self.rulesets
            .iter()
            .flat_map(|r| &r.required_deployments)
            .find(|env| newest(env).map(String::as_str) != Some("success"))
            .map(|env| format!("Changes must be successfully deployed to {env} before merging."))
    }

    fn deployment_json(&self, d: &SimDeployment) -> Value {
        let repo_url = format!("{API}/repos/{}/{}", self.owner, self.name);
        let url = format!("{repo_url}/deployments/{}", d.id);
        json!({
            "url": url, "id": d.id, "node_id": format!("DE_kwDOsim{}", d.id), "sha": d.sha,
            "ref": d.sha, "task": "deploy", "payload": {}, "original_environment": d.environment,
            "environment": d.environment, "description": null, "creator": user("deploy-bot"),
            "created_at": AT, "updated_at": AT, "statuses_url": format!("{url}/statuses"),
            "repository_url": repo_url, "transient_environment": false, "production_environment": false,
        })
    }

    fn deployment_status_json(&self, d: &SimDeployment, i: usize, state: &str) -> Value {
        let repo_url = format!("{API}/repos/{}/{}", self.owner, self.name);
        let deployment_url = format!("{repo_url}/deployments/{}", d.id);
        let log = format!("{WEB}/{}/{}/actions/runs/{}", self.owner, self.name, d.id);
        json!({
            "url": format!("{deployment_url}/statuses/{}", i + 1), "id": d.id * 1000 + i as i64 + 1,
            "node_id": format!("DES_kwDOsim{}_{i}", d.id), "state": state, "creator": user("deploy-bot"),
            "description": "", "environment": d.environment, "target_url": log, "log_url": log,
            "created_at": AT, "updated_at": AT,
            "deployment_url": deployment_url, "repository_url": repo_url,
        })
    }
}

impl Simulator {
    /// Deploys `sha` to `environment` with a status of `state` (`success`,
    /// `failure`, `in_progress`, …): a new deployment, the newest.
    pub fn deploy(&self, owner: &str, name: &str, sha: &str, environment: &str, state: &str) -> SimResult<i64> {
        let mut s = self.lock();
        let id = s.next_id();
        let repo = s.repo_mut(owner, name).ok_or_else(|| missing("repository"))?;
        repo.deployments.push(SimDeployment {
            id,
            sha: sha.into(),
            environment: environment.into(),
            states: vec![state.into()],
        });
        Ok(id)
    }
}

#[derive(Deserialize)]
pub struct Filter {
    sha: Option<String>,
    environment: Option<String>,
}

pub async fn deployments(
    State(sim): State<Simulator>,
    Path((o, r)): Path<(String, String)>,
    Query(filter): Query<Filter>,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("deployments", &o, &r), |s| {
        let Some(repo) = s.repo(&o, &r) else { return not_found() };
        let all: Vec<Value> = repo
            .deployments
            .iter()
            .rev()
            .filter(|d| filter.sha.as_ref().is_none_or(|sha| *sha == d.sha))
            .filter(|d| filter.environment.as_ref().is_none_or(|e| *e == d.environment))
            .map(|d| repo.deployment_json(d))
            .collect();
        let (page, link) = paging.page(all, &format!("{API}/repos/{o}/{r}/deployments"));
        let mut a = Answer::ok(json!(page));
        a.link = link;
        a
    })
    .await
}

pub async fn statuses(
    State(sim): State<Simulator>,
    Path((o, r, id)): Path<(String, String, i64)>,
    Query(paging): Query<Paging>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("deployments", &o, &r), |s| {
        let Some(repo) = s.repo(&o, &r) else { return not_found() };
        let Some(d) = repo.deployments.iter().find(|d| d.id == id) else {
            return not_found();
        };
        let all: Vec<Value> = d
            .states
            .iter()
            .enumerate()
            .rev()
            .map(|(i, state)| repo.deployment_status_json(d, i, state))
            .collect();
        let (page, link) = paging.page(all, &format!("{API}/repos/{o}/{r}/deployments/{id}/statuses"));
        let mut a = Answer::ok(json!(page));
        a.link = link;
        a
    })
    .await
}
