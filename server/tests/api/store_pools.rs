//! The store's connection pools: on SQLite a writer never waits behind
//! readers for a connection, and a database the pools cannot share is refused.

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
    while let Ok(Ok(c)) = tokio::time::timeout(std::time::Duration::from_millis(300), store.pool().acquire()).await {
        readers.push(c);
    }
    assert!(!readers.is_empty(), "every read connection is held");
    let write = store.update_task_text(&task, Some("After"), None, chrono::Utc::now());
    let written = tokio::time::timeout(std::time::Duration::from_secs(5), write)
        .await
        .expect("the write did not wait for a read connection")
        .expect("write");
    assert_eq!(written.title, "After");
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
