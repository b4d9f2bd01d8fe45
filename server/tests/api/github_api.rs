//! The GitHub side: linking, the sync and its publish paths, the poller's
//! down-time recovery, webhooks, rate limits, conditional requests and the
//! repository-selector helpers — all against the GitHub simulator.

use std::time::Duration;

use kandev_server::github_sim::{Faults, PrPatch};
use reqwest::StatusCode;
use serde_json::json;

use crate::engine::{ARCHIVE_PROMPT, quiet};
use crate::github_support::{SECRET, simulator, watch_publishes};
use crate::on_both_databases;
use crate::support::{Db, eventually};

async fn merge_while_kandev_is_down_fires_on_the_first_sweep(db: Db) {
    let gh = simulator().await;
    let (n, _) = gh.open("Overnight change");
    let first = gh.app(db).start().await;
    let ws = first.workspace_with_repo("W").await;
    let t = first.task(&ws, "T").await;
    let a = first
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    let linked = first.link(&t, n).await;
    assert_eq!(linked["state"], "open");
    quiet(&first).await;
    assert!(first.runs_of(&a).await.is_empty());
    let database_url = first.database_url.clone();
    // Kandev goes down; the PR merges meanwhile (no webhook is configured).
    let files = first.stop_keeping_files().await;
    gh.sim.merge_pr("acme", "api", n).unwrap();
    gh.sim.catch_up_reads(); // long before the next read
    // Kandev starts again over the same database: the poller's first sweep,
    // made right at start, must reach attached consumers.
    let data = files.path().join("data");
    let second = gh
        .app(db)
        .settings_more(move |s| {
            s.database_url = database_url;
            s.data_dir = data;
        })
        .start()
        .await;
    let run = second.wait_for_run_status(&a, "succeeded").await;
    assert_eq!(run.dedup_key, format!("pr_merged:{t}:acme/api#{n}"));
    assert!(
        second.task_json(&t).await["archived_at"].is_string(),
        "the overnight merge archived its task"
    );
    second.stop().await;
    drop(files);
}
on_both_databases!(merge_while_kandev_is_down_fires_on_the_first_sweep);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_reviews_and_unresolved_threads_are_read_into_the_link_row() {
    let gh = simulator().await;
    let (n, _) = gh.open("Reviewed");
    // Protection asks for one approval, a ruleset for two: the stricter wins.
    gh.sim.set_required_approvals("acme", "api", 1).unwrap();
    gh.ruleset(|r| r.required_approvals = 2);
    let first = gh.sim.add_thread("acme", "api", n, "src/lib.rs").unwrap();
    gh.sim.add_thread("acme", "api", n, "src/main.rs").unwrap();
    gh.sim.resolve_thread("acme", "api", n, first).unwrap();
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    let row = app.link(&t, n).await;
    assert_eq!(
        (
            row["required_reviews"].clone(),
            row["unresolved_review_threads"].clone()
        ),
        (json!(2), json!(1))
    );
    // A PR without review comments costs no GraphQL request.
    let (plain, _) = gh.open("No comments");
    let graphql_before = gh.sim.counters().graphql;
    let row = app.link(&t, plain).await;
    assert_eq!(row["unresolved_review_threads"], 0);
    assert_eq!(gh.sim.counters().graphql, graphql_before);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_reads_the_pr_stores_every_field_and_publishes_unconditionally() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Add caching");
    gh.green_build(&sha);
    gh.sim.set_status("acme", "api", &sha, "ci/lint", "pending").unwrap();
    gh.sim.add_review("acme", "api", n, "bob", "APPROVED").unwrap();
    let app = gh.app(Db::Sqlite).start().await;
    let published = watch_publishes(&app).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    let row = app.link(&t, n).await;
    assert_eq!(row["pr_title"], "Add caching");
    assert_eq!(row["pr_url"], format!("https://github.com/acme/api/pull/{n}"));
    // The head a reviewer sees, and what their approval names.
    assert_eq!(row["head_sha"], sha);
    assert_eq!(row["state"], "open");
    assert_eq!(
        (
            row["checks_total"].clone(),
            row["checks_passing"].clone(),
            row["checks_state"].clone()
        ),
        (json!(2), json!(1), json!("pending"))
    );
    assert_eq!(row["review_state"], "approved");
    assert_eq!(row["workspace_id"], ws);
    assert_eq!(published.count(), 1);
    app.link(&t, n).await;
    assert_eq!(
        published.count(),
        2,
        "the associate path publishes even when nothing changed"
    );
    let listed = app.get(&format!("/api/v1/tasks/{t}/prs")).await.body;
    assert_eq!(listed.as_array().unwrap().len(), 1);

    let bad = app
        .post(
            &format!("/api/v1/tasks/{t}/prs"),
            json!({"url": "https://example.com/x"}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let missing = app
        .post(
            &format!("/api/v1/tasks/{t}/prs"),
            json!({"owner": "acme", "repo": "api", "pr_number": 999}),
        )
        .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_publishes_only_on_change_and_keeps_watching_merged_rows() {
    let gh = simulator().await;
    let (n, _) = gh.open("Watch me");
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    let published = watch_publishes(&app).await;
    let report = app.sweep().await;
    assert_eq!(
        (report.watched, report.published),
        (1, 0),
        "nothing changed, nothing published"
    );
    gh.sim
        .patch_pr(
            "acme",
            "api",
            n,
            PrPatch {
                title: Some("Watch me closely".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(app.sweep().await.published, 1);
    assert_eq!(published.last().pr_title, "Watch me closely");
    gh.sim.merge_pr("acme", "api", n).unwrap();
    gh.sim.catch_up_reads(); // long before the next read
    app.sweep().await;
    assert_eq!(published.last().state, "merged");
    assert!(published.last().merged_at.is_some());
    // after the merge the row is still watched: a late review republishes
    gh.sim.add_review("acme", "api", n, "carol", "APPROVED").unwrap();
    assert_eq!(app.sweep().await.published, 1);
    assert_eq!(published.last().review_count, 1);
    assert_eq!(published.count(), 3);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settled_merged_rows_are_no_longer_swept() {
    let gh = simulator().await;
    let (n, _) = gh.open("Old");
    let app = gh
        .app(Db::Sqlite)
        .settings_more(|s| s.pr_settle_period = Duration::ZERO)
        .start()
        .await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    gh.sim.merge_pr("acme", "api", n).unwrap();
    gh.sim.catch_up_reads(); // long before the next read
    app.link(&t, n).await;
    assert_eq!(app.sweep().await.watched, 0);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_publishes_only_lifecycle_changes_and_skips_terminal_rows() {
    let gh = simulator().await;
    let (n, _) = gh.open("Refresh me");
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    let published = watch_publishes(&app).await;
    gh.sim
        .patch_pr(
            "acme",
            "api",
            n,
            PrPatch {
                title: Some("Renamed".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let rows = app
        .post(&format!("/api/v1/tasks/{t}/prs/refresh"), json!({}))
        .await
        .body;
    assert_eq!(published.count(), 0, "a title change is not a lifecycle change");
    assert_eq!(
        rows[0]["pr_title"], "Refresh me",
        "the reconcile path writes only state and timestamps"
    );
    gh.sim.close_pr("acme", "api", n).unwrap();
    gh.sim.catch_up_reads(); // long before the refresh
    let rows = app
        .post(&format!("/api/v1/tasks/{t}/prs/refresh"), json!({}))
        .await
        .body;
    assert_eq!(published.count(), 1);
    assert_eq!(rows[0]["state"], "closed");
    gh.sim.reset_counters();
    app.post(&format!("/api/v1/tasks/{t}/prs/refresh"), json!({})).await;
    assert_eq!(gh.sim.counters().requests, 0, "closed rows are never reconciled");
    assert_eq!(published.count(), 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detach_publishes_nothing_and_restore_publishes_unconditionally() {
    let gh = simulator().await;
    let (n, _) = gh.open("Detach me");
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    app.link(&t, n).await;
    let published = watch_publishes(&app).await;
    assert_eq!(
        app.delete(&format!("/api/v1/tasks/{t}/prs/acme/api/{n}")).await.status,
        StatusCode::NO_CONTENT
    );
    assert!(
        app.get(&format!("/api/v1/tasks/{t}/prs"))
            .await
            .body
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(app.sweep().await.watched, 0, "detached rows are not watched");
    assert_eq!(published.count(), 0);
    let r = app
        .post(&format!("/api/v1/tasks/{t}/prs/acme/api/{n}/restore"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(published.count(), 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linking_an_already_merged_pr_fires_once_and_records_its_target() {
    let gh = simulator().await;
    let (n, _) = gh.open("Merged long ago");
    gh.sim.merge_pr("acme", "api", n).unwrap();
    gh.sim.catch_up_reads(); // long before the next read
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.link(&t, n).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    assert_eq!(
        app.task_json(&run.task_id).await["metadata"]["automation_target_task_id"],
        t
    );
    app.link(&t, n).await;
    quiet(&app).await;
    assert_eq!(app.runs_of(&a).await.len(), 1, "fires once");
    app.stop().await;
}

pub(crate) async fn deliver(
    app: &crate::support::TestApp,
    event: &str,
    id: &str,
    body: &serde_json::Value,
    secret: Option<&str>,
) -> reqwest::Response {
    let bytes = body.to_string().into_bytes();
    let mut req = app
        .client
        .post(format!("{}/api/v1/github/webhook", app.base))
        .header("x-github-event", event)
        .header("x-github-delivery", id)
        .body(bytes.clone());
    if let Some(s) = secret {
        req = req.header("x-hub-signature-256", kandev_server::signature::sign(s, &bytes));
    }
    req.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_signatures_and_duplicate_deliveries() {
    let gh = simulator().await;
    let app = gh.app(Db::Sqlite).start().await;
    let ping = json!({"zen": "Keep it logically awesome."});
    assert_eq!(
        deliver(&app, "ping", "d-0", &ping, None).await.status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        deliver(&app, "ping", "d-0", &ping, Some("wrong")).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let ok = deliver(&app, "ping", "d-1", &ping, Some(SECRET)).await;
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.json::<serde_json::Value>().await.unwrap()["status"], "ignored");
    let dup = deliver(&app, "ping", "d-1", &ping, Some(SECRET)).await;
    assert_eq!(dup.json::<serde_json::Value>().await.unwrap()["status"], "duplicate");
    app.stop().await;

    let refused = gh
        .app(Db::Sqlite)
        .settings_more(|s| s.github_webhook_secret = None)
        .start()
        .await;
    assert_eq!(
        deliver(&refused, "ping", "d-2", &ping, Some(SECRET)).await.status(),
        StatusCode::FORBIDDEN
    );
    refused.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_request_delivery_syncs_at_once_and_the_merged_trigger_fires() {
    let gh = simulator().await;
    let (app, n, t, a) = crate::github_lag::linked(&gh, "Fast path").await;
    gh.sim.merge_pr("acme", "api", n).unwrap();
    // The poller waits an hour: only the delivery can make this happen.
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&t).await["archived_at"].is_string());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_and_check_run_deliveries_fire_their_triggers() {
    let gh = simulator().await;
    let (n, _) = gh.open("CI please");
    let app = gh.app(Db::Sqlite).start().await;
    gh.sim
        .set_webhook(&format!("{}/api/v1/github/webhook", app.base), SECRET);
    let ws = app.workspace_with_repo("W").await;
    let repos = json!([{"owner": "acme", "name": "api"}]);
    let push = app
        .automation(&ws, json!({"name": "p", "prompt": "e2e:message(\"{{push.sha}}\")", "triggers": [{"type": "github_push", "config": {"repos": repos, "branches": ["feature-*"]}}]}))
        .await;
    let ci = app
        .automation(&ws, json!({"name": "c", "prompt": "e2e:message(\"{{ci.check_name}}\")", "triggers": [{"type": "github_ci", "config": {"repos": repos, "conclusions": ["failure"]}}]}))
        .await;
    let sha = gh.sim.push("acme", "api", n).unwrap();
    let push_run = app.wait_for_runs(push["id"].as_str().unwrap(), 1).await.remove(0);
    assert_eq!(push_run.dedup_key, format!("push:acme/api@feature-{n}@{sha}"));
    gh.sim
        .set_check_run("acme", "api", &sha, "build", "completed", Some("failure"))
        .unwrap();
    let ci_run = app.wait_for_runs(ci["id"].as_str().unwrap(), 1).await.remove(0);
    assert!(ci_run.dedup_key.starts_with("ci:acme/api#"));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_pull_requests_honour_every_filter_and_link_the_pr_to_the_run() {
    let gh = simulator().await;
    gh.sim
        .open_pr(
            "acme",
            "api",
            kandev_server::github_sim::NewPr {
                title: "Draft".into(),
                draft: true,
                author: Some("alice".into()),
                labels: vec!["bot".into()],
                ..Default::default()
            },
        )
        .unwrap();
    gh.sim
        .open_pr(
            "acme",
            "api",
            kandev_server::github_sim::NewPr {
                title: "From bob".into(),
                author: Some("bob".into()),
                labels: vec!["bot".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let (good, _) = gh
        .sim
        .open_pr(
            "acme",
            "api",
            kandev_server::github_sim::NewPr {
                title: "Good one".into(),
                author: Some("alice".into()),
                labels: vec!["bot".into()],
                body: Some("Fixes #1".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "review", "prompt": "e2e:message(\"{{pr.title}} {{pr.body}} {{pr.branch}}\")", "max_concurrent_runs": 5,
                   "triggers": [{"type": "github_pr", "config": {"events": ["opened"], "repos": [{"owner": "acme", "name": "api"}],
                                 "branches": ["main"], "authors": ["alice"], "labels": ["bot"], "exclude_draft": true}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    kandev_server::automation::pr_evaluator::evaluate(&app.services().automation, app.services().github.client()).await;
    let runs = app.wait_for_runs(&a, 1).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].dedup_key, format!("pr:acme/api#{good}"));
    assert_eq!(
        app.run_prompt(&runs[0]).await,
        format!("e2e:message(\"Good one Fixes #1 feature-{good}\")")
    );
    eventually("the PR linked to its run task", Duration::from_secs(10), || async {
        app.get(&format!("/api/v1/tasks/{}/prs", runs[0].task_id))
            .await
            .body
            .as_array()
            .is_some_and(|a| a.len() == 1)
    })
    .await;
    kandev_server::automation::pr_evaluator::evaluate(&app.services().automation, app.services().github.client()).await;
    quiet(&app).await;
    assert_eq!(app.runs_of(&a).await.len(), 1, "each PR fires once per automation");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_selector_helpers_respect_the_workspace_scope() {
    let gh = simulator().await;
    gh.sim.add_org("other");
    gh.sim.add_repo("acme", "web", true);
    gh.sim.add_repo("other", "tool", false);
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let orgs = app.get(&format!("/api/v1/github/orgs?workspace_id={ws}")).await.body;
    assert_eq!(orgs["orgs"], json!([{"login": "acme"}, {"login": "other"}]));
    let hits = app
        .get(&format!("/api/v1/github/repos/search?workspace_id={ws}&org=acme&q="))
        .await
        .body;
    assert_eq!(
        hits["repos"],
        json!([{"owner": "acme", "name": "api", "private": false}, {"owner": "acme", "name": "web", "private": true}])
    );
    assert_eq!(
        app.get(&format!("/api/v1/github/repos/search?workspace_id={ws}&q=x"))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        app.get("/api/v1/github/repos/search?org=acme").await.status,
        StatusCode::BAD_REQUEST
    );

    let settings = app
        .get(&format!("/api/v1/github/workspace-settings?workspace_id={ws}"))
        .await
        .body;
    assert_eq!(settings["repo_scope_mode"], "all");
    assert_eq!(settings["merge_method"], "squash");
    let put = app
        .request(reqwest::Method::PUT, &format!("/api/v1/github/workspace-settings?workspace_id={ws}"),
            Some(json!({"repo_scope_mode": "orgs", "repo_scope_orgs": ["acme"], "repo_scope_repos": [], "merge_method": "rebase", "delete_branch": false})))
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    let orgs = app.get(&format!("/api/v1/github/orgs?workspace_id={ws}")).await.body;
    assert_eq!(orgs["orgs"], json!([{"login": "acme"}]));
    let bad = app
        .request(
            reqwest::Method::PUT,
            &format!("/api/v1/github/workspace-settings?workspace_id={ws}"),
            Some(json!({"merge_method": "octopus"})),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_github_stays_idle_and_links_say_so() {
    let app = crate::support::spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/prs"),
            json!({"url": "https://github.com/acme/api/pull/1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.body["error"]["message"].as_str().unwrap().contains("GITHUB_TOKEN"));
    // the review hand-off still binds (and links) its PR
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/review"),
            json!({"pr_url": "https://github.com/acme/api/pull/1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(app.get(&format!("/api/v1/tasks/{t}/prs")).await.body[0]["pr_number"], 1);
    let _ = Faults::default();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_boards_pr_links_come_in_one_read_archived_ones_when_asked() {
    let gh = simulator().await;
    let (a, _) = gh.open("First");
    let (b, _) = gh.open("Second");
    let app = gh.app(Db::Sqlite).start().await;
    let ws = app.workspace("W").await;
    let (t1, t2) = (app.task(&ws, "One").await, app.task(&ws, "Two").await);
    app.link(&t1, a).await;
    app.link(&t2, b).await;
    let other = app.workspace("Other").await;
    let t3 = app.task(&other, "Elsewhere").await;
    app.link(&t3, a).await;
    assert_eq!(
        app.post(&format!("/api/v1/tasks/{t2}/archive"), json!({})).await.status,
        StatusCode::OK
    );

    let board = app.get(&format!("/api/v1/workspaces/{ws}/board-prs")).await.body;
    let tasks: Vec<&str> = board
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, [t1.as_str()], "{board}");
    let all = app
        .get(&format!("/api/v1/workspaces/{ws}/board-prs?include_archived=true"))
        .await
        .body;
    let mut tasks: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["task_id"].as_str().unwrap())
        .collect();
    tasks.sort();
    let mut want = vec![t1.as_str(), t2.as_str()];
    want.sort();
    assert_eq!(tasks, want, "{all}");
    app.stop().await;
}
