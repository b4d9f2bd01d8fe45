//! Lone write statements (`Store::write_one`): on SQLite they run in
//! batches on a writer thread of their own. Each caller still gets its own
//! answer, a statement runs whole once its caller has sent it, and a
//! statement that panics costs only its own answer.

use std::time::Duration;

use kandev_server::store::{Store, StoreError, StoreResult};

use crate::on_both_databases;
use crate::support::{Db, eventually, spawn_app};

async fn table(store: &Store) {
    sqlx::query("CREATE TABLE lone_rows (id TEXT PRIMARY KEY)")
        .execute(store.pool())
        .await
        .expect("table");
}

async fn insert(store: &Store, id: String) -> StoreResult<()> {
    store
        .write_one(move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO lone_rows (id) VALUES ($1)")
                    .bind(id)
                    .execute(conn)
                    .await
                    .map_err(kandev_server::store::unique_or("row"))?;
                Ok(())
            })
        })
        .await
}

async fn rows(store: &Store) -> i64 {
    let row = sqlx::query("SELECT COUNT(*) AS n FROM lone_rows")
        .fetch_one(store.pool())
        .await
        .expect("count");
    sqlx::Row::try_get::<i64, _>(&row, "n").expect("n")
}

/// Two hundred statements at once, every fourth a duplicate the unique key
/// refuses: each caller gets its own answer and the refusals cost the rest
/// nothing.
async fn lone_writes_sent_together_each_get_their_own_answer(db: Db) {
    let app = spawn_app(db).await;
    let store = app.services().store.clone();
    table(&store).await;
    insert(&store, "row-0".into()).await.expect("first row");
    let sends = (1..=200).map(|i| {
        let store = store.clone();
        let id = if i % 4 == 0 {
            "row-0".to_string()
        } else {
            format!("row-{i}")
        };
        tokio::spawn(async move { (i, insert(&store, id).await) })
    });
    for send in sends {
        let (i, result) = send.await.expect("join");
        match result {
            Err(StoreError::Conflict(_)) => assert_eq!(i % 4, 0, "row-{i} was refused"),
            Ok(()) => assert_ne!(i % 4, 0, "the duplicate {i} was written"),
            Err(other) => panic!("row-{i}: {other}"),
        }
    }
    assert_eq!(rows(&store).await, 1 + 150);
    app.stop().await;
}
on_both_databases!(lone_writes_sent_together_each_get_their_own_answer);

/// A caller that stops waiting once its statement is sent (a client that
/// hung up) does not stop the statement: it lands whole.
async fn a_lone_write_lands_whole_when_its_caller_stops_waiting(db: Db) {
    let app = spawn_app(db).await;
    let store = app.services().store.clone();
    table(&store).await;
    for i in 0..20 {
        let mut write = Box::pin(insert(&store, format!("left-{i}")));
        // One poll sends it; the writer may even answer before the poll returns.
        let _ = futures::poll!(&mut write);
        drop(write);
    }
    eventually("every sent statement to land", Duration::from_secs(5), || async {
        rows(&store).await == 20
    })
    .await;
    app.stop().await;
}
on_both_databases!(a_lone_write_lands_whole_when_its_caller_stops_waiting);

/// A statement whose work panics answers its caller with an error; the
/// writer goes on serving everyone else.
async fn a_lone_write_that_panics_costs_only_its_own_answer(db: Db) {
    let app = spawn_app(db).await;
    let store = app.services().store.clone();
    table(&store).await;
    let panicked = store
        .write_one(|_conn| -> futures::future::BoxFuture<'_, StoreResult<()>> {
            Box::pin(async { panic!("a bug in one statement's work") })
        })
        .await;
    assert!(matches!(panicked, Err(StoreError::Unavailable(_))), "{panicked:?}");
    insert(&store, "after".into()).await.expect("the next write");
    assert_eq!(rows(&store).await, 1);
    app.stop().await;
}
on_both_databases!(a_lone_write_that_panics_costs_only_its_own_answer);

/// The writer thread's queue, as `/metrics` shows it.
async fn lone_writes_waiting(app: &crate::support::TestApp) -> i64 {
    let metrics = app.metrics().await;
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("kandev_store_lone_writes_waiting "))
        .unwrap_or_else(|| panic!("no writer queue gauge in\n{metrics}"))
        .trim()
        .parse()
        .expect("a number")
}

/// Holds SQLite's writer thread with a statement that waits for the sender;
/// returns once the thread runs it, so what a test queues next is behind it
/// (a statement spawned first is not always sent first).
async fn hold_the_writer(
    store: &Store,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<StoreResult<()>>,
) {
    let (go, wait) = tokio::sync::oneshot::channel::<()>();
    let (held, holding) = tokio::sync::oneshot::channel::<()>();
    let store = store.clone();
    let slow = tokio::spawn(async move {
        store
            .write_one(move |_conn| -> futures::future::BoxFuture<'_, StoreResult<()>> {
                Box::pin(async move {
                    let _ = held.send(());
                    let _ = wait.await;
                    Ok(())
                })
            })
            .await
    });
    holding.await.expect("the writer runs the held statement");
    (go, slow)
}

/// SQLite: statements queued behind a slow one show in `/metrics`, and the
/// gauge falls back to 0 once the writer has caught up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_queued_for_the_writer_show_in_metrics() {
    let app = spawn_app(Db::Sqlite).await;
    let store = app.services().store.clone();
    table(&store).await;
    assert_eq!(lone_writes_waiting(&app).await, 0);
    let (go, slow) = hold_the_writer(&store).await;
    let queued: Vec<_> = (0..5)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { insert(&store, format!("queued-{i}")).await })
        })
        .collect();
    eventually(
        "the five statements behind the slow one to show",
        Duration::from_secs(5),
        || async {
            // Other work of the app may queue beside them.
            lone_writes_waiting(&app).await >= 5
        },
    )
    .await;
    let _ = go.send(());
    slow.await.expect("join").expect("slow write");
    for q in queued {
        q.await.expect("join").expect("queued write");
    }
    eventually("the queue to empty", Duration::from_secs(5), || async {
        lone_writes_waiting(&app).await == 0
    })
    .await;
    assert_eq!(rows(&store).await, 5);
    app.stop().await;
}

/// SQLite: a lease is taken through the write turn like every other lone
/// write, never beside it on a read connection, where it would race the turn
/// for SQLite's lock in the busy handler's coarse sleeps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_waits_for_the_write_turn_like_any_lone_write() {
    let app = spawn_app(Db::Sqlite).await;
    let store = app.services().store.clone();
    let (go, slow) = hold_the_writer(&store).await;
    let taking = {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .acquire_lease(
                    "lease-under-test",
                    "me",
                    chrono::Duration::seconds(9),
                    chrono::Utc::now(),
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!taking.is_finished(), "the lease was written beside the write turn");
    assert!(lone_writes_waiting(&app).await >= 1);
    let _ = go.send(());
    slow.await.expect("join").expect("slow write");
    assert!(taking.await.expect("join").expect("lease"), "a free lease is won");
    app.stop().await;
}
