//! A repository renamed or transferred while its PRs are linked: GitHub
//! redirects the old name, so Kandev keeps reading and merging, and moves
//! each link to the name GitHub reports rather than keeping two.

use std::time::Duration;

use serde_json::{Value, json};

use crate::engine::ARCHIVE_PROMPT;
use crate::github_lag::{linked, merge_and_see_it_archived};
use crate::github_support::{SECRET, Sim, fast, last_of, simulator, wait_status, waiting_for_checks};
use crate::support::{Db, TestApp, eventually};

/// `owner/repo` of every link the task lists.
async fn links(app: &TestApp, t: &str) -> Vec<String> {
    let listed = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    listed
        .as_array()
        .map(|a| {
            a.iter()
                .map(|l| {
                    format!(
                        "{}/{}",
                        l["owner"].as_str().unwrap_or(""),
                        l["repo"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn a_sweep_after_a_rename_moves_the_link_to_the_new_name_and_keeps_one(db: Db) {
    let gh = simulator().await;
    let (n, _) = gh.open("Renamed under it");
    let app = gh.app(db).start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    app.sweep().await;
    assert_eq!(links(&app, &t).await, vec!["acme/service".to_string()]);
    // The moved row is the one synced from now on: no second row appears.
    app.sweep().await;
    assert_eq!(links(&app, &t).await, vec!["acme/service".to_string()]);
    let listed = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    assert_eq!(listed[0]["pr_url"], format!("https://github.com/acme/service/pull/{n}"));
    app.stop().await;
}
crate::on_both_databases!(a_sweep_after_a_rename_moves_the_link_to_the_new_name_and_keeps_one);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linking_the_new_name_beside_the_old_one_leaves_one_link_after_the_sweep() {
    let gh = simulator().await;
    let (n, _) = gh.open("Linked twice");
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/prs"),
            serde_json::json!({"url": format!("https://github.com/acme/service/pull/{n}")}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.body);
    app.sweep().await;
    assert_eq!(links(&app, &t).await, vec!["acme/service".to_string()]);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_merged_after_its_repository_was_renamed_archives_its_task_once_within_seconds() {
    let gh = simulator().await;
    let (app, n, t, a) = linked(&gh, "Merged after a rename").await;
    // The poller sweeps once an hour: only the deliveries can move and archive.
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    eventually(
        "the rename delivery to move the link",
        Duration::from_secs(10),
        || async { links(&app, &t).await == vec!["acme/service".to_string()] },
    )
    .await;
    merge_and_see_it_archived(&gh, &app, "service", n, &t, &a).await;
    // A sweep afterwards, under either name, fires nothing more.
    app.sweep().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.runs_of(&a).await.len(), 1, "fires once");
    assert_eq!(links(&app, &t).await, vec!["acme/service".to_string()]);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_pr_whose_repository_was_transferred_is_merged_through_github_s_redirects() {
    let gh = simulator().await;
    gh.sim.add_org("newco");
    let (n, sha) = gh.open("Transferred while waiting");
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "in_progress", None)
        .unwrap();
    let app = fast(&gh, Db::Sqlite).start().await;
    let t = crate::github_support::approve_with_pr(&app, n, "").await;
    waiting_for_checks(&app, &t).await;
    gh.sim.move_repo("acme", "api", "newco", "api").unwrap();
    // A sweep moves the link, and the waiting job's name with it.
    app.sweep().await;
    assert_eq!(links(&app, &t).await, vec!["newco/api".to_string()]);
    let job = sqlx::query("SELECT owner, repo FROM merger_jobs")
        .fetch_one(app.services().store.pool())
        .await
        .expect("the waiting job");
    let named: (String, String) = (sqlx::Row::get(&job, "owner"), sqlx::Row::get(&job, "repo"));
    assert_eq!(named, ("newco".to_string(), "api".to_string()));
    gh.sim
        .set_check_run("newco", "api", &sha, "build", "completed", Some("success"))
        .unwrap();
    let events: Value = wait_status(&app, &t, "done").await;
    assert_eq!(
        last_of(&events, "completed")["payload"]["summary"],
        format!("Merged PR #{n}")
    );
    let pr = gh.sim.pr("newco", "api", n).unwrap();
    assert!(pr.merged, "the merge (a PUT) followed the 307 to the moved repository");
    assert!(pr.head_branch_deleted, "so did the branch deletion");
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_that_fired_before_a_rename_does_not_fire_again_when_the_moved_link_announces() {
    let gh = simulator().await;
    let (app, n, t, a) = linked(&gh, "Fired, then renamed").await;
    gh.sim.merge_pr("acme", "api", n).unwrap();
    app.wait_for_run_status(&a, "succeeded").await;
    let key = format!("pr_merged:{t}:acme/api#{n}");
    assert_eq!(app.runs_of(&a).await[0].dedup_key, key);
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    // A field the sync announces changes too, so the moved row's write
    // publishes a merged PR under its new name.
    gh.sim
        .patch_pr(
            "acme",
            "service",
            n,
            kandev_server::github_sim::PrPatch {
                additions: Some(99),
                ..Default::default()
            },
        )
        .unwrap();
    let published = crate::github_support::watch_publishes(&app).await;
    app.sweep().await;
    eventually("the moved row to announce", Duration::from_secs(5), || async {
        published.count() > 0
    })
    .await;
    assert_eq!(published.last().repo, "service");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let runs = app.runs_of(&a).await;
    assert_eq!(runs.len(), 1, "the merge fires once, under either name");
    assert_eq!(
        runs[0].dedup_key,
        format!("pr_merged:{t}:acme/service#{n}"),
        "the key moved with the link"
    );
    app.stop().await;
}

/// A "Pull request merged" automation naming `acme/api` itself (and another
/// organisation's repositories), in a workspace with `acme/api` registered.
async fn named_automation(gh: &Sim, db: Db, webhooks: bool) -> (TestApp, String, String) {
    let app = gh.app(db).start().await;
    if webhooks {
        gh.sim
            .set_webhook(&format!("{}/api/v1/github/webhook", app.base), SECRET);
    }
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .merged_automation(
            &ws,
            json!({"all_repos": false, "repos": [{"owner": "acme", "name": "api"}, {"owner": "other", "name": ""}]}),
            ARCHIVE_PROMPT,
            1,
        )
        .await;
    (app, ws, a)
}

/// The repository entries of the automation's trigger.
async fn filtered_on(app: &TestApp, a: &str) -> Value {
    app.get(&format!("/api/v1/automations/{a}")).await.body["triggers"][0]["config"]["repos"].clone()
}

fn follows_service() -> Value {
    json!([{"owner": "acme", "name": "service"}, {"owner": "other", "name": ""}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_delivery_moves_the_registered_repository_and_the_filters_naming_it() {
    let gh = simulator().await;
    let (app, ws, a) = named_automation(&gh, Db::Sqlite, true).await;
    // No link names the repository: the delivery alone must carry the rename.
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    eventually(
        "the automation to follow the new name",
        Duration::from_secs(10),
        || async { filtered_on(&app, &a).await == follows_service() },
    )
    .await;
    let repos = app.get(&format!("/api/v1/workspaces/{ws}/repositories")).await.body;
    assert_eq!(
        (&repos[0]["owner"], &repos[0]["name"]),
        (&json!("acme"), &json!("service"))
    );
    app.stop().await;
}

/// GitHub's names are case-insensitive, but push and CI filters match them
/// exactly: a rename that only changes case must be followed too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_that_only_changes_case_is_followed_exactly() {
    let gh = simulator().await;
    let (app, ws, a) = named_automation(&gh, Db::Sqlite, true).await;
    gh.sim.move_repo("acme", "api", "acme", "API").unwrap();
    eventually(
        "the automation to follow the new case",
        Duration::from_secs(10),
        || async {
            filtered_on(&app, &a).await == json!([{"owner": "acme", "name": "API"}, {"owner": "other", "name": ""}])
        },
    )
    .await;
    let repos = app.get(&format!("/api/v1/workspaces/{ws}/repositories")).await.body;
    assert_eq!(repos[0]["name"], "API", "{repos}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_automation_naming_a_renamed_repository_still_archives_its_merged_pr() {
    let gh = simulator().await;
    let (n, _) = gh.open("Merged after a rename");
    let (app, ws, a) = named_automation(&gh, Db::Sqlite, true).await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    eventually("the link to move", Duration::from_secs(10), || async {
        links(&app, &t).await == vec!["acme/service".to_string()]
    })
    .await;
    merge_and_see_it_archived(&gh, &app, "service", n, &t, &a).await;
    assert_eq!(app.runs_of(&a).await.len(), 1, "fires once");
    app.stop().await;
}

async fn a_sweep_that_finds_a_link_moved_moves_the_filters_naming_it_too(db: Db) {
    let gh = simulator().await;
    let (n, _) = gh.open("Renamed, no delivery");
    let (app, ws, a) = named_automation(&gh, db, false).await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    gh.sim.move_repo("acme", "api", "acme", "service").unwrap();
    app.sweep().await;
    assert_eq!(links(&app, &t).await, vec!["acme/service".to_string()]);
    assert_eq!(filtered_on(&app, &a).await, follows_service());
    gh.sim.merge_pr("acme", "service", n).unwrap();
    gh.sim.catch_up_reads(); // long before the next sweep
    app.sweep().await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&t).await["archived_at"].is_string());
    app.stop().await;
}
crate::on_both_databases!(a_sweep_that_finds_a_link_moved_moves_the_filters_naming_it_too);
