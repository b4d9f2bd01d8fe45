//! `kandev confine` keeps what it starts: a process that leaves its group
//! (`setsid`) still ends with the command, with the turn, and with the
//! server, and the agent cannot end its keeper first (an agent's own, in a
//! server, is in `agent_processes`).

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use kandev_server::agent::confine::{Confinement, start};
use kandev_server::agent::fence::LAPSED;
use kandev_server::agent::group::{Launch, ProcessGroup, deadline_in};
use kandev_server::coord::LEASE_TTL;
use kandev_server::testkit::processes::{ends_within, running, written_line};
use kandev_server::testkit::{Api, Replica, shared_env};
use rustix::process::{Pid, Signal, kill_process};
use serde_json::json;
use sqlx::Connection;

const KANDEV: &str = env!("CARGO_BIN_EXE_kandev");
const A_WHILE: Duration = Duration::from_secs(10);

/// How the server confines commands in `dir`.
fn confinement(dir: &Path) -> Confinement {
    Confinement::new(KANDEV.into(), &dir.join("data"), "sqlite://unused.db")
}

/// `sh -c script`, confined and kept as the server starts it, in `dir`.
fn confined_sh(dir: &Path, script: &str) -> (tokio::process::Child, ProcessGroup) {
    kept_sh(&confinement(dir), dir, script)
}

fn kept_sh(confinement: &Confinement, dir: &Path, script: &str) -> (tokio::process::Child, ProcessGroup) {
    let Launch { mut command, kept } = start(Some(confinement), dir, &[], "sh", &["-c", script]);
    let child = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .spawn()
        .expect("kandev confine");
    let group = ProcessGroup::of(&child, kept);
    (child, group)
}

/// Writes the pid of a `sleep` that left the group into `file`.
fn escapes(file: &Path) -> String {
    format!("setsid sleep 300 & echo $! > {}", file.display())
}

#[tokio::test]
async fn a_confined_command_s_process_in_a_session_of_its_own_ends_when_the_command_exits() {
    let dir = tempfile::tempdir().expect("dir");
    let bg = dir.path().join("bg");
    // As git in a checkout runs a planted filter that daemonizes.
    let (mut child, _group) = confined_sh(dir.path(), &escapes(&bg));
    let status = child.wait().await.expect("it exits");
    assert!(status.success(), "{status}");
    let pid = written_line(&bg, A_WHILE).await.expect("a background pid");
    assert!(
        ends_within(&pid, A_WHILE).await,
        "the escaped sleep outlived its command"
    );
}

#[tokio::test]
async fn a_confined_agent_s_process_in_a_session_of_its_own_ends_when_the_server_lets_go() {
    let dir = tempfile::tempdir().expect("dir");
    let bg = dir.path().join("bg");
    let me = dir.path().join("me");
    let script = format!("{}; echo $$ > {}; sleep 300", escapes(&bg), me.display());
    let (mut child, group) = confined_sh(dir.path(), &script);
    let agent = written_line(&me, A_WHILE).await.expect("the agent's pid");
    let pid = written_line(&bg, A_WHILE).await.expect("a background pid");
    assert!(running(&pid) && running(&agent), "the premise: both run");
    // As a turn ends: the keeper is asked, and ends all it keeps.
    let status = group.end(&mut child).await.expect("reaped");
    assert!(!status.success());
    assert!(ends_within(&agent, A_WHILE).await, "the agent outlived its turn");
    assert!(ends_within(&pid, A_WHILE).await, "the escaped sleep outlived its turn");
}

#[tokio::test]
async fn a_confined_agent_can_neither_end_nor_read_its_keeper() {
    if !crate::access_agents::landlock_here() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let said = dir.path().join("said");
    // The keeper is the agent's parent: field 4 of its stat.
    let script = format!(
        "k=$(cut -d' ' -f4 /proc/$$/stat); \
         if kill -9 $k; then r=killed; else r=denied; fi; \
         if cat /proc/$k/environ >/dev/null; then e=read; else e=denied; fi; \
         echo $r $e > {}; {}; sleep 300",
        said.display(),
        escapes(&dir.path().join("bg"))
    );
    let (mut child, group) = confined_sh(dir.path(), &script);
    let said = written_line(&said, A_WHILE).await.expect("what the agent tried");
    assert_eq!(said, "denied denied");
    let pid = written_line(&dir.path().join("bg"), A_WHILE)
        .await
        .expect("a background pid");
    let _ = group.end(&mut child).await;
    assert!(
        ends_within(&pid, A_WHILE).await,
        "the escaped sleep outlived its keeper"
    );
}

#[tokio::test]
async fn a_kept_agent_ends_at_its_deadline_unless_told_a_later_one() {
    let dir = tempfile::tempdir().expect("dir");
    let me = dir.path().join("me");
    let until = deadline_in(Duration::from_millis(1500));
    let fenced = confinement(dir.path()).until(until);
    let (mut child, group) = kept_sh(&fenced, dir.path(), &format!("echo $$ > {}; sleep 300", me.display()));
    let agent = written_line(&me, A_WHILE).await.expect("the agent's pid");
    // As a turn's lease is renewed: told, again and again, 2 s more.
    let fence = group
        .fence(until, Duration::from_millis(200), || Some(Duration::from_secs(2)))
        .expect("a kept agent is fenced");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        running(&agent),
        "the agent ended at its first deadline, told later ones"
    );
    // As a server that stops renewing: no later word.
    drop(fence);
    let status = tokio::time::timeout(A_WHILE, child.wait())
        .await
        .expect("the keeper ends it at its last deadline")
        .expect("reaped");
    assert_eq!(status.code(), Some(124), "{status}");
    assert!(ends_within(&agent, A_WHILE).await, "the agent outlived its keeper");
    drop(group);
}

/// A real `kandev serve` on SQLite in `dir`, its agent mid-turn: the agent
/// (a shell that does not end when its stdin does) appends its pid to
/// `out/agent` and starts a `setsid` sleep whose pid goes to `out/bg`. The
/// server, the agent's pid and the sleep's.
async fn mid_turn_on_a_real_server(dir: &Path, out: &Path) -> (Replica, String, String) {
    let url = format!("sqlite://{}/kandev.db", dir.display());
    let env = shared_env(&url, "http://127.0.0.1:9", None);
    kandev_server::tls::install_crypto_provider();
    let kandev = Replica::start(KANDEV.as_ref(), "solo", dir, &env).await;
    let api = Api::default();
    let ws = api.post(&kandev.base, "/api/v1/workspaces", json!({"name": "W"})).await["id"]
        .as_str()
        .expect("ws")
        .to_string();
    let repo = json!({"owner": "acme", "name": "api"});
    api.post(&kandev.base, &format!("/api/v1/workspaces/{ws}/repositories"), repo)
        .await;
    let (agent, bg) = (out.join("agent"), out.join("bg"));
    let prompt = format!(
        "e2e:spawn(\"cut -d' ' -f4 /proc/$PPID/stat >> {}; echo $$ > {}; exec setsid sleep 300\")\ne2e:delay(300000)",
        agent.display(),
        bg.display()
    );
    // An agent that does not end when its stdin does (the server's end of
    // it goes with the server): only its keeper, watching the server, ends it.
    let stays = format!("{KANDEV} mock-agent; sleep 300");
    let profile = json!({"name": "stays", "command": "sh", "args": ["-c", stays]});
    let profile = api.post(&kandev.base, "/api/v1/agent-profiles", profile).await;
    let body = json!({"name": "slow", "prompt": prompt, "agent_profile_id": profile["id"],
                      "triggers": [{"type": "webhook", "config": {}}]});
    let a = api
        .post(&kandev.base, &format!("/api/v1/workspaces/{ws}/automations"), body)
        .await;
    let a = a["id"].as_str().expect("automation");
    api.post(&kandev.base, &format!("/api/v1/automations/{a}/run"), json!({}))
        .await;
    let Some(agent) = written_line(&agent, Duration::from_secs(60)).await else {
        panic!("the agent said no pid:\n{}", kandev.log_tail())
    };
    let bg = written_line(&bg, A_WHILE).await.expect("a background pid");
    assert!(running(&agent) && running(&bg), "the premise: both run mid-turn");
    (kandev, agent, bg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_mid_turn_ends_with_its_server_killed() {
    let dir = tempfile::tempdir().expect("dir");
    // Where the agent says its pids: not in the server's (hidden) data.
    let out = tempfile::tempdir().expect("out");
    let (mut kandev, agent, bg) = mid_turn_on_a_real_server(dir.path(), out.path()).await;
    // No shutdown: the server is gone, and its keepers see it.
    kandev.kill().await;
    assert!(ends_within(&agent, A_WHILE).await, "the agent outlived its server");
    assert!(ends_within(&bg, A_WHILE).await, "the escaped sleep outlived its server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_server_stops_mid_turn_ends_before_its_lease_could_run_out() {
    let dir = tempfile::tempdir().expect("dir");
    let out = tempfile::tempdir().expect("out");
    let (mut kandev, agent, bg) = mid_turn_on_a_real_server(dir.path(), out.path()).await;
    let server = kandev
        .pid()
        .and_then(|p| Pid::from_raw(p as i32))
        .expect("the server's pid");
    // The premise: while the server renews its lease, the turn goes on past
    // the deadline its keeper started with.
    tokio::time::sleep(LEASE_TTL).await;
    assert!(running(&agent), "the agent ended while its server renewed its lease");
    // Frozen, as a replica whose process or machine stalls: it renews
    // nothing, and cannot stop its agent.
    kill_process(server, Signal::STOP).expect("SIGSTOP");
    let expires = run_lease_expiry(dir.path()).await;
    let by = std::time::Instant::now() + (expires - chrono::Utc::now()).to_std().unwrap_or_default();
    let left = || by.saturating_duration_since(std::time::Instant::now());
    let gone = ends_within(&agent, left()).await && ends_within(&bg, left()).await;
    kill_process(server, Signal::CONT).expect("SIGCONT");
    assert!(gone, "the agent outlived its lease while its server was stopped");
    // Awake, the server leaves the run to whoever holds its lease next:
    // here itself, and the run is resumed by a new agent.
    let agents = out.path().join("agent");
    crate::support::eventually("a resumed agent", Duration::from_secs(40), || async {
        std::fs::read_to_string(&agents).unwrap_or_default().lines().count() >= 2
    })
    .await;
    let log = kandev.log_text();
    assert!(
        log.contains(LAPSED),
        "the keeper did not say why:\n{}",
        kandev.log_tail()
    );
    assert!(log.contains("its lease lapsed and its keeper ended the agent"));
    kandev.kill().await;
}

/// When the run lease of the only run on the SQLite database in `dir` runs out.
async fn run_lease_expiry(dir: &Path) -> chrono::DateTime<chrono::Utc> {
    let url = format!("sqlite://{}/kandev.db", dir.display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.expect("the database");
    let (at,): (String,) = sqlx::query_as("SELECT expires_at FROM leases WHERE name LIKE 'run:%'")
        .fetch_one(&mut db)
        .await
        .expect("the run's lease");
    at.parse().expect("a time")
}
