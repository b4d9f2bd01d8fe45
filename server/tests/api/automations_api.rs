use reqwest::StatusCode;
use serde_json::json;

use crate::on_both_databases;
use crate::support::{Db, patch_all_at_once, spawn_app};

async fn create_returns_the_secret_once_and_defaults(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let repo = app.repository(&ws, "acme", "api").await;
    let a = app
        .automation(
            &ws,
            json!({"name": " Archive merged ", "max_concurrent_runs": 0, "repository_ids": [repo],
                   "triggers": [{"type": "github_pr_merged", "config": {"all_repos": false, "repos": []}}]}),
        )
        .await;
    let secret = a["webhook_secret"].as_str().unwrap();
    assert_eq!(secret.len(), 32);
    assert!(secret.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_eq!(a["name"], "Archive merged");
    assert_eq!(a["max_concurrent_runs"], 1, "<= 0 becomes 1 on create");
    assert_eq!(a["enabled"], true);
    assert_eq!(a["repository_ids"], json!([repo]));
    // a dead config is stored as given
    assert_eq!(a["triggers"][0]["config"], json!({"all_repos": false, "repos": []}));
    assert_eq!(a["triggers"][0]["type"], "github_pr_merged");

    let id = a["id"].as_str().unwrap();
    let shown = app.get(&format!("/api/v1/automations/{id}")).await;
    assert!(
        shown.body.get("webhook_secret").is_none(),
        "the secret is shown only on create"
    );
    let revealed = app.get(&format!("/api/v1/automations/{id}/webhook-secret")).await;
    assert_eq!(revealed.body["webhook_secret"], secret);
    let list = app.get(&format!("/api/v1/workspaces/{ws}/automations")).await;
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    app.stop().await;
}
on_both_databases!(create_returns_the_secret_once_and_defaults);

async fn rule_breaking_creates_are_422_and_leave_no_rows(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let other = app.workspace("V").await;
    let foreign = app.repository(&other, "acme", "api").await;
    let bad = [
        json!({"name": "  "}),
        json!({"name": "x", "repository_ids": [foreign]}),
        json!({"name": "x", "repository_ids": ["missing"]}),
        json!({"name": "x", "agent_profile_id": "nope"}),
        json!({"name": "x", "executor_profile_id": "ssh-prod"}),
        json!({"name": "x", "triggers": [{"type": "github_push", "config": {}}, {"type": "scheduled", "config": {"cron_expression": "every day"}}]}),
        json!({"name": "x", "triggers": [{"type": "scheduled", "config": {"cron_expression": "0 9 * * *", "timezone": "Mars/Olympus"}}]}),
    ];
    for body in bad {
        let r = app
            .post(&format!("/api/v1/workspaces/{ws}/automations"), body.clone())
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body} -> {}", r.body);
        assert_eq!(r.error_code(), "invalid");
    }
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/automations"),
            json!({"name": "x", "triggers": [{"type": "nope"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = app
        .post("/api/v1/workspaces/missing/automations", json!({"name": "x"}))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    for table in ["automations", "automation_triggers", "automation_repositories"] {
        assert_eq!(app.count(table).await, 0, "{table}");
    }
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/automations"),
            json!({"name": "s", "triggers": [{"type": "scheduled", "config": {"cron_expression": "bad"}}]}),
        )
        .await;
    assert_eq!(
        r.body["error"]["message"],
        "invalid schedule \"bad\": expected exactly 5 fields"
    );
    app.stop().await;
}
on_both_databases!(rule_breaking_creates_are_422_and_leave_no_rows);

async fn patch_triggers_and_delete(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let a = app.automation(&ws, json!({"name": "A"})).await;
    let id = a["id"].as_str().unwrap();

    let r = app
        .patch(&format!("/api/v1/automations/{id}"), json!({"max_concurrent_runs": 0}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .patch(&format!("/api/v1/automations/{id}"), json!({"name": ""}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .patch(
            &format!("/api/v1/automations/{id}"),
            json!({"enabled": false, "prompt": "hi", "max_concurrent_runs": 3}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        (
            r.body["enabled"].clone(),
            r.body["prompt"].clone(),
            r.body["max_concurrent_runs"].clone()
        ),
        (json!(false), json!("hi"), json!(3))
    );

    let t = app
        .post(
            &format!("/api/v1/automations/{id}/triggers"),
            json!({"type": "github_pr_merged", "config": {}}),
        )
        .await;
    assert_eq!(t.status, StatusCode::CREATED);
    let tid = t.body["id"].as_str().unwrap();
    let bad = app
        .post(
            &format!("/api/v1/automations/{id}/triggers"),
            json!({"type": "scheduled", "config": {"cron_expression": "x"}}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .patch(
            &format!("/api/v1/automation-triggers/{tid}"),
            json!({"config": {"all_repos": true}, "enabled": false}),
        )
        .await;
    assert_eq!(r.body["config"], json!({"all_repos": true}));
    assert_eq!(r.body["enabled"], false);
    let r = app.delete(&format!("/api/v1/automation-triggers/{tid}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(app.count("automation_triggers").await, 0);

    let r = app.delete(&format!("/api/v1/automations/{id}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("/api/v1/automations/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    app.stop().await;
}
on_both_databases!(patch_triggers_and_delete);

async fn manual_run_lists_and_deletes_runs(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "Nightly", "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let id = a["id"].as_str().unwrap();
    // no repository in the workspace: the firing is admitted, then fails before a task exists
    let r = app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    assert_eq!(r.body, json!({"triggered": true, "skipped": false, "reason": ""}));
    app.services().orchestrator.wait_idle().await;
    let runs = app.get(&format!("/api/v1/automations/{id}/runs")).await;
    let runs = runs.body.as_array().unwrap().clone();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "failed");
    assert_eq!(runs[0]["trigger_type"], "manual");
    assert_eq!(runs[0]["trigger_data"], json!({"source": "manual"}));
    assert_eq!(
        runs[0]["error_message"],
        "no repository available \u{2014} add a repository to the workspace"
    );
    let feed = app.get(&format!("/api/v1/workspaces/{ws}/automation-runs")).await;
    assert_eq!(feed.body[0]["automation_name"], "Nightly");
    let run_id = runs[0]["id"].as_str().unwrap();
    assert_eq!(
        app.delete(&format!("/api/v1/automation-runs/{run_id}")).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(app.count("automation_runs").await, 0);

    // disabled: skipped with the contract reason
    app.patch(&format!("/api/v1/automations/{id}"), json!({"enabled": false}))
        .await;
    let r = app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    assert_eq!(
        r.body,
        json!({"triggered": false, "skipped": true, "reason": "automation is disabled"})
    );
    assert_eq!(
        app.delete(&format!("/api/v1/automations/{id}/runs")).await.status,
        StatusCode::NO_CONTENT
    );
    app.stop().await;
}
on_both_databases!(manual_run_lists_and_deletes_runs);

async fn run_statuses_are_derived_at_read_time(db: Db) {
    use kandev_core::run_status::RunStatus;
    use kandev_server::store::NewRun;
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let a = app.automation(&ws, json!({"name": "A"})).await;
    let id = a["id"].as_str().unwrap().to_string();
    let (archived, gone) = (app.task(&ws, "archived").await, app.task(&ws, "gone").await);
    let store = &app.services().store;
    for task in [&archived, &gone] {
        let row = NewRun {
            automation_id: id.clone(),
            trigger_id: String::new(),
            trigger_type: "manual".into(),
            task_id: task.clone(),
            status: RunStatus::TaskCreated,
            dedup_key: String::new(),
            trigger_data: json!({"source": "manual"}),
            error_message: String::new(),
            event_id: String::new(),
        };
        store.insert_run(&row, app.services().clock.now()).await.unwrap();
    }
    app.post(&format!("/api/v1/tasks/{archived}/archive"), json!({})).await;
    app.delete(&format!("/api/v1/tasks/{gone}")).await;
    let runs = app.get(&format!("/api/v1/automations/{id}/runs")).await.body;
    let by_status: Vec<(String, String)> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_string(),
                r["task_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        by_status.contains(&("archived".into(), archived.clone())),
        "{by_status:?}"
    );
    assert!(
        by_status.contains(&("cancelled".into(), String::new())),
        "a gone task blanks its id: {by_status:?}"
    );
    app.stop().await;
}
on_both_databases!(run_statuses_are_derived_at_read_time);

/// The editor resolves "the first" condition, so triggers created together
/// must read back in the order they were given.
async fn triggers_created_together_keep_their_order(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let kinds = ["github_pr", "github_pr_merged", "github_ci", "scheduled", "github_push"];
    let triggers: Vec<_> = kinds.iter().map(|k| json!({"type": k, "config": {}})).collect();
    for _ in 0..5 {
        let a = app
            .automation(&ws, json!({"name": "Ordered", "triggers": triggers}))
            .await;
        let id = a["id"].as_str().unwrap();
        let read = app.get(&format!("/api/v1/automations/{id}")).await;
        let got: Vec<&str> = read.body["triggers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["type"].as_str().unwrap())
            .collect();
        assert_eq!(got, kinds);
    }
    app.stop().await;
}
on_both_databases!(triggers_created_together_keep_their_order);

/// The list is read in one statement, the single automation by another: an
/// automation with no triggers, one with several, repositories in their
/// chosen order — the list shows each exactly as its own page does.
async fn the_list_shows_each_automation_as_its_own_page_does(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let (r1, r2, r3) = (
        app.repository(&ws, "acme", "one").await,
        app.repository(&ws, "acme", "two").await,
        app.repository(&ws, "acme", "three").await,
    );
    let kinds = ["github_pr", "github_pr_merged", "github_ci"];
    let triggers: Vec<_> = kinds.iter().map(|k| json!({"type": k, "config": {}})).collect();
    let made = [
        app.automation(&ws, json!({"name": "Bare", "repository_ids": [r3, r1]}))
            .await,
        app.automation(&ws, json!({"name": "Busy", "triggers": triggers})).await,
        app.automation(
            &ws,
            json!({"name": "One", "triggers": [{"type": "scheduled", "config": {}}], "repository_ids": [r2]}),
        )
        .await,
    ];
    let other = app.workspace("Other").await;
    app.automation(&other, json!({"name": "Elsewhere", "triggers": triggers}))
        .await;

    let list = app.get(&format!("/api/v1/workspaces/{ws}/automations")).await;
    assert_eq!(list.status, StatusCode::OK);
    let list = list.body.as_array().expect("array").clone();
    let mut ids: Vec<&str> = list.iter().map(|a| a["id"].as_str().unwrap()).collect();
    for a in &list {
        let own = app
            .get(&format!("/api/v1/automations/{}", a["id"].as_str().unwrap()))
            .await;
        assert_eq!(&own.body, a, "listed as on its own page");
    }
    let by_name = |name: &str| list.iter().find(|a| a["name"] == name).expect(name);
    assert_eq!(by_name("Bare")["repository_ids"], json!([r3, r1]));
    assert_eq!(by_name("Bare")["triggers"], json!([]));
    let busy: Vec<&str> = by_name("Busy")["triggers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(busy, kinds);
    assert_eq!(by_name("One")["repository_ids"], json!([r2]));
    ids.sort_unstable();
    let mut want: Vec<&str> = made.iter().map(|a| a["id"].as_str().unwrap()).collect();
    want.sort_unstable();
    assert_eq!(ids, want, "this workspace's three, once each");
    app.stop().await;
}
on_both_databases!(the_list_shows_each_automation_as_its_own_page_does);

/// The editor's next-run preview comes from the scheduler's own rule, so the
/// zone database stays out of the browser.
async fn schedule_preview_lists_the_scheduler_runs_and_refuses_bad_schedules(db: Db) {
    let app = spawn_app(db).await;
    let r = app
        .get("/api/v1/automation-schedule-preview?cron_expression=0%209%20*%20*%201-5&timezone=Europe/Berlin&count=4")
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.get("error").is_none(), "{}", r.body);
    let runs: Vec<chrono::DateTime<chrono::Utc>> = serde_json::from_value(r.body["runs"].clone()).unwrap();
    let expected = kandev_core::cron::upcoming("0 9 * * 1-5", "Europe/Berlin", chrono::Utc::now(), 4);
    assert_eq!(runs, expected);
    let unknown_zone = app
        .get("/api/v1/automation-schedule-preview?cron_expression=@daily&timezone=Mars/Olympus")
        .await;
    // A well-formed question about a bad schedule is answered: no runs, and why.
    assert_eq!(unknown_zone.status, StatusCode::OK);
    assert_eq!(
        unknown_zone.body,
        json!({"runs": [], "error": "invalid schedule: unknown time zone \"Mars/Olympus\""})
    );
    let never = app
        .get("/api/v1/automation-schedule-preview?cron_expression=0%200%2030%202%20*")
        .await;
    assert_eq!(
        never.body,
        json!({"runs": [], "error": "invalid schedule: the schedule never runs"})
    );
    let blank = app.get("/api/v1/automation-schedule-preview?cron_expression=").await;
    assert_eq!(
        blank.body,
        json!({"runs": [], "error": "invalid schedule: empty expression"})
    );
    let too_many = app
        .get("/api/v1/automation-schedule-preview?cron_expression=@hourly&count=21")
        .await;
    assert_eq!(too_many.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(too_many.body["error"]["message"], "count must be from 1 to 20");
}
on_both_databases!(schedule_preview_lists_the_scheduler_runs_and_refuses_bad_schedules);

/// GIVEN the server's executors, WHEN an automation names one, THEN it is
/// kept; naming one the server does not run is refused and changes nothing.
async fn executors_are_listed_and_an_unknown_one_is_refused(db: Db) {
    let app = spawn_app(db).await;
    let listed = app.get("/api/v1/executors").await;
    assert_eq!(
        listed.body,
        json!([{"id": "local", "kind": "local", "several_repositories": false}])
    );
    let ws = app.workspace("W").await;
    let a = app
        .automation(&ws, json!({"name": "Local", "executor_profile_id": "local"}))
        .await;
    assert_eq!(a["executor_profile_id"], "local");
    let id = a["id"].as_str().unwrap();
    let r = app
        .patch(
            &format!("/api/v1/automations/{id}"),
            json!({"executor_profile_id": "docker"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.to_string().contains("unknown executor"), "{}", r.body);
    let shown = app.get(&format!("/api/v1/automations/{id}")).await;
    assert_eq!(
        shown.body["executor_profile_id"], "local",
        "the refused patch changed nothing"
    );
    let r = app
        .patch(&format!("/api/v1/automations/{id}"), json!({"executor_profile_id": ""}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "back to the default: {}", r.body);
    app.stop().await;
}
on_both_databases!(executors_are_listed_and_an_unknown_one_is_refused);

/// Two edits of different fields of one automation at once (a rename and a
/// disable): both stay, because each PATCH writes only what it names.
async fn concurrent_edits_of_different_automation_fields_both_stay(db: Db) {
    let app = std::sync::Arc::new(spawn_app(db).await);
    let ws = app.workspace("W").await;
    let mut ids = vec![];
    for i in 0..15 {
        let a = app.automation(&ws, json!({"name": format!("A{i}")})).await;
        ids.push(a["id"].as_str().expect("id").to_string());
    }
    let edits = ids
        .iter()
        .flat_map(|id| {
            [
                json!({"name": "Renamed"}),
                json!({"enabled": false}),
                json!({"prompt": "New prompt"}),
            ]
            .map(|body| (format!("/api/v1/automations/{id}"), body))
        })
        .collect();
    patch_all_at_once(&app, edits).await;
    for id in &ids {
        let r = app.get(&format!("/api/v1/automations/{id}")).await;
        assert_eq!(
            (&r.body["name"], &r.body["enabled"], &r.body["prompt"]),
            (&json!("Renamed"), &json!(false), &json!("New prompt")),
            "{}",
            r.body
        );
    }
}
on_both_databases!(concurrent_edits_of_different_automation_fields_both_stay);

/// A disable and a config edit of one trigger at once: both stay, because
/// each PATCH writes only what it names.
async fn concurrent_edits_of_different_trigger_fields_both_stay(db: Db) {
    let app = std::sync::Arc::new(spawn_app(db).await);
    let ws = app.workspace("W").await;
    let mut ids = vec![];
    for i in 0..15 {
        let a = app
            .automation(
                &ws,
                json!({"name": format!("A{i}"),
                       "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}}]}),
            )
            .await;
        ids.push(a["triggers"][0]["id"].as_str().expect("trigger id").to_string());
    }
    let narrowed = json!({"all_repos": false, "repos": [{"owner": "acme", "name": "api"}]});
    let edits = ids
        .iter()
        .flat_map(|id| {
            [json!({"enabled": false}), json!({"config": narrowed})]
                .map(|body| (format!("/api/v1/automation-triggers/{id}"), body))
        })
        .collect();
    patch_all_at_once(&app, edits).await;
    let stored = app.services().store.clone();
    for id in &ids {
        let t = stored.get_trigger(id).await.expect("trigger");
        assert!(!t.enabled, "the disable stayed: {t:?}");
        assert_eq!(t.config["all_repos"], json!(false), "the config edit stayed: {t:?}");
    }
}
on_both_databases!(concurrent_edits_of_different_trigger_fields_both_stay);

/// A trigger can always be switched off: a PATCH of `enabled` alone does not
/// re-judge a stored config that today's rules would refuse.
async fn a_trigger_whose_stored_config_no_longer_validates_can_still_be_disabled(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "Old", "triggers": [{"type": "scheduled", "config": {"cron_expression": "0 9 * * *"}}]}),
        )
        .await;
    let id = a["triggers"][0]["id"].as_str().expect("trigger id");
    // A zone an older version (or an operator) let in, and today's rules refuse.
    let invalid = json!({"cron_expression": "0 9 * * *", "timezone": "Mars/Olympus"});
    sqlx::query("UPDATE automation_triggers SET config = $1 WHERE id = $2")
        .bind(invalid.to_string())
        .bind(id)
        .execute(app.services().store.pool())
        .await
        .expect("raw update");
    let path = format!("/api/v1/automation-triggers/{id}");
    let refused = app.patch(&path, json!({"config": invalid})).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    let off = app.patch(&path, json!({"enabled": false})).await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.body);
    assert_eq!(off.body["enabled"], json!(false));
    assert_eq!(off.body["config"], invalid, "the stored config is left as it was");
    let missing = app
        .patch("/api/v1/automation-triggers/nope", json!({"enabled": false}))
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}
on_both_databases!(a_trigger_whose_stored_config_no_longer_validates_can_still_be_disabled);

/// A database error while writing the run task stays in the server log: the
/// run (and so its page and any notification) says only that it failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_task_that_cannot_be_written_fails_its_run_without_the_database_error() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "Nightly", "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let id = a["id"].as_str().unwrap();
    app.exec(
        "CREATE TRIGGER refuse_run_tasks BEFORE INSERT ON tasks WHEN NEW.origin = 'automation_run' \
         BEGIN SELECT RAISE(ABORT, 'injected: /var/lib/kandev/kandev.db is locked'); END",
    )
    .await;
    app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    let run = app.wait_for_run_status(id, "failed").await;
    let runs = app.get(&format!("/api/v1/automations/{id}/runs")).await.body;
    assert_eq!(runs[0]["id"], run.id);
    assert_eq!(runs[0]["error_message"], kandev_core::firing::FAIL_TASK_NOT_CREATED);
    assert!(!runs.to_string().contains("injected"), "{runs}");
    app.stop().await;
}
