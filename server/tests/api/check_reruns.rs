//! Checks re-run on the same commit. GitHub keeps the superseded run listed
//! beside the new one — in REST's check-run list and in GraphQL's rollup —
//! while its merge box judges only the newest: so must the merger and the
//! PR row.

use kandev_core::task_pr::TaskPr;
use kandev_server::github_sim::Faults;
use kandev_server::github_sim::check_apps::CheckReport;

use crate::github_support::{
    Sim, approve_with_pr, fast, last_of, merges_once, simulator, wait_status, waiting_for_checks,
};
use crate::support::{Db, TestApp};

/// `build` failed on `sha`, then passed on a re-run.
fn fail_then_pass(gh: &Sim, sha: &str) {
    gh.sim
        .set_check_run("acme", "api", sha, "build", "completed", Some("failure"))
        .unwrap();
    gh.sim
        .report_check_run(
            "acme",
            "api",
            sha,
            &CheckReport::new("build", "completed", Some("success")).rerun(),
        )
        .unwrap();
}

/// A PR whose required `build` failed, then passed on a re-run.
fn failed_then_passed(gh: &Sim) -> (i64, String) {
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    let (n, sha) = gh.open("Flaky build");
    fail_then_pass(gh, &sha);
    (n, sha)
}

/// A linked PR whose `build` fails and passes on a re-run after the link
/// was read, so the next sweep reads the re-run.
async fn linked_then_rerun(gh: &Sim, app: &TestApp) -> String {
    let (n, sha) = gh.open("Flaky build");
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "Flaky").await;
    app.link(&t, n).await;
    assert_eq!(row(app, &t).await.checks_total, 0);
    fail_then_pass(gh, &sha);
    t
}

async fn row(app: &TestApp, task: &str) -> TaskPr {
    let links = app.services().store.list_task_prs(task).await.expect("links");
    links.into_iter().next().expect("a link")
}

fn assert_green(pr: &TaskPr) {
    assert_eq!(
        (pr.checks_state.as_str(), pr.checks_total, pr.checks_passing),
        ("success", 1, 1),
        "the superseded failure neither fails nor counts: {pr:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_check_that_passed_on_a_rerun_lets_the_pr_merge() {
    let gh = simulator().await;
    let (n, sha) = failed_then_passed(&gh);
    let listed = reqwest::Client::new()
        .get(format!("{}/repos/acme/api/commits/{sha}/check-runs", gh.base))
        .bearer_auth("test-token")
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(
        listed["total_count"], 2,
        "GitHub lists the superseded run too: {listed}"
    );
    merges_once(&gh, n).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_still_running_is_waited_for_not_blocked_on_the_failure_it_replaces() {
    let gh = simulator().await;
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    let (n, sha) = gh.open("Re-running");
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "completed", Some("failure"))
        .unwrap();
    gh.sim
        .report_check_run(
            "acme",
            "api",
            &sha,
            &CheckReport::new("build", "in_progress", None).rerun(),
        )
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
    assert!(last_of(&events, "blocked").is_null(), "waiting, not blocked: {events}");
    assert_ne!(app.task_json(&t).await["status"], "blocked");
    gh.sim
        .report_check_run(
            "acme",
            "api",
            &sha,
            &CheckReport::new("build", "completed", Some("success")).rerun(),
        )
        .unwrap();
    wait_status(&app, &t, "done").await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_s_graphql_read_shows_a_rerun_pr_green() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let t = linked_then_rerun(&gh, &app).await;
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!((report.synced, report.failed), (1, 0), "{report:?}");
    let c = gh.sim.counters();
    assert_eq!(c.requests, c.graphql, "read through GraphQL alone: {c:?}");
    assert_green(&row(&app, &t).await);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_fallback_shows_a_rerun_pr_green() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    gh.sim.set_faults(Faults {
        graphql_errors: 1000,
        ..Default::default()
    });
    let t = linked_then_rerun(&gh, &app).await;
    let report = app.sweep().await;
    assert_eq!((report.synced, report.failed), (1, 0), "{report:?}");
    let c = gh.sim.counters();
    assert!(c.requests > c.graphql, "read over REST: {c:?}");
    assert_green(&row(&app, &t).await);
    app.stop().await;
}
