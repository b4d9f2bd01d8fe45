//! The merge state belongs to the merger: nobody else moves a task it
//! holds, a cancel stops it cleanly, racing approvals make one merge, GitHub
//! failures end the job (or are retried within the wait), and a fork's
//! branch is deleted only where it lives, and never while open PRs are based
//! on it.

use std::time::Duration;

use kandev_server::github_sim::{Faults, NewPr};
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::{Sim, approve_with_pr, fast, last_of, simulator, wait_status, waiting_for_checks};
use crate::support::{Db, eventually};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_move_during_a_merge_answers_409_and_the_pr_is_merged_exactly_once() {
    let gh = simulator().await;
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    let (n, sha) = gh.open("Ship");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    for (path, body) in [
        (format!("/api/v1/tasks/{t}"), json!({"status": "done"})),
        (
            format!("/api/v1/tasks/{t}/review"),
            json!({"pr_url": format!("https://github.com/acme/api/pull/{n}")}),
        ),
        (format!("/api/v1/tasks/{t}/approve"), json!({})),
    ] {
        let r = if path.ends_with(&t) {
            app.patch(&path, body).await
        } else {
            app.post(&path, body).await
        };
        assert_eq!(r.status, StatusCode::CONFLICT, "{path}: {}", r.body);
    }
    let r = app
        .patch(&format!("/api/v1/tasks/{t}"), json!({"status": "ready"}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancel the merge"),
        "{}",
        r.body
    );
    assert_eq!(app.task_json(&t).await["status"], "running");
    gh.green_build(&sha);
    wait_status(&app, &t, "done").await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_merge_stops_the_job_returns_the_task_to_review_and_leaves_the_pr_unmerged() {
    let gh = simulator().await;
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    let (n, sha) = gh.open("Not yet");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    let r = app.post(&format!("/api/v1/tasks/{t}/cancel-merge"), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"], "human_review");
    // The checks go green afterwards: nothing merges.
    gh.green_build(&sha);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    assert_eq!(gh.sim.counters().merges, 0);
    assert_eq!(app.count("merger_jobs").await, 0);
    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
    let cancelled = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "merge_cancelled")
        .expect("an event");
    assert_eq!(cancelled["actor"]["kind"], "user");
    assert_eq!(app.task_json(&t).await["status"], "human_review");
    let again = app.post(&format!("/api/v1/tasks/{t}/cancel-merge"), json!({})).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approves_at_the_same_moment_make_one_job_and_one_merge_call() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    for round in 0..5 {
        let (n, sha) = gh.open(&format!("race {round}"));
        gh.green_build(&sha);
        let r = app
            .post(
                &format!("/api/v1/workspaces/{ws}/tasks"),
                json!({"title": "Ship", "status": "running"}),
            )
            .await;
        let t = r.body["id"].as_str().unwrap().to_string();
        app.post(
            &format!("/api/v1/tasks/{t}/review"),
            json!({"pr_url": format!("https://github.com/acme/api/pull/{n}")}),
        )
        .await;
        let path = format!("/api/v1/tasks/{t}/approve");
        let (a, b) = tokio::join!(app.post(&path, json!({})), app.post(&path, json!({})));
        let statuses = [a.status, b.status];
        assert!(statuses.contains(&StatusCode::OK), "one approve wins: {statuses:?}");
        assert!(
            statuses.contains(&StatusCode::CONFLICT),
            "the other is told: {statuses:?}"
        );
        wait_status(&app, &t, "done").await;
        assert_eq!(gh.sim.pr("acme", "api", n).unwrap().merge_count, 1, "round {round}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_blocks_the_merge_within_one_poll_naming_401() {
    let gh = simulator().await;
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    let (n, _) = gh.open("Ship");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    gh.sim.set_faults(Faults {
        revoked_token: true,
        ..Default::default()
    });
    wait_status(&app, &t, "blocked").await;
    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
    let blocked = events
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| e["kind"] == "blocked")
        .unwrap();
    assert!(
        blocked["payload"]["reason"].as_str().unwrap().contains("401"),
        "{blocked}"
    );
    assert_eq!(gh.sim.counters().merges, 0);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_few_server_errors_are_retried_and_the_merge_goes_through() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Ship");
    gh.green_build(&sha);
    gh.sim.set_faults(Faults {
        server_errors: 3,
        ..Default::default()
    });
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually("the merge to go through", Duration::from_secs(30), || async {
        app.task_json(&t).await["status"] == "done"
    })
    .await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_pr_leaves_the_base_repositorys_same_named_branch_alone() {
    let gh = simulator().await;
    gh.sim.add_repo("forker", "api", false);
    // The base repository has its own "fix" branch (another PR's).
    let (base_pr, _) = gh
        .sim
        .open_pr(
            "acme",
            "api",
            NewPr {
                title: "base branch".into(),
                head: Some("fix".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let (n, sha) = fork_pr(&gh, false);
    gh.green_build(&sha);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    wait_status(&app, &t, "done").await;
    assert!(
        gh.sim.pr("acme", "api", n).unwrap().head_branch_deleted,
        "the fork's branch went"
    );
    assert!(
        !gh.sim.pr("acme", "api", base_pr).unwrap().head_branch_deleted,
        "the base repository's fix branch stays"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merged_branch_that_open_prs_are_based_on_is_kept_so_github_does_not_close_them() {
    let gh = simulator().await;
    let pr_on = |title: &str, head: &str, base: &str| {
        gh.sim
            .open_pr(
                "acme",
                "api",
                NewPr {
                    title: title.into(),
                    head: Some(head.into()),
                    base: Some(base.into()),
                    ..Default::default()
                },
            )
            .unwrap()
    };
    // A stack: `second` is based on the branch `first` merges from.
    let (first, sha) = pr_on("first", "stack-1", "main");
    let (second, _) = pr_on("second", "stack-2", "stack-1");
    let (elsewhere, _) = pr_on("unrelated", "other", "main");
    gh.green_build(&sha);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, first, "").await;
    wait_status(&app, &t, "done").await;
    assert_eq!(
        gh.sim.pr("acme", "api", second).unwrap().state,
        "open",
        "the PR above stays open"
    );
    assert!(
        !gh.sim.pr("acme", "api", first).unwrap().head_branch_deleted,
        "its base branch stays"
    );
    assert_eq!(gh.sim.pr("acme", "api", elsewhere).unwrap().state, "open");

    // With nothing based on it, the next merged branch goes as configured.
    let sha = gh.sim.pr("acme", "api", elsewhere).unwrap().head_sha;
    gh.green_build(&sha);
    let t = approve_with_pr(&app, elsewhere, "").await;
    wait_status(&app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", elsewhere).unwrap().head_branch_deleted);
    app.stop().await;
}

/// A PR from branch `fix` of the fork forker/api, whose author did or did
/// not (`locked`) allow edits from maintainers.
fn fork_pr(gh: &Sim, locked: bool) -> (i64, String) {
    let pr = NewPr {
        title: "from a fork".into(),
        head: Some("fix".into()),
        head_repo: Some("forker/api".into()),
        maintainers_locked_out: locked,
        ..Default::default()
    };
    gh.sim.open_pr("acme", "api", pr).unwrap()
}

/// Only a fork's author can update a branch whose fork does not allow edits
/// from maintainers: a PR behind its base blocks saying so, without asking
/// GitHub for an update it will refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_behind_its_base_that_maintainers_cannot_edit_blocks_saying_so() {
    let gh = simulator().await;
    gh.require_build();
    let (n, sha) = fork_pr(&gh, true);
    gh.green_build(&sha);
    gh.behind(n, false);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "the branch is behind its base and its fork does not allow edits from maintainers; \
         update it in the fork and approve again"
    );
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert_eq!(pr.update_branch_count, 0);
    assert!(!pr.merged);
    app.stop().await;
}
