//! The merger against GitHub reads that lag its writes: a PR merged or closed
//! moments before the merger reads it still reads as open, so the merge call
//! is refused (or its answer is lost) and the merger reads the PR back until
//! GitHub shows what happened — or lets the call's own outcome stand.

use std::time::Instant;

use kandev_server::github_sim::RepoFault;

use crate::github_support::{approve_with_pr, fast, last_of, simulator, wait_status};
use crate::support::Db;

/// Reads show a PR as it was this long after a merge, close or push.
const LAG_MS: u64 = 2_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_merged_elsewhere_that_still_reads_as_open_completes_as_already_merged() {
    crate::merger_api::merged_elsewhere_completes_as_already_merged(LAG_MS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_closed_elsewhere_that_still_reads_as_open_blocks_as_closed() {
    crate::merger_api::closed_elsewhere_blocks_as_closed(LAG_MS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_merge_answer_read_back_as_open_is_read_again_and_completes_with_one_merge() {
    crate::merger_api::lost_merge_answer_completes_with_one_merge(LAG_MS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_merge_of_a_pr_that_stays_open_blocks_with_github_s_reason_after_the_read_backs() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Refused");
    gh.green_build(&sha);
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            status: 405,
            operation: Some("merge".into()),
            message: Some("Repository rule violations found".into()),
            ..Default::default()
        }),
    );
    let app = fast(&gh, Db::Sqlite).start().await;
    let approved = Instant::now();
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        "GitHub refused the merge: Repository rule violations found"
    );
    // It read the PR back over core's waits (7.5 s) before believing the refusal.
    assert!(approved.elapsed().as_millis() >= 7_000, "{:?}", approved.elapsed());
    assert_eq!(gh.sim.counters().merges, 0);
    app.stop().await;
}
