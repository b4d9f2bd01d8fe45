//! Merges racing other changes to the same base branch. When something lands
//! on the base between GitHub's mergeability check and a merge call, GitHub
//! refuses with 405 "Base branch was modified. Review and try the merge
//! again." — every time two approved PRs into one base merge at nearly the
//! same moment. Once GitHub has recomputed, the merge goes through.

use kandev_core::merger::BASE_MOVED_RETRIES;
use std::time::Duration;

use kandev_server::github_sim::Faults;
use serde_json::json;

use crate::github_support::{approve_in, approve_with_pr, fast, last_of, simulator, wait_merged, wait_status};
use crate::support::{Db, eventually};

const BASE_MOVED: &str = "Base branch was modified. Review and try the merge again.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_that_moved_under_the_merge_is_read_again_and_the_pr_merges() {
    let gh = simulator().await;
    gh.require_build();
    let n = gh.green_pr("Busy base");
    gh.sim.set_faults(Faults {
        base_moves_before_merge: 1,
        ..Default::default()
    });
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_merged(&app, &t, n).await;
    let said: Vec<&serde_json::Value> = events
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["payload"]["step"] == "base_moved")
        .collect();
    assert_eq!(said.len(), 1, "{events}");
    assert_eq!(
        said[0]["payload"]["detail"],
        "the base branch moved during the merge; checking again"
    );
    let c = gh.sim.counters();
    assert_eq!((c.merge_calls, c.merges), (2, 1), "refused once, then merged: {c:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_that_keeps_moving_blocks_with_github_s_refusal_after_bounded_retries() {
    let gh = simulator().await;
    gh.require_build();
    let n = gh.green_pr("Very busy base");
    gh.sim.set_faults(Faults {
        base_moves_before_merge: 1000,
        ..Default::default()
    });
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        last_of(&events, "blocked")["payload"]["reason"],
        json!(format!("GitHub refused the merge: {BASE_MOVED}"))
    );
    let c = gh.sim.counters();
    assert_eq!(
        (c.merge_calls, c.merges),
        (u64::from(BASE_MOVED_RETRIES) + 1, 0),
        "{c:?}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_prs_into_one_base_all_merge_though_each_merge_moves_the_base() {
    four_approved_prs_race(false).await;
}

/// Under "require branches to be up to date", each merge puts the others
/// behind: the last of four is brought up to date three times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_prs_into_a_strict_base_all_merge_each_brought_up_to_date_as_it_moves() {
    four_approved_prs_race(true).await;
}

async fn four_approved_prs_race(strict: bool) {
    let gh = simulator().await;
    gh.require_build();
    if strict {
        gh.sim.require_up_to_date("acme", "api", true).unwrap();
        gh.auto_build(100);
    }
    let app = fast(&gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let mut shas = vec![];
    let mut tasks = vec![];
    for i in 0..4 {
        let (n, sha) = gh.open(&format!("race {i}"));
        gh.sim
            .set_check_run("acme", "api", &sha, "build", "in_progress", None)
            .unwrap();
        tasks.push((approve_in(&app, &ws, n, "").await, n));
        shas.push(sha);
    }
    // Every job waits on its check; they all go green at once and race.
    for sha in &shas {
        gh.sim
            .set_check_run("acme", "api", sha, "build", "completed", Some("success"))
            .unwrap();
    }
    for (t, n) in &tasks {
        wait_merged(&app, t, *n).await;
    }
    assert_eq!(gh.sim.counters().merges, 4);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_branch_that_falls_behind_again_is_brought_up_to_date_again_and_merges() {
    let gh = simulator().await;
    gh.require_build();
    gh.sim.require_up_to_date("acme", "api", true).unwrap();
    let mine = gh.green_pr("Mine");
    let theirs = gh.green_pr("Theirs");
    let also_theirs = gh.green_pr("Also theirs");
    // CI on every new commit, slow enough for the base to move under it.
    gh.auto_build(1500);
    gh.sim.merge_pr("acme", "api", theirs).unwrap();
    let first = gh.sim.pr("acme", "api", mine).unwrap().head_sha;
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, mine, "").await;
    // The merger's update lands as a new head; before its CI reports, the
    // base moves again and the branch is out of date once more.
    eventually("the update to land", Duration::from_secs(20), || async {
        gh.sim.pr("acme", "api", mine).unwrap().head_sha != first
    })
    .await;
    gh.sim.merge_pr("acme", "api", also_theirs).unwrap();
    wait_merged(&app, &t, mine).await;
    assert_eq!(gh.sim.pr("acme", "api", mine).unwrap().update_branch_count, 2);
    assert_eq!(gh.sim.counters().merges, 1, "only this PR merged through the API");
    app.stop().await;
}
