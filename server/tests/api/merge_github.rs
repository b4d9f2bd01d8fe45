//! The merger against GitHub as it really behaves: update-branch lands later,
//! rulesets and required reviews block, reads fail in every way GitHub's do,
//! and branches that require the merge queue merge through it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use kandev_server::clock::ManualClock;
use kandev_server::github_sim::{Faults, RepoFault, Timing};
use reqwest::StatusCode;
use serde_json::json;

use crate::github_support::{
    READ_LAG_MS, Sim, approve_with_pr, fast, last_of, simulator, wait_status, waiting_for_checks,
};
use crate::support::{Db, eventually};

/// CI that passes `build` on every new commit a moment after it appears.
fn green_ci(gh: &Sim) {
    gh.auto_build(100);
    gh.require_build();
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_branch_with_a_2s_delay_merges_the_new_head() {
    let gh = simulator().await;
    gh.sim.set_timing(Timing {
        update_branch_delay_ms: 2000,
        ..Timing::default()
    });
    green_ci(&gh);
    let (n, old_head) = gh.open("Stale base");
    gh.behind(n, false);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.merged);
    assert_ne!(pr.head_sha, old_head, "the new head was merged");
    assert_eq!(pr.update_branch_count, 1, "one update, never a second");
    assert_eq!(
        gh.sim.counters().merge_calls,
        1,
        "one merge call, pinned to the new head"
    );
    let waited_for_update = events.as_array().unwrap().iter().any(|e| {
        e["payload"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("the branch update"))
    });
    assert!(waited_for_update, "it waited for GitHub to land the update: {events}");
    assert!(last_of(&events, "blocked").is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expected_head_sha_422_on_update_starts_the_evaluation_over() {
    let gh = simulator().await;
    green_ci(&gh);
    let (n, _) = gh.open("Raced");
    gh.behind(n, false);
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            status: 422,
            operation: Some("update_branch".into()),
            times: 1,
            message: Some("expected head sha didn't match current head ref.".into()),
            ..Default::default()
        }),
    );
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["payload"]["step"] == "head_moved"),
        "{events}"
    );
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.merged);
    assert_eq!(pr.update_branch_count, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_review_blocks_with_a_reason_naming_reviews_after_the_timeout_and_never_calls_merge() {
    let gh = simulator().await;
    green_ci(&gh);
    gh.ruleset(|r| r.required_approvals = 1);
    let (n, _) = gh.open("Unreviewed");
    let clock = Arc::new(ManualClock::new(at("2026-03-08T12:00:00Z")));
    let app = fast(&gh, Db::Sqlite).clock(clock.clone()).start().await;
    let t = approve_with_pr(&app, n, "ci_wait_timeout_minutes=5").await;
    eventually("the merger to wait for reviews", Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        last_of(&events, "merge_progress")["payload"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("reviews: 1 more approving review (0 of 1 required)"))
    })
    .await;
    clock.advance(chrono::Duration::minutes(5));
    let events = wait_status(&app, &t, "blocked").await;
    let blocked = last_of(&events, "blocked");
    assert_eq!(
        blocked["payload"]["reason"],
        "reviews still missing after 5 min: 1 more approving review (0 of 1 required)"
    );
    // The same reason as a sentence the web says in the reader's language.
    assert_eq!(
        blocked["payload"]["said"],
        serde_json::json!({"id": "reviews-timeout", "args": {"minutes": "5", "missing": [
            {"id": "approvals-missing", "args": {"count": "1", "approvals": "0", "required": "1"}}
        ]}})
    );
    let progress = last_of(&events, "merge_progress");
    assert_eq!(progress["payload"]["said"]["id"], "waiting", "{progress}");
    assert_eq!(progress["payload"]["said"]["args"]["pending"][0]["id"], "reviews");
    assert_eq!(
        gh.sim.counters().merge_calls,
        0,
        "merge is never called while reviews are missing"
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approving_review_lets_a_blocked_pr_merge_with_one_merge_call() {
    let gh = simulator().await;
    green_ci(&gh);
    gh.ruleset(|r| r.required_approvals = 1);
    let (n, _) = gh.open("Needs a review");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    // A deleted account's review is in the list too: it must not stop the read.
    gh.sim.add_review("acme", "api", n, "", "COMMENTED").unwrap();
    gh.sim.add_review("acme", "api", n, "octo", "APPROVED").unwrap();
    wait_status(&app, &t, "done").await;
    assert_eq!(gh.sim.counters().merge_calls, 1);
    app.stop().await;
}

/// Under "require approval of the most recent reviewable push", the
/// merger's own branch update is a push the earlier approval does not
/// cover: the merger waits naming that review, and merges once it comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_its_branch_update_under_last_push_approval_the_merger_waits_for_that_review() {
    let gh = simulator().await;
    gh.ruleset(|r| {
        r.required_approvals = 1;
        r.last_push_approval = true;
        r.required_checks = vec!["build".into()];
        r.strict = true;
    });
    waits_for_the_last_push_review(&gh).await;
}

/// The same rule in classic branch protection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_its_branch_update_under_classic_last_push_approval_the_merger_waits_for_that_review() {
    let gh = simulator().await;
    gh.sim.set_required_approvals("acme", "api", 1).unwrap();
    gh.sim.protect_reviews("acme", "api", true, &[]).unwrap();
    gh.sim
        .protect_with_checks("acme", "api", Some(vec!["build".into()]))
        .unwrap();
    gh.sim.require_up_to_date("acme", "api", true).unwrap();
    waits_for_the_last_push_review(&gh).await;
}

/// A reviewed PR behind its base, under a last-push rule and strict
/// required checks, approved.
async fn waits_for_the_last_push_review(gh: &Sim) {
    gh.auto_build(50);
    let n = gh.green_pr("Reviewed, then behind");
    gh.sim.add_review("acme", "api", n, "octo", "APPROVED").unwrap();
    gh.behind(n, false);
    let app = fast(gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually(
        "the merger to wait for a review of its update",
        Duration::from_secs(20),
        || async {
            let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
            last_of(&events, "merge_progress")["payload"]["said"]["args"]["pending"][0]["args"]["missing"][0]["id"]
                == "last-push-review"
        },
    )
    .await;
    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
    assert!(
        last_of(&events, "merge_progress")["payload"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains(
                "reviews: an approval of the latest push, by someone other than its pusher \
                 (the branch's rules require one after every push, a branch update included)"
            )),
        "{events}"
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    gh.sim.add_review("acme", "api", n, "octo", "APPROVED").unwrap();
    wait_status(&app, &t, "done").await;
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.merged);
    assert_eq!(pr.update_branch_count, 1);
    app.stop().await;
}

/// GitHub does not count the approval of whoever pushed the head last
/// under "require approval of the most recent reviewable push": a
/// collaborator who pushed and approved leaves the PR waiting, named, until
/// someone else approves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_last_push_approval_the_pusher_s_own_approval_does_not_count() {
    let gh = simulator().await;
    gh.ruleset(|r| {
        r.required_approvals = 1;
        r.last_push_approval = true;
        r.required_checks = vec!["build".into()];
    });
    gh.auto_build(50);
    let n = gh.green_pr("Fixed up by a collaborator");
    gh.sim.push_as("acme", "api", n, "hubot").unwrap();
    gh.sim.add_review("acme", "api", n, "hubot", "APPROVED").unwrap();
    // GitHub's reads lag a push: the approval binds the head once they show it.
    tokio::time::sleep(Duration::from_millis(READ_LAG_MS + 200)).await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually(
        "the merger to wait for an approval by someone other than the pusher",
        Duration::from_secs(20),
        || async {
            let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
            last_of(&events, "merge_progress")["payload"]["said"]["args"]["pending"][0]["args"]["missing"][0]["id"]
                == "last-push-review"
        },
    )
    .await;
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    gh.sim.add_review("acme", "api", n, "mona", "APPROVED").unwrap();
    wait_status(&app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

/// Classic protection requiring a code owner's review: an approval from
/// someone else is not enough, GitHub reports review required, and the
/// merger waits naming the code owner's approval and whom GitHub asked for
/// it; it merges once that comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_owner_review_classic_protection_requires_is_waited_for_and_named() {
    let gh = simulator().await;
    green_ci(&gh);
    gh.sim.set_required_approvals("acme", "api", 1).unwrap();
    gh.sim.protect_reviews("acme", "api", false, &["lead"]).unwrap();
    let n = gh.green_pr("Owned files");
    gh.sim.add_review("acme", "api", n, "octo", "APPROVED").unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually(
        "the merger to name the code owner's review",
        Duration::from_secs(20),
        || async {
            let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
            let progress = &last_of(&events, "merge_progress")["payload"];
            progress["said"]["args"]["pending"][0]["args"]["missing"][0]["id"] == "code-owner-review-from"
                && progress["detail"].as_str().is_some_and(|d| {
                    d.contains(
                        "reviews: an approval from a code owner of the files it changes, asked of @lead \
                     (the branch's rules require one)",
                    )
                })
        },
    )
    .await;
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    gh.sim.add_review("acme", "api", n, "lead", "APPROVED").unwrap();
    wait_status(&app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

/// PR `n` (head `head`) into a branch whose rules require a deployment to
/// staging, approved: the merger waits as `waiting` finds in its progress
/// (`what`), without merging, and merges once the head deploys.
async fn merges_once_deployed(gh: &Sim, n: i64, head: &str, what: &str, waiting: impl Fn(&serde_json::Value) -> bool) {
    let app = fast(gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually(what, Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        waiting(&last_of(&events, "merge_progress")["payload"])
    })
    .await;
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    gh.sim.deploy("acme", "api", head, "staging", "success").unwrap();
    wait_status(&app, &t, "done").await;
    assert!(gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

fn staging_required(gh: &Sim) {
    green_ci(gh);
    gh.ruleset(|r| r.required_deployments = vec!["staging".into()]);
}

/// A ruleset requiring deployments blocks the PR until its head has
/// deployed to each environment: the merger waits naming the environment
/// (a failed deployment does not count), and merges once one succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_the_rules_require_is_waited_for_and_named() {
    let gh = simulator().await;
    staging_required(&gh);
    let (n, head) = gh.open("Needs staging");
    gh.sim.deploy("acme", "api", &head, "staging", "failure").unwrap();
    merges_once_deployed(&gh, n, &head, "the merger to name the deployment", |progress| {
        progress["said"]["args"]["pending"][0]["args"]["environment"] == "staging"
            && progress["detail"].as_str().is_some_and(|d| {
                d.contains("a successful deployment to staging (the branch's rules require one of the head)")
            })
    })
    .await;
}

/// A token that may not read deployments leaves the requirement unnamed
/// rather than blocking at once: the merger waits, and merges once GitHub
/// no longer reports the PR blocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployments_the_token_may_not_read_are_waited_for_unnamed() {
    let gh = simulator().await;
    staging_required(&gh);
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            status: 403,
            message: Some("Resource not accessible by personal access token".into()),
            operation: Some("deployments".into()),
            ..Default::default()
        }),
    );
    let (n, head) = gh.open("Needs staging, unseen");
    merges_once_deployed(&gh, n, &head, "the merger to wait, unnamed", |progress| {
        progress["said"]["args"]["pending"][0]["id"] == "reviews-unnamed"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unresolved_review_threads_are_waited_for_and_named() {
    let gh = simulator().await;
    green_ci(&gh);
    gh.ruleset(|r| r.thread_resolution = true);
    let (n, _) = gh.open("Discussed");
    let a = gh.sim.add_thread("acme", "api", n, "src/a.rs").unwrap();
    let b = gh.sim.add_thread("acme", "api", n, "src/b.rs").unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually("the merger to name the threads", Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        last_of(&events, "merge_progress")["payload"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("2 unresolved review threads"))
    })
    .await;
    gh.sim.resolve_thread("acme", "api", n, a).unwrap();
    gh.sim.resolve_thread("acme", "api", n, b).unwrap();
    wait_status(&app, &t, "done").await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_required_by_a_ruleset_counts_like_a_protected_one() {
    let gh = simulator().await;
    green_ci(&gh);
    gh.ruleset(|r| r.required_checks = vec!["lint".into()]);
    let (n, sha) = gh.open("Linted");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually("the merger to wait for lint", Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        last_of(&events, "merge_progress")["payload"]["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("waiting for lint"))
    })
    .await;
    gh.sim
        .set_check_run("acme", "api", &sha, "lint", "completed", Some("success"))
        .unwrap();
    wait_status(&app, &t, "done").await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failing_required_check_is_named_in_the_block_reason() {
    let gh = simulator().await;
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["build".into(), "lint".into()]))
        .unwrap();
    let (n, sha) = gh.open("Twice broken");
    let build = gh
        .sim
        .set_check_run("acme", "api", &sha, "build", "completed", Some("failure"))
        .unwrap();
    let lint = gh
        .sim
        .set_check_run("acme", "api", &sha, "lint", "completed", Some("timed_out"))
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        format!(
            "CI failing: build https://github.com/acme/api/runs/{build}; lint https://github.com/acme/api/runs/{lint}"
        )
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_runs_past_the_first_page_are_read() {
    let gh = simulator().await;
    gh.sim
        .set_required_checks("acme", "api", Some(vec!["check-150".into()]))
        .unwrap();
    let (n, sha) = gh.open("Many checks");
    for i in 0..150 {
        gh.sim
            .set_check_run(
                "acme",
                "api",
                &sha,
                &format!("check-{i:03}"),
                "completed",
                Some("success"),
            )
            .unwrap();
    }
    gh.sim
        .set_check_run("acme", "api", &sha, "check-150", "completed", Some("failure"))
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    let reason = last_of(&events, "blocked")["payload"]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.starts_with("CI failing: check-150 "), "{reason}");
    app.stop().await;
}

/// A secondary rate limit on a read, or on the merge call itself (GitHub
/// limits writes more strictly): the request was not processed, so it is
/// waited out and decided again, never a blocked task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secondary_rate_limit_on_a_read_or_the_merge_is_waited_out_and_the_merge_goes_through() {
    for operation in ["pull", "merge"] {
        let gh = simulator().await;
        green_ci(&gh);
        let (n, _) = gh.open("Busy");
        let app = fast(&gh, Db::Sqlite).start().await;
        gh.sim.set_repo_fault(
            "acme",
            "api",
            Some(RepoFault {
                operation: Some(operation.into()),
                times: 1,
                retry_after: Some(2),
                ..Default::default()
            }),
        );
        let started = Instant::now();
        let t = approve_with_pr(&app, n, "").await;
        wait_status(&app, &t, "done").await;
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{operation}: the retry-after was honoured"
        );
        let c = gh.sim.counters();
        assert_eq!(
            (c.merge_calls, c.merges),
            (1, 1),
            "{operation}: limited before GitHub's handler: {c:?}"
        );
        app.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_that_times_out_is_retried_and_the_merge_goes_through() {
    let gh = simulator().await;
    green_ci(&gh);
    let (n, _) = gh.open("Slow GitHub");
    let app = fast(&gh, Db::Sqlite)
        .settings_more(|s| s.github_timeout = Duration::from_millis(400))
        .start()
        .await;
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            operation: Some("check_runs".into()),
            times: 2,
            delay_ms: 1500,
            ..Default::default()
        }),
    );
    let t = approve_with_pr(&app, n, "").await;
    wait_status(&app, &t, "done").await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_or_404_on_a_read_blocks_naming_the_status() {
    for (status, names) in [(403, "GitHub answered 403"), (404, "GitHub answered 404")] {
        let gh = simulator().await;
        green_ci(&gh);
        let (n, _) = gh.open("Forbidden");
        let app = fast(&gh, Db::Sqlite).start().await;
        gh.sim.set_repo_fault(
            "acme",
            "api",
            Some(RepoFault {
                status,
                operation: Some("check_runs".into()),
                ..Default::default()
            }),
        );
        let t = approve_with_pr(&app, n, "").await;
        let events = wait_status(&app, &t, "blocked").await;
        let reason = last_of(&events, "blocked")["payload"]["reason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(reason.starts_with(names), "{status}: {reason}");
        assert!(reason.contains("the checks of acme/api#"), "{reason}");
        assert_eq!(gh.sim.counters().merge_calls, 0);
        app.stop().await;
    }
}

fn queue_rules(gh: &Sim) {
    green_ci(gh);
    gh.ruleset(|r| r.merge_queue = true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_queue_branch_is_merged_through_the_queue() {
    let gh = simulator().await;
    queue_rules(&gh);
    let (n, _) = gh.open("Queued");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        format!("Merged PR #{n} through the merge queue")
    );
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.merged);
    assert_eq!(pr.enqueue_count, 1);
    assert_eq!(gh.sim.counters().merge_calls, 0, "never a direct merge");
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["payload"]["step"] == "queued"),
        "{events}"
    );
    app.stop().await;
}

/// An enqueue (a GraphQL write) that meets a secondary rate limit was not
/// processed: it is waited out and the PR still merges through the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secondary_rate_limit_on_the_enqueue_is_waited_out_and_the_pr_merges_through_the_queue() {
    let gh = simulator().await;
    queue_rules(&gh);
    let (n, _) = gh.open("Queued in a busy org");
    gh.sim.set_faults(Faults {
        mutations_rate_limited: 1,
        ..Default::default()
    });
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        format!("Merged PR #{n} through the merge queue")
    );
    assert_eq!(gh.sim.pr("acme", "api", n).unwrap().enqueue_count, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_merge_refused_for_the_merge_queue_falls_back_to_enqueuing() {
    let gh = simulator().await;
    queue_rules(&gh);
    // Kandev cannot read the rules, so it tries a direct merge first.
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            status: 404,
            operation: Some("rules".into()),
            ..Default::default()
        }),
    );
    let (n, _) = gh.open("Queue only");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    wait_status(&app, &t, "done").await;
    assert_eq!(gh.sim.counters().merge_calls, 1, "one refused direct merge");
    assert_eq!(gh.sim.pr("acme", "api", n).unwrap().enqueue_count, 1);
    app.stop().await;
}

/// A branch that merges through its queue once `build` passes, and a PR
/// on it whose own build is green.
fn queued_branch_pr(gh: &Sim, title: &str) -> i64 {
    gh.ruleset(|r| {
        r.merge_queue = true;
        r.required_checks = vec!["build".into()];
    });
    let (n, sha) = gh.open(title);
    gh.green_build(&sha);
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_removed_from_the_queue_blocks_with_githubs_reason() {
    let gh = simulator().await;
    let n = queued_branch_pr(&gh, "Breaks main");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let group = {
        let mut group = None;
        eventually("a merge group", Duration::from_secs(20), || {
            group = gh
                .sim
                .pr("acme", "api", n)
                .and_then(|p| p.queue)
                .and_then(|q| q.merge_group_sha);
            std::future::ready(group.is_some())
        })
        .await;
        group.unwrap()
    };
    gh.sim
        .set_check_run("acme", "api", &group, "build", "completed", Some("failure"))
        .unwrap();
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "removed from the merge queue: Required status checks failed on the merge group: build"
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_merge_takes_a_queued_pr_out_of_the_queue() {
    let gh = simulator().await;
    let n = queued_branch_pr(&gh, "Changed my mind");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    eventually("the PR to be queued", Duration::from_secs(20), || async {
        gh.sim.pr("acme", "api", n).unwrap().queue.is_some() && app.count("merger_jobs").await == 1
    })
    .await;
    eventually("the job to record the queue", Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        !last_of(&events, "merge_progress").is_null()
            && events
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["payload"]["step"] == "queued")
    })
    .await;
    let r = app.post(&format!("/api/v1/tasks/{t}/cancel-merge"), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.queue.is_none(), "dequeued");
    assert!(!pr.merged);
    assert_eq!(app.task_json(&t).await["status"], "human_review");
    app.stop().await;
}
