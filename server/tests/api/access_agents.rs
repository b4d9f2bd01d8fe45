//! Confined agents and audited actions: what an agent process inherits, what
//! its MCP session reaches, who may change agent profiles, which PRs the
//! merger may touch, and who every task event says did it.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::github_support::simulator;
use crate::support::{Db, TestApp, eventually, spawn_app};

pub(crate) fn tool_results(transcript: &Value) -> Vec<String> {
    transcript
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|m| m["kind"] == "tool_result")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

pub(crate) async fn transcript_of(app: &TestApp, run_task: &str) -> Value {
    let sessions = app.get(&format!("/api/v1/tasks/{run_task}/sessions")).await;
    let sid = sessions.body[0]["id"].as_str().expect("a session").to_string();
    app.get(&format!("/api/v1/sessions/{sid}/messages")).await.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_process_starts_with_an_empty_environment_plus_path_home_lang_term_and_its_own() {
    // nextest runs each test in its own process: this environment is the server's alone.
    unsafe {
        std::env::set_var("GITHUB_TOKEN", "ghp_must_not_leak");
        std::env::set_var("KANDEV_GITHUB_WEBHOOK_SECRET", "must-not-leak");
        std::env::set_var("DATABASE_URL", "postgres://must-not-leak");
        std::env::set_var("LANG", "C.UTF-8");
        std::env::set_var("TERM", "xterm");
    }
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    // Beside the server's database the agent may not write: a directory of its own.
    let out = tempfile::tempdir().expect("temp dir");
    let dump = out.path().join("agent-env.txt");
    let r = app
        .post(
            "/api/v1/agent-profiles",
            json!({"name": "dumper", "command": "/bin/sh",
                   "args": ["-c", format!("env > {}", dump.display())],
                   "env": {"AGENT_OWN": "yes"}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["env_keys"], json!(["AGENT_OWN"]));
    assert!(r.body.get("env").is_none(), "values never leave the server");
    let profile = r.body["id"].as_str().unwrap().to_string();
    let a = app
        .automation(
            &ws,
            json!({"name": "dump", "agent_profile_id": profile, "prompt": "hello"}),
        )
        .await;
    let id = a["id"].as_str().unwrap();
    let run = app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    assert_eq!(run.body["triggered"], true, "{}", run.body);
    eventually("the agent to dump its environment", Duration::from_secs(20), || async {
        std::fs::read_to_string(&dump).is_ok_and(|s| s.contains("AGENT_OWN"))
    })
    .await;
    let env = std::fs::read_to_string(&dump).unwrap();
    let keys: Vec<&str> = env.lines().filter_map(|l| l.split_once('=').map(|(k, _)| k)).collect();
    for k in ["PATH", "HOME", "LANG", "TERM", "AGENT_OWN"] {
        if k == "HOME" && std::env::var_os("HOME").is_none() {
            continue;
        }
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert!(!env.contains("must-not-leak") && !env.contains("ghp_"), "{env}");
    for k in &keys {
        assert!(
            !k.starts_with("KANDEV_") && *k != "GITHUB_TOKEN" && *k != "DATABASE_URL",
            "{k} leaked into the agent"
        );
    }
    // sh adds PWD, SHLVL and `_` itself; nothing else may appear.
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "TERM",
        "AGENT_OWN",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
    ];
    assert!(keys.iter().all(|k| allowed.contains(k)), "{keys:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_tool_is_confined_to_the_runs_workspace() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let own = app.task(&ws, "own").await;
    let other_ws = app.workspace_with_repo("Other").await;
    let theirs = app.task(&other_ws, "theirs").await;
    let script = [
        format!(r#"e2e:mcp:kandev:get_task({{"task_id":"{theirs}"}})"#),
        format!(r#"e2e:mcp:kandev:list_tasks({{"workspace_id":"{other_ws}"}})"#),
        format!(r#"e2e:mcp:kandev:add_comment({{"task_id":"{theirs}","body":"hi"}})"#),
        format!(r#"e2e:mcp:kandev:move_task({{"task_id":"{theirs}","status":"done"}})"#),
        format!(r#"e2e:mcp:kandev:archive_task_kandev({{"task_id":"{theirs}"}})"#),
        format!(r#"e2e:mcp:kandev:get_task({{"task_id":"{own}"}})"#),
        r#"e2e:mcp:kandev:list_tasks({})"#.to_string(),
    ]
    .join("\n");
    let a = app.automation(&ws, json!({"name": "prober", "prompt": script})).await;
    let id = a["id"].as_str().unwrap().to_string();
    app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    let run = app.wait_for_run_status(&id, "succeeded").await;
    let results = tool_results(&transcript_of(&app, &run.task_id).await);
    assert_eq!(results.len(), 7, "{results:?}");
    // A tool error reaches the transcript as `{"error": "MCP error: <text>"}`.
    let refused = |i: usize, text: &str| {
        assert!(
            results[i].contains(&format!("MCP error: {text}")),
            "call {i}: {}",
            results[i]
        );
    };
    refused(0, "task not found");
    refused(1, "workspace not found");
    refused(2, "task not found");
    refused(3, "task not found");
    refused(4, "Failed to archive task");
    assert!(
        results[5].contains(&own) && !results[5].contains("MCP error"),
        "{}",
        results[5]
    );
    assert!(
        results[6].contains(&own) && !results[6].contains(&theirs),
        "{}",
        results[6]
    );
    // Nothing in the other workspace changed.
    let t = app.task_json(&theirs).await;
    assert_eq!(t["status"], "todo");
    assert!(t["archived_at"].is_null());
    assert_eq!(
        app.get(&format!("/api/v1/tasks/{theirs}/comments")).await.body,
        json!([])
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_mcp_endpoint_needs_a_bearer_and_acts_within_the_users_roles() {
    use kandev_server::mock_agent::mcp_call::call_as;
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace("W").await;
    let t = app.task(&ws, "T").await;
    let vic = app.person("vic", false).await;
    let fred = app.person("fred", false).await;
    app.add_member(&ws, &vic, "viewer").await;
    let url = format!("{}/mcp", app.base);
    assert!(
        call_as(&url, None, "get_task", json!({"task_id": t})).await.is_err(),
        "no bearer, no MCP"
    );
    let read = call_as(&url, Some(&vic.token), "get_task", json!({"task_id": t})).await;
    assert!(read.unwrap().contains("\"T\""));
    assert_eq!(
        call_as(
            &url,
            Some(&vic.token),
            "add_comment",
            json!({"task_id": t, "body": "x"})
        )
        .await,
        Err("your role may not change this task".into())
    );
    assert_eq!(
        call_as(&url, Some(&fred.token), "get_task", json!({"task_id": t})).await,
        Err("task not found".into())
    );
    assert_eq!(
        call_as(&url, Some(&fred.token), "list_tasks", json!({"workspace_id": ws})).await,
        Err("workspace not found".into())
    );
    // A browser session is no credential for MCP.
    let r = reqwest::Client::new()
        .post(&url)
        .header(reqwest::header::COOKIE, "kandev_session=whatever")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_profiles_are_changed_only_by_admins_and_never_show_env_values() {
    let app = spawn_app(Db::Sqlite).await;
    let alice = app.person("alice", false).await;
    let body = json!({"name": "p", "command": "true", "env": {"API_KEY": "sekrit"}});
    let r = app
        .request_as(Some(&alice), Method::POST, "/api/v1/agent-profiles", Some(body.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app.post("/api/v1/agent-profiles", body).await;
    let id = r.body["id"].as_str().unwrap().to_string();
    let listed = app
        .request_as(Some(&alice), Method::GET, "/api/v1/agent-profiles", None)
        .await;
    assert_eq!(listed.status, StatusCode::OK);
    assert!(!listed.body.to_string().contains("sekrit"));
    assert!(listed.body.to_string().contains("API_KEY"));
    let path = format!("/api/v1/agent-profiles/{id}");
    let r = app
        .request_as(Some(&alice), Method::PATCH, &path, Some(json!({"command": "rm"})))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app.patch(&path, json!({"command": "/usr/bin/true"})).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["command"], "/usr/bin/true");
    assert_eq!(
        app.delete("/api/v1/agent-profiles/mock").await.status,
        StatusCode::CONFLICT
    );
    assert_eq!(app.delete(&path).await.status, StatusCode::NO_CONTENT);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_secrets_are_for_owners_and_rotation_retires_the_old_one() {
    let app = spawn_app(Db::Sqlite).await;
    let olga = app.person("olga", false).await;
    let mia = app.person("mia", false).await;
    let r = app
        .request_as(
            Some(&olga),
            Method::POST,
            "/api/v1/workspaces",
            Some(json!({"name": "W"})),
        )
        .await;
    let ws = r.body["id"].as_str().unwrap().to_string();
    app.add_member(&ws, &mia, "member").await;
    app.repository(&ws, "acme", "api").await;
    let a = app
        .request_as(
            Some(&mia),
            Method::POST,
            &format!("/api/v1/workspaces/{ws}/automations"),
            Some(json!({"name": "hook", "triggers": [{"type": "webhook", "config": {}}]})),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let id = a.body["id"].as_str().unwrap().to_string();
    let old = a.body["webhook_secret"].as_str().unwrap().to_string();
    let secret_path = format!("/api/v1/automations/{id}/webhook-secret");
    let r = app.request_as(Some(&mia), Method::GET, &secret_path, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app.request_as(Some(&olga), Method::GET, &secret_path, None).await;
    assert_eq!(r.body["webhook_secret"], old.as_str());
    let r = app
        .request_as(Some(&olga), Method::POST, &format!("{secret_path}/rotate"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let new = r.body["webhook_secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    let deliver = |secret: String| {
        reqwest::Client::new()
            .post(format!("{}/api/v1/automations/webhook/{id}", app.base))
            .header("x-webhook-secret", secret)
            .json(&json!({"ping": 1}))
            .send()
    };
    assert_eq!(deliver(old).await.unwrap().status(), StatusCode::UNAUTHORIZED);
    assert_eq!(deliver(new).await.unwrap().status(), StatusCode::ACCEPTED);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_a_pr_of_an_unregistered_repository_answers_422_and_moves_nothing() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let r = app
        .post(
            &format!("/api/v1/tasks/{t}/review"),
            json!({"pr_url": "https://github.com/someone-else/their-repo/pull/9"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = app.post(&format!("/api/v1/tasks/{t}/approve"), json!({})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "invalid");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("someone-else/their-repo")
    );
    assert_eq!(app.task_json(&t).await["status"], "human_review");
    assert_eq!(app.count("merger_jobs").await, 0);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_event_records_who_caused_it() {
    let gh = simulator().await;
    let (n, _) = gh.open("Done elsewhere");
    gh.sim.merge_pr("acme", "api", n).unwrap();
    let app = gh
        .app(Db::Sqlite)
        .settings_more(|s| s.merger_poll_interval = Duration::from_millis(20))
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let mia = app.person("mia", false).await;
    app.add_member(&ws, &mia, "member").await;
    let r = app
        .request_as(
            Some(&mia),
            Method::POST,
            &format!("/api/v1/workspaces/{ws}/tasks"),
            Some(json!({"title": "Ship", "status": "running"})),
        )
        .await;
    let t = r.body["id"].as_str().unwrap().to_string();
    let pr_url = format!("https://github.com/acme/api/pull/{n}");
    app.request_as(
        Some(&mia),
        Method::POST,
        &format!("/api/v1/tasks/{t}/review"),
        Some(json!({"pr_url": pr_url})),
    )
    .await;
    let r = app
        .request_as(
            Some(&mia),
            Method::POST,
            &format!("/api/v1/tasks/{t}/approve"),
            Some(json!({})),
        )
        .await;
    assert_eq!(r.body["status"], "merge_triggered", "{}", r.body);
    eventually("the merger to finish", Duration::from_secs(20), || async {
        let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
        events.as_array().unwrap().iter().any(|e| e["kind"] == "completed")
    })
    .await;
    let events = app.get(&format!("/api/v1/tasks/{t}/events")).await.body;
    let mia_actor = json!({"kind": "user", "id": mia.id, "username": "mia"});
    for e in events.as_array().unwrap() {
        let want = match e["kind"].as_str().unwrap() {
            "created" | "review_requested" | "merge_requested" => mia_actor.clone(),
            "completed" | "merged" | "merge_progress" => json!({"kind": "merger"}),
            "status_changed" if e["payload"]["to"] == "done" => json!({"kind": "merger"}),
            _ => mia_actor.clone(),
        };
        assert_eq!(e["actor"], want, "{e}");
    }
    app.stop().await;
}

/// Agents run as the server's OS user: a started server is not dumpable, so
/// they cannot read its environment or memory through `/proc` (the effect
/// itself is `agent::confine`'s unit test).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_server_keeps_its_memory_from_processes_of_its_user() {
    use rustix::process::{DumpableBehavior, dumpable_behavior, set_dumpable_behavior};
    set_dumpable_behavior(DumpableBehavior::Dumpable).expect("a dumpable test process");
    let app = spawn_app(Db::Sqlite).await;
    assert_eq!(dumpable_behavior().expect("prctl"), DumpableBehavior::NotDumpable);
    app.stop().await;
}

/// Makes an automation of `prompt` and runs it by hand; its id.
pub(crate) async fn run_by_hand(app: &TestApp, ws: &str, prompt: &str) -> String {
    let body = json!({"name": "probe", "prompt": prompt, "triggers": [{"type": "webhook", "config": {}}]});
    let a = app.automation(ws, body).await["id"].as_str().expect("id").to_string();
    app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
    a
}

/// Runs an automation by hand and returns what its agent said, in order.
pub(crate) async fn agent_says(app: &TestApp, ws: &str, prompt: &str) -> Vec<String> {
    let a = run_by_hand(app, ws, prompt).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    transcript_of(app, &run.task_id)
        .await
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "agent")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// Whether this kernel confines with Landlock. Where it cannot, `kandev
/// confine` says so (the runtime logs it as a warning) and the agent runs
/// as it is: the tests then check that saying instead of the confinement.
#[cfg(target_os = "linux")]
pub(crate) fn landlock_here() -> bool {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kandev"))
        .args(["confine", "--worktree", "/tmp", "--", "true"])
        .output()
        .expect("kandev confine");
    let said = String::from_utf8_lossy(&out.stderr);
    if said.contains("this kernel has no Landlock: the agent runs unconfined") {
        eprintln!("no Landlock on this kernel: checking the fallback's warning only");
        return false;
    }
    assert!(out.status.success() && said.is_empty(), "{said}");
    true
}

/// Agents run as the server's OS user, so only Landlock (`kandev confine`)
/// keeps one from the database file and from other runs' worktrees, which
/// that user can read and write.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_reaches_neither_the_database_nor_another_run_s_worktree() {
    if !landlock_here() {
        return;
    }
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let db = app.dir.path().join("kandev.db");
    let other = app.dir.path().join("data/worktrees/another-run");
    std::fs::create_dir_all(&other).expect("another run's worktree");
    std::fs::write(other.join("code.rs"), "fn secret() {}").expect("its code");
    let (db, other) = (db.display(), other.join("code.rs").display().to_string());
    let said = agent_says(
        &app,
        &ws,
        &[
            format!("e2e:read(\"{db}\")"),
            format!("e2e:write(\"{db}\")"),
            format!("e2e:read(\"{other}\")"),
            "e2e:write(\"mine.txt\")".into(),
            "e2e:read(\"mine.txt\")".into(),
            "e2e:read(\"/etc/passwd\")".into(),
        ]
        .join("\n"),
    )
    .await;
    assert_eq!(
        said.concat(),
        [
            format!("read {db}: denied"),
            format!("write {db}: denied"),
            format!("read {other}: denied"),
            "write mine.txt: ok".into(),
            "read mine.txt: ok".into(),
            "read /etc/passwd: ok".into(),
        ]
        .concat(),
        "{said:?}"
    );
    app.stop().await;
}

/// `kandev confine` as the runtime starts it: a confined agent can still
/// commit in a worktree of a registered checkout (the checkout's `.git` is
/// granted), and cannot signal the processes outside its sandbox.
#[cfg(target_os = "linux")]
#[test]
fn a_confined_agent_commits_in_its_worktree_and_cannot_signal_the_server() {
    use std::process::Command;
    if !landlock_here() {
        return;
    }
    let root = tempfile::tempdir().expect("temp dir");
    let checkout = root.path().join("checkout");
    let wt = root.path().join("data/worktrees/t1");
    let sh = |dir: &std::path::Path, script: &str| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::create_dir_all(&checkout).expect("checkout");
    sh(
        &checkout,
        &format!(
            "git init -q -b main . && git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m one \
             && git worktree add -q --detach {} main",
            wt.display()
        ),
    );
    let confined = |script: &str| {
        Command::new(env!("CARGO_BIN_EXE_kandev"))
            .args(["confine", "--worktree"])
            .arg(&wt)
            // The whole scratch root: the checkout is reached only through
            // its `.git`, which the runtime names from the registered repository.
            .arg("--hide")
            .arg(root.path())
            .arg("--write")
            .arg(checkout.join(".git"))
            .args(["--", "sh", "-c", script])
            .current_dir(&wt)
            .output()
            .expect("kandev confine")
    };
    let commit = confined("echo x > f && git add f && git -c user.name=a -c user.email=a@example.com commit -qm two");
    assert!(commit.status.success(), "{}", String::from_utf8_lossy(&commit.stderr));
    let peek = confined(&format!("cat {}/.git/HEAD", checkout.display()));
    assert!(peek.status.success(), "its git directories are readable");
    let outside = confined(&format!("ls {}", checkout.display()));
    assert!(outside.status.success(), "a hidden directory can still be listed");
    sh(&checkout, "git log --oneline --all | grep -q two");
    let signal = confined(&format!("kill -0 {}", std::process::id()));
    assert!(
        !signal.status.success(),
        "the agent could signal a process outside its sandbox"
    );
}

/// The server's own git in a registered checkout runs confined as an agent
/// is: the checkout's config and attributes are agents' to write, and a
/// smudge filter planted there runs on the next worktree's checkout.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_filter_an_agent_planted_in_a_checkout_reaches_no_further_than_the_agent() {
    use kandev_server::agent::confine::Confinement;
    use kandev_server::agent::workdir;
    if !landlock_here() {
        return;
    }
    let root = tempfile::tempdir().expect("temp dir");
    let out = tempfile::tempdir().expect("where the filter reports");
    let (checkout, data, db) = (
        root.path().join("checkout"),
        root.path().join("data"),
        root.path().join("kandev.db"),
    );
    std::fs::write(&db, "the database").expect("db");
    std::fs::create_dir_all(&checkout).expect("checkout");
    let stolen = out.path().join("stolen");
    let script = format!(
        "git init -q -b main . && echo '* filter=spy' > .gitattributes && echo hi > a.txt \
         && git add . && git -c user.name=t -c user.email=t@example.com commit -qm one \
         && git config filter.spy.smudge 'cat {} > {} 2>&1; cat'",
        db.display(),
        stolen.display()
    );
    let made = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(&checkout)
        .status();
    assert!(made.is_ok_and(|s| s.success()));
    let repo = kandev_server::testkit::checkout_repository(&checkout);
    let confinement = Confinement::new(
        env!("CARGO_BIN_EXE_kandev").into(),
        &data,
        &format!("sqlite://{}", db.display()),
    );
    let wt = workdir::prepare(&data, "t1", Some(&repo), Some(&confinement))
        .await
        .expect("a worktree");
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).expect("checked out"), "hi\n");
    let got = std::fs::read_to_string(&stolen).expect("the filter ran");
    assert!(
        !got.contains("the database") && got.contains("Permission denied"),
        "{got}"
    );
    workdir::remove(&data, "t1", Some(&repo.local_path), Some(&confinement))
        .await
        .expect("removed");
    assert!(!wt.exists());
    let listed = std::process::Command::new("git")
        .args(["worktree", "list"])
        .current_dir(&checkout)
        .output()
        .expect("git worktree list");
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).lines().count(),
        1,
        "its registration is gone"
    );
}

/// A worktree's `.git` file is the agent's to rewrite: what it names is
/// never granted, or a reply's turn could reach a hidden file's directory.
#[cfg(target_os = "linux")]
#[test]
fn a_git_file_the_agent_rewrote_grants_it_nothing() {
    if !landlock_here() {
        return;
    }
    let root = tempfile::tempdir().expect("temp dir");
    let (wt, secret) = (root.path().join("wt"), root.path().join("secret"));
    std::fs::create_dir_all(&wt).expect("worktree");
    std::fs::create_dir_all(&secret).expect("secret dir");
    std::fs::write(secret.join("kandev.db"), "the database").expect("db");
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", secret.display())).expect(".git");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kandev"))
        .args(["confine", "--worktree"])
        .arg(&wt)
        .arg("--hide")
        .arg(secret.join("kandev.db"))
        .args(["--", "cat"])
        .arg(secret.join("kandev.db"))
        .output()
        .expect("kandev confine");
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
}

/// The runtime grants a run's agent its checkout's `.git` (it commits
/// there), named by the registered repository: here the checkout lies in
/// the hidden data directory, so nothing else could grant it.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_s_agent_may_write_its_checkout_s_git_directory_and_nothing_else_of_it() {
    if !landlock_here() {
        return;
    }
    let app = spawn_app(Db::Sqlite).await;
    let checkout = app.dir.path().join("data/checkouts/api");
    let ws = app.workspace("W").await;
    register_checkout(&app, &ws, "api", &checkout).await;
    let (git_probe, beside) = (checkout.join(".git/probe"), checkout.join("probe"));
    let said = agent_says(
        &app,
        &ws,
        &[
            "e2e:read(\"a.txt\")".to_string(),
            format!("e2e:write(\"{}\")", git_probe.display()),
            format!("e2e:write(\"{}\")", beside.display()),
        ]
        .join("\n"),
    )
    .await;
    assert_eq!(
        said.concat(),
        [
            "read a.txt: ok".to_string(),
            format!("write {}: ok", git_probe.display()),
            format!("write {}: denied", beside.display()),
        ]
        .concat(),
        "{said:?}"
    );
    app.stop().await;
}

/// A git checkout made at `dir` (`a.txt` says "hi") and registered in `ws` as `acme/<name>`.
pub(crate) async fn register_checkout(app: &TestApp, ws: &str, name: &str, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("checkout");
    let made = std::process::Command::new("sh")
        .arg("-c")
        .arg("git init -q -b main . && echo hi > a.txt && git add . && git -c user.name=t -c user.email=t@example.com commit -qm one")
        .current_dir(dir)
        .status();
    assert!(made.is_ok_and(|s| s.success()));
    let r = app
        .post(
            &format!("/api/v1/workspaces/{ws}/repositories"),
            json!({"owner": "acme", "name": name, "default_branch": "main", "local_path": dir.display().to_string()}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}
