//! Spec groups "Scoping and safety" and "Retroactivity and first observation".

use std::sync::Arc;

use kandev_core::events::Payload;
use kandev_server::app::{BuildOptions, construct};
use kandev_server::automation::merged::MergedPrSubscriber;
use kandev_server::automation::{AutomationService, StoreTaskOriginLookup};
use kandev_server::config::Settings;
use serde_json::json;

use crate::engine::{ARCHIVE_PROMPT, Form, merged_pr, quiet};
use crate::logs::capture;
use crate::support::{Db, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automation_in_another_workspace_does_not_fire() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let v = app.workspace_with_repo("V").await;
    let t = app.task(&v, "T in V").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_payload_workspace_is_not_consulted_and_the_lookup_workspace_fires() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.workspace_id = String::new();
    app.publish_pr(&pr, Form::Typed).await;
    assert_eq!(app.wait_for_runs(&a, 1).await.len(), 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_payload_workspace_has_no_vote_against_the_lookup() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let v = app.workspace_with_repo("V").await;
    let t = app.task(&v, "T lives in V").await;
    let in_w = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"w\")", 1)
        .await;
    let in_v = app
        .merged_automation(&v, json!({"all_repos": true}), "e2e:message(\"v\")", 1)
        .await;
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.workspace_id = w.clone(); // stale
    app.publish_pr(&pr, Form::Typed).await;
    assert_eq!(
        app.wait_for_runs(&in_v, 1).await.len(),
        1,
        "the task's own workspace fires"
    );
    assert!(
        app.runs_of(&in_w).await.is_empty(),
        "the stale payload workspace does not"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unresolvable_task_with_empty_payload_workspace_fires_nothing() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    let mut pr = merged_pr("no-such-task", "acme", "api", 7);
    pr.workspace_id = String::new();
    app.publish_pr(&pr, Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_pr_linked_to_an_automation_run_task_does_not_fire() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"ok\")", 5)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_runs(&a, 1).await.remove(0);
    // however the run task came to have a merged PR, it never fires
    app.publish_pr(&merged_pr(&run.task_id, "acme", "api", 8), Form::Typed)
        .await;
    quiet(&app).await;
    assert_eq!(app.runs_of(&a).await.len(), 1, "the loop guard held");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_deleted_before_evaluation_writes_no_row_of_any_status() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.delete(&format!("/api/v1/tasks/{t}")).await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert!(
        app.runs_of(&a).await.is_empty(),
        "not a failed run, not a skipped run: nothing"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_firing_does_not_associate_the_pr_with_its_run_task() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), "e2e:message(\"ok\")", 1)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    let run = app.wait_for_runs(&a, 1).await.remove(0);
    assert!(
        app.get(&format!("/api/v1/tasks/{}/prs", run.task_id))
            .await
            .body
            .as_array()
            .map(|a| a.is_empty())
            .unwrap_or(true)
    );
    assert_eq!(
        app.count("task_prs").await,
        0,
        "no linked-PR row was created for the run task"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_task_is_pinned_to_the_configured_repository_on_its_default_branch() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace("W").await;
    app.repository(&w, "acme", "api").await;
    let r = app
        .post(
            &format!("/api/v1/workspaces/{w}/repositories"),
            json!({"owner": "acme", "name": "tools", "default_branch": "develop"}),
        )
        .await;
    let r = r.body["id"].as_str().unwrap().to_string();
    let t = app.task(&w, "T").await;
    let a = app
        .automation(
            &w,
            json!({"name": "A", "prompt": "e2e:message(\"ok\")", "repository_ids": [r],
                   "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}}]}),
        )
        .await;
    let a = a["id"].as_str().unwrap().to_string();
    app.publish_pr(&merged_pr(&t, "other", "service", 7), Form::Typed).await;
    let run = app.wait_for_runs(&a, 1).await.remove(0);
    let task = app.task_json(&run.task_id).await;
    assert_eq!(task["repository_id"], r);
    assert_eq!(task["base_branch"], "develop");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_event_with_empty_task_id_does_not_fire() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.publish_pr(&merged_pr("", "acme", "api", 7), Form::Typed).await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty());
    app.stop().await;
}

/// Services constructed but not started, plus a second automation service
/// sharing their store and bus that has no task-origin lookup wired.
async fn unwired() -> (
    tempfile::TempDir,
    Arc<kandev_server::app::Services>,
    Arc<AutomationService>,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::defaults();
    settings.database_url = format!("sqlite://{}/k.db", dir.path().display());
    settings.data_dir = dir.path().join("data");
    let services = construct(settings, BuildOptions::default()).await.unwrap();
    services.orchestrator.start().await.unwrap();
    let svc = Arc::new(AutomationService::new(
        services.store.clone(),
        services.bus.clone(),
        services.outbox.clone(),
        services.clock.clone(),
        services.metrics.clone(),
        services.live.clone(),
        services.board.clone(),
    ));
    (dir, services, svc)
}

async fn seed(services: &kandev_server::app::Services) -> (String, String) {
    use kandev_core::api::{CreateAutomation, CreateTask, NewTrigger, Repository};
    let now = services.clock.now();
    let w = services.store.create_workspace("W", None, now).await.unwrap();
    let repo = Repository {
        id: String::new(),
        workspace_id: w.id.clone(),
        provider: "github".into(),
        owner: "acme".into(),
        name: "api".into(),
        default_branch: "main".into(),
        local_path: String::new(),
        ci_wait_timeout_minutes: None,
    };
    services.store.create_repository(&repo, now).await.unwrap();
    let t = services
        .board
        .create(
            &w.id,
            CreateTask {
                title: "T".into(),
                description: None,
                status: None,
                repository_id: None,
            },
            &kandev_core::api::Actor::System,
        )
        .await
        .unwrap();
    let a = services
        .automation
        .create(
            &w.id,
            CreateAutomation {
                name: "A".into(),
                triggers: Some(vec![NewTrigger {
                    trigger_type: kandev_core::TriggerType::GithubPrMerged,
                    config: json!({"all_repos": true}),
                    enabled: None,
                }]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    (t.id, a.automation.id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_lookup_wired_fires_nothing() {
    let (_dir, services, svc) = unwired().await;
    let (t, a) = seed(&services).await;
    let sub = MergedPrSubscriber::new(svc);
    sub.start().await.unwrap();
    services
        .bus
        .publish(
            "github.task_pr.updated",
            "github",
            Payload::TaskPr(merged_pr(&t, "acme", "api", 7)),
        )
        .await
        .unwrap();
    services.orchestrator.wait_idle().await;
    assert!(services.store.list_run_records(&a).await.unwrap().is_empty());
    sub.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookup_wired_after_start_works_without_resubscribing() {
    let (_dir, services, svc) = unwired().await;
    let (t, a) = seed(&services).await;
    let sub = MergedPrSubscriber::new(svc.clone());
    sub.start().await.unwrap();
    services
        .bus
        .publish(
            "github.task_pr.updated",
            "github",
            Payload::TaskPr(merged_pr(&t, "acme", "api", 7)),
        )
        .await
        .unwrap();
    services.orchestrator.wait_idle().await;
    assert!(
        services.store.list_run_records(&a).await.unwrap().is_empty(),
        "fails closed while unwired"
    );
    svc.set_task_origin_lookup(Arc::new(StoreTaskOriginLookup::new(services.store.clone())));
    services
        .bus
        .publish(
            "github.task_pr.updated",
            "github",
            Payload::TaskPr(merged_pr(&t, "acme", "api", 7)),
        )
        .await
        .unwrap();
    services.orchestrator.wait_idle().await;
    assert_eq!(
        services.store.list_run_records(&a).await.unwrap().len(),
        1,
        "the next event was evaluated and fired"
    );
    sub.stop().await;
}

#[tokio::test]
async fn start_without_lookup_logs_exactly_one_warn_naming_github_pr_merged() {
    let (_dir, _services, svc) = unwired().await;
    let sub = MergedPrSubscriber::new(svc);
    let (logs, _guard) = capture();
    sub.start().await.unwrap();
    let warns = logs.at("WARN", &["github_pr_merged"]);
    assert_eq!(warns.len(), 1, "{:?}", logs.lines());
    assert!(warns[0].contains("will not fire"), "{}", warns[0]);
    assert!(logs.at("INFO", &["merged-PR subscription active"]).is_empty());
    logs.clear();
    sub.start().await.unwrap();
    assert!(
        logs.lines().is_empty(),
        "a second start logs nothing: {:?}",
        logs.lines()
    );
    sub.stop().await;
}

#[tokio::test]
async fn start_with_lookup_logs_info_that_the_subscription_is_active_and_no_warn() {
    let (_dir, services, _svc) = unwired().await;
    let sub = MergedPrSubscriber::new(services.automation.clone());
    let (logs, _guard) = capture();
    sub.start().await.unwrap();
    assert_eq!(
        logs.at("INFO", &["merged-PR subscription active"]).len(),
        1,
        "{:?}",
        logs.lines()
    );
    assert!(logs.at("WARN", &[]).is_empty(), "{:?}", logs.lines());
    logs.clear();
    sub.start().await.unwrap();
    assert!(logs.lines().is_empty());
    sub.stop().await;
}

#[tokio::test]
async fn lookup_query_error_fails_closed_and_logs_warn_with_task_id_and_error() {
    let (_dir, services, _svc) = unwired().await;
    let (t, a) = seed(&services).await;
    let sub = MergedPrSubscriber::new(services.automation.clone());
    sub.start().await.unwrap();
    sqlx::query("ALTER TABLE tasks RENAME TO tasks_unavailable")
        .execute(services.store.pool())
        .await
        .unwrap();
    let (logs, _guard) = capture();
    services
        .bus
        .publish(
            "github.task_pr.updated",
            "github",
            Payload::TaskPr(merged_pr(&t, "acme", "api", 7)),
        )
        .await
        .unwrap();
    services.orchestrator.wait_idle().await;
    let warns = logs.at("WARN", &[&t, "tasks"]);
    assert_eq!(warns.len(), 1, "{:?}", logs.lines());
    assert!(
        warns[0].contains("error="),
        "the underlying error is carried: {}",
        warns[0]
    );
    assert!(services.store.list_run_records(&a).await.unwrap().is_empty());
    sub.stop().await;
}

#[tokio::test]
async fn missing_task_fails_closed_and_logs_debug_without_warn() {
    let (_dir, services, _svc) = unwired().await;
    let (_t, a) = seed(&services).await;
    let sub = MergedPrSubscriber::new(services.automation.clone());
    sub.start().await.unwrap();
    let (logs, _guard) = capture();
    services
        .bus
        .publish(
            "github.task_pr.updated",
            "github",
            Payload::TaskPr(merged_pr("ghost-task", "acme", "api", 7)),
        )
        .await
        .unwrap();
    services.orchestrator.wait_idle().await;
    assert_eq!(
        logs.at("DEBUG", &["ghost-task", "no such task"]).len(),
        1,
        "{:?}",
        logs.lines()
    );
    assert!(logs.at("WARN", &[]).is_empty(), "{:?}", logs.lines());
    assert!(services.store.list_run_records(&a).await.unwrap().is_empty());
    sub.stop().await;
}

// --- Retroactivity and first observation ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_and_enabling_a_trigger_over_merged_prs_fires_nothing() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let now = app.services().clock.now();
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.workspace_id = w.clone();
    app.services().store.upsert_task_pr(&pr, now).await.unwrap();
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    app.patch(&format!("/api/v1/automations/{a}"), json!({"enabled": false}))
        .await;
    app.patch(&format!("/api/v1/automations/{a}"), json!({"enabled": true}))
        .await;
    quiet(&app).await;
    assert!(app.runs_of(&a).await.is_empty(), "no backfill sweep");
    assert!(app.task_json(&t).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn further_event_after_the_target_was_archived_is_deduplicated() {
    let app = spawn_app(Db::Sqlite).await;
    let w = app.workspace_with_repo("W").await;
    let t = app.task(&w, "T").await;
    let a = app
        .merged_automation(&w, json!({"all_repos": true}), ARCHIVE_PROMPT, 5)
        .await;
    app.publish_pr(&merged_pr(&t, "acme", "api", 7), Form::Typed).await;
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&t).await["archived_at"].is_string());
    let mut pr = merged_pr(&t, "acme", "api", 7);
    pr.checks_passing = 4;
    app.publish_pr(&pr, Form::Typed).await;
    quiet(&app).await;
    assert_eq!(app.runs_of(&a).await.len(), 1);
    app.stop().await;
}
