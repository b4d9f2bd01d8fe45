use reqwest::StatusCode;
use serde_json::json;

use crate::on_both_databases;
use crate::support::{Db, patch_all_at_once, spawn_app};

async fn tasks_move_by_the_board_rules(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "Write docs").await;
    let r = app.get(&format!("/api/v1/tasks/{t}")).await;
    assert_eq!(r.body["status"], "todo");
    assert_eq!(r.body["origin"], "user");
    assert!(r.body["archived_at"].is_null());

    let r = app
        .patch(&format!("/api/v1/tasks/{t}"), json!({"status": "ready"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = app
        .patch(
            &format!("/api/v1/tasks/{t}"),
            json!({"status": "running", "title": "Write the docs"}),
        )
        .await;
    assert_eq!(r.body["status"], "running");
    assert_eq!(r.body["title"], "Write the docs");

    // a move the board forbids is a 409 and changes nothing
    let r = app
        .patch(
            &format!("/api/v1/tasks/{t}"),
            json!({"status": "triage", "title": "changed"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.error_code(), "conflict");
    let now = app.get(&format!("/api/v1/tasks/{t}")).await;
    assert_eq!(now.body["status"], "running");
    assert_eq!(now.body["title"], "Write the docs");

    // entering human_review needs the hand-off; leaving it needs approve or reject
    let r = app
        .patch(&format!("/api/v1/tasks/{t}"), json!({"status": "human_review"}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = app
        .post(&format!("/api/v1/tasks/{t}/review"), json!({"summary": "done"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"], "human_review");
    let r = app
        .patch(&format!("/api/v1/tasks/{t}"), json!({"status": "done"}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = app
        .post(&format!("/api/v1/tasks/{t}/reject"), json!({"reason": "  "}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/reject"),
            json!({"reason": "needs examples"}),
        )
        .await;
    assert_eq!(r.body["status"], "ready");

    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await;
    let kinds: Vec<&str> = events
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"review_requested") && kinds.contains(&"rejected"),
        "{kinds:?}"
    );
    app.stop().await;
}
on_both_databases!(tasks_move_by_the_board_rules);

async fn approve_with_no_pr_is_done_and_approve_outside_review_is_409(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "Research").await;
    let r = app.post(&format!("/api/v1/tasks/{t}/approve"), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let events_before = app
        .get(&format!("/api/v1/tasks/{t}/events"))
        .await
        .body
        .as_array()
        .unwrap()
        .len();
    assert_eq!(app.get(&format!("/api/v1/tasks/{t}")).await.body["status"], "todo");

    app.post(
        &format!("/api/v1/tasks/{t}/review"),
        json!({"summary": "notes attached"}),
    )
    .await;
    let r = app
        .post(&format!("/api/v1/tasks/{t}/approve"), json!({"reason": "good"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body, json!({"status": "done"}));
    assert_eq!(app.get(&format!("/api/v1/tasks/{t}")).await.body["status"], "done");
    let events_after = app
        .get(&format!("/api/v1/tasks/{t}/events"))
        .await
        .body
        .as_array()
        .unwrap()
        .len();
    assert!(events_after > events_before);
    // approving again: it is no longer in human_review
    let r = app.post(&format!("/api/v1/tasks/{t}/approve"), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    app.stop().await;
}
on_both_databases!(approve_with_no_pr_is_done_and_approve_outside_review_is_409);

async fn review_hand_off_refuses_a_bad_pr_url_and_writes_nothing(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "Feature").await;
    let events = app.count("task_events").await;
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/review"),
            json!({"pr_url": "https://gitlab.com/o/r/pull/1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.count("task_events").await, events);
    assert_eq!(app.get(&format!("/api/v1/tasks/{t}")).await.body["status"], "todo");
    app.stop().await;
}
on_both_databases!(review_hand_off_refuses_a_bad_pr_url_and_writes_nothing);

async fn archive_is_idempotent_and_hides_the_task_from_the_board(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "Old").await;
    let r = app.post(&format!("/api/v1/tasks/{t}/archive"), json!({})).await;
    assert_eq!(r.body, json!({"success": true}));
    let r = app.post(&format!("/api/v1/tasks/{t}/archive"), json!({})).await;
    assert_eq!(r.body, json!({"success": true, "already_archived": true}));
    let board = app.get(&format!("/api/v1/workspaces/{ws}/tasks")).await;
    assert!(board.body.as_array().unwrap().is_empty());
    let all = app
        .get(&format!("/api/v1/workspaces/{ws}/tasks?include_archived=true"))
        .await;
    assert_eq!(all.body.as_array().unwrap().len(), 1);
    let r = app.post(&format!("/api/v1/tasks/{t}/unarchive"), json!({})).await;
    assert!(r.body["archived_at"].is_null());
    let r = app.post("/api/v1/tasks/missing/archive", json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    app.stop().await;
}
on_both_databases!(archive_is_idempotent_and_hides_the_task_from_the_board);

async fn comments_delete_and_bad_task_input(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let other = app.workspace("V").await;
    let foreign_repo = app.repository(&other, "acme", "api").await;
    let r = app
        .post(&format!("/api/v1/workspaces/{ws}/tasks"), json!({"title": ""}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/tasks"),
            json!({"title": "x", "repository_id": foreign_repo}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/tasks"),
            json!({"title": "x", "status": "flying"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(app.count("tasks").await, 0);

    let t = app.task(&ws, "Talk").await;
    let c = app
        .post(&format!("/api/v1/tasks/{t}/comments"), json!({"body": "hello"}))
        .await;
    assert_eq!(c.status, StatusCode::CREATED);
    let list = app.get(&format!("/api/v1/tasks/{t}/comments")).await;
    assert_eq!(list.body[0]["body"], "hello");
    let r = app.delete(&format!("/api/v1/tasks/{t}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("/api/v1/tasks/{t}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.count("task_comments").await, 0);
    app.stop().await;
}
on_both_databases!(comments_delete_and_bad_task_input);

/// Two people editing different fields of one task at once: neither edit
/// undoes the other (each PATCH writes only the fields it names).
async fn concurrent_edits_of_different_fields_both_stay(db: Db) {
    let app = std::sync::Arc::new(spawn_app(db).await);
    let ws = app.workspace("W").await;
    let mut tasks = vec![];
    for i in 0..20 {
        tasks.push(app.task(&ws, &format!("Task {i}")).await);
    }
    let edits = tasks
        .iter()
        .flat_map(|t| {
            [json!({"title": "New title"}), json!({"description": "New description"})]
                .map(|body| (format!("/api/v1/tasks/{t}"), body))
        })
        .collect();
    patch_all_at_once(&app, edits).await;
    for t in &tasks {
        let r = app.get(&format!("/api/v1/tasks/{t}")).await;
        assert_eq!(
            (r.body["title"].as_str(), r.body["description"].as_str()),
            (Some("New title"), Some("New description")),
            "{}",
            r.body
        );
    }
}
on_both_databases!(concurrent_edits_of_different_fields_both_stay);

/// A task and its `created` event commit together: when the event cannot
/// be written (a failure injected by a database trigger), no task is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_created_event_fails_is_not_created() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    sqlx::query(
        "CREATE TRIGGER inject_event_failure BEFORE INSERT ON task_events BEGIN SELECT RAISE(ABORT, 'injected'); END",
    )
    .execute(app.services().store.pool())
    .await
    .expect("trigger");
    let r = app
        .post(&format!("/api/v1/workspaces/{ws}/tasks"), json!({"title": "Half"}))
        .await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    assert_eq!(app.count("tasks").await, 0);
}
