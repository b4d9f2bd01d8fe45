//! Every answer refuses to be framed (a framed Approve is one click from a
//! hostile page on a sibling subdomain, which `SameSite=Lax` cookies let
//! through), to be sniffed into another type, and to name its address in
//! referrers: the app's pages, its files, the API, and every refusal.

use kandev_core::page_policy::RESPONSE_HEADERS;
use serde_json::json;

use crate::support::{Db, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_refuses_framing_sniffing_and_referrers() {
    let app = spawn_app(Db::Sqlite).await;
    let anyone = reqwest::Client::new();
    let mut answers = Vec::new();
    for path in [
        "/",
        "/tasks/t1",
        "/app-0/missing.js",
        "/healthz",
        "/metrics",
        "/api/v1/workspaces",
        "/api/v1/nope",
    ] {
        answers.push((
            path,
            anyone.get(format!("{}{path}", app.base)).send().await.expect(path),
        ));
    }
    let login = anyone
        .post(format!("{}/api/v1/auth/login", app.base))
        .json(&json!({"username": "nobody", "password": "wrong-password"}))
        .send()
        .await
        .expect("a sign-in");
    answers.push(("a refused sign-in", login));
    let member = app.get("/api/v1/workspaces").await;
    assert_eq!(member.status, reqwest::StatusCode::OK, "the premise");
    for (what, r) in &answers {
        for (name, value) in RESPONSE_HEADERS {
            assert_eq!(
                r.headers().get(name).and_then(|v| v.to_str().ok()),
                Some(value),
                "{name} on {what} ({})",
                r.status()
            );
        }
    }
    let statuses: Vec<u16> = answers.iter().map(|(_, r)| r.status().as_u16()).collect();
    assert_eq!(statuses, [200, 200, 404, 200, 200, 401, 401, 401]);
    app.stop().await;
}
