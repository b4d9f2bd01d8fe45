//! Per-type detection for the push, CI and new-PR triggers: filters, dedup keys
//! and trigger data. The merged type lives in `crate::merged`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::config::{GithubCiConfig, GithubPrConfig, GithubPushConfig};
use super::matching::{branch_list_matches, exact_repo_match, value_list_matches};
use crate::events::{CheckRunCompleted, PushReceived};
use crate::gate::Gate;

/// Push: exact repository, workspace membership, branch glob.
pub fn check_push(cfg: &GithubPushConfig, ev: &PushReceived, automation_workspace: &str) -> Result<(), Gate> {
    if !exact_repo_match(&cfg.repos, &ev.owner, &ev.repo) {
        return Err(Gate::Repository);
    }
    if automation_workspace.is_empty() || !ev.workspace_ids.iter().any(|w| w == automation_workspace) {
        return Err(Gate::WorkspaceMembership);
    }
    if !branch_list_matches(&cfg.branches, &ev.branch) {
        return Err(Gate::Branch);
    }
    Ok(())
}

pub fn push_dedup_key(ev: &PushReceived) -> String {
    format!("push:{}/{}@{}@{}", ev.owner, ev.repo, ev.branch, ev.sha)
}

pub fn push_data(ev: &PushReceived) -> Value {
    json!({
        "repo": format!("{}/{}", ev.owner, ev.repo),
        "branch": ev.branch,
        "sha": ev.sha,
        "pusher_login": ev.pusher_login,
        "message": ev.message,
    })
}

/// CI: exact repository, workspace membership, conclusion, check name, head branch.
pub fn check_ci(cfg: &GithubCiConfig, ev: &CheckRunCompleted, automation_workspace: &str) -> Result<(), Gate> {
    if !exact_repo_match(&cfg.repos, &ev.owner, &ev.repo) {
        return Err(Gate::Repository);
    }
    if automation_workspace.is_empty() || !ev.workspace_ids.iter().any(|w| w == automation_workspace) {
        return Err(Gate::WorkspaceMembership);
    }
    if !value_list_matches(&cfg.conclusions, &ev.conclusion) {
        return Err(Gate::Conclusion);
    }
    if !value_list_matches(&cfg.check_names, &ev.check_name) {
        return Err(Gate::CheckName);
    }
    if !branch_list_matches(&cfg.branches, &ev.branch) {
        return Err(Gate::Branch);
    }
    Ok(())
}

pub fn ci_dedup_key(ev: &CheckRunCompleted) -> String {
    format!("ci:{}/{}#{}", ev.owner, ev.repo, ev.check_run_id)
}

pub fn ci_data(ev: &CheckRunCompleted) -> Value {
    json!({
        "repo": format!("{}/{}", ev.owner, ev.repo),
        "branch": ev.branch,
        "sha": ev.sha,
        "check_name": ev.check_name,
        "conclusion": ev.conclusion,
        "check_run_id": ev.check_run_id,
        "html_url": ev.html_url,
    })
}

/// An open pull request as the new-PR poller sees it (with details fetched).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenPr {
    pub owner: String,
    pub repo: String,
    pub number: i64,
    pub title: String,
    pub html_url: String,
    pub author_login: String,
    pub head_branch: String,
    pub base_branch: String,
    pub body: String,
    pub draft: bool,
    pub state: String,
    pub labels: Vec<String>,
}

/// New PR: draft exclusion, base-branch glob, author, labels (any listed).
/// `events` means `opened` only: each open PR fires once per automation.
pub fn check_pr(cfg: &GithubPrConfig, pr: &OpenPr) -> Result<(), Gate> {
    if cfg.exclude_draft && pr.draft {
        return Err(Gate::Draft);
    }
    if !branch_list_matches(&cfg.branches, &pr.base_branch) {
        return Err(Gate::Branch);
    }
    if !value_list_matches(&cfg.authors, &pr.author_login) {
        return Err(Gate::Author);
    }
    if !cfg.labels.is_empty() && !pr.labels.iter().any(|l| cfg.labels.contains(l)) {
        return Err(Gate::Label);
    }
    Ok(())
}

/// `pr:<owner>/<name>#<number>`, spelled as in the config entry.
pub fn pr_dedup_key(config_owner: &str, config_name: &str, number: i64) -> String {
    format!("pr:{config_owner}/{config_name}#{number}")
}

pub fn pr_data(pr: &OpenPr) -> Value {
    json!({
        "number": pr.number,
        "title": pr.title,
        "html_url": pr.html_url,
        "author_login": pr.author_login,
        "repo": format!("{}/{}", pr.owner, pr.repo),
        "head_branch": pr.head_branch,
        "base_branch": pr.base_branch,
        "body": pr.body,
        "draft": pr.draft,
        "state": pr.state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trigger::config::RepoFilter;

    fn push() -> PushReceived {
        PushReceived {
            workspace_ids: vec!["W".into()],
            owner: "acme".into(),
            repo: "api".into(),
            branch: "main".into(),
            sha: "abc".into(),
            pusher_login: "alice".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn push_filters_in_order() {
        let mut cfg = GithubPushConfig {
            repos: vec![RepoFilter::new("acme", "api")],
            branches: vec!["main".into()],
        };
        assert_eq!(check_push(&cfg, &push(), "W"), Ok(()));
        assert_eq!(check_push(&cfg, &push(), "V"), Err(Gate::WorkspaceMembership));
        cfg.branches = vec!["release/*".into()];
        assert_eq!(check_push(&cfg, &push(), "W"), Err(Gate::Branch));
        cfg.repos = vec![];
        assert_eq!(
            check_push(&cfg, &push(), "W"),
            Err(Gate::Repository),
            "empty list never matches"
        );
        assert_eq!(push_dedup_key(&push()), "push:acme/api@main@abc");
        assert_eq!(push_data(&push())["repo"], "acme/api");
    }

    #[test]
    fn ci_filters_in_order() {
        let ev = CheckRunCompleted {
            workspace_ids: vec!["W".into()],
            owner: "acme".into(),
            repo: "api".into(),
            branch: "feat".into(),
            sha: "s".into(),
            check_name: "build".into(),
            conclusion: "failure".into(),
            check_run_id: 99,
            html_url: "u".into(),
        };
        let mut cfg = GithubCiConfig {
            repos: vec![RepoFilter::new("acme", "api")],
            conclusions: vec!["failure".into()],
            ..Default::default()
        };
        assert_eq!(check_ci(&cfg, &ev, "W"), Ok(()));
        cfg.check_names = vec!["lint".into()];
        assert_eq!(check_ci(&cfg, &ev, "W"), Err(Gate::CheckName));
        cfg.check_names = vec![];
        cfg.branches = vec!["main".into()];
        assert_eq!(check_ci(&cfg, &ev, "W"), Err(Gate::Branch));
        cfg.conclusions = vec!["success".into()];
        assert_eq!(check_ci(&cfg, &ev, "W"), Err(Gate::Conclusion));
        assert_eq!(ci_dedup_key(&ev), "ci:acme/api#99");
        assert_eq!(ci_data(&ev)["check_run_id"], 99);
    }

    #[test]
    fn pr_filters_honour_every_field() {
        let pr = OpenPr {
            owner: "o".into(),
            repo: "r".into(),
            number: 3,
            base_branch: "main".into(),
            author_login: "alice".into(),
            draft: true,
            labels: vec!["bug".into()],
            ..Default::default()
        };
        let mut cfg = GithubPrConfig::default();
        assert_eq!(check_pr(&cfg, &pr), Ok(()));
        cfg.exclude_draft = true;
        assert_eq!(check_pr(&cfg, &pr), Err(Gate::Draft));
        cfg.exclude_draft = false;
        cfg.branches = vec!["dev".into()];
        assert_eq!(check_pr(&cfg, &pr), Err(Gate::Branch));
        cfg.branches = vec![];
        cfg.authors = vec!["bob".into()];
        assert_eq!(check_pr(&cfg, &pr), Err(Gate::Author));
        cfg.authors = vec![];
        cfg.labels = vec!["feature".into()];
        assert_eq!(check_pr(&cfg, &pr), Err(Gate::Label));
        cfg.labels = vec!["feature".into(), "bug".into()];
        assert_eq!(check_pr(&cfg, &pr), Ok(()));
        assert_eq!(pr_dedup_key("O", "R", 3), "pr:O/R#3");
    }
}
