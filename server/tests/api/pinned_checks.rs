//! Required checks pinned to one GitHub App. GitHub pins a requirement to
//! the app that last reported it unless told otherwise, and then counts only
//! that app's report: a commit status of the same name — which an agent's
//! write token can post — or another app's check run neither meets nor fails
//! it. The merger must judge as GitHub does, or it merges (an admin token
//! bypasses the rule) or blocks on what GitHub ignores.

use std::time::Duration;

use kandev_server::github_sim::check_apps::{CheckReport, SimRequired};
use kandev_server::github_sim::shapes::ACTIONS_APP_ID;

use crate::github_support::{Sim, approve_with_pr, fast, last_of, merges_once, simulator, wait_merged, wait_status};
use crate::support::{Db, TestApp, eventually};

/// A third-party CI app that happens to name a check `build` too.
const OTHER_APP: i64 = 4242;

const ONLY_ACTIONS: &str = "build (only GitHub App 15368's report counts)";

fn pinned_build() -> Vec<SimRequired> {
    vec![SimRequired::pinned("build", ACTIONS_APP_ID)]
}

/// Waits for the merger to say it awaits GitHub Actions' own `build`.
async fn awaiting_actions(app: &TestApp, t: &str) -> serde_json::Value {
    let progress = || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        last_of(&events, "merge_progress")
    };
    eventually(
        "the merger to await Actions' build",
        Duration::from_secs(20),
        || async {
            progress().await["payload"]["detail"]
                .as_str()
                .is_some_and(|d| d.contains(ONLY_ACTIONS))
        },
    )
    .await;
    progress().await
}

/// The posed `build` is not taken for Actions' own: the merger waits and
/// never calls merge; when Actions' `build` passes, the PR merges.
async fn waits_for_actions_then_merges(gh: &Sim, n: i64, sha: &str) {
    let app = fast(gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let progress = awaiting_actions(&app, &t).await;
    assert_eq!(progress["payload"]["step"], "waiting_for_checks", "{progress}");
    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
    assert!(last_of(&events, "blocked").is_null(), "waiting, not blocked: {events}");
    assert_eq!(gh.sim.counters().merge_calls, 0, "no merge was attempted");
    gh.sim
        .set_check_run("acme", "api", sha, "build", "completed", Some("success"))
        .unwrap();
    wait_merged(&app, &t, n).await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_status_posing_as_a_pinned_check_is_not_taken_for_it() {
    let gh = simulator().await;
    gh.sim.protect_with_checks("acme", "api", Some(pinned_build())).unwrap();
    let (n, sha) = gh.open("Posed status");
    gh.sim.set_status("acme", "api", &sha, "build", "success").unwrap();
    waits_for_actions_then_merges(&gh, n, &sha).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_app_s_passing_check_does_not_meet_a_ruleset_pinned_requirement() {
    let gh = simulator().await;
    // No classic protection at all: the ruleset alone requires Actions' build.
    gh.ruleset(|r| r.required_checks = pinned_build());
    let (n, sha) = gh.open("Other app");
    gh.sim
        .report_check_run(
            "acme",
            "api",
            &sha,
            &CheckReport::new("build", "completed", Some("success")).from_app(OTHER_APP),
        )
        .unwrap();
    waits_for_actions_then_merges(&gh, n, &sha).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_app_failing_a_pinned_check_s_name_does_not_block_the_merge() {
    let gh = simulator().await;
    gh.sim.protect_with_checks("acme", "api", Some(pinned_build())).unwrap();
    let (n, sha) = gh.open("Noisy app");
    gh.sim
        .report_check_run(
            "acme",
            "api",
            &sha,
            &CheckReport::new("build", "completed", Some("failure")).from_app(OTHER_APP),
        )
        .unwrap();
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "completed", Some("success"))
        .unwrap();
    merges_once(&gh, n).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pinned_app_s_own_failure_still_blocks_naming_it() {
    let gh = simulator().await;
    gh.sim.protect_with_checks("acme", "api", Some(pinned_build())).unwrap();
    let (n, sha) = gh.open("Red");
    gh.sim.set_status("acme", "api", &sha, "build", "success").unwrap();
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "completed", Some("failure"))
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    let reason = last_of(&events, "blocked")["payload"]["reason"].clone();
    assert!(
        reason.as_str().is_some_and(|r| r.starts_with("CI failing: build")),
        "{reason}"
    );
    assert_eq!(gh.sim.counters().merge_calls, 0);
    app.stop().await;
}
