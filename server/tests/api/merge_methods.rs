//! The merge method a repository allows. The workspace names one method for
//! all its repositories, but a repository's settings may forbid it (GitHub
//! shows them to admins only, so the refusal is the signal) and its rulesets
//! may allow fewer methods, forbid merge commits or require signed commits
//! (GitHub cannot sign a rebase). A green, approved PR merges with a method
//! GitHub takes, and the task says which.

use kandev_server::github_sim::MergeSettings;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::github_support::{Sim, approve_in, fast, last_of, simulator, wait_merged, wait_status};
use crate::support::{Db, TestApp};

/// A green PR and an app; returns the app, the workspace and the PR.
async fn green_pr(gh: &Sim) -> (TestApp, String, i64) {
    let n = gh.green_pr("Green");
    let app = fast(gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    (app, ws, n)
}

/// Approves a green PR in a workspace preferring `preferred` (`None`: the
/// default, squash); asserts it merged once with `method`, after `calls`
/// merge calls, and that the task's `merged` event says so. Returns each
/// merge progress step as "step: English detail".
async fn merges_with(gh: &Sim, preferred: Option<&str>, method: &str, calls: u64) -> Vec<String> {
    let (app, ws, n) = green_pr(gh).await;
    if let Some(preferred) = preferred {
        let put = app
            .put(
                &format!("/api/v1/github/workspace-settings?workspace_id={ws}"),
                json!({"merge_method": preferred}),
            )
            .await;
        assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    }
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_merged(&app, &t, n).await;
    assert_eq!(last_of(&events, "merged")["payload"]["merge_method"], method);
    assert_eq!(
        gh.sim.pr("acme", "api", n).unwrap().merge_method.as_deref(),
        Some(method)
    );
    let c = gh.sim.counters();
    assert_eq!((c.merge_calls, c.merges), (calls, 1), "{c:?}");
    app.stop().await;
    steps(&events)
}

/// Approves a green PR and waits for it to block; returns the reason.
async fn blocks(gh: &Sim) -> Value {
    let (app, ws, n) = green_pr(gh).await;
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(gh.sim.counters().merges, 0);
    app.stop().await;
    last_of(&events, "blocked")["payload"]["reason"].clone()
}

fn forbid_squash(gh: &Sim) {
    let settings = MergeSettings {
        allow_squash_merge: Some(false),
        ..Default::default()
    };
    gh.sim.set_merge_settings("acme", "api", settings).unwrap();
}

fn steps(events: &Value) -> Vec<String> {
    events
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "merge_progress")
        .map(|e| {
            format!(
                "{}: {}",
                e["payload"]["step"].as_str().unwrap_or(""),
                e["payload"]["detail"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_forbidding_the_workspace_s_method_merges_with_one_it_allows() {
    let gh = simulator().await;
    forbid_squash(&gh);
    let said = merges_with(&gh, None, "merge", 2).await;
    let refused = said
        .iter()
        .position(|s| s.starts_with("method_refused"))
        .unwrap_or_else(|| panic!("{said:?}"));
    assert_eq!(
        said[refused],
        "method_refused: squash merges are not allowed here; trying another method"
    );
    assert!(
        said[refused + 1..]
            .iter()
            .any(|s| s.starts_with("merging: merge merge of")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ruleset_s_allowed_methods_are_heeded_before_the_first_merge_call() {
    let gh = simulator().await;
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["rebase".into()]));
    merges_with(&gh, None, "rebase", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linear_history_keeps_a_merge_commit_workspace_to_squash() {
    let gh = simulator().await;
    gh.ruleset(|r| r.linear_history = true);
    merges_with(&gh, Some("merge"), "squash", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_commits_required_by_a_ruleset_keep_a_rebase_workspace_from_rebasing() {
    let gh = simulator().await;
    gh.ruleset(|r| r.signatures = true);
    merges_with(&gh, Some("rebase"), "squash", 1).await;
}

/// Classic protection's signature rule is read only with admin rights: the
/// refusal says it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_commits_required_by_protection_are_learnt_from_github_s_refusal() {
    let gh = simulator().await;
    gh.sim.require_signed_commits("acme", "api", true).unwrap();
    let said = merges_with(&gh, Some("rebase"), "squash", 2).await;
    assert!(
        said.contains(&"method_refused: rebase merges are not allowed here; trying another method".to_string()),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_allowing_none_of_the_rulesets_methods_blocks_with_github_s_refusal() {
    let gh = simulator().await;
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["squash".into()]));
    forbid_squash(&gh);
    assert_eq!(
        blocks(&gh).await,
        "GitHub allows none of the merge methods here (it refused squash): \
         Squash merges are not allowed on this repository."
    );
    assert_eq!(gh.sim.counters().merge_calls, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rulesets_that_together_allow_no_method_block_without_a_merge_call() {
    let gh = simulator().await;
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["merge".into()]));
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["rebase".into()]));
    assert_eq!(
        blocks(&gh).await,
        "the branch's rulesets together allow no merge method"
    );
    assert_eq!(gh.sim.counters().merge_calls, 0);
}
