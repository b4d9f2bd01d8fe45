//! Credentials: sign-in with its cookie and throttle, the Origin check on
//! cookie writes, the Host check, API tokens, and the first-start admin.

use std::time::{Duration, Instant};

use reqwest::header::{COOKIE, HOST, ORIGIN, SET_COOKIE};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::logs::capture;
use crate::on_both_databases;
use crate::support::{Db, Spawn, TestApp, spawn_app};

/// Signs in; the answer's status, body and `Set-Cookie`.
async fn login(app: &TestApp, username: &str, password: &str) -> (StatusCode, Value, Option<String>) {
    let resp = reqwest::Client::new()
        .post(format!("{}/api/v1/auth/login", app.base))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let cookie = resp
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, body, cookie)
}

/// `name=value` from a `Set-Cookie` line.
fn pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_sets_an_httponly_lax_session_cookie_that_authenticates() {
    let app = spawn_app(Db::Sqlite).await;
    app.person("alice", false).await;
    let (status, body, cookie) = login(&app, "Alice", "password-1234").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["username"], "alice");
    let cookie = cookie.expect("a session cookie");
    assert!(cookie.starts_with("kandev_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(!cookie.contains("Secure"), "plain http on loopback: {cookie}");
    let me = reqwest::Client::new()
        .get(format!("{}/api/v1/me", app.base))
        .header(COOKIE, pair(&cookie))
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), StatusCode::OK);
    // Sign-out ends the session.
    let out = reqwest::Client::new()
        .post(format!("{}/api/v1/auth/logout", app.base))
        .header(COOKIE, pair(&cookie))
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    let after = reqwest::Client::new()
        .get(format!("{}/api/v1/me", app.base))
        .header(COOKIE, pair(&cookie))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cookie_is_secure_behind_an_https_public_url() {
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| s.public_url = Some("https://kandev.example.com".into()))
        .start()
        .await;
    app.person("alice", false).await;
    let (_, _, cookie) = login(&app, "alice", "password-1234").await;
    assert!(cookie.expect("cookie").contains("Secure"));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_user_and_a_wrong_password_get_the_same_answer_after_the_same_work() {
    let app = spawn_app(Db::Sqlite).await;
    app.person("alice", false).await;
    let started = Instant::now();
    let (s1, wrong, c1) = login(&app, "alice", "not-her-password").await;
    let wrong_time = started.elapsed();
    let started = Instant::now();
    let (s2, unknown, c2) = login(&app, "nobody", "not-her-password").await;
    let unknown_time = started.elapsed();
    assert_eq!((s1, s2), (StatusCode::UNAUTHORIZED, StatusCode::UNAUTHORIZED));
    assert_eq!(wrong, unknown, "identical bodies");
    assert_eq!(wrong["error"]["code"], "unauthenticated");
    assert!(c1.is_none() && c2.is_none());
    // Both verify a password hash: an unknown name must not answer in a fraction of the time.
    assert!(
        unknown_time * 3 >= wrong_time,
        "unknown user {unknown_time:?} vs wrong password {wrong_time:?}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_failures_for_one_username_are_slowed_down() {
    let app = spawn_app(Db::Sqlite).await;
    app.person("alice", false).await;
    for name in ["alice", "ghost"] {
        for _ in 0..kandev_core::access::LOGIN_FREE_FAILURES {
            assert_eq!(login(&app, name, "guess").await.0, StatusCode::UNAUTHORIZED);
        }
        // The fifth failure earns a wait; what comes next must wait, even the right password.
        assert_eq!(login(&app, name, "guess").await.0, StatusCode::UNAUTHORIZED);
        let resp = reqwest::Client::new()
            .post(format!("{}/api/v1/auth/login", app.base))
            .json(&json!({"username": name, "password": "password-1234"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS, "{name}");
        let retry: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=2).contains(&retry), "{retry}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "too_many_attempts");
    }
    // Another username is not slowed by alice's failures.
    app.person("bob", false).await;
    assert_eq!(login(&app, "bob", "password-1234").await.0, StatusCode::OK);
    // Once the wait is over, the right password gets in and clears the count.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(login(&app, "alice", "password-1234").await.0, StatusCode::OK);
    assert_eq!(login(&app, "alice", "guess").await.0, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// Two replicas on one database, and guesses for one username sent to both
/// at once: each password check is counted (none lost to two replicas
/// reading the same count), and once the count earns a wait, guesses that
/// arrive together get one check between them, not one each.
async fn guesses_sent_to_two_replicas_at_once_are_each_counted_and_share_one_wait(db: Db) {
    let first = Spawn::new(db).start().await;
    let url = first.database_url.clone();
    let second = Spawn::new(db).settings(move |s| s.database_url = url).start().await;
    first.person("alice", false).await;
    let failures = async || {
        let on_record = first.services().store.login_throttle("alice").await.expect("throttle");
        on_record.map_or(0, |(f, _)| f)
    };
    let mut checked = 0;
    for _ in 0..2 {
        let (a, b) = tokio::join!(login(&first, "alice", "guess"), login(&second, "alice", "guess"));
        for (status, body, _) in [a, b] {
            match status {
                StatusCode::UNAUTHORIZED => checked += 1,
                StatusCode::TOO_MANY_REQUESTS => assert_eq!(body["error"]["code"], "too_many_attempts"),
                other => panic!("{other}: {body}"),
            }
        }
        assert_eq!(failures().await, checked, "every checked guess is counted once");
    }
    // The count has earned a wait that is now over: the next guesses are due.
    let earned = kandev_core::access::LOGIN_FREE_FAILURES + 3;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE login_throttle SET failures = {earned}, blocked_until = '2020-01-01T00:00:00.000000Z'"
    )))
    .execute(first.services().store.pool())
    .await
    .expect("update");
    let (a, b) = tokio::join!(login(&first, "alice", "guess"), login(&second, "alice", "guess"));
    let mut statuses = [a.0, b.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::UNAUTHORIZED, StatusCode::TOO_MANY_REQUESTS],
        "one check for the two guesses"
    );
    assert_eq!(failures().await, earned + 1);
    second.stop().await;
    first.stop().await;
}

on_both_databases!(guesses_sent_to_two_replicas_at_once_are_each_counted_and_share_one_wait);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookie_writes_need_the_servers_own_origin() {
    let app = spawn_app(Db::Sqlite).await;
    app.person("alice", false).await;
    let (_, _, cookie) = login(&app, "alice", "password-1234").await;
    let cookie = pair(&cookie.unwrap());
    let create = |origin: Option<String>| {
        let mut req = reqwest::Client::new()
            .post(format!("{}/api/v1/workspaces", app.base))
            .header(COOKIE, cookie.clone())
            .json(&json!({"name": "W"}));
        if let Some(o) = origin {
            req = req.header(ORIGIN, o);
        }
        req.send()
    };
    for origin in [None, Some("https://evil.test".to_string()), Some("null".to_string())] {
        let r = create(origin.clone()).await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin:?}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "csrf");
    }
    assert_eq!(app.count("workspaces").await, 0, "nothing was written");
    // The Origin is judged before the resource a change names: a foreign
    // page learns nothing from a malformed one.
    let r = reqwest::Client::new()
        .put(format!("{}/api/v1/github/workspace-settings", app.base))
        .header(COOKIE, cookie.clone())
        .header(ORIGIN, "https://evil.test")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "no workspace_id, foreign origin");
    let ok = create(Some(app.base.clone())).await.unwrap();
    assert_eq!(ok.status(), StatusCode::CREATED);
    // Reads need no Origin; bearer tokens are not a browser's to attach.
    let read = reqwest::Client::new()
        .get(format!("{}/api/v1/workspaces", app.base))
        .header(COOKIE, cookie.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    let bearer = app.post("/api/v1/workspaces", json!({"name": "by token"})).await;
    assert_eq!(bearer.status, StatusCode::CREATED);
    // Sign-in from a foreign page is refused too.
    let r = reqwest::Client::new()
        .post(format!("{}/api/v1/auth/login", app.base))
        .header(ORIGIN, "https://evil.test")
        .json(&json!({"username": "alice", "password": "password-1234"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_is_refused_and_the_public_host_served() {
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| s.public_url = Some("https://kandev.example.com".into()))
        .start()
        .await;
    let call = |host: &str, path: &str| {
        app.client
            .get(format!("{}{path}", app.base))
            .header(HOST, host.to_string())
            .send()
    };
    for path in ["/api/v1/workspaces", "/", "/api/v1/openapi.json"] {
        let r = call("rebind.attacker.test:38080", path).await.unwrap();
        assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST, "{path}");
    }
    let r = call("rebind.attacker.test", "/api/v1/workspaces").await.unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "misdirected_request");
    assert_eq!(
        call("kandev.example.com", "/api/v1/workspaces").await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        call("localhost:1234", "/api/v1/workspaces").await.unwrap().status(),
        StatusCode::OK
    );
    // Probes that address the machine by IP still see health.
    assert_eq!(
        call("10.1.2.3:38080", "/healthz").await.unwrap().status(),
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tokens_are_shown_once_stored_hashed_and_revocable() {
    let app = spawn_app(Db::Sqlite).await;
    let alice = app.person("alice", false).await;
    let r = app
        .request_as(
            Some(&alice),
            Method::POST,
            "/api/v1/tokens",
            Some(json!({"name": "ci"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let token = r.body["token"].as_str().unwrap().to_string();
    let id = r.body["id"].as_str().unwrap().to_string();
    assert!(token.starts_with("kdv_") && token.len() >= 4 + 64, "{token}");
    let listed = app.request_as(Some(&alice), Method::GET, "/api/v1/tokens", None).await;
    assert!(!listed.body.to_string().contains(&token), "never listed again");
    assert_eq!(listed.body.as_array().unwrap().len(), 2);
    let stored = sqlx::query("SELECT token_hash FROM api_tokens WHERE id = $1")
        .bind(&id)
        .fetch_one(app.services().store.pool())
        .await
        .unwrap();
    let hash: String = sqlx::Row::try_get(&stored, "token_hash").unwrap();
    assert_ne!(hash, token);
    assert!(!hash.contains(&token[4..]));
    let with = |t: &str| {
        reqwest::Client::new()
            .get(format!("{}/api/v1/me", app.base))
            .bearer_auth(t.to_string())
            .send()
    };
    assert_eq!(with(&token).await.unwrap().status(), StatusCode::OK);
    // Nobody else revokes it.
    let bob = app.person("bob", false).await;
    let r = app
        .request_as(Some(&bob), Method::DELETE, &format!("/api/v1/tokens/{id}"), None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app
        .request_as(Some(&alice), Method::DELETE, &format!("/api/v1/tokens/{id}"), None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(with(&token).await.unwrap().status(), StatusCode::UNAUTHORIZED);
    // A malformed Authorization is refused, never ignored for a cookie.
    let basic = reqwest::Client::new()
        .get(format!("{}/api/v1/me", app.base))
        .header(reqwest::header::AUTHORIZATION, "Basic YWxpY2U6eA==")
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// A token's use is recorded at most once a minute, so a request carrying
/// one is a read: it answers while a writer holds SQLite's write turn, and
/// the recorded use still moves once it is a minute old.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_records_its_use_once_a_minute_and_its_requests_never_wait_for_writers() {
    let app = spawn_app(Db::Sqlite).await;
    let alice = app.person("alice", false).await;
    let used = |r: &crate::support::Reply| r.body[0]["last_used_at"].clone();
    let first = app.request_as(Some(&alice), Method::GET, "/api/v1/tokens", None).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert!(used(&first).is_string(), "the first use is recorded: {}", first.body);

    let writer = app.services().store.write_tx().await.unwrap();
    let again = tokio::time::timeout(
        Duration::from_secs(5),
        app.request_as(Some(&alice), Method::GET, "/api/v1/tokens", None),
    )
    .await
    .expect("a token request does not wait for the write turn");
    drop(writer);
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(used(&again), used(&first), "a use within the minute writes nothing");

    app.exec("UPDATE api_tokens SET last_used_at = '2000-01-01T00:00:00.000000Z'")
        .await;
    let later = app.request_as(Some(&alice), Method::GET, "/api/v1/tokens", None).await;
    assert!(
        used(&later).as_str().is_some_and(|t| !t.starts_with("2000")),
        "a stale use moves: {}",
        later.body
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_start_creates_an_admin_once_and_only_without_an_admin_token() {
    let first = Spawn::new(Db::Sqlite).settings(|s| s.admin_token = None).start().await;
    let password = first
        .app
        .as_ref()
        .unwrap()
        .first_admin_password
        .clone()
        .expect("a generated password");
    let (status, body, _) = login(&first, "admin", &password).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["admin"], true);
    let database_url = first.database_url.clone();
    let _files = first.stop_keeping_files().await;
    let again = Spawn::new(Db::Sqlite)
        .settings(move |s| {
            s.admin_token = None;
            s.database_url = database_url;
        })
        .start()
        .await;
    assert!(again.app.as_ref().unwrap().first_admin_password.is_none());
    assert_eq!(login(&again, "admin", &password).await.0, StatusCode::OK);
    again.stop().await;
    let with_token = spawn_app(Db::Sqlite).await;
    assert!(with_token.app.as_ref().unwrap().first_admin_password.is_none());
    assert_eq!(with_token.count("users").await, 0);
    with_token.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_admin_token_or_a_bad_public_url_stops_the_start() {
    let mut settings = kandev_server::config::Settings::defaults();
    settings.listen = "127.0.0.1:0".into();
    let dir = tempfile::tempdir().unwrap();
    settings.database_url = format!("sqlite://{}/k.db", dir.path().display());
    settings.admin_token = Some("short".into());
    let e = kandev_server::app::Application::build(settings.clone(), Default::default())
        .await
        .err()
        .expect("refused");
    assert!(e.to_string().contains("KANDEV_ADMIN_TOKEN"), "{e}");
    settings.admin_token = None;
    settings.public_url = Some("kandev.example.com".into());
    let e = kandev_server::app::Application::build(settings, Default::default())
        .await
        .err()
        .expect("refused");
    assert!(e.to_string().contains("KANDEV_PUBLIC_URL"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_are_admin_business_and_nobody_deletes_themselves() {
    let app = spawn_app(Db::Sqlite).await;
    let root = app.person("root", true).await;
    let alice = app.person("alice", false).await;
    let r = app
        .request_as(
            Some(&alice),
            Method::POST,
            "/api/v1/users",
            Some(json!({"username": "x", "password": "password-1234"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .request_as(
            Some(&root),
            Method::POST,
            "/api/v1/users",
            Some(json!({"username": "alice", "password": "password-1234"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "names are unique");
    let r = app
        .request_as(
            Some(&root),
            Method::POST,
            "/api/v1/users",
            Some(json!({"username": "shorty", "password": "short"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .request_as(Some(&root), Method::DELETE, &format!("/api/v1/users/{}", root.id), None)
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = app
        .request_as(
            Some(&root),
            Method::DELETE,
            &format!("/api/v1/users/{}", alice.id),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = app.request_as(Some(&alice), Method::GET, "/api/v1/me", None).await;
    assert_eq!(
        r.status,
        StatusCode::UNAUTHORIZED,
        "a deleted user's tokens die with it"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unserved_method_answers_405_with_allow() {
    let app = spawn_app(Db::Sqlite).await;
    let r = reqwest::Client::new()
        .put(format!("{}/api/v1/tasks/some-id", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(r.headers()["allow"], "GET, PATCH, DELETE, HEAD");
    app.stop().await;
}

/// Runs the `kandev` binary with `args` against `database_url`, feeding `stdin`.
fn kandev(args: &[&str], database_url: &str, stdin: &str) -> (bool, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kandev"))
        .args(args)
        .env("KANDEV_DATABASE_URL", database_url)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_adds_users_and_makes_tokens_against_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/kandev.db", dir.path().display());
    let (ok, out) = kandev(&["user", "add", "Alice", "--password-stdin"], &db, "alice-password\n");
    assert!(ok, "{out}");
    assert!(out.contains("added user alice"), "{out}");
    let (ok, out) = kandev(&["user", "add", "root", "--admin"], &db, "");
    assert!(ok, "{out}");
    let root_password = out
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .expect("a generated password")
        .to_string();
    let (ok, out) = kandev(&["user", "add", "alice"], &db, "");
    assert!(!ok && out.contains("already exists"), "{out}");
    let (ok, out) = kandev(&["token", "create", "--user", "alice", "--name", "ci"], &db, "");
    assert!(ok, "{out}");
    let token = out.trim().to_string();
    assert!(token.starts_with("kdv_"), "{token}");
    let (ok, out) = kandev(&["token", "create", "--user", "nobody"], &db, "");
    assert!(!ok && out.contains("no user nobody"), "{out}");
    let app = Spawn::new(Db::Sqlite)
        .settings(move |s| s.database_url = db)
        .start()
        .await;
    let me = reqwest::Client::new()
        .get(format!("{}/api/v1/me", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let me: Value = me.json().await.unwrap();
    assert_eq!(me["username"], "alice");
    assert_eq!(login(&app, "alice", "alice-password").await.0, StatusCode::OK);
    let (_, root, _) = login(&app, "root", &root_password).await;
    assert_eq!(root["admin"], true);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_sweeps_expired_sessions_and_stale_failure_counts() {
    let app = spawn_app(Db::Sqlite).await;
    let alice = app.person("alice", false).await;
    app.exec("INSERT INTO login_throttle (username, failures, blocked_until) VALUES ('sprayed', 3, '2020-01-01T00:00:00.000000Z')")
        .await;
    app.exec(&format!(
        "INSERT INTO web_sessions (id_hash, user_id, created_at, expires_at) VALUES ('old', '{}', '2020-01-01T00:00:00.000000Z', '2020-01-15T00:00:00.000000Z')",
        alice.id
    ))
    .await;
    assert_eq!(login(&app, "alice", "password-1234").await.0, StatusCode::OK);
    assert_eq!(app.count("login_throttle").await, 0);
    assert_eq!(app.count("web_sessions").await, 1, "only the new session is left");
    app.stop().await;
}

/// GIVEN a user who is the only owner of a workspace, WHEN an admin deletes
/// the user, THEN it is refused (409, naming the workspace) and nothing is
/// deleted; once the workspace has another owner the deletion goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_workspaces_only_owner_is_refused() {
    let app = spawn_app(Db::Sqlite).await;
    let root = app.person("root", true).await;
    let alice = app.person("alice", false).await;
    let bob = app.person("bob", false).await;
    let ws = app.workspace("Payments").await;
    app.add_member(&ws, &alice, "owner").await;
    app.add_member(&ws, &bob, "member").await;
    let path = format!("/api/v1/users/{}", alice.id);
    let r = app.request_as(Some(&root), Method::DELETE, &path, None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("\"Payments\""), "{message}");
    let me = app.request_as(Some(&alice), Method::GET, "/api/v1/me", None).await;
    assert_eq!(me.status, StatusCode::OK, "alice and her token are still there");
    app.add_member(&ws, &bob, "owner").await;
    let r = app.request_as(Some(&root), Method::DELETE, &path, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let members = app.get(&format!("/api/v1/workspaces/{ws}/members")).await;
    let owners: Vec<_> = members
        .body
        .as_array()
        .expect("members")
        .iter()
        .filter(|m| m["role"] == "owner")
        .map(|m| m["user_id"].clone())
        .collect();
    assert_eq!(owners, vec![json!(bob.id)], "{}", members.body);
    app.stop().await;
}

/// Sign-in is open to anyone who can reach the port, and each password check
/// holds 19 MiB of argon2id memory: many attempts at once (distinct names, so
/// the per-name throttle does not serialise them) run a bounded number of
/// checks at a time, and every attempt still gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sign_ins_at_once_run_a_bounded_number_of_password_checks() {
    let app = spawn_app(Db::Sqlite).await;
    let attempts = 24;
    let answers = futures::future::join_all((0..attempts).map(|i| {
        let app = &app;
        async move { login(app, &format!("sprayed-{i}"), "guess").await.0 }
    }))
    .await;
    assert!(answers.iter().all(|s| *s == StatusCode::UNAUTHORIZED), "{answers:?}");
    let peak = app.services().access.password_checks_peak();
    let slots = kandev_server::access::password_check_slots();
    assert!((1..=slots).contains(&peak), "peak {peak} of {slots} slots");
    app.stop().await;
}

/// A member's request costs one read for the guard: the credential's user,
/// the resource's workspace and the member's role there come back in one
/// statement, by token and by cookie. Counted on PostgreSQL, whose
/// statements log on the request's own task (SQLite's run on its connection
/// threads, outside this thread's capture).
#[tokio::test]
async fn a_members_request_reads_its_credential_and_the_place_in_one_statement() {
    let (logs, _guard) = capture();
    let app = spawn_app(Db::Postgres).await;
    let ws = app.workspace("W").await;
    let mia = app.person("mia", false).await;
    app.add_member(&ws, &mia, "member").await;
    let (status, body, cookie) = login(&app, "mia", "password-1234").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let cookie = pair(&cookie.expect("a session cookie"));
    let board = format!("{}/api/v1/workspaces/{ws}/tasks", app.base);
    let by_token = || mia.client.get(&board);
    let by_cookie = || reqwest::Client::new().get(&board).header(COOKIE, &cookie);
    // The first requests note the token's use and build the board: not counted.
    for request in [by_token(), by_cookie()] {
        assert_eq!(request.send().await.unwrap().status(), StatusCode::OK);
    }
    for (how, request) in [("token", by_token()), ("cookie", by_cookie())] {
        logs.clear();
        assert_eq!(request.send().await.unwrap().status(), StatusCode::OK, "{how}");
        let statements: Vec<String> = logs.lines().into_iter().filter(|l| l.contains("sqlx::query")).collect();
        let reads = |table: &str| statements.iter().filter(|l| l.contains(table)).count();
        let credential = if how == "token" { "api_tokens" } else { "web_sessions" };
        assert_eq!(reads(credential), 1, "{how}: {statements:#?}");
        assert_eq!(reads("workspace_members"), 1, "{how}: {statements:#?}");
        assert!(
            statements
                .iter()
                .any(|l| l.contains(credential) && l.contains("workspace_members")),
            "{how}: the credential and the membership in one statement: {statements:#?}"
        );
    }
    app.stop().await;
}
