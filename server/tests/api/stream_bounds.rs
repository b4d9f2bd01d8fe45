//! Live streams are bounded per caller: each holds a connection, a file
//! descriptor and a task, so one member's script (or a leaked viewer
//! token) must not open enough to starve the server.

use std::time::Duration;

use kandev_core::access::{STREAMS_PER_CALLER, StreamRefusal};
use reqwest::StatusCode;

use crate::support::{Db, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_holds_at_most_its_bound_of_live_streams_and_a_closed_one_frees_its_place() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let mia = app.person("mia", false).await;
    app.add_member(&ws, &mia, "viewer").await;
    let url = format!("{}/api/v1/workspaces/{ws}/stream", app.base);
    let mut open = Vec::new();
    for _ in 0..STREAMS_PER_CALLER {
        let r = mia.client.get(&url).send().await.expect("a stream");
        assert_eq!(r.status(), StatusCode::OK);
        open.push(r);
    }
    let refused = mia.client.get(&url).send().await.expect("an answer");
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: serde_json::Value = refused.json().await.expect("its body");
    assert_eq!(body["error"]["code"], "too_many_streams");
    assert_eq!(body["error"]["message"], StreamRefusal::Caller.message());
    let other = app.client.get(&url).send().await.expect("another caller's stream");
    assert_eq!(other.status(), StatusCode::OK, "the bound is the caller's own");
    // A page closed: its place is free again.
    drop(open.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = mia.client.get(&url).send().await.expect("an answer");
        if r.status() == StatusCode::OK {
            open.push(r);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no place again: {}", r.status());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(app.services().streams.total(), STREAMS_PER_CALLER + 1);
    drop(open);
    drop(other);
    app.stop().await;
}

/// A live stream never ends by itself, and a graceful stop waits for every
/// answer: a page left open must not keep the server (and the work it would
/// hand over) from stopping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_stops_while_a_page_holds_its_live_stream_and_the_stream_ends() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let url = format!("{}/api/v1/workspaces/{ws}/stream", app.base);
    let mut page = app.client.get(&url).send().await.expect("a stream");
    assert_eq!(page.status(), StatusCode::OK);
    let stopped = tokio::time::timeout(Duration::from_secs(15), app.stop()).await;
    assert!(stopped.is_ok(), "the server waited for the open stream");
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Ok(Some(_)) = page.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the page's stream went on");
}
