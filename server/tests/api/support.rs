//! `spawn_app`: the real server on a loopback port over a fresh database.

use std::sync::Arc;
use std::time::Duration;

use kandev_server::app::{Application, BuildOptions};
use kandev_server::clock::Clock;
use kandev_server::config::Settings;
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Which database a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// A fresh PostgreSQL database on the server the test command started.
pub async fn postgres_url() -> String {
    let admin = std::env::var("KANDEV_TEST_POSTGRES_URL").expect(
        "KANDEV_TEST_POSTGRES_URL is not set: run the tests through `cargo xtask test`, which starts PostgreSQL",
    );
    kandev_server::testkit::fresh_postgres_database(&admin).await
}

pub struct TestApp {
    pub app: Option<Application>,
    pub base: String,
    /// Sends `KANDEV_ADMIN_TOKEN`: the suite acts as an instance admin unless
    /// a test signs in as somebody else.
    pub client: reqwest::Client,
    pub admin_token: String,
    pub dir: tempfile::TempDir,
    pub database_url: String,
}

/// A client that sends a bearer token with every request.
pub fn bearer_client(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).expect("header");
    headers.insert(reqwest::header::AUTHORIZATION, value);
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("client")
}

pub struct Spawn {
    pub db: Db,
    pub settings: Box<dyn FnOnce(&mut Settings)>,
    pub clock: Option<Arc<dyn Clock>>,
    pub wall: Option<Arc<dyn Clock>>,
    pub nats: bool,
}

impl Spawn {
    pub fn new(db: Db) -> Self {
        Spawn {
            db,
            settings: Box::new(|_| {}),
            clock: None,
            wall: None,
            nats: false,
        }
    }

    /// Uses the NATS bus on the server the test command started.
    pub fn nats(mut self) -> Self {
        self.nats = true;
        self
    }

    pub fn settings(mut self, f: impl FnOnce(&mut Settings) + 'static) -> Self {
        self.settings = Box::new(f);
        self
    }

    /// Applies `f` after the settings already given.
    pub fn settings_more(mut self, f: impl FnOnce(&mut Settings) + 'static) -> Self {
        let before = std::mem::replace(&mut self.settings, Box::new(|_| {}));
        self.settings = Box::new(move |s| {
            before(s);
            f(s);
        });
        self
    }

    pub fn clock(mut self, c: Arc<dyn Clock>) -> Self {
        self.clock = Some(c);
        self
    }

    /// The real time as this replica reads it (`BuildOptions::wall_clock`).
    pub fn wall(mut self, c: Arc<dyn Clock>) -> Self {
        self.wall = Some(c);
        self
    }

    pub async fn start(self) -> TestApp {
        self.try_start().await.expect("server starts")
    }

    /// Starts the server, or says why it did not.
    pub async fn try_start(self) -> Result<TestApp, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let database_url = match self.db {
            Db::Sqlite => format!("sqlite://{}/kandev.db", dir.path().display()),
            Db::Postgres => postgres_url().await,
        };
        let web = dir.path().join("web");
        std::fs::create_dir_all(&web).expect("web dir");
        std::fs::write(web.join("index.html"), "<!doctype html><title>Kandev</title>").expect("index");
        let mut settings = Settings::defaults();
        settings.listen = "127.0.0.1:0".into();
        settings.database_url = database_url.clone();
        settings.web_dir = Some(web);
        settings.data_dir = dir.path().join("data");
        // Test receivers listen on loopback.
        settings.notify_private_addresses = true;
        let admin_token = format!("test-admin-{}", uuid::Uuid::new_v4().simple());
        settings.admin_token = Some(admin_token.clone());
        if self.nats {
            settings.nats_url = std::env::var("KANDEV_TEST_NATS_URL").expect(
                "KANDEV_TEST_NATS_URL is not set: run the tests through `cargo xtask test`, which starts nats-server",
            );
            // Tests share one nats-server: each app its own stream.
            settings.nats_stream = format!("test_{}", uuid::Uuid::new_v4().simple());
        }
        (self.settings)(&mut settings);
        let options = BuildOptions {
            clock: self.clock,
            mock_agent_bin: Some(env!("CARGO_BIN_EXE_kandev").into()),
            wall_clock: self.wall,
        };
        let app = Application::build(settings, options).await.map_err(|e| e.to_string())?;
        let base = format!("http://{}", app.address());
        Ok(TestApp {
            app: Some(app),
            base,
            client: bearer_client(&admin_token),
            admin_token,
            dir,
            database_url,
        })
    }
}

pub async fn spawn_app(db: Db) -> TestApp {
    Spawn::new(db).start().await
}

/// A response: status plus parsed JSON (or `null`).
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
}

impl Reply {
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_value(self.body.clone()).unwrap_or_else(|e| panic!("unexpected body {}: {e}", self.body))
    }

    /// Asserts the contract's error shape and returns the code.
    pub fn error_code(&self) -> String {
        let code = self.body["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error body: {}", self.body));
        assert!(
            self.body["error"]["message"].is_string(),
            "error without message: {}",
            self.body
        );
        code.to_string()
    }
}

impl TestApp {
    pub fn services(&self) -> &Arc<kandev_server::app::Services> {
        &self.app.as_ref().expect("running").services
    }

    pub async fn request(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, body }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.request(Method::GET, path, None).await
    }

    pub async fn post<T: Serialize>(&self, path: &str, body: T) -> Reply {
        self.request(Method::POST, path, Some(serde_json::to_value(body).expect("json")))
            .await
    }

    pub async fn patch<T: Serialize>(&self, path: &str, body: T) -> Reply {
        self.request(Method::PATCH, path, Some(serde_json::to_value(body).expect("json")))
            .await
    }

    pub async fn put<T: Serialize>(&self, path: &str, body: T) -> Reply {
        self.request(Method::PUT, path, Some(serde_json::to_value(body).expect("json")))
            .await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.request(Method::DELETE, path, None).await
    }

    pub async fn workspace(&self, name: &str) -> String {
        let r = self.post("/api/v1/workspaces", json!({"name": name})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.body["id"].as_str().expect("id").to_string()
    }

    pub async fn repository(&self, ws: &str, owner: &str, name: &str) -> String {
        let r = self
            .post(
                &format!("/api/v1/workspaces/{ws}/repositories"),
                json!({"owner": owner, "name": name}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.body["id"].as_str().expect("id").to_string()
    }

    pub async fn task(&self, ws: &str, title: &str) -> String {
        let r = self
            .post(&format!("/api/v1/workspaces/{ws}/tasks"), json!({"title": title}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.body["id"].as_str().expect("id").to_string()
    }

    pub async fn automation(&self, ws: &str, body: Value) -> Value {
        let r = self.post(&format!("/api/v1/workspaces/{ws}/automations"), body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.body
    }

    /// The Prometheus text `/metrics` serves.
    pub async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text")
    }

    /// Counts rows of a table straight from the database.
    pub async fn count(&self, table: &str) -> i64 {
        let store = &self.services().store;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) AS n FROM {table}")))
            .fetch_one(store.pool())
            .await
            .expect("count");
        sqlx::Row::try_get::<i64, _>(&row, "n").expect("n")
    }

    /// Stops the server but keeps its files (the SQLite database) for a restart.
    pub async fn stop_keeping_files(mut self) -> tempfile::TempDir {
        if let Some(app) = self.app.take() {
            app.shutdown().await;
        }
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"))
    }

    pub async fn stop(mut self) {
        if let Some(app) = self.app.take() {
            app.shutdown().await;
        }
    }
}

/// Waits for a condition, polling; panics with `what` after the timeout.
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for: {what}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Sends every `(path, body)` PATCH at once and expects each to answer 200:
/// concurrent edits of one resource, as two people (or replicas) would make.
pub async fn patch_all_at_once(app: &Arc<TestApp>, edits: Vec<(String, Value)>) {
    let sent: Vec<_> = edits
        .into_iter()
        .map(|(path, body)| {
            let app = app.clone();
            tokio::spawn(async move { app.patch(&path, body).await })
        })
        .collect();
    for r in sent {
        let r = r.await.expect("join");
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
}

/// Runs a test body once per database.
#[macro_export]
macro_rules! on_both_databases {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::support::Db::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::support::Db::Postgres).await
            }
        }
    };
}

/// A user of the server under test, with an API token and a client sending it.
pub struct Person {
    pub id: String,
    pub username: String,
    pub token: String,
    pub client: reqwest::Client,
}

impl TestApp {
    /// Creates a user (through the admin API) and an API token for it.
    pub async fn person(&self, username: &str, admin: bool) -> Person {
        let r = self
            .post(
                "/api/v1/users",
                json!({"username": username, "password": "password-1234", "admin": admin}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let id = r.body["id"].as_str().expect("id").to_string();
        let created = kandev_server::access::bootstrap::create_token(
            &self.services().store,
            &id,
            "tests",
            self.services().clock.now(),
        )
        .await
        .expect("token");
        Person {
            id,
            username: username.into(),
            client: bearer_client(&created.token),
            token: created.token,
        }
    }

    /// A request as `who` (`None`: no credential at all).
    pub async fn request_as(&self, who: Option<&Person>, method: Method, path: &str, body: Option<Value>) -> Reply {
        let client = match who {
            Some(p) => p.client.clone(),
            None => reqwest::Client::new(),
        };
        let mut req = client.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        // A stream (SSE) never ends: only read bodies that are not one.
        let streaming = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let body = if streaming {
            Value::Null
        } else {
            serde_json::from_str(&resp.text().await.unwrap_or_default()).unwrap_or(Value::Null)
        };
        Reply { status, body }
    }

    /// `person` joins workspace `ws` with `role`, added by the suite's admin.
    pub async fn add_member(&self, ws: &str, person: &Person, role: &str) {
        let r = self
            .request(
                Method::PUT,
                &format!("/api/v1/workspaces/{ws}/members/{}", person.id),
                Some(json!({"role": role})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }

    pub fn route_table(&self) -> Vec<(&'static str, &'static str)> {
        self.app.as_ref().expect("running").route_table().to_vec()
    }
}
