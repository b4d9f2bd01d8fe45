//! The merge method a repository allows. The workspace names one method for
//! all its repositories, but a repository's settings may forbid it (GitHub
//! shows them to admins only, so the refusal is the signal) and its rulesets
//! may allow fewer methods or forbid merge commits. A green, approved PR
//! merges with a method GitHub takes, and the task says which.

use kandev_server::github_sim::MergeSettings;
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::{Sim, approve_in, fast, last_of, simulator, wait_merged, wait_status};
use crate::support::{Db, TestApp};

/// A green PR and an app; returns the app, the workspace and the PR.
async fn green_pr(gh: &Sim, title: &str) -> (TestApp, String, i64) {
    let n = gh.green_pr(title);
    let app = fast(gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    (app, ws, n)
}

fn forbid(gh: &Sim, settings: MergeSettings) {
    gh.sim.set_merge_settings("acme", "api", settings).unwrap();
}

/// Each `merge_progress` step's English detail, in order.
fn steps(events: &serde_json::Value) -> Vec<String> {
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
    forbid(
        &gh,
        MergeSettings {
            allow_squash_merge: Some(false),
            ..Default::default()
        },
    );
    let (app, ws, n) = green_pr(&gh, "Merge commits only").await;
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_merged(&app, &t, n).await;
    let said = steps(&events);
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
    assert_eq!(last_of(&events, "merged")["payload"]["merge_method"], "merge");
    assert_eq!(
        gh.sim.pr("acme", "api", n).unwrap().merge_method.as_deref(),
        Some("merge")
    );
    let c = gh.sim.counters();
    assert_eq!((c.merge_calls, c.merges), (2, 1), "refused once, then merged: {c:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ruleset_s_allowed_methods_are_heeded_before_the_first_merge_call() {
    let gh = simulator().await;
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["rebase".into()]));
    let (app, ws, n) = green_pr(&gh, "Rebase only").await;
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_merged(&app, &t, n).await;
    assert_eq!(last_of(&events, "merged")["payload"]["merge_method"], "rebase");
    let c = gh.sim.counters();
    assert_eq!((c.merge_calls, c.merges), (1, 1), "{c:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linear_history_keeps_a_merge_commit_workspace_to_squash() {
    let gh = simulator().await;
    gh.ruleset(|r| r.linear_history = true);
    let (app, ws, n) = green_pr(&gh, "Linear").await;
    prefer(&app, &ws, "merge").await;
    let t = approve_in(&app, &ws, n, "").await;
    wait_merged(&app, &t, n).await;
    assert_eq!(
        gh.sim.pr("acme", "api", n).unwrap().merge_method.as_deref(),
        Some("squash")
    );
    assert_eq!(gh.sim.counters().merge_calls, 1);
    app.stop().await;
}

/// Sets the workspace's merge method.
async fn prefer(app: &TestApp, ws: &str, method: &str) {
    let put = app
        .put(
            &format!("/api/v1/github/workspace-settings?workspace_id={ws}"),
            json!({"merge_method": method}),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
}

/// GitHub signs squash and merge commits but cannot sign a rebase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_commits_required_by_a_ruleset_keep_a_rebase_workspace_from_rebasing() {
    let gh = simulator().await;
    gh.ruleset(|r| r.signatures = true);
    let (app, ws, n) = green_pr(&gh, "Signed").await;
    prefer(&app, &ws, "rebase").await;
    let t = approve_in(&app, &ws, n, "").await;
    wait_merged(&app, &t, n).await;
    assert_eq!(
        gh.sim.pr("acme", "api", n).unwrap().merge_method.as_deref(),
        Some("squash")
    );
    assert_eq!(gh.sim.counters().merge_calls, 1);
    app.stop().await;
}

/// Classic protection's signature rule is read only with admin rights: the
/// refusal says it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_commits_required_by_protection_are_learnt_from_github_s_refusal() {
    let gh = simulator().await;
    gh.sim.require_signed_commits("acme", "api", true).unwrap();
    let (app, ws, n) = green_pr(&gh, "Signed too").await;
    prefer(&app, &ws, "rebase").await;
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_merged(&app, &t, n).await;
    assert!(
        steps(&events)
            .contains(&"method_refused: rebase merges are not allowed here; trying another method".to_string())
    );
    assert_eq!(
        gh.sim.pr("acme", "api", n).unwrap().merge_method.as_deref(),
        Some("squash")
    );
    assert_eq!(gh.sim.counters().merge_calls, 2);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_allowing_none_of_the_rulesets_methods_blocks_with_github_s_refusal() {
    let gh = simulator().await;
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["squash".into()]));
    forbid(
        &gh,
        MergeSettings {
            allow_squash_merge: Some(false),
            ..Default::default()
        },
    );
    let (app, ws, n) = green_pr(&gh, "Misconfigured").await;
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "GitHub allows none of the merge methods here (it refused squash): \
         Squash merges are not allowed on this repository."
    );
    let c = gh.sim.counters();
    assert_eq!((c.merge_calls, c.merges), (1, 0), "{c:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rulesets_that_together_allow_no_method_block_without_a_merge_call() {
    let gh = simulator().await;
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["merge".into()]));
    gh.ruleset(|r| r.allowed_merge_methods = Some(vec!["rebase".into()]));
    let (app, ws, n) = green_pr(&gh, "Contradiction").await;
    let t = approve_in(&app, &ws, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "the branch's rulesets together allow no merge method"
    );
    assert_eq!(gh.sim.counters().merge_calls, 0);
    app.stop().await;
}
