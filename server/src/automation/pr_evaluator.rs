//! The "New pull requests" evaluator: polls the open PRs of each `github_pr`
//! trigger's repositories through the GitHub port and honours every filter
//! (base branches, authors, labels, drafts). Each PR fires once per automation.

use std::sync::Arc;
use std::time::Duration;

use kandev_core::TriggerType;
use kandev_core::gate::Outcome;
use kandev_core::trigger::config::parse_pr;
use kandev_core::trigger::detect::{OpenPr, check_pr, pr_data, pr_dedup_key};

use super::fire::EvaluatedEvent;
use super::{AutomationService, FireRequest};
use crate::coord::{Leases, lease};
use crate::github::GithubClient;
use crate::github::model::PullRequest;
use crate::periodic::Periodic;

pub struct PrEvaluator {
    service: Arc<AutomationService>,
    client: Arc<GithubClient>,
    interval: Duration,
    leases: Arc<Leases>,
    running: Periodic,
}

impl PrEvaluator {
    pub fn new(
        service: Arc<AutomationService>,
        client: Arc<GithubClient>,
        interval: Duration,
        leases: Arc<Leases>,
    ) -> Self {
        PrEvaluator {
            service,
            client,
            interval,
            leases,
            running: Periodic::default(),
        }
    }

    /// Once at start, then every interval; idle without a GitHub token.
    pub async fn start(&self) {
        if !self.client.is_configured() {
            return;
        }
        let (svc, client) = (self.service.clone(), self.client.clone());
        self.running
            .start_singleton(self.interval, self.leases.clone(), lease::PR_EVALUATOR, move || {
                let (svc, client) = (svc.clone(), client.clone());
                async move { evaluate(&svc, &client).await }
            })
            .await;
    }

    pub async fn stop(&self) {
        self.running.stop().await;
    }
}

fn open_pr(owner: &str, repo: &str, pr: &PullRequest) -> OpenPr {
    OpenPr {
        owner: owner.to_string(),
        repo: repo.to_string(),
        number: pr.number,
        title: pr.title.clone(),
        html_url: pr.html_url.clone(),
        author_login: pr.user.login.clone(),
        head_branch: pr.head.branch.clone(),
        base_branch: pr.base.branch.clone(),
        body: pr.body.clone().unwrap_or_default(),
        draft: pr.draft,
        state: pr.state.clone(),
        labels: pr.labels.iter().map(|l| l.name.clone()).collect(),
    }
}

/// One polling pass over every enabled `github_pr` trigger.
pub async fn evaluate(service: &AutomationService, client: &GithubClient) {
    let triggers = match service
        .store()
        .list_enabled_triggers_by_type(TriggerType::GithubPr)
        .await
    {
        Ok(t) => t,
        Err(error) => {
            tracing::error!(%error, "listing github_pr triggers failed");
            return;
        }
    };
    for t in triggers {
        let cfg = match parse_pr(&t.config_raw) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(trigger_id = %t.trigger_id, error = %e, "invalid github_pr config; trigger skipped");
                continue;
            }
        };
        if t.automation_workspace_id.is_empty() {
            continue;
        }
        let scope = service
            .store()
            .github_settings(&t.automation_workspace_id)
            .await
            .unwrap_or_default();
        for entry in cfg.repos.iter().filter(|r| !r.owner.is_empty() && !r.name.is_empty()) {
            if !scope.allows_repo(&entry.owner, &entry.name) {
                continue;
            }
            let found = match client
                .search_issues(&format!("is:pr is:open repo:{}/{}", entry.owner, entry.name))
                .await
            {
                Ok(f) => f,
                Err(e) => {
                    tracing::warn!(repo = %format!("{}/{}", entry.owner, entry.name), error = %e, "polling open PRs failed");
                    continue;
                }
            };
            for item in found.items.iter().filter(|i| i.pull_request.is_some()) {
                let key = pr_dedup_key(&entry.owner, &entry.name, item.number);
                // Each PR fires once per automation: skip the detail read once it has.
                if service
                    .store()
                    .has_run_with_dedup_key(&t.automation_id, &key)
                    .await
                    .unwrap_or(false)
                {
                    continue;
                }
                let pull = match client.pull(&entry.owner, &entry.name, item.number).await {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!(number = item.number, error = %e, "reading a PR failed");
                        continue;
                    }
                };
                let pr = open_pr(&entry.owner, &entry.name, &pull);
                if check_pr(&cfg, &pr).is_err() {
                    continue;
                }
                let request = FireRequest {
                    automation_id: t.automation_id.clone(),
                    trigger_id: t.trigger_id.clone(),
                    trigger_type: TriggerType::GithubPr.as_str().into(),
                    data: pr_data(&pr),
                    dedup_key: key,
                };
                match service.fire_trigger(request).await {
                    Ok(outcome) => {
                        let (o, g) = outcome.outcome();
                        if matches!(o, Outcome::Fired | Outcome::Capped) {
                            let summary = format!("{}/{}#{} opened", pr.owner, pr.repo, pr.number);
                            let ev = EvaluatedEvent {
                                trigger_type: "github_pr",
                                subject: "github pr poll",
                                summary: &summary,
                            };
                            service.note_evaluation((&t.automation_id, &t.trigger_id), &ev, o, g);
                        }
                    }
                    Err(error) => tracing::error!(%error, trigger_id = %t.trigger_id, "github_pr firing failed"),
                }
            }
        }
    }
}
