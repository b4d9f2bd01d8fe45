//! GitHub's API lagging its own webhooks: a delivery says a PR merged while
//! reads still show it open. Kandev reads again for a few seconds, then
//! leaves it to the poller; a delivery older than the read asks for nothing.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::engine::ARCHIVE_PROMPT;
use crate::github_api::deliver;
use crate::github_support::{SECRET, Sim, simulator};
use crate::logs::capture;
use crate::support::{Db, TestApp, eventually};

const BEHIND: &str = "GitHub's API is behind its webhook for this PR";
const GAVE_UP: &str = "GitHub's API is still behind its webhook for this PR";

/// An app taking the simulator's deliveries, a linked task in its workspace
/// and a "Pull request merged" automation that archives it.
pub(crate) async fn linked(gh: &Sim, title: &str) -> (TestApp, i64, String, String) {
    let (n, _) = gh.open(title);
    let app = gh.app(Db::Sqlite).start().await;
    gh.sim
        .set_webhook(&format!("{}/api/v1/github/webhook", app.base), SECRET);
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.link(&t, n).await;
    (app, n, t, a)
}

/// Merges PR `n` of `acme/{repo}` on GitHub and waits for the automation to
/// archive the task: within 10 s of the merge, so the poller (an hour away)
/// cannot be what saw it.
pub(crate) async fn merge_and_see_it_archived(gh: &Sim, app: &TestApp, repo: &str, n: i64, t: &str, a: &str) {
    let merged = Instant::now();
    gh.sim.merge_pr("acme", repo, n).unwrap();
    app.wait_for_run_status(a, "succeeded").await;
    assert!(app.task_json(t).await["archived_at"].is_string());
    assert!(
        merged.elapsed() < Duration::from_secs(10),
        "archived {:?} after the merge",
        merged.elapsed()
    );
}

// Current-thread runtimes: every spawned loop logs where `capture` listens.
#[tokio::test]
async fn a_merged_delivery_github_still_reads_as_open_is_read_again_until_the_merge_shows() {
    let (logs, _guard) = capture();
    let gh = simulator().await;
    let (app, n, t, a) = linked(&gh, "Lagging read").await;
    gh.lag_reads(2_000);
    // The poller waits an hour and the first read says open: only a re-read
    // can archive the task.
    merge_and_see_it_archived(&gh, &app, "api", n, &t, &a).await;
    assert_eq!(logs.at("INFO", &[BEHIND]).len(), 1, "{:#?}", logs.lines());
    assert!(logs.at("INFO", &[GAVE_UP]).is_empty());
    assert_eq!(app.runs_of(&a).await.len(), 1, "fires once");
    app.stop().await;
}

#[tokio::test]
async fn a_delivery_github_never_catches_up_with_is_read_a_few_times_then_left_to_the_poller() {
    let (logs, _guard) = capture();
    let gh = simulator().await;
    let (app, n, t, a) = linked(&gh, "Very late read").await;
    // Longer than every re-read's wait together (7.5 s).
    gh.lag_reads(10_000);
    let merged = Instant::now();
    gh.sim.merge_pr("acme", "api", n).unwrap();
    eventually("the re-reads to give up", Duration::from_secs(30), || async {
        !logs.at("INFO", &[GAVE_UP]).is_empty()
    })
    .await;
    // Bounded: nothing reads GitHub once they gave up.
    let read = gh.sim.counters().requests;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(gh.sim.counters().requests, read, "no reads after giving up");
    assert!(app.task_json(&t).await["archived_at"].is_null());
    assert!(app.runs_of(&a).await.is_empty());
    // Once GitHub's reads catch up, the poller's sweep is the backstop.
    tokio::time::sleep(Duration::from_millis(10_500).saturating_sub(merged.elapsed())).await;
    app.sweep().await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&t).await["archived_at"].is_string());
    app.stop().await;
}

#[tokio::test]
async fn a_late_delivery_older_than_what_github_reads_asks_for_no_re_read() {
    let (logs, _guard) = capture();
    let gh = simulator().await;
    let (app, n, t, a) = linked(&gh, "Out of order").await;
    gh.sim.merge_pr("acme", "api", n).unwrap();
    app.wait_for_run_status(&a, "succeeded").await;
    // A `synchronize` from before the merge, delivered after it.
    let stale = json!({"action": "synchronize", "number": n,
        "pull_request": {"number": n, "state": "open", "merged": false, "updated_at": "2020-01-01T00:00:00Z"},
        "repository": {"name": "api", "owner": {"login": "acme"}}});
    // The merge's own delivery may have met a lagging read: only what the
    // stale one causes counts.
    let behind = logs.at("INFO", &[BEHIND]).len();
    let ack = deliver(&app, "pull_request", "late-1", &stale, Some(SECRET)).await;
    assert_eq!(ack.status(), reqwest::StatusCode::ACCEPTED);
    let read = gh.sim.counters().requests;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(gh.sim.counters().requests, read, "no re-read");
    assert_eq!(logs.at("INFO", &[BEHIND]).len(), behind, "{:#?}", logs.lines());
    assert!(app.task_json(&t).await["archived_at"].is_string());
    app.stop().await;
}
