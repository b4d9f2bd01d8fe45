//! Automations exported as YAML and imported back, with a dry-run diff.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::on_both_databases;
use crate::support::{Db, TestApp, spawn_app};

async fn export_as(client: &reqwest::Client, app: &TestApp, ws: &str) -> reqwest::Response {
    client
        .get(format!("{}/api/v1/workspaces/{ws}/automations/export", app.base))
        .send()
        .await
        .unwrap()
}

async fn import_as(client: &reqwest::Client, app: &TestApp, ws: &str, yaml: &str, dry_run: bool) -> reqwest::Response {
    client
        .post(format!(
            "{}/api/v1/workspaces/{ws}/automations/import?dry_run={dry_run}",
            app.base
        ))
        .header("content-type", "application/yaml")
        .body(yaml.to_string())
        .send()
        .await
        .unwrap()
}

async fn export(app: &TestApp, ws: &str) -> String {
    let r = export_as(&app.client, app, ws).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "application/yaml; charset=utf-8");
    assert!(
        r.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment")
    );
    r.text().await.unwrap()
}

async fn import(app: &TestApp, ws: &str, yaml: &str, dry_run: bool) -> (StatusCode, Value) {
    let r = import_as(&app.client, app, ws, yaml, dry_run).await;
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn names(app: &TestApp, ws: &str) -> Vec<String> {
    let list = app.get(&format!("/api/v1/workspaces/{ws}/automations")).await.body;
    let mut out: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// Two automations, one on a repository with the merged trigger, one on a schedule.
async fn seeded(app: &TestApp) -> (String, String) {
    let ws = app.workspace("Source").await;
    let repo = app.repository(&ws, "acme", "api").await;
    app.automation(
        &ws,
        json!({"name": "Archive merged", "prompt": "Archive {{task_id}}", "repository_ids": [repo],
               "triggers": [{"type": "github_pr_merged", "config": {"all_repos": false, "repos": [{"owner": "acme", "name": "api"}]}}]}),
    )
    .await;
    app.automation(
        &ws,
        json!({"name": "Nightly", "prompt": "Tidy up", "max_concurrent_runs": 2, "enabled": false,
               "triggers": [{"type": "scheduled", "config": {"cron_expression": "0 2 * * *", "timezone": "Europe/Berlin"}}]}),
    )
    .await;
    (ws, repo)
}

async fn export_imports_into_another_workspace_and_round_trips(db: Db) {
    let app = spawn_app(db).await;
    let (source, _) = seeded(&app).await;
    let yaml = export(&app, &source).await;
    assert!(yaml.starts_with("# Kandev automations."), "{yaml}");
    assert!(yaml.contains("version: 1") && yaml.contains("acme/api"), "{yaml}");
    let secret = app
        .get(&format!(
            "/api/v1/automations/{}/webhook-secret",
            first_id(&app, &source).await
        ))
        .await;
    let secret = secret.body["webhook_secret"].as_str().unwrap().to_string();
    assert!(!yaml.contains(&secret), "no secret is exported");

    let target = app.workspace("Target").await;
    app.repository(&target, "acme", "api").await;
    let (status, dry) = import(&app, &target, &yaml, true).await;
    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!(
        dry,
        json!({"dry_run": true, "changes": [
            {"name": "Archive merged", "action": "create", "fields": []},
            {"name": "Nightly", "action": "create", "fields": []}]})
    );
    assert!(names(&app, &target).await.is_empty(), "a dry run writes nothing");

    let (status, done) = import(&app, &target, &yaml, false).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["dry_run"], false);
    assert_eq!(names(&app, &target).await, vec!["Archive merged", "Nightly"]);
    assert_eq!(export(&app, &target).await, yaml, "the same document comes back out");

    let (_, again) = import(&app, &target, &yaml, false).await;
    assert!(
        again["changes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["action"] == "unchanged"),
        "{again}"
    );
}
on_both_databases!(export_imports_into_another_workspace_and_round_trips);

async fn first_id(app: &TestApp, ws: &str) -> String {
    let list = app.get(&format!("/api/v1/workspaces/{ws}/automations")).await.body;
    list[0]["id"].as_str().unwrap().to_string()
}

async fn an_edited_document_shows_its_diff_then_updates_in_place(db: Db) {
    let app = spawn_app(db).await;
    let (ws, _) = seeded(&app).await;
    let before = app.get(&format!("/api/v1/workspaces/{ws}/automations")).await.body;
    let yaml = export(&app, &ws)
        .await
        .replace("Tidy up", "Tidy up thoroughly")
        .replace("0 2 * * *", "0 3 * * *");
    let (status, dry) = import(&app, &ws, &yaml, true).await;
    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!(
        dry["changes"],
        json!([{"name": "Archive merged", "action": "unchanged", "fields": []},
               {"name": "Nightly", "action": "update", "fields": ["prompt", "triggers"]}])
    );
    assert_eq!(
        app.get(&format!("/api/v1/workspaces/{ws}/automations")).await.body,
        before
    );
    let (status, _) = import(&app, &ws, &yaml, false).await;
    assert_eq!(status, StatusCode::OK);
    let after = app.get(&format!("/api/v1/workspaces/{ws}/automations")).await.body;
    let nightly = after
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Nightly")
        .unwrap();
    let was = before
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Nightly")
        .unwrap();
    assert_eq!(nightly["id"], was["id"], "updated in place, not recreated");
    assert_eq!(nightly["prompt"], "Tidy up thoroughly");
    assert_eq!(nightly["triggers"].as_array().unwrap().len(), 1);
    assert_eq!(nightly["triggers"][0]["config"]["cron_expression"], "0 3 * * *");
    assert_eq!(nightly["enabled"], false);
    assert_eq!(nightly["max_concurrent_runs"], 2);
}
on_both_databases!(an_edited_document_shows_its_diff_then_updates_in_place);

async fn a_bad_document_is_refused_whole_and_writes_nothing(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let cases = [
        (
            "version: 1\nautomations:\n  - name: Good\n    prompt: hi\n  - name: Elsewhere\n    repositories: [acme/nope]\n",
            "\"Elsewhere\": repository acme/nope is not in this workspace (add it first)",
        ),
        (
            "version: 1\nautomations:\n  - name: Bad cron\n    triggers:\n      - type: scheduled\n        config: {cron_expression: '61 * * * *'}\n",
            "\"Bad cron\": invalid schedule",
        ),
        (
            "version: 1\nautomations:\n  - name: A\n    webhook_secret: x\n",
            "unknown field `webhook_secret`",
        ),
        (
            "version: 1\nautomations:\n  - name: A\n    triggers: [{type: telepathy}]\n",
            "unknown variant `telepathy`",
        ),
        ("version: 7\n", "unsupported document version 7"),
        ("automations: [", "not a Kandev automations document"),
        (
            "{\"version\": 1, \"automations\": [{\"name\": \"A\", \"max_concurrent_runs\": 1000}]}",
            "max_concurrent_runs",
        ),
    ];
    for (yaml, needle) in cases {
        for dry_run in [true, false] {
            let (status, body) = import(&app, &ws, yaml, dry_run).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{yaml}: {body}");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(needle), "{yaml}: {message}");
        }
    }
    assert!(names(&app, &ws).await.is_empty(), "nothing half-written");
}
on_both_databases!(a_bad_document_is_refused_whole_and_writes_nothing);

async fn hostile_documents_are_refused_quickly(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    // Exponential alias expansion ("billion laughs").
    let mut bomb = String::from("a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n");
    for i in 1..12 {
        let prev = (b'a' + i - 1) as char;
        let this = (b'a' + i) as char;
        bomb.push_str(&format!(
            "{this}: &{this} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
    }
    let started = std::time::Instant::now();
    let (status, _) = import(&app, &ws, &bomb, true).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let huge = format!("version: 1\n# {}\n", "x".repeat(1024 * 1024));
    let (status, body) = import(&app, &ws, &huge, true).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let (status, _) = import(&app, &ws, "version: 1\nautomations: \"\u{0}\"", true).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}
on_both_databases!(hostile_documents_are_refused_quickly);

/// Five imports of the same new automation at once (as from five replicas):
/// one workspace-wide lease lets one in at a time, so it exists once.
async fn concurrent_imports_create_each_automation_once(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let yaml = "version: 1\nautomations:\n  - name: Only once\n    prompt: hi\n";
    let results = futures::future::join_all((0..5).map(|_| import(&app, &ws, yaml, false))).await;
    for (status, body) in &results {
        assert!(
            *status == StatusCode::OK || *status == StatusCode::CONFLICT,
            "{status}: {body}"
        );
        if *status == StatusCode::CONFLICT {
            assert!(body["error"]["message"].as_str().unwrap().contains("another import"));
        }
    }
    assert_eq!(names(&app, &ws).await, vec!["Only once"]);
}
on_both_databases!(concurrent_imports_create_each_automation_once);

async fn a_viewer_may_export_but_not_import(db: Db) {
    let app = spawn_app(db).await;
    let (ws, _) = seeded(&app).await;
    let viewer = app.person("vera", false).await;
    app.add_member(&ws, &viewer, "viewer").await;
    assert_eq!(export_as(&viewer.client, &app, &ws).await.status(), StatusCode::OK);
    let r = import_as(&viewer.client, &app, &ws, "version: 1\nautomations: []\n", true).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
}
on_both_databases!(a_viewer_may_export_but_not_import);

async fn none_no_repository_survives_a_yaml_round_trip(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    app.automation(&ws, json!({"name": "Tidy", "no_repository": true}))
        .await;
    let yaml = export(&app, &ws).await;
    assert!(yaml.contains("no_repository: true"), "{yaml}");
    let other = app.workspace("V").await;
    let (status, done) = import(&app, &other, &yaml, false).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let list = app.get(&format!("/api/v1/workspaces/{other}/automations")).await.body;
    assert_eq!(list[0]["no_repository"], true, "{list}");
    assert_eq!(export(&app, &other).await, yaml);
    app.stop().await;
}
on_both_databases!(none_no_repository_survives_a_yaml_round_trip);
