//! The board read is served from a cached body while no task of the
//! workspace changes, and every change renews it — including one no code of
//! this process made (another replica, an operator's SQL).

use serde_json::{Value, json};

use crate::on_both_databases;
use crate::support::{Db, TestApp, spawn_app};

fn titles(board: &Value) -> Vec<String> {
    board
        .as_array()
        .expect("board is a list")
        .iter()
        .map(|t| t["title"].as_str().expect("title").to_string())
        .collect()
}

async fn board(app: &TestApp, ws: &str, query: &str) -> Vec<String> {
    let r = app.get(&format!("/api/v1/workspaces/{ws}/tasks{query}")).await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.body);
    titles(&r.body)
}

async fn cache_reads(app: &TestApp, how: &str) -> u64 {
    let metrics = app.metrics().await;
    let prefix = format!("kandev_board_reads_total{{cache=\"{how}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|n| n.trim().parse().expect("count"))
        .unwrap_or(0)
}

async fn sql(app: &TestApp, statement: &str, id: &str) {
    sqlx::query(sqlx::AssertSqlSafe(statement.to_string()))
        .bind(id)
        .execute(app.services().store.pool())
        .await
        .expect(statement);
}

async fn the_board_is_cached_until_any_writer_changes_a_task(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let other = app.workspace("Other").await;
    let first = app.task(&ws, "First").await;

    assert_eq!(board(&app, &ws, "").await, ["First"]);
    assert_eq!(board(&app, &ws, "").await, ["First"]);
    assert_eq!(
        (cache_reads(&app, "miss").await, cache_reads(&app, "hit").await),
        (1, 1),
        "the second read is the cached body"
    );
    // Another workspace's change leaves this board's cache alone.
    app.task(&other, "Elsewhere").await;
    assert_eq!(board(&app, &ws, "").await, ["First"]);
    assert_eq!(cache_reads(&app, "hit").await, 2);

    // Changes this process never saw: straight SQL, as another replica or an operator would write.
    sql(&app, "UPDATE tasks SET title = 'Edited' WHERE id = $1", &first).await;
    assert_eq!(board(&app, &ws, "").await, ["Edited"]);
    sql(&app, "UPDATE tasks SET archived_at = updated_at WHERE id = $1", &first).await;
    assert!(board(&app, &ws, "").await.is_empty());
    assert_eq!(board(&app, &ws, "?include_archived=true").await, ["Edited"]);
    sql(&app, "DELETE FROM tasks WHERE id = $1", &first).await;
    assert!(board(&app, &ws, "?include_archived=true").await.is_empty());

    // And through the API, at once.
    let second = app.task(&ws, "Second").await;
    assert_eq!(board(&app, &ws, "").await, ["Second"]);
    let r = app
        .patch(&format!("/api/v1/tasks/{second}"), json!({"title": "Renamed"}))
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.body);
    assert_eq!(board(&app, &ws, "").await, ["Renamed"]);

    // A deleted workspace's board is a 404, not its last cached body.
    sql(&app, "DELETE FROM workspaces WHERE id = $1", &ws).await;
    let r = app.get(&format!("/api/v1/workspaces/{ws}/tasks")).await;
    assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND, "{}", r.body);
    app.stop().await;
}
on_both_databases!(the_board_is_cached_until_any_writer_changes_a_task);

/// The board as a browser reads it: the raw response with `accept`.
async fn gzip_board(app: &TestApp, ws: &str, accept: &str) -> reqwest::Response {
    let r = app
        .client
        .get(format!("{}/api/v1/workspaces/{ws}/tasks", app.base))
        .header(reqwest::header::ACCEPT_ENCODING, accept)
        .send()
        .await
        .expect("board");
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    r
}

fn gunzip(body: &[u8]) -> Value {
    use std::io::Read;
    let mut json = String::new();
    flate2::read::GzDecoder::new(body)
        .read_to_string(&mut json)
        .expect("a gzip body");
    serde_json::from_str(&json).expect("JSON")
}

/// Browsers ask for gzip: the board's kept gzip form answers them, encoded
/// once per board version, and a change is in the next one they read.
async fn a_browser_reads_the_board_gzipped_and_a_change_renews_it(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let first = app.task(&ws, "First").await;
    let mut bodies = vec![];
    for _ in 0..2 {
        let r = gzip_board(&app, &ws, "gzip, deflate, br, zstd").await;
        assert_eq!(r.headers()["content-encoding"], "gzip");
        assert_eq!(r.headers()["content-type"], "application/json");
        assert!(
            r.headers().get_all("vary").iter().any(|v| v == "accept-encoding"),
            "{:?}",
            r.headers()
        );
        bodies.push(r.bytes().await.expect("body"));
    }
    assert_eq!(bodies[0], bodies[1], "one gzip form per board version");
    assert_eq!(titles(&gunzip(&bodies[0])), ["First"]);
    // The plain body is the same board.
    assert_eq!(board(&app, &ws, "").await, ["First"]);
    let refused = gzip_board(&app, &ws, "gzip;q=0").await;
    assert!(refused.headers().get("content-encoding").is_none());

    let r = app
        .patch(&format!("/api/v1/tasks/{first}"), json!({"title": "Renamed"}))
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.body);
    let renewed = gzip_board(&app, &ws, "gzip").await.bytes().await.expect("body");
    assert_eq!(titles(&gunzip(&renewed)), ["Renamed"]);
    app.stop().await;
}
on_both_databases!(a_browser_reads_the_board_gzipped_and_a_change_renews_it);

/// PostgreSQL: two task writes in one workspace do not queue behind each
/// other's lock on a shared counter row, and the board still sees both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_writes_in_one_workspace_do_not_wait_for_each_other() {
    use sqlx::Connection;
    let app = spawn_app(Db::Postgres).await;
    let ws = app.workspace("W").await;
    let (a, b) = (app.task(&ws, "A").await, app.task(&ws, "B").await);
    assert_eq!(board(&app, &ws, "").await, ["A", "B"]);
    let pool = app.services().store.pool();
    // Two connections that count in different stripes (as two busy writers mostly do).
    let mut held = vec![];
    let (mut first, mut second) = loop {
        let mut c = pool.acquire().await.expect("connection");
        let stripe: i32 = sqlx::query_scalar("SELECT pg_backend_pid() % 16")
            .fetch_one(&mut *c)
            .await
            .expect("stripe");
        match held.iter().position(|(s, _)| *s != stripe) {
            Some(i) => break (held.swap_remove(i).1, c),
            None => held.push((stripe, c)),
        }
    };
    drop(held);
    let mut open = first.begin().await.expect("begin");
    sqlx::query("UPDATE tasks SET title = 'A2' WHERE id = $1")
        .bind(&a)
        .execute(&mut *open)
        .await
        .expect("first write");
    let other = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        sqlx::query("UPDATE tasks SET title = 'B2' WHERE id = $1")
            .bind(&b)
            .execute(&mut *second),
    )
    .await;
    assert!(other.is_ok(), "the second write waited for the first's transaction");
    assert_eq!(board(&app, &ws, "").await, ["A", "B2"]);
    open.commit().await.expect("commit");
    assert_eq!(board(&app, &ws, "").await, ["A2", "B2"]);
    drop((first, second));
    app.stop().await;
}
