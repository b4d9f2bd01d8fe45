//! `KANDEV_AGENTS_CONFINEMENT`: how far agents must be confined. A kernel
//! without Landlock is played by a seccomp filter on one test thread, which
//! the processes that thread starts inherit: their `landlock_create_ruleset`
//! fails with ENOSYS, as on a kernel built without it.

#![cfg(target_os = "linux")]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use kandev_core::confine::{KEYS_OPEN, NAMESPACES_OPEN, NOT_ENFORCED, REFUSED_NOT, SOCKETS_OPEN};
use reqwest::StatusCode;
use serde_json::json;

use crate::access_agents::{agent_says, landlock_here, tool_results, transcript_of};
use crate::support::{Db, Spawn, spawn_app};

/// `cmd`, run from a thread whose kernel has no Landlock.
fn without_landlock(cmd: Command) -> Output {
    const LANDLOCK_CREATE_RULESET: i64 = 444; // the same on every architecture
    without_call(LANDLOCK_CREATE_RULESET, cmd)
}

/// `cmd`, run from a thread whose kernel lacks the system call `call`.
fn without_call(call: i64, mut cmd: Command) -> Output {
    std::thread::spawn(move || {
        use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
        let arch = TargetArch::try_from(std::env::consts::ARCH).expect("a seccomp architecture");
        let rules = [(call, vec![])].into_iter().collect();
        let enosys = SeccompAction::Errno(38);
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, enosys, arch).expect("filter");
        let program = BpfProgram::try_from(filter).expect("bpf");
        seccompiler::apply_filter(&program).expect("seccomp on this thread");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the command");
        // A server that should have refused to start would serve forever.
        let started = Instant::now();
        while child.try_wait().expect("its status").is_none() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        child.wait_with_output().expect("its output")
    })
    .join()
    .expect("the thread")
}

fn confine(require: bool) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kandev"));
    cmd.args(["confine", "--worktree", "/tmp"]);
    if require {
        cmd.arg("--require");
    }
    cmd.args(["--", "sh", "-c", "echo started"]);
    cmd
}

#[test]
fn without_landlock_a_best_effort_starts_the_agent_and_says_it_runs_unconfined() {
    let out = without_landlock(confine(false));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "started\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("kandev confine: {NOT_ENFORCED}\n")
    );
}

#[test]
fn without_landlock_required_confinement_refuses_to_start_the_agent() {
    let out = without_landlock(confine(true));
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "the agent started");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "kandev confine: this kernel has no Landlock and confinement is required: the agent does not start\n"
    );
    assert!(REFUSED_NOT.ends_with("the agent does not start"));
}

/// A kernel without seccomp filters cannot keep agents from unix sockets:
/// on a best effort they start and it is said (a partial confinement), where
/// confinement is required they do not.
#[test]
fn without_seccomp_an_agent_starts_only_on_a_best_effort_and_it_is_said() {
    let out = without_call(libc::SYS_seccomp, confine(false));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "started\n");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.starts_with(&format!("kandev confine: {SOCKETS_OPEN} (")), "{said}");
    assert!(said.contains(&format!("kandev confine: {KEYS_OPEN} (")), "{said}");
    assert!(said.contains(&format!("kandev confine: {NAMESPACES_OPEN} (")), "{said}");
    assert_eq!(kandev_core::confine::posture(true, &said), "partial");
    let out = without_call(libc::SYS_seccomp, confine(true));
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "the agent started");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.ends_with("and confinement is required: the agent does not start\n"),
        "{said}"
    );
}

#[test]
fn without_landlock_a_server_requiring_confinement_does_not_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_kandev"));
    serve
        .arg("serve")
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KANDEV_LISTEN", "127.0.0.1:0")
        .env("KANDEV_AGENTS_CONFINEMENT", "required")
        .env("NO_COLOR", "1");
    let out = without_landlock(serve);
    assert!(!out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "agents cannot be confined, which KANDEV_AGENTS_CONFINEMENT=required asks: {REFUSED_NOT}"
        )),
        "{said}"
    );
}

/// Where the kernel confines fully, `required` changes nothing an agent may do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_requiring_confinement_confines_its_agents_where_the_kernel_can() {
    if !landlock_here() {
        return;
    }
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| s.agents_confinement = kandev_server::config::AgentsConfinement::Required)
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let db = app.dir.path().join("kandev.db").display().to_string();
    let said = agent_says(&app, &ws, &format!("e2e:read(\"{db}\")\ne2e:write(\"mine.txt\")")).await;
    assert_eq!(said.concat(), format!("read {db}: deniedwrite mine.txt: ok"));
    app.stop().await;
}

/// A profile whose program confine cannot start: the run says so in confine's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_confine_cannot_start_fails_its_run_with_confine_s_reason() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let r = app
        .post(
            "/api/v1/agent-profiles",
            json!({"name": "gone", "command": "/nonexistent/agent", "args": []}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let profile = r.body["id"].as_str().expect("id").to_string();
    let body = json!({"name": "probe", "prompt": "hi", "agent_profile_id": profile});
    let a = app.automation(&ws, body).await["id"].as_str().expect("id").to_string();
    app.post(&format!("/api/v1/automations/{a}/run"), json!({})).await;
    app.wait_for_run_status(&a, "failed").await;
    let runs = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    assert_eq!(
        runs[0]["error_message"],
        "kandev confine: could not start /nonexistent/agent: No such file or directory (os error 2)",
        "{runs}"
    );
    app.stop().await;
}

/// `KANDEV_AGENTS_TCP_PORTS`: a confined agent connects only to the TCP
/// ports listed and to Kandev's own (its MCP tools), not to a loopback
/// service such as PostgreSQL or NATS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_connects_only_to_the_tcp_ports_it_is_given_and_kandev_s_own() {
    if !landlock_here() {
        return;
    }
    let service = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let allowed = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let service = service.local_addr().expect("address").to_string();
    let allowed_port = allowed.local_addr().expect("address").port();
    let allowed = format!("127.0.0.1:{allowed_port}");
    let premise = spawn_app(Db::Sqlite).await;
    let ws = premise.workspace_with_repo("W").await;
    let said = agent_says(&premise, &ws, &format!("e2e:connect(\"{service}\")")).await;
    assert_eq!(said.concat(), format!("connect {service}: ok"), "the premise");
    premise.stop().await;
    let app = Spawn::new(Db::Sqlite)
        .settings(move |s| s.agents_tcp_ports = format!("{allowed_port}"))
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let own = app.task(&ws, "own").await;
    let script = [
        format!("e2e:connect(\"{service}\")"),
        format!("e2e:connect(\"{allowed}\")"),
        format!(r#"e2e:mcp:kandev:get_task({{"task_id":"{own}"}})"#),
    ]
    .join("\n");
    let a = app.automation(&ws, json!({"name": "prober", "prompt": script})).await;
    let id = a["id"].as_str().expect("id").to_string();
    app.post(&format!("/api/v1/automations/{id}/run"), json!({})).await;
    let run = app.wait_for_run_status(&id, "succeeded").await;
    let transcript = transcript_of(&app, &run.task_id).await;
    // Consecutive messages are joined in the transcript.
    let said: String = transcript
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "agent" && m["kind"] == "message")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        said,
        format!("connect {service}: deniedconnect {allowed}: ok"),
        "{transcript}"
    );
    let results = tool_results(&transcript);
    assert!(
        results.len() == 1 && results[0].contains(&own) && !results[0].contains("MCP error"),
        "its MCP tools, on Kandev's own port, still answer: {results:?}"
    );
    app.stop().await;
}

/// `KANDEV_AGENTS_HOME=workspace`: a workspace's agents get a `HOME` and a
/// temporary directory of their own and write no other, so one workspace's
/// agent cannot plant a `~/.gitconfig` (or any dotfile, or a file in `/tmp`)
/// that another workspace's agent then runs or reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_home_per_workspace_an_agent_writes_only_its_own_workspace_s() {
    if !landlock_here() {
        return;
    }
    let probe = format!(".kandev-home-probe-{}", uuid::Uuid::new_v4().simple());
    let shared = std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(&probe);
    let tmp = std::env::temp_dir().join(&probe);
    let premise = spawn_app(Db::Sqlite).await;
    let ws = premise.workspace_with_repo("W").await;
    let said = agent_says(&premise, &ws, &format!("e2e:write(\"{}\")", shared.display())).await;
    let _ = std::fs::remove_file(&shared);
    assert_eq!(said.concat(), format!("write {}: ok", shared.display()), "the premise");
    premise.stop().await;

    let app = Spawn::new(Db::Sqlite)
        .settings(|s| s.agents_home = kandev_server::config::AgentsHome::Workspace)
        .start()
        .await;
    let a = app.workspace_with_repo("A").await;
    let b = app.workspace_with_repo("B").await;
    let own = app.dir.path().join("data").join("agent-homes").join(&a);
    let (home, own_tmp) = (own.join("home"), own.join("tmp"));
    let planted = home.join(".gitconfig");
    let script = [
        "e2e:env(\"HOME\")".to_string(),
        "e2e:env(\"TMPDIR\")".to_string(),
        format!("e2e:write(\"{}\")", shared.display()),
        format!("e2e:write(\"{}\")", tmp.display()),
        format!("e2e:write(\"{}\")", planted.display()),
    ]
    .join("\n");
    let said = agent_says(&app, &a, &script).await.concat();
    let _ = (std::fs::remove_file(&shared), std::fs::remove_file(&tmp));
    assert_eq!(
        said,
        format!(
            "HOME={}TMPDIR={}write {}: deniedwrite {}: deniedwrite {}: ok",
            home.display(),
            own_tmp.display(),
            shared.display(),
            tmp.display(),
            planted.display()
        )
    );
    let said = agent_says(&app, &b, &format!("e2e:read(\"{}\")", planted.display())).await;
    assert_eq!(said.concat(), format!("read {}: denied", planted.display()));
    app.stop().await;
}

/// A server started in a terminal: `script(1)` runs a command in a new
/// terminal session, as a shell does. A confined agent is in a session of
/// its own, with no terminal to push keystrokes into (TIOCSTI).
#[test]
fn a_confined_agent_has_no_terminal_to_type_into() {
    let probe = "if (: </dev/tty) 2>/dev/null; then echo has-a-terminal; else echo no-terminal; fi";
    let in_a_terminal = |cmd: String| {
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .expect("script(1)");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        in_a_terminal(format!("sh -c '{probe}'")),
        "has-a-terminal",
        "the premise"
    );
    // As the server starts it: a child, not the session's leader (`; :` keeps sh from exec'ing it).
    let bin = env!("CARGO_BIN_EXE_kandev");
    let confined = in_a_terminal(format!("sh -c \"{bin} confine --worktree /tmp -- sh -c '{probe}'; :\""));
    assert!(confined.ends_with("no-terminal"), "{confined}");
    assert!(!confined.contains("could not start a session"), "{confined}");
}

async fn metrics_of(app: &crate::support::TestApp) -> String {
    let url = format!("{}/metrics", app.base);
    reqwest::get(url).await.expect("metrics").text().await.expect("text")
}

/// Operators see how far agents are confined, not only in a start-up log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_say_how_far_agents_are_confined() {
    let (is, is_not) = if landlock_here() {
        ("full", "none")
    } else {
        ("none", "full")
    };
    let app = spawn_app(Db::Sqlite).await;
    let said = metrics_of(&app).await;
    assert!(
        said.contains(&format!("kandev_agents_confinement{{state=\"{is}\"}} 1")),
        "{said}"
    );
    assert!(!said.contains(&format!("state=\"{is_not}\"")), "{said}");
    app.stop().await;
    let off = Spawn::new(Db::Sqlite)
        .settings(|s| s.agents_confinement = kandev_server::config::AgentsConfinement::Off)
        .start()
        .await;
    let said = metrics_of(&off).await;
    assert!(said.contains("kandev_agents_confinement{state=\"off\"} 1"), "{said}");
    off.stop().await;
}

/// Secrets the server's OS user can read (`/run/secrets`, an environment
/// file) are the operator's to hide: `KANDEV_AGENTS_HIDDEN`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_the_operator_hides_are_out_of_every_agent_s_reach() {
    if !landlock_here() {
        return;
    }
    let host = tempfile::tempdir().expect("a host directory");
    let secrets = host.path().join("secrets");
    std::fs::create_dir_all(&secrets).expect("secrets");
    let token = secrets.join("github-token");
    std::fs::write(&token, "ghp_secret").expect("a secret");
    let probe = format!("e2e:read(\"{}\")", token.display());
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let said = agent_says(&app, &ws, &probe).await;
    assert_eq!(said.concat(), format!("read {}: ok", token.display()), "the premise");
    app.stop().await;
    let hidden = format!("/nonexistent/kandev:{}", secrets.display());
    let app = Spawn::new(Db::Sqlite)
        .settings(move |s| s.agents_hidden = hidden)
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let said = agent_says(&app, &ws, &probe).await;
    assert_eq!(said.concat(), format!("read {}: denied", token.display()));
    app.stop().await;
}
