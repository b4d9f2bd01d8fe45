//! Overload protection: a full in-flight budget answers fast 503s, a request
//! past its deadline is answered 503, health checks stay up throughout, and
//! the server serves normally once the load is gone.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{Db, Spawn, TestApp};

/// A request whose body never finishes arriving: it holds its place in
/// flight until the server gives up on it.
async fn stuck_request(app: &TestApp) -> TcpStream {
    let addr = app.base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /api/v1/workspaces HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        app.admin_token
    );
    s.write_all(head.as_bytes()).await.expect("write");
    s
}

async fn status_line(s: &mut TcpStream) -> String {
    let mut buf = vec![0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
        .await
        .expect("an answer within the deadline")
        .expect("read");
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overloaded_api_sheds_fast_with_503_and_recovers() {
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| {
            s.max_in_flight = 2;
            s.request_timeout = Duration::from_secs(2);
        })
        .start()
        .await;
    let mut held = vec![stuck_request(&app).await, stuck_request(&app).await];
    // Both are in flight once the server has read their heads.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let started = Instant::now();
    let r = app.get("/api/v1/workspaces").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{:?}", r.body);
    assert_eq!(r.error_code(), "unavailable");
    assert!(started.elapsed() < Duration::from_secs(1), "shed at once, not queued");
    let raw = app
        .client
        .get(format!("{}/api/v1/workspaces", app.base))
        .send()
        .await
        .expect("request");
    assert_eq!(raw.headers().get("retry-after").map(|v| v.as_bytes()), Some(&b"1"[..]));
    assert_eq!(app.get("/healthz").await.status, StatusCode::OK, "health is never shed");

    // Past the deadline the stuck requests are answered, not left hanging.
    for s in &mut held {
        assert!(status_line(s).await.starts_with("HTTP/1.1 503"));
    }
    assert_eq!(app.get("/api/v1/workspaces").await.status, StatusCode::OK);
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("kandev_http_requests_shed_total{cause=\"in_flight\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("kandev_http_requests_shed_total{cause=\"timeout\"} 2"),
        "{metrics}"
    );
    app.stop().await;
}
