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

/// One guard read as the test asks it, so the same list can be asked one at
/// a time and all at once.
#[derive(Clone)]
enum GuardAsk {
    Caller(kandev_server::store::Credential<'static>, Option<(Scope, &'static str)>),
    Place(Scope, &'static str, Option<&'static str>),
}

/// What a guard read answered, as comparable text.
async fn ask(store: &kandev_server::store::Store, q: &GuardAsk, now: chrono::DateTime<chrono::Utc>) -> String {
    match q {
        GuardAsk::Caller(credential, at) => format!("{:?}", store.caller(*credential, *at, now).await.expect("caller")),
        GuardAsk::Place(scope, id, user) => format!("{:?}", store.place(*scope, id, *user).await.expect("place")),
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

use kandev_core::access::Scope;

/// On PostgreSQL guard reads that arrive together share statements (one
/// round trip answers many requests), and each still gets exactly the answer
/// it gets when read alone: other callers, other workspaces, a missing
/// resource, an unknown or expired credential, and an id full of SQL and
/// JSON punctuation.
#[tokio::test]
async fn on_postgres_guard_reads_arriving_together_share_statements_and_keep_their_own_answers() {
    use kandev_server::access::credentials::hash_secret;
    use kandev_server::store::Credential;
    let app = spawn_app(Db::Postgres).await;
    let (w1, w2) = (app.workspace("One").await, app.workspace("Two").await);
    let task = app.task(&w1, "In one").await;
    let (mia, bob) = (app.person("mia", false).await, app.person("bob", false).await);
    app.add_member(&w1, &mia, "member").await;
    app.add_member(&w2, &bob, "viewer").await;
    let store = &app.services().store;
    let now = chrono::Utc::now();
    let (live, expired) = ("session-live", "session-expired");
    store
        .create_web_session(&hash_secret(live), &bob.id, now, now + chrono::Duration::hours(1))
        .await
        .expect("session");
    store
        .create_web_session(
            &hash_secret(expired),
            &bob.id,
            now - chrono::Duration::hours(2),
            now - chrono::Duration::hours(1),
        )
        .await
        .expect("session");
    let (w1, w2, task) = (leak(w1), leak(w2), leak(task));
    let (mia_token, bob_token) = (leak(hash_secret(&mia.token)), leak(hash_secret(&bob.token)));
    let (mia_id, bob_id) = (leak(mia.id.clone()), leak(bob.id.clone()));
    let hostile = "'; DROP TABLE users; --\"}]$2\\";
    let asks = vec![
        GuardAsk::Caller(Credential::ApiToken(mia_token), Some((Scope::Workspace, w1))),
        GuardAsk::Caller(Credential::ApiToken(mia_token), Some((Scope::Workspace, w2))),
        GuardAsk::Caller(Credential::ApiToken(bob_token), Some((Scope::Workspace, w2))),
        GuardAsk::Caller(Credential::ApiToken(mia_token), Some((Scope::Task, task))),
        GuardAsk::Caller(
            Credential::ApiToken(mia_token),
            Some((Scope::Workspace, "no-such-workspace")),
        ),
        GuardAsk::Caller(Credential::ApiToken(mia_token), Some((Scope::Workspace, hostile))),
        GuardAsk::Caller(Credential::ApiToken("0000"), Some((Scope::Workspace, w1))),
        GuardAsk::Caller(Credential::ApiToken(mia_token), None),
        GuardAsk::Caller(
            Credential::WebSession(leak(hash_secret(live))),
            Some((Scope::Workspace, w2)),
        ),
        GuardAsk::Caller(
            Credential::WebSession(leak(hash_secret(live))),
            Some((Scope::Workspace, w1)),
        ),
        GuardAsk::Caller(
            Credential::WebSession(leak(hash_secret(expired))),
            Some((Scope::Workspace, w2)),
        ),
        GuardAsk::Place(Scope::Workspace, w1, Some(mia_id)),
        GuardAsk::Place(Scope::Workspace, w1, Some(bob_id)),
        GuardAsk::Place(Scope::Task, task, None),
        GuardAsk::Place(Scope::Workspace, hostile, Some(mia_id)),
    ];
    let mut alone = vec![];
    for q in &asks {
        alone.push(ask(store, q, now).await);
    }
    assert!(
        alone[0].contains("Some(Member)") && alone[0].contains(w1),
        "{}",
        alone[0]
    );
    assert!(alone[2].contains("Some(Viewer)"), "{}", alone[2]);
    assert!(
        alone[6] == "None" && alone[10] == "None",
        "unknown and expired: {alone:?}"
    );
    assert!(
        alone[8].contains("bob") && alone[8].contains("Some(Viewer)"),
        "{}",
        alone[8]
    );
    assert_eq!(alone[14], "None", "the hostile id names nothing");

    let users = app.count("users").await;
    let before = store.gathered_counts();
    let rounds = 8;
    let together: Vec<String> =
        futures::future::join_all((0..rounds).flat_map(|_| asks.iter()).map(|q| ask(store, q, now))).await;
    for (i, answer) in together.iter().enumerate() {
        assert_eq!(answer, &alone[i % asks.len()], "read {i} answered another's question");
    }
    let after = store.gathered_counts();
    let (reads, statements) = (after.reads - before.reads, after.statements - before.statements);
    assert_eq!(
        reads,
        (rounds * asks.len()) as u64,
        "every guard read went through the gathering"
    );
    assert!(
        statements * 4 <= reads,
        "{reads} reads arriving together took {statements} statements"
    );
    assert_eq!(app.count("users").await, users, "users intact");

    // An id PostgreSQL refuses outright (a NUL byte, which a URL can carry
    // as %00) fails its own read only, never those gathered with it.
    let refused = store.place(Scope::Workspace, "a\0b", Some(mia_id));
    let others = futures::future::join_all((0..rounds).flat_map(|_| asks.iter()).map(|q| ask(store, q, now)));
    let (refused, others) = tokio::join!(refused, others);
    assert!(refused.is_err(), "{refused:?}");
    for (i, answer) in others.iter().enumerate() {
        assert_eq!(answer, &alone[i % asks.len()], "read {i} beside a refused one");
    }
    let metrics = app.metrics().await;
    let scraped = |name: &str| -> u64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {metrics}"))
    };
    assert!(scraped("kandev_store_guard_reads_gathered_total") >= after.reads);
    assert!(scraped("kandev_store_guard_statements_gathered_total") >= after.statements);
}
