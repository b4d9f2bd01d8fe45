//! Senders deliver again: GitHub when an answer took longer than its ten
//! seconds or someone pressed "Redeliver", others on any error. A sender
//! that names its delivery (`Idempotency-Key`, else `X-GitHub-Delivery`)
//! fires one run per name; one that names none fires on every request.

use kandev_core::firing::SKIP_ALREADY_FIRED;
use kandev_core::webhook::BAD_DELIVERY_ID;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::engine::HOLD_PROMPT;
use crate::on_both_databases;
use crate::support::{Db, TestApp, spawn_app};

/// What the automation's webhook answered `headers` and a signed `body`.
async fn deliver(app: &TestApp, id: &str, secret: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let body = br#"{"action":"completed"}"#.to_vec();
    let mut req = app
        .client
        .post(format!("{}/api/v1/automations/webhook/{id}", app.base))
        .header("x-hub-signature-256", kandev_server::signature::sign(secret, &body))
        .body(body);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let r = req.send().await.expect("the delivery");
    (r.status(), r.json().await.expect("its answer"))
}

/// GIVEN a webhook automation, WHEN a sender delivers one named delivery
/// again (one after the other, or two at once), THEN it fires one run;
/// unnamed deliveries fire each time, and a name that cannot be kept as
/// given is refused before anything fires.
async fn a_named_delivery_fires_one_run_however_often_it_is_sent(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace_with_repo("W").await;
    let created = app
        .automation(
            &ws,
            json!({"name": "hook", "prompt": HOLD_PROMPT, "max_concurrent_runs": 5,
                   "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let id = created["id"].as_str().expect("an id").to_string();
    let secret = created["webhook_secret"].as_str().expect("a secret").to_string();
    let triggered = (StatusCode::ACCEPTED, json!({"status": "triggered"}));
    let already = (
        StatusCode::OK,
        json!({"status": "skipped", "reason": SKIP_ALREADY_FIRED}),
    );

    let github = [("x-github-delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")];
    assert_eq!(deliver(&app, &id, &secret, &github).await, triggered);
    assert_eq!(
        deliver(&app, &id, &secret, &github).await,
        already,
        "GitHub's redelivery"
    );

    let named = [("idempotency-key", "deploy-42")];
    let (a, b) = tokio::join!(deliver(&app, &id, &secret, &named), deliver(&app, &id, &secret, &named));
    let mut answers = vec![a, b];
    answers.sort_by_key(|(status, _)| status.as_u16());
    assert_eq!(answers, vec![already.clone(), triggered.clone()], "two at once");

    assert_eq!(deliver(&app, &id, &secret, &[]).await, triggered);
    assert_eq!(deliver(&app, &id, &secret, &[]).await, triggered, "unnamed: every time");

    let (status, body) = deliver(&app, &id, &secret, &[("idempotency-key", "a b")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["message"], BAD_DELIVERY_ID);

    let runs = app.wait_for_runs(&id, 4).await;
    let mut keys: Vec<&str> = runs.iter().map(|r| r.dedup_key.as_str()).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "",
            "",
            "delivery:72d3162e-cc78-11e3-81ab-4c9367dc0958",
            "delivery:deploy-42"
        ]
    );
    app.stop().await;
}
on_both_databases!(a_named_delivery_fires_one_run_however_often_it_is_sent);
