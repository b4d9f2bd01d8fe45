//! The store's connections: on SQLite a writer never waits behind readers,
//! the write turn's one connection comes back clean from a transaction that
//! was dropped or failed to commit, read connections survive cancelled reads,
//! and a database the pools cannot share is refused.

use std::time::Duration;

use crate::support::{Db, spawn_app};

/// On SQLite the write turn takes its connection from a pool of its own: a
/// writer never waits for a connection behind readers holding all of theirs
/// (under load it would hold the one write turn while it waited).
#[tokio::test]
async fn a_write_on_sqlite_is_not_held_behind_readers_holding_every_connection() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let task = app.task(&ws, "Before").await;
    let store = &app.services().store;
    let mut readers = vec![];
    while let Ok(Ok(c)) = tokio::time::timeout(Duration::from_millis(300), store.read()).await {
        readers.push(c);
    }
    assert!(!readers.is_empty(), "every read connection is held");
    let write = store.update_task_text(&task, Some("After"), None, chrono::Utc::now());
    let written = tokio::time::timeout(Duration::from_secs(5), write)
        .await
        .expect("the write did not wait for a read connection")
        .expect("write");
    assert_eq!(written.title, "After");
    drop(readers);
}

/// On SQLite the guard reads the caller and the resource's place on a
/// connection of its own, synchronously, with no hand-off to a connection
/// thread: a member's request for a cached board is answered while every
/// pooled read connection is held.
#[tokio::test]
async fn on_sqlite_the_guard_reads_without_a_pooled_connection() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    app.task(&ws, "One").await;
    let mia = app.person("mia", false).await;
    app.add_member(&ws, &mia, "member").await;
    let board = format!("{}/api/v1/workspaces/{ws}/tasks", app.base);
    let first = mia.client.get(&board).send().await.expect("board");
    assert_eq!(first.status(), reqwest::StatusCode::OK, "the board is cached");
    let store = &app.services().store;
    let mut readers = vec![];
    while let Ok(Ok(c)) = tokio::time::timeout(Duration::from_millis(300), store.read()).await {
        readers.push(c);
    }
    assert!(!readers.is_empty(), "every read connection is held");
    let again = mia
        .client
        .get(&board)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .expect("the guard did not wait for a pooled read connection");
    assert_eq!(again.status(), reqwest::StatusCode::OK);
    let tasks: serde_json::Value = again.json().await.expect("JSON");
    assert_eq!(tasks[0]["title"], "One");
    drop(readers);
}

/// An in-memory SQLite database would be a different empty database on
/// every pooled connection (reads, writes, migrations): refused at start.
#[tokio::test]
async fn an_in_memory_sqlite_database_is_refused_with_the_reason() {
    for url in ["sqlite::memory:", "sqlite://:memory:", "sqlite://kandev.db?mode=memory"] {
        let refused = kandev_server::store::Store::connect(url).await.err();
        let message = refused.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("in-memory SQLite database cannot be shared"),
            "{url}: {message:?}"
        );
    }
}

async fn title(app: &crate::support::TestApp, task: &str) -> String {
    app.services().store.get_task(task).await.expect("task").title
}

/// The next writer gets the turn at once, and its write is committed: seen
/// from another connection, not inside a transaction left open.
async fn next_write_lands(app: &crate::support::TestApp, task: &str) {
    let written = tokio::time::timeout(
        Duration::from_secs(5),
        app.services()
            .store
            .update_task_text(task, Some("After"), None, chrono::Utc::now()),
    )
    .await
    .expect("the next writer got the turn")
    .expect("the next write succeeded");
    assert_eq!(written.title, "After");
    assert_eq!(title(app, task).await, "After");
}

/// A write transaction dropped without a commit (an error returned halfway)
/// leaves nothing behind: its write is gone, and the next writer on the
/// same connection is not told a transaction is already open.
#[tokio::test]
async fn a_write_transaction_dropped_halfway_is_rolled_back_before_the_next_writer() {
    for db in [Db::Sqlite, Db::Postgres] {
        let app = spawn_app(db).await;
        let ws = app.workspace("W").await;
        let task = app.task(&ws, "Before").await;
        let store = &app.services().store;
        for round in 0..3 {
            let mut tx = store.write_tx().await.expect("begin");
            sqlx::query("UPDATE tasks SET title = $1 WHERE id = $2")
                .bind(format!("Lost {round}"))
                .bind(&task)
                .execute(&mut *tx)
                .await
                .expect("update");
            drop(tx);
        }
        assert_eq!(title(&app, &task).await, "Before", "{db:?}");
        next_write_lands(&app, &task).await;
        let mut tx = store.write_tx().await.expect("a transaction after the dropped ones");
        sqlx::query("UPDATE tasks SET title = 'Committed' WHERE id = $1")
            .bind(&task)
            .execute(&mut *tx)
            .await
            .expect("update");
        tx.commit().await.expect("commit");
        assert_eq!(title(&app, &task).await, "Committed", "{db:?}");
    }
}

/// SQLite refuses a commit whose deferred foreign key is broken and keeps
/// the transaction open: the turn rolls it back, so the next writer works
/// and the refused row never appears.
#[tokio::test]
async fn a_refused_commit_on_sqlite_leaves_the_write_turn_usable() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let task = app.task(&ws, "Before").await;
    let store = &app.services().store;
    let mut tx = store.write_tx().await.expect("begin");
    sqlx::query("PRAGMA defer_foreign_keys = ON")
        .execute(&mut *tx)
        .await
        .expect("pragma");
    sqlx::query("UPDATE tasks SET workspace_id = 'no-such-workspace', title = 'Orphan' WHERE id = $1")
        .bind(&task)
        .execute(&mut *tx)
        .await
        .expect("deferred until commit");
    let refused = tx.commit().await;
    assert!(refused.is_err(), "the commit is refused: {refused:?}");
    next_write_lands(&app, &task).await;
    assert_eq!(store.get_task(&task).await.expect("task").workspace_id, ws);
}

/// Reads cancelled at every point (a client that hung up) hand their
/// connections back in a state the next read can use, and none is lost.
#[tokio::test]
async fn cancelled_reads_give_back_usable_connections() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    for i in 0..20 {
        app.task(&ws, &format!("Task {i}")).await;
    }
    let store = &app.services().store;
    for i in 0..200u64 {
        let read = store.list_tasks(&ws, false, false);
        let _ = tokio::time::timeout(Duration::from_micros(i * 7 % 400), read).await;
    }
    let all = futures::future::join_all((0..32).map(|_| store.list_tasks(&ws, false, false))).await;
    for listed in all {
        assert_eq!(listed.expect("read").len(), 20);
    }
    let mut held = vec![];
    while let Ok(Ok(c)) = tokio::time::timeout(Duration::from_millis(300), store.read()).await {
        held.push(c);
    }
    assert_eq!(
        held.len(),
        kandev_server::store::SQLITE_READERS,
        "every read connection came back"
    );
}
