//! The post-approve merger against the GitHub simulator: one test per branch
//! of the design's sequence and per lesson of the merge bots.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kandev_server::clock::ManualClock;
use kandev_server::github_sim::{Faults, NewPr, PrPatch};
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::{
    approve_until_merged, approve_with_pr, fast, fast_again, last_of, simulator, wait_status, waiting_for_checks,
};
use crate::support::{Db, eventually};

/// written (the status moves first, the event follows it).

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn already_merged_pr_completes_without_merging_again() {
    merged_elsewhere_completes_as_already_merged(0).await;
}

/// A PR merged by hand before the approval, read `lag_ms` late by GitHub.
pub(crate) async fn merged_elsewhere_completes_as_already_merged(lag_ms: u64) {
    let gh = simulator().await;
    gh.lag_reads(lag_ms);
    let (n, sha) = gh.open("Done elsewhere");
    gh.green_build(&sha);
    gh.sim.merge_pr("acme", "api", n).unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    assert_eq!(last_of(&events, "completed")["payload"]["summary"], "PR already merged");
    // Nothing says Kandev merged it.
    assert!(last_of(&events, "merged").is_null(), "{events:#}");
    assert_eq!(gh.sim.counters().merges, 0);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_pr_blocks() {
    closed_elsewhere_blocks_as_closed(0).await;
}

/// A PR closed by hand before the approval, read `lag_ms` late by GitHub.
pub(crate) async fn closed_elsewhere_blocks_as_closed(lag_ms: u64) {
    let gh = simulator().await;
    gh.lag_reads(lag_ms);
    let (n, sha) = gh.open("Abandoned");
    gh.green_build(&sha);
    gh.sim.close_pr("acme", "api", n).unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "PR closed without merge"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draft_pr_blocks() {
    let gh = simulator().await;
    let (n, _) = gh
        .sim
        .open_pr(
            "acme",
            "api",
            NewPr {
                title: "WIP".into(),
                draft: true,
                ..Default::default()
            },
        )
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(last_of(&events, "blocked")["payload"]["reason"], "PR is draft");
    app.stop().await;
}

async fn green_checks_merge_at_once_with_the_pinned_sha_and_delete_the_branch(db: Db) {
    let gh = simulator().await;
    let (n, sha) = gh.open("Ready");
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    gh.green_build(&sha);
    let app = fast(&gh, db).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        format!("Merged PR #{n}")
    );
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "merge_requested")
    );
    assert_eq!(last_of(&events, "merged")["payload"]["merge_method"], "squash");
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.merged);
    assert_eq!(pr.merge_method.as_deref(), Some("squash"));
    assert!(pr.head_branch_deleted);
    // The job's row goes just after its closing event (the task has left `running` by then).
    crate::support::eventually(
        "a finished job to leave nothing behind",
        Duration::from_secs(10),
        || async { app.count("merger_jobs").await == 0 },
    )
    .await;
    app.stop().await;
}
crate::on_both_databases!(green_checks_merge_at_once_with_the_pinned_sha_and_delete_the_branch);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_checks_wait_then_merge_once_green() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Slow CI");
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "in_progress", None)
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    assert_eq!(app.task_json(&t).await["status"], "running");
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    gh.green_build(&sha);
    wait_status(&app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_pending_past_the_per_task_timeout_block() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Never finishes");
    gh.sim
        .set_check_run("acme", "api", &sha, "e2e", "queued", None)
        .unwrap();
    let clock = Arc::new(ManualClock::new(at("2026-03-08T12:00:00Z")));
    let app = fast(&gh, Db::Sqlite).clock(clock.clone()).start().await;
    let t = approve_with_pr(&app, n, "Please merge. ci_wait_timeout_minutes=2").await;
    waiting_for_checks(&app, &t).await;
    clock.advance(chrono::Duration::seconds(90));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        app.task_json(&t).await["status"],
        "running",
        "1.5 min is inside the 2 min override"
    );
    clock.advance(chrono::Duration::seconds(31));
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "checks still pending after 2 min: e2e"
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_required_check_blocks_naming_the_check_and_its_url() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Broken");
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    let id = gh
        .sim
        .set_check_run("acme", "api", &sha, "build", "completed", Some("timed_out"))
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        format!("CI failing: build https://github.com/acme/api/runs/{id}")
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_optional_check_still_merges() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Lint is flaky");
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    gh.green_build(&sha);
    gh.sim
        .set_check_run("acme", "api", &sha, "lint", "completed", Some("failure"))
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    approve_until_merged(&gh, &app, n).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_api_only_ci_is_waited_for_and_counted() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Jenkins");
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["ci/jenkins".into()]))
        .unwrap();
    gh.sim.set_status("acme", "api", &sha, "ci/jenkins", "pending").unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    gh.sim.set_status("acme", "api", &sha, "ci/jenkins", "success").unwrap();
    wait_status(&app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_branch_is_updated_once_then_merged_after_the_new_head_is_green() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Stale base");
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    gh.green_build(&sha);
    gh.sim
        .patch_pr(
            "acme",
            "api",
            n,
            PrPatch {
                behind: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    // GitHub answers 202 and moves the head a moment later.
    eventually("the branch update to land", Duration::from_secs(20), || async {
        gh.sim.pr("acme", "api", n).unwrap().head_sha != sha
    })
    .await;
    let new_head = gh.sim.pr("acme", "api", n).unwrap().head_sha;
    waiting_for_checks(&app, &t).await;
    assert!(
        !gh.sim.pr("acme", "api", n).unwrap().merged,
        "the new head has no checks yet"
    );
    gh.green_build(&new_head);
    let events = wait_status(&app, &t, "done").await;
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["payload"]["step"] == "updating_branch")
    );
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert_eq!((pr.merged, pr.update_branch_count), (true, 1));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_conflict_blocks_for_a_manual_rebase() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Conflicts");
    gh.green_build(&sha);
    gh.sim
        .patch_pr(
            "acme",
            "api",
            n,
            PrPatch {
                conflict: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "merge conflict, manual rebase needed"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_error_on_a_merge_that_did_merge_completes_with_exactly_one_merge() {
    lost_merge_answer_completes_with_one_merge(0).await;
}

/// A 5xx after GitHub did merge, with reads lagging writes by `lag_ms`: the
/// merger reads the PR back (again) instead of merging twice.
pub(crate) async fn lost_merge_answer_completes_with_one_merge(lag_ms: u64) {
    let gh = simulator().await;
    gh.lag_reads(lag_ms);
    let (n, sha) = gh.open("Flaky GitHub");
    gh.green_build(&sha);
    gh.sim.set_faults(Faults {
        merge_error_after_merge: true,
        ..Default::default()
    });
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        format!("Merged PR #{n}")
    );
    assert_eq!(gh.sim.pr("acme", "api", n).unwrap().merge_count, 1);
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_in_the_middle_of_a_wait_resumes_and_merges() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Across a restart");
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "in_progress", None)
        .unwrap();
    let first = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&first, n, "").await;
    waiting_for_checks(&first, &t).await;
    let database_url = first.database_url.clone();
    let files = first.stop_keeping_files().await;
    gh.green_build(&sha);
    let second = fast_again(&gh, database_url, &files).await;
    let events = wait_status(&second, &t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        format!("Merged PR #{n}")
    );
    assert_eq!(gh.sim.pr("acme", "api", n).unwrap().merge_count, 1);
    second.stop().await;
    drop(files);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_pr_bound_approves_to_done_and_reject_sends_back_to_ready() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "Research").await;
    app.post(&format!("/api/v1/tasks/{t}/review"), json!({"summary": "no code"}))
        .await;
    assert_eq!(
        app.post(&format!("/api/v1/tasks/{t}/approve"), json!({})).await.body,
        json!({"status": "done"})
    );
    let u = app.task(&ws, "Code").await;
    app.post(
        &format!("/api/v1/tasks/{u}/review"),
        json!({"pr_url": "https://github.com/acme/api/pull/1"}),
    )
    .await;
    let r = app
        .post(&format!("/api/v1/tasks/{u}/reject"), json!({"reason": "tests missing"}))
        .await;
    assert_eq!(r.body["status"], "ready");
    // the rejected hand-off no longer binds its PR
    app.patch(&format!("/api/v1/tasks/{u}"), json!({"status": "running"}))
        .await;
    app.post(
        &format!("/api/v1/tasks/{u}/review"),
        json!({"summary": "fixed, no new PR"}),
    )
    .await;
    assert_eq!(
        app.post(&format!("/api/v1/tasks/{u}/approve"), json!({})).await.body,
        json!({"status": "done"})
    );
    assert_eq!(gh.sim.counters().merges, 0);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_merge_method_and_branch_setting_are_used() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Rebase me");
    gh.green_build(&sha);
    let app = fast(&gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let put = app
        .request(
            reqwest::Method::PUT,
            &format!("/api/v1/github/workspace-settings?workspace_id={ws}"),
            Some(json!({"merge_method": "rebase", "delete_branch": false})),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK);
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/tasks"),
            json!({"title": "T", "status": "running"}),
        )
        .await;
    let t = r.body["id"].as_str().unwrap().to_string();
    app.post(
        &format!("/api/v1/tasks/{t}/review"),
        json!({"pr_url": format!("https://github.com/acme/api/pull/{n}")}),
    )
    .await;
    app.post(&format!("/api/v1/tasks/{t}/approve"), json!({})).await;
    wait_status(&app, &t, "done").await;
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert_eq!(pr.merge_method.as_deref(), Some("rebase"));
    assert!(!pr.head_branch_deleted);
    app.stop().await;
}
