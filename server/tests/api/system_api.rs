use reqwest::StatusCode;

use crate::on_both_databases;
use crate::support::{Db, spawn_app};

async fn health_metrics_openapi_and_the_web_app_are_served(db: Db) {
    let app = spawn_app(db).await;
    let r = app.get("/healthz").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["status"], "ok");

    let doc = app.get("/api/v1/openapi.json").await;
    assert_eq!(doc.status, StatusCode::OK);
    let paths = doc.body["paths"].as_object().expect("paths");
    for p in [
        "/api/v1/automation-trigger-types",
        "/api/v1/workspaces/{ws}/automations",
        "/api/v1/tasks/{id}/approve",
    ] {
        assert!(paths.contains_key(p), "openapi lacks {p}");
    }
    assert!(doc.body["components"]["schemas"]["Automation"].is_object());

    let metrics = app.metrics().await;
    assert!(metrics.contains("kandev_http_requests_total"), "{metrics}");

    // client-side routes get the app; unknown API routes get a JSON 404
    let page = app
        .client
        .get(format!("{}/settings/workspace/x/automations", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("<title>Kandev</title>"));
    // …but a missing file of the app is a 404, not the page.
    let chunk = app
        .client
        .get(format!("{}/app-0123456789abcdef/split___editor.wasm", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(chunk.status(), StatusCode::NOT_FOUND);
    let r = app.get("/api/v1/nothing-here").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code(), "not_found");
    app.stop().await;
}
on_both_databases!(health_metrics_openapi_and_the_web_app_are_served);

/// A small JSON answer goes out plain even to a client that accepts gzip
/// (compressing it costs more than the bytes it saves); a large one is gzipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_answers_go_out_plain_and_large_ones_gzipped() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("Compression").await;
    let raw = |path: String| {
        app.client
            .get(format!("{}{path}", app.base))
            .header(reqwest::header::ACCEPT_ENCODING, "gzip")
            .send()
    };
    let small = raw(format!("/api/v1/workspaces/{ws}")).await.expect("workspace");
    assert_eq!(small.status(), StatusCode::OK);
    assert!(
        small.headers().get("content-encoding").is_none(),
        "{:?}",
        small.headers()
    );
    let body = small.bytes().await.expect("body");
    assert!(
        body.len() < usize::from(kandev_server::http::COMPRESS_FROM_BYTES),
        "{} bytes",
        body.len()
    );
    assert!(serde_json::from_slice::<serde_json::Value>(&body).is_ok(), "plain JSON");

    let large = raw("/api/v1/openapi.json".into()).await.expect("openapi");
    assert_eq!(large.status(), StatusCode::OK);
    assert_eq!(large.headers()["content-encoding"], "gzip");
    app.stop().await;
}

async fn trigger_type_registry_is_served_in_order_with_exact_values(db: Db) {
    let app = spawn_app(db).await;
    let r = app.get("/api/v1/automation-trigger-types").await;
    assert_eq!(r.status, StatusCode::OK);
    let entries = r.body.as_array().expect("array");
    let types: Vec<&str> = entries.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "scheduled",
            "github_pr",
            "github_pr_merged",
            "github_push",
            "github_ci",
            "webhook"
        ]
    );
    let merged = &entries[2];
    assert_eq!(merged["label"], "Pull request merged");
    assert_eq!(
        merged["description"],
        "Triggers when a pull request linked to a task in this workspace is merged. Detected by Kandev's PR poller, so it can lag the merge by up to a minute."
    );
    assert_eq!(merged["category"], "github");
    assert_eq!(merged["enabled"], true);
    assert_eq!(
        merged["default_task_title"],
        "[Auto] PR merged \u{2014} {{data.repo}}#{{data.pr_number}}"
    );
    assert_eq!(
        merged["default_config"],
        serde_json::json!({"all_repos": true, "repos": [], "base_branches": []})
    );
    assert_eq!(
        merged["default_prompt"].as_str().unwrap(),
        kandev_core::registry::GITHUB_PR_MERGED_PROMPT
    );
    assert_eq!(merged["placeholders"].as_array().unwrap().len(), 9);
    assert_eq!(
        merged["placeholders"][0],
        serde_json::json!({"key": "data.task_id", "description": "Id of the task whose pull request merged", "example": "t_01H8XK..."})
    );
    assert_eq!(
        entries[0]["default_config"],
        serde_json::json!({"cron_expression": "0 */6 * * *", "timezone": "UTC"})
    );
    assert_eq!(entries[5]["category"], "webhook");
    app.stop().await;
}
on_both_databases!(trigger_type_registry_is_served_in_order_with_exact_values);

/// The release binary carries the web app: `kandev serve` started in an
/// empty directory, with no `KANDEV_WEB_DIR`, serves it (gzip when asked,
/// 304 on a repeat) and answers the app's own routes with its page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kandev_serve_from_any_directory_serves_the_built_in_app() {
    // No server in this process installs the TLS provider the client expects.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("dir");
    // Port 0 and the announced address: a port picked and released first
    // could be taken by another test's connection before kandev binds it.
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev"))
        .arg("serve")
        .current_dir(dir.path())
        .env_remove("KANDEV_WEB_DIR")
        .env("KANDEV_LISTEN", "127.0.0.1:0")
        .env("KANDEV_DATABASE_URL", format!("sqlite://{}/k.db", dir.path().display()))
        .env("KANDEV_DATA_DIR", dir.path().join("data"))
        .env("KANDEV_ADMIN_TOKEN", "embedded-app-admin-token")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kandev serve");
    let stdout = server.stdout.take().expect("stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let base = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("kandev serve to announce itself")
            .expect("stdout")
            .expect("kandev serve exited before it was ready");
        if let Some(rest) = line.strip_prefix("Kandev is ready. Sign in at ") {
            break rest.split("/login").next().unwrap_or_default().to_string();
        }
    };
    // Keep reading so a full pipe never blocks the server.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let http = crate::support::bearer_client("embedded-app-admin-token");
    crate::support::eventually("kandev serve to answer", std::time::Duration::from_secs(60), || async {
        http.get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    })
    .await;
    let mut index = String::new();
    for path in ["/", "/w/some-workspace/board"] {
        let page = http.get(format!("{base}{path}")).send().await.expect("page");
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
        assert_eq!(
            page.headers()["cache-control"],
            "no-cache",
            "the page must pick up a new build"
        );
        index = page.text().await.expect("body");
        assert!(index.contains("<title>Kandev</title>"), "{index}");
    }
    // The script and wasm sit in a content-hashed folder, so they may be kept a year.
    let wasm_name = index
        .split('"')
        .find(|s| s.starts_with("/app-") && s.ends_with("/kandev_web_bg.wasm"))
        .unwrap_or_else(|| panic!("no hashed wasm in {index}"));
    assert!(index.contains("/kandev_web.js") && index.contains("/style-"), "{index}");
    // A chunk of another build (a page left open across an upgrade) is gone:
    // a 404, not the app's HTML, which the page would try to run as wasm.
    let stale = http
        .get(format!("{base}/app-0123456789abcdef/split___editor.wasm"))
        .send()
        .await
        .expect("stale chunk");
    assert_eq!(stale.status(), StatusCode::NOT_FOUND);
    for (accept, encoding) in [("gzip, deflate, br", "br"), ("gzip", "gzip")] {
        let wasm = http
            .get(format!("{base}{wasm_name}"))
            .header("accept-encoding", accept)
            .send()
            .await
            .expect("wasm");
        assert_eq!(wasm.status(), StatusCode::OK);
        assert_eq!(wasm.headers()["content-type"], "application/wasm");
        assert_eq!(wasm.headers()["content-encoding"], encoding, "the precompressed file");
        assert_eq!(wasm.headers()["cache-control"], "public, max-age=31536000, immutable");
    }
    let wasm = http.get(format!("{base}{wasm_name}")).send().await.expect("wasm");
    let etag = wasm.headers()["etag"].clone();
    let again = http
        .get(format!("{base}{wasm_name}"))
        .header("if-none-match", etag)
        .send()
        .await
        .expect("wasm again");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
}
