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
