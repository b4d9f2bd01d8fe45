//! Rate limits on the merger's writes. GitHub limits content-creating
//! requests (a merge, an enqueue) more strictly than reads, with a secondary
//! limit: 403 and `retry-after`. A rate-limited request was not processed,
//! so it is waited out and decided again on a fresh read — never a blocked
//! task that needs a second approval.

use std::time::{Duration, Instant};

use kandev_server::github_sim::{AutoCi, Faults, RepoFault};

use crate::github_support::{approve_with_pr, fast, last_of, simulator, wait_merged, wait_status};
use crate::support::Db;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secondary_rate_limit_on_the_merge_call_is_waited_out_and_the_pr_merges() {
    let gh = simulator().await;
    gh.require_build();
    let n = gh.green_pr("Busy org");
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            operation: Some("merge".into()),
            times: 1,
            retry_after: Some(2),
            ..Default::default()
        }),
    );
    let app = fast(&gh, Db::Sqlite).start().await;
    let started = Instant::now();
    let t = approve_with_pr(&app, n, "").await;
    wait_merged(&app, &t, n).await;
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the retry-after was honoured"
    );
    let c = gh.sim.counters();
    assert_eq!(
        (c.merge_calls, c.merges),
        (1, 1),
        "limited once (before GitHub's handler), then merged: {c:?}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secondary_rate_limit_on_the_enqueue_is_waited_out_and_the_pr_merges_through_the_queue() {
    let gh = simulator().await;
    gh.require_build();
    let n = gh.green_pr("Queued in a busy org");
    gh.ruleset(|r| r.merge_queue = true);
    // CI that reports on the queue's merge group.
    let ci = AutoCi {
        checks: vec!["build".into()],
        conclusion: "success".into(),
        delay_ms: 100,
    };
    gh.sim.set_auto_ci("acme", "api", Some(ci)).unwrap();
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
