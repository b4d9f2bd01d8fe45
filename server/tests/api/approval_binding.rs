//! An approval binds to the code it approved. The merger merges the head the
//! approval named (or, naming none, the head it first read), or a later head
//! with the very same diff (its own branch update, a rebase); anything else —
//! an agent's push after approval, or before the merger's first read — is
//! code nobody reviewed, and the task blocks for a new approval.

use std::time::Duration;

use kandev_server::github_sim::compare::CompareQuirk;
use kandev_server::github_sim::{Faults, RepoFault};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::github_support::{
    READ_LAG_MS, Sim, approve_until_merged, approve_with_pr, fast, fast_again, in_review, last_of, simulator,
    wait_status, waiting_for_checks,
};
use crate::support::{Db, TestApp};

fn blocked_reason(events: &Value) -> String {
    last_of(events, "blocked")["payload"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The block for a head that is not the approved code (pinned words).
fn changed_after_approval(approved: &str, now: &str) -> String {
    format!(
        "the PR changed after approval (approved {}, now {}); review it and approve again",
        &approved[..7],
        &now[..7]
    )
}

/// The PR was merged, at `head`.
fn merged_at(gh: &Sim, n: i64, head: &str) {
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(pr.merged);
    assert_eq!(pr.head_sha, head);
}

/// A PR whose required build is still running, approved: the merger has
/// bound the approval and waits. `extra_files` widen its diff first.
async fn approved_and_waiting_with(gh: &Sim, app: &TestApp, extra_files: usize) -> (i64, String, String) {
    let (n, first) = gh.open("Reviewed change");
    gh.sim.widen_diff("acme", "api", n, extra_files).unwrap();
    gh.require_build();
    gh.sim
        .set_check_run("acme", "api", &first, "build", "in_progress", None)
        .unwrap();
    let t = approve_with_pr(app, n, "").await;
    waiting_for_checks(app, &t).await;
    (n, first, t)
}

async fn approved_and_waiting(gh: &Sim, app: &TestApp) -> (i64, String, String) {
    approved_and_waiting_with(gh, app, 0).await
}

/// Past what GitHub's compare lists (300 files): read from trees.
const LARGE: usize = 400;

/// An approved PR (its diff widened by `extra_files`) gets a push: the task
/// blocks naming both heads, and neither is merged.
async fn a_push_after_approval_blocks(gh: &Sim, app: &TestApp, extra_files: usize) {
    a_commit_after_approval_blocks(gh, app, extra_files, |n| gh.sim.push("acme", "api", n)).await
}

/// An approved PR (its diff widened by `extra_files`) gets the commit
/// `push` makes: the task blocks naming both heads, and neither is merged.
async fn a_commit_after_approval_blocks(
    gh: &Sim,
    app: &TestApp,
    extra_files: usize,
    push: impl Fn(i64) -> kandev_server::github_sim::SimResult<String>,
) {
    let (n, first, t) = approved_and_waiting_with(gh, app, extra_files).await;
    let pushed = push(n).unwrap();
    gh.green_build(&pushed);
    gh.green_build(&first);
    let events = wait_status(app, &t, "blocked").await;
    assert_eq!(blocked_reason(&events), changed_after_approval(&first, &pushed));
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(!pr.merged, "neither the old head nor the pushed one is merged");
    assert_eq!(pr.merge_count, 0);
}

/// An approved PR (its diff widened by `extra_files`) is rebased, keeping
/// its diff: the rebased head is merged.
async fn a_rebase_after_approval_merges(gh: &Sim, app: &TestApp, extra_files: usize) {
    let (n, _, t) = approved_and_waiting_with(gh, app, extra_files).await;
    let rebased = gh.sim.rebase("acme", "api", n).unwrap();
    gh.green_build(&rebased);
    wait_status(app, &t, "done").await;
    merged_at(gh, n, &rebased);
}

async fn a_push_after_approval_blocks_instead_of_merging_code_nobody_reviewed(db: Db) {
    let gh = simulator().await;
    let app = fast(&gh, db).start().await;
    a_push_after_approval_blocks(&gh, &app, 0).await;
    app.stop().await;
}

crate::on_both_databases!(a_push_after_approval_blocks_instead_of_merging_code_nobody_reviewed);

/// Compare lists a file whose mode alone changed just as before: making a
/// reviewed file executable after approval is code nobody reviewed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_that_only_makes_a_reviewed_file_executable_blocks_as_changed() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    a_commit_after_approval_blocks(&gh, &app, 0, |n| gh.sim.chmod("acme", "api", n)).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebase_that_keeps_the_reviewed_diff_still_merges() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    a_rebase_after_approval_merges(&gh, &app, 0).await;
    app.stop().await;
}

/// A PR behind its base, whose CI reports on every new head.
fn behind_its_base(gh: &Sim, touching_its_files: bool) -> i64 {
    gh.auto_build(50);
    gh.require_build();
    let n = gh.green_pr("Behind");
    gh.behind(n, touching_its_files);
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mergers_own_branch_update_keeps_the_approval() {
    let gh = simulator().await;
    let n = behind_its_base(&gh, false);
    let app = fast(&gh, Db::Sqlite).start().await;
    approve_until_merged(&gh, &app, n).await;
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert_eq!(pr.update_branch_count, 1, "merged the updated head");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_that_changes_reviewed_files_blocks_for_a_new_approval() {
    let gh = simulator().await;
    let n = behind_its_base(&gh, true);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert!(
        blocked_reason(&events).starts_with("the PR changed after approval"),
        "{}",
        blocked_reason(&events)
    );
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert_eq!(pr.update_branch_count, 1);
    assert!(!pr.merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebase_of_a_diff_past_compares_file_list_still_merges() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    a_rebase_after_approval_merges(&gh, &app, LARGE).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_to_a_diff_past_compares_file_list_blocks_as_changed() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    a_push_after_approval_blocks(&gh, &app, LARGE).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mergers_own_branch_update_keeps_the_approval_of_a_large_diff() {
    let gh = simulator().await;
    let n = behind_its_base(&gh, false);
    gh.sim.widen_diff("acme", "api", n, LARGE).unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    approve_until_merged(&gh, &app, n).await;
    assert_eq!(gh.sim.pr("acme", "api", n).unwrap().update_branch_count, 1);
    app.stop().await;
}

/// GitHub leaves a comparison's files out when it cannot compute the diff:
/// an empty list there must not match every other such head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_to_a_diff_compare_lists_without_files_blocks_as_changed() {
    let gh = simulator().await;
    gh.sim.compare_quirk("acme", "api", CompareQuirk::OmitsFiles).unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    a_push_after_approval_blocks(&gh, &app, 0).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebase_of_a_diff_compare_lists_without_files_still_merges() {
    let gh = simulator().await;
    gh.sim.compare_quirk("acme", "api", CompareQuirk::OmitsFiles).unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    a_rebase_after_approval_merges(&gh, &app, 0).await;
    app.stop().await;
}

/// Compare may send a file's blob as `null`: a rewrite of a reviewed file
/// must still show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_rewriting_reviewed_files_that_compare_lists_without_blobs_blocks() {
    let gh = simulator().await;
    gh.sim.compare_quirk("acme", "api", CompareQuirk::NullShas).unwrap();
    let n = behind_its_base(&gh, true);
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert!(
        blocked_reason(&events).starts_with("the PR changed after approval"),
        "{}",
        blocked_reason(&events)
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_whose_tree_github_cuts_blocks_even_a_rebase() {
    let gh = simulator().await;
    gh.sim.limit_trees("acme", "api", 100).unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let (n, first, t) = approved_and_waiting_with(&gh, &app, LARGE).await;
    let rebased = gh.sim.rebase("acme", "api", n).unwrap();
    gh.green_build(&rebased);
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        blocked_reason(&events),
        format!(
            "the PR's head moved after approval (approved {}, now {}) and its diff is too large to compare; \
             review it and approve again",
            &first[..7],
            &rebased[..7]
        )
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

fn fails(gh: &Sim, operation: &str, status: u16, times: u32) {
    gh.sim.set_repo_fault(
        "acme",
        "api",
        Some(RepoFault {
            status,
            operation: Some(operation.into()),
            times,
            ..Default::default()
        }),
    );
}

/// A green PR, approved while GitHub fails as set up, still merges.
async fn merges_despite_failures(gh: &Sim, title: &str) {
    let n = gh.green_pr(title);
    let app = fast(gh, Db::Sqlite).start().await;
    approve_until_merged(gh, &app, n).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_read_that_fails_for_a_while_is_waited_out() {
    let gh = simulator().await;
    fails(&gh, "compare", 502, 3);
    merges_despite_failures(&gh, "Compare is down").await;
}

/// The diff's modes come over GraphQL: an outage there is waited out too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_read_that_fails_for_a_while_is_waited_out() {
    let gh = simulator().await;
    fails(&gh, "graphql", 502, 4);
    merges_despite_failures(&gh, "GraphQL is down").await;
    assert!(gh.sim.repo_fault("acme", "api").is_none(), "the four failures were met");
}

/// GitHub's GraphQL fails a query it could not finish in time with 200 and
/// an `errors` answer: for the modes read, that passes too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_read_github_times_out_on_is_waited_out() {
    let gh = simulator().await;
    gh.sim.set_faults(Faults {
        graphql_timeouts: 3,
        ..Default::default()
    });
    merges_despite_failures(&gh, "GraphQL is slow").await;
    assert!(gh.sim.counters().graphql >= 4, "three timed out, then one answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_merged_without_reading_the_diff_it_binds_to() {
    let gh = simulator().await;
    fails(&gh, "compare", 404, 0);
    let n = gh.green_pr("Unreadable diff");
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = approve_with_pr(&app, n, "").await;
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        blocked_reason(&events),
        format!("GitHub answered 404 reading the diff of acme/api#{n}: it does not exist, or the token cannot see it")
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approved_head_survives_a_restart_and_a_push_while_down_blocks() {
    let gh = simulator().await;
    let first_app = fast(&gh, Db::Sqlite).start().await;
    let (n, first, t) = approved_and_waiting(&gh, &first_app).await;
    let database_url = first_app.database_url.clone();
    let files = first_app.stop_keeping_files().await;
    // While no Kandev runs, the agent pushes and its CI goes green.
    let pushed = gh.sim.push("acme", "api", n).unwrap();
    gh.green_build(&pushed);
    // Past GitHub's read lag: the next Kandev reads only the pushed head.
    tokio::time::sleep(Duration::from_millis(READ_LAG_MS + 200)).await;
    let second = fast_again(&gh, database_url, &files).await;
    let events = wait_status(&second, &t, "blocked").await;
    assert!(
        blocked_reason(&events).contains(&first[..7]),
        "{}",
        blocked_reason(&events)
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    second.stop().await;
    drop(files);
}

/// A green PR in review, its head as the reviewer saw it, and the task.
async fn seen_in_review(gh: &Sim, app: &TestApp) -> (i64, String, String) {
    gh.require_build();
    let n = gh.green_pr("Reviewed change");
    let seen = gh.sim.pr("acme", "api", n).unwrap().head_sha;
    let ws = app.workspace_with_repo("W").await;
    let t = in_review(app, &ws, n, "").await;
    (n, seen, t)
}

async fn approve_naming(app: &TestApp, t: &str, head: &str) -> crate::support::Reply {
    app.post(&format!("/api/v1/tasks/{t}/approve"), json!({"head_sha": head}))
        .await
}

/// The new head lands, goes green, and is past GitHub's read lag, all
/// before the person's approval reaches the merger.
async fn moved_before_the_approval(gh: &Sim, head: String) -> String {
    gh.green_build(&head);
    tokio::time::sleep(Duration::from_millis(READ_LAG_MS + 200)).await;
    head
}

async fn a_push_between_review_and_approval_blocks_the_approval_naming_the_seen_head(db: Db) {
    let gh = simulator().await;
    let app = fast(&gh, db).start().await;
    let (n, seen, t) = seen_in_review(&gh, &app).await;
    let pushed = moved_before_the_approval(&gh, gh.sim.push("acme", "api", n).unwrap()).await;
    let r = approve_naming(&app, &t, &seen.to_uppercase()).await;
    assert_eq!(r.body["status"], "merge_triggered", "{}", r.body);
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(blocked_reason(&events), changed_after_approval(&seen, &pushed));
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

crate::on_both_databases!(a_push_between_review_and_approval_blocks_the_approval_naming_the_seen_head);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebase_between_review_and_approval_still_merges_the_approval_naming_the_seen_head() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let (n, seen, t) = seen_in_review(&gh, &app).await;
    let rebased = moved_before_the_approval(&gh, gh.sim.rebase("acme", "api", n).unwrap()).await;
    assert_eq!(approve_naming(&app, &t, &seen).await.body["status"], "merge_triggered");
    wait_status(&app, &t, "done").await;
    merged_at(&gh, n, &rebased);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_naming_a_commit_github_does_not_know_blocks_naming_it() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let (n, _, t) = seen_in_review(&gh, &app).await;
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    assert_eq!(
        approve_naming(&app, &t, unknown).await.body["status"],
        "merge_triggered"
    );
    let events = wait_status(&app, &t, "blocked").await;
    assert_eq!(
        blocked_reason(&events),
        format!(
            "GitHub answered 404 reading the approved commit 0123456 of acme/api#{n}: \
             it does not exist, or the token cannot see it"
        )
    );
    assert!(!gh.sim.pr("acme", "api", n).unwrap().merged);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_naming_anything_but_a_full_sha_is_refused_and_changes_nothing() {
    let gh = simulator().await;
    let app = fast(&gh, Db::Sqlite).start().await;
    let (n, seen, t) = seen_in_review(&gh, &app).await;
    for hostile in [&seen[..7], "../../merge", &format!("{seen}?x=1"), ""] {
        let r = approve_naming(&app, &t, hostile).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{hostile}: {}", r.body);
        assert_eq!(
            r.body["error"]["message"],
            "head_sha must be a full commit SHA (40 hexadecimal digits)"
        );
    }
    assert_eq!(
        app.get(&format!("/api/v1/tasks/{t}")).await.body["status"],
        "human_review"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pr = gh.sim.pr("acme", "api", n).unwrap();
    assert!(!pr.merged);
    // Nothing was left behind to stop a proper approval.
    assert_eq!(approve_naming(&app, &t, &seen).await.body["status"], "merge_triggered");
    wait_status(&app, &t, "done").await;
    app.stop().await;
}
