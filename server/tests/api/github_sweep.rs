//! The sweep's batched GraphQL reads: a one-point probe per hundred PRs,
//! detail reads only for what changed, the same rows REST would write, REST
//! as the fallback, and GraphQL's point budget honoured.

use kandev_core::task_pr::TaskPr;
use kandev_server::github_sim::{Faults, NewPr, PrPatch, RepoFault};

use crate::github_support::{READ_LAG_MS, Sim, simulator};
use crate::support::{Db, TestApp};

/// `n` open PRs, each linked to its own task; returns (task, number) pairs.
async fn linked(gh: &Sim, app: &TestApp, ws: &str, n: usize) -> Vec<(String, i64)> {
    let mut out = vec![];
    for i in 0..n {
        let (number, sha) = gh.open(&format!("PR {i}"));
        gh.green_build(&sha);
        let t = app.task(ws, &format!("T{i}")).await;
        app.link(&t, number).await;
        out.push((t, number));
    }
    out
}

async fn row(app: &TestApp, task: &str) -> TaskPr {
    let links = app.services().store.list_task_prs(task).await.expect("links");
    links.into_iter().next().expect("a link")
}

/// GitHub's `updatedAt` counts whole seconds: a PR edited in the second of
/// a read (or the one before) is read again, and an edit made within the
/// same second as the previous one is seen that way. Past this, the PRs
/// of a test have settled.
async fn past_the_second() {
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
}

fn without_sync_time(mut pr: TaskPr) -> TaskPr {
    pr.last_synced_at = None;
    pr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_second_sweep_spends_one_probe_and_no_rest() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    linked(&gh, &app, &ws, 3).await;
    past_the_second().await;
    app.sweep().await;
    gh.sim.reset_counters();
    let report = app.sweep().await;
    let c = gh.sim.counters();
    assert_eq!(report.synced, 3);
    assert_eq!(c.graphql, 1, "one probe for all three: {c:?}");
    assert_eq!(c.requests, c.graphql, "no REST request at all: {c:?}");
    assert_eq!(c.graphql_points, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_watched_prs_cost_two_hundredths_of_a_request_each() {
    let gh = simulator().await;
    gh.sim.add_repo("acme", "web", false);
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let links = linked(&gh, &app, &ws, 150).await;
    for i in 0..50 {
        let (n, _) = gh
            .sim
            .open_pr(
                "acme",
                "web",
                NewPr {
                    title: format!("Web {i}"),
                    ..Default::default()
                },
            )
            .expect("pr");
        let t = app.task(&ws, &format!("W{i}")).await;
        let r = app
            .post(
                &format!("/api/v1/tasks/{t}/prs"),
                serde_json::json!({"url": format!("https://github.com/acme/web/pull/{n}")}),
            )
            .await;
        assert_eq!(r.status, reqwest::StatusCode::CREATED);
    }
    past_the_second().await;
    gh.sim.reset_counters();
    let cold = app.sweep().await;
    let c = gh.sim.counters();
    assert_eq!((cold.watched, cold.synced, cold.failed), (200, 200, 0));
    assert_eq!(c.requests, 4, "two probes and two detail reads of 100: {c:?}");
    gh.sim.reset_counters();
    let warm = app.sweep().await;
    let c = gh.sim.counters();
    assert_eq!(warm.synced, 200);
    assert!(
        c.requests as f64 / 200.0 <= 0.02,
        "at most 0.02 requests per watched PR: {c:?}"
    );
    assert_eq!(c.graphql_points, 2, "a point per hundred PRs");
    // The rows are whole: title and checks from the detail read.
    let first = row(&app, &links[0].0).await;
    assert_eq!(first.pr_title, "PR 0");
    assert_eq!((first.checks_total, first.checks_passing), (1, 1));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batched_read_writes_the_row_rest_would_write() {
    let gh = simulator().await;
    gh.ruleset(|r| r.required_approvals = 2);
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let links = linked(&gh, &app, &ws, 4).await;
    // Every field varied: reviews by several people, requests, a failing
    // check beside a pending status, conversations, a merge, a close, a draft.
    let (busy, merged, closed, draft) = (links[0].1, links[1].1, links[2].1, links[3].1);
    gh.sim
        .add_review("acme", "api", busy, "alice", "APPROVED")
        .expect("review");
    gh.sim
        .add_review("acme", "api", busy, "bob", "CHANGES_REQUESTED")
        .expect("review");
    gh.sim.add_review("acme", "api", busy, "", "COMMENTED").expect("review");
    let sha = gh.sim.pr("acme", "api", busy).expect("pr").head_sha;
    gh.sim
        .set_check_run("acme", "api", &sha, "lint", "completed", Some("failure"))
        .expect("check");
    gh.sim
        .set_status("acme", "api", &sha, "deploy", "pending")
        .expect("status");
    gh.sim
        .patch_pr(
            "acme",
            "api",
            busy,
            PrPatch {
                requested_reviewers: Some(vec!["carol".into()]),
                additions: Some(42),
                ..Default::default()
            },
        )
        .expect("patch");
    let open_thread = gh.sim.add_thread("acme", "api", busy, "src/a.rs").expect("thread");
    let done_thread = gh.sim.add_thread("acme", "api", busy, "src/b.rs").expect("thread");
    gh.sim
        .resolve_thread("acme", "api", busy, done_thread)
        .expect("resolve");
    let _ = open_thread;
    gh.sim.merge_pr("acme", "api", merged).expect("merge");
    gh.sim.close_pr("acme", "api", closed).expect("close");
    gh.sim
        .patch_pr(
            "acme",
            "api",
            draft,
            PrPatch {
                draft: Some(true),
                ..Default::default()
            },
        )
        .expect("draft");
    // Past GitHub's read lag, so the batch and the REST read below see the
    // same PRs (a lagging read showed the draft not yet a draft).
    tokio::time::sleep(std::time::Duration::from_millis(READ_LAG_MS + 200)).await;

    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!(report.failed, 0);
    let c = gh.sim.counters();
    assert_eq!(c.requests, c.graphql, "GraphQL read every PR whole: {c:?}");
    let github = &app.services().github;
    for (task, number) in &links {
        let batched = without_sync_time(row(&app, task).await);
        let rest = github
            .fetch("acme", "api", *number, task, &ws)
            .await
            .expect("REST read")
            .row;
        assert_eq!(batched, without_sync_time(rest), "PR #{number}");
    }
    let busy_row = row(&app, &links[0].0).await;
    assert_eq!(busy_row.required_reviews, 2);
    assert_eq!(busy_row.unresolved_review_threads, 1);
    assert_eq!(busy_row.pending_review_count, 1);
    assert_eq!(busy_row.checks_total, 3);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_probe_sees_change_is_read_again_and_published() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let links = linked(&gh, &app, &ws, 3).await;
    past_the_second().await;
    app.sweep().await;
    let (reviewed, checked, merged) = (links[0].1, links[1].1, links[2].1);
    gh.sim
        .add_review("acme", "api", reviewed, "alice", "APPROVED")
        .expect("review");
    let sha = gh.sim.pr("acme", "api", checked).expect("pr").head_sha;
    gh.sim
        .set_check_run("acme", "api", &sha, "e2e", "in_progress", None)
        .expect("check");
    gh.sim.merge_pr("acme", "api", merged).expect("merge");
    gh.sim.catch_up_reads(); // long before the sweep
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!(report.published, 3, "{report:?}");
    assert_eq!(gh.sim.counters().graphql, 2, "one probe, one detail read of the three");
    assert_eq!(row(&app, &links[0].0).await.review_state, "approved");
    let checks = row(&app, &links[1].0).await;
    assert_eq!((checks.checks_total, checks.checks_passing), (2, 1));
    assert_eq!(row(&app, &links[2].0).await.state, "merged");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_graphql_fails_the_sweep_reads_over_rest() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let links = linked(&gh, &app, &ws, 2).await;
    gh.sim.set_faults(Faults {
        graphql_errors: 1000,
        ..Default::default()
    });
    gh.sim
        .add_review("acme", "api", links[0].1, "alice", "APPROVED")
        .expect("review");
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!((report.synced, report.failed), (2, 0), "{report:?}");
    let c = gh.sim.counters();
    assert!(c.requests > c.graphql, "REST read them: {c:?}");
    assert_eq!(row(&app, &links[0].0).await.review_state, "approved");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_graphql_cannot_resolve_falls_back_to_rest_alone() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let links = linked(&gh, &app, &ws, 2).await;
    // A link to a PR GitHub no longer knows: the batch answers it `null`
    // with a NOT_FOUND error, and answers the other PR in full.
    let gone = app.task(&ws, "Gone").await;
    let mut row_gone = row(&app, &links[0].0).await;
    row_gone.task_id = gone.clone();
    row_gone.pr_number = 999;
    app.services()
        .store
        .upsert_task_pr(&row_gone, chrono::Utc::now())
        .await
        .expect("row");
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!((report.watched, report.synced, report.failed), (3, 2, 1), "{report:?}");
    let c = gh.sim.counters();
    assert_eq!(
        c.requests - c.graphql,
        1,
        "only the missing PR went to REST (a 404): {c:?}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_graphql_budget_defers_the_sweep_without_hammering() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    linked(&gh, &app, &ws, 1).await;
    gh.sim.set_graphql_budget(0, 3600);
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!(report.failed, 1);
    let after_first = gh.sim.counters().requests;
    assert_eq!(after_first, 1, "one refused query, and no REST behind it");
    let report = app.sweep().await;
    assert_eq!(report.failed, 1);
    assert_eq!(
        gh.sim.counters().requests,
        after_first,
        "the client knows the refill time and does not ask again"
    );
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("kandev_github_rate_limit_remaining{bucket=\"graphql\"} 0"),
        "{metrics}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detail_read_the_budget_cannot_pay_for_is_not_sent() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let links = linked(&gh, &app, &ws, 100).await;
    past_the_second().await;
    app.sweep().await;
    gh.sim
        .add_review("acme", "api", links[0].1, "alice", "APPROVED")
        .expect("review");
    for (_, n) in links.iter().skip(1) {
        gh.sim
            .patch_pr(
                "acme",
                "api",
                *n,
                PrPatch {
                    title: Some(format!("Renamed {n}")),
                    ..Default::default()
                },
            )
            .expect("rename");
    }
    // Enough for the probe (1 point), not for a detail read of 100 (6).
    gh.sim.set_graphql_budget(3, 3600);
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!(report.failed, 100, "{report:?}");
    assert_eq!(gh.sim.counters().graphql, 1, "the probe only");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secondary_limit_on_graphql_is_waited_out() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    linked(&gh, &app, &ws, 2).await;
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            operation: Some("graphql".into()),
            retry_after: Some(60),
            times: 1,
            ..Default::default()
        }),
    );
    gh.sim.reset_counters();
    let report = app.sweep().await;
    assert_eq!(
        report.failed, 2,
        "deferred, not read over REST behind the limit: {report:?}"
    );
    assert_eq!(gh.sim.counters().requests, 1);
    let report = app.sweep().await;
    assert_eq!(report.failed, 2);
    assert_eq!(
        gh.sim.counters().requests,
        1,
        "nothing sent before retry-after has passed"
    );
    app.stop().await;
}
