//! The review hand-off links the PR it names. GitHub may fail, be slow, be
//! rate limited, not yet show a PR it just created, or refuse the token at
//! that moment; the link must not be lost then, or the PR's merge would go
//! unseen and its task never archived.

use kandev_server::github_sim::RepoFault;
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::simulator;
use crate::support::{Db, TestApp};

/// Hands task `t` to review with PR `n`.
async fn hand_off(app: &TestApp, t: &str, n: i64) {
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/review"),
            json!({"summary": "ready", "pr_url": format!("https://github.com/acme/api/pull/{n}")}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

/// The task's links as (number, state).
async fn linked(app: &TestApp, t: &str) -> Vec<(i64, String)> {
    let listed = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    listed
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["pr_number"].as_i64().unwrap_or(0),
                l["state"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_off_while_github_fails_keeps_the_link_and_the_sweep_sees_its_merge() {
    for fault in [
        RepoFault {
            operation: Some("pull".into()),
            status: 502,
            times: 3,
            ..Default::default()
        },
        // GitHub's reads lag its writes: a PR just opened may read as 404.
        RepoFault {
            operation: Some("pull".into()),
            status: 404,
            times: 1,
            ..Default::default()
        },
        // An organisation's SAML enforcement not yet granted to the token.
        RepoFault {
            operation: Some("pull".into()),
            status: 403,
            times: 1,
            message: Some("Resource protected by organization SAML enforcement.".into()),
            ..Default::default()
        },
    ] {
        let gh = simulator().await;
        let (n, _) = gh.open("Just opened");
        let app = gh.app(Db::Sqlite).start().await;
        let ws = app.workspace_with_repo("W").await;
        let t = app
            .post(
                &format!("/api/v1/workspaces/{ws}/tasks"),
                json!({"title": "T", "status": "running"}),
            )
            .await
            .body["id"]
            .as_str()
            .unwrap()
            .to_string();
        gh.sim.set_repo_fault("acme", "api", Some(fault.clone()));
        hand_off(&app, &t, n).await;
        assert_eq!(linked(&app, &t).await, vec![(n, "open".to_string())], "{fault:?}");
        // Merged by a person; the sweep reads the link and sees it.
        gh.sim.merge_pr("acme", "api", n).unwrap();
        gh.sim.catch_up_reads();
        app.sweep().await;
        assert_eq!(linked(&app, &t).await, vec![(n, "merged".to_string())], "{fault:?}");
        app.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_off_github_cannot_read_keeps_what_an_earlier_read_stored() {
    let gh = simulator().await;
    let (n, _) = gh.open("Read before");
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    let before = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    assert_eq!(before[0]["pr_title"], "Read before");
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            operation: Some("pull".into()),
            status: 502,
            times: 3,
            ..Default::default()
        }),
    );
    let r = app
        .patch(&format!("/api/v1/tasks/{t}"), json!({"status": "running"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    hand_off(&app, &t, n).await;
    let after = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    assert_eq!(
        after[0]["pr_title"], "Read before",
        "a bare reference never overwrites a read: {after}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_github_answers_404_for_is_swept_less_and_less_often_and_read_once_it_exists() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    // The agent names a PR that does not exist (yet): the simulator numbers
    // from 1, and none is open.
    hand_off(&app, &t, 1).await;
    let mut skipped = vec![];
    for _ in 0..8 {
        skipped.push(app.sweep().await.skipped);
    }
    // Misses 1, 2, 3, 4 sit out 0, 1, 3, then 7 sweeps.
    assert_eq!(skipped, [0, 0, 1, 0, 1, 1, 1, 0]);
    let before = gh.sim.counters().requests;
    app.sweep().await;
    assert_eq!(gh.sim.counters().requests, before, "a skipped link costs no request");
    let (n, _) = gh.open("Exists now");
    assert_eq!(n, 1);
    let mut sweeps = 1;
    while linked_title(&app, &t).await.is_empty() {
        assert!(sweeps < 8, "read again after at most the seven skipped sweeps");
        app.sweep().await;
        sweeps += 1;
    }
    assert_eq!(linked_title(&app, &t).await, "Exists now");
    assert_eq!(
        app.sweep().await.skipped,
        0,
        "a link read once is swept every time again"
    );
    app.stop().await;
}

async fn linked_title(app: &TestApp, t: &str) -> String {
    let listed = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    listed[0]["pr_title"].as_str().unwrap_or_default().to_string()
}
