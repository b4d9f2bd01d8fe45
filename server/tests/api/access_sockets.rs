//! Unix sockets: a socket file is a way past every Landlock grant (the
//! user's systemd manager, a container runtime, PostgreSQL's peer
//! authentication), so confined agents open none unless
//! `KANDEV_AGENTS_UNIX_SOCKETS=allow`; abstract ones, which have no file,
//! are Landlock's scope's to refuse.

#![cfg(target_os = "linux")]

use std::os::unix::net::UnixListener;
use std::process::Command;

use kandev_server::config::{AgentsConfinement, Allowance, Settings};

use crate::access_agents::{agent_says, landlock_here};
use crate::support::{Db, Spawn};

/// What an agent of a server with `edit` made to its settings says on
/// connecting to `target`.
async fn connecting(edit: impl FnOnce(&mut Settings) + 'static, target: &str) -> String {
    let app = Spawn::new(Db::Sqlite).settings(edit).start().await;
    let ws = app.workspace_with_repo("W").await;
    let said = agent_says(&app, &ws, &format!("e2e:connect(\"{target}\")")).await;
    app.stop().await;
    said.concat()
}

fn unconfined(s: &mut Settings) {
    s.agents_confinement = AgentsConfinement::Off;
}

fn sockets(allowed: Allowance) -> impl FnOnce(&mut Settings) {
    move |s| s.agents_unix_sockets = allowed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_connects_to_no_unix_socket_file_unless_they_are_allowed() {
    let dir = tempfile::tempdir().expect("a directory beside the agent's");
    let path = dir.path().join("service.sock").display().to_string();
    let _listening = UnixListener::bind(&path).expect("listen");
    let ok = format!("connect {path}: ok");
    let denied = format!("connect {path}: denied");
    assert_eq!(connecting(unconfined, &path).await, ok, "the premise");
    assert_eq!(connecting(|_| {}, &path).await, denied, "denied by default");
    assert_eq!(connecting(sockets(Allowance::Deny), &path).await, denied);
    assert_eq!(connecting(sockets(Allowance::Allow), &path).await, ok);
}

/// What a confined agent still has: a socket pair joins it to its own
/// children (Python's multiprocessing, Node's IPC). `io_uring`, which makes
/// sockets the filter would not see, answers as on a kernel without it.
#[test]
fn a_confined_agent_keeps_socket_pairs_and_finds_no_io_uring() {
    let probe = r#"
import ctypes, socket
a, b = socket.socketpair(); a.send(b"x"); print("socketpair", b.recv(1).decode())
libc = ctypes.CDLL(None, use_errno=True)
print("io_uring_setup", libc.syscall(425, 1, None), ctypes.get_errno())
"#;
    let free = python(probe, false);
    assert!(
        !free.contains("io_uring_setup -1 38"),
        "the premise: this kernel has io_uring ({free})"
    );
    assert_eq!(python(probe, true), "socketpair x\nio_uring_setup -1 38\n");
}

/// What `python3 -c probe` printed, run as it is or through `kandev confine`
/// (in a worktree of its own); it must succeed.
pub(crate) fn python(probe: &str, confined: bool) -> String {
    python_confined(probe, confined.then_some(&[]))
}

/// What `python3 -c probe` printed, run as it is (`None`) or through
/// `kandev confine` with `options`; it must succeed.
pub(crate) fn python_confined(probe: &str, options: Option<&[&str]>) -> String {
    let worktree = tempfile::tempdir().expect("a worktree");
    let mut cmd = if let Some(options) = options {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kandev"));
        c.arg("confine").arg("--worktree").arg(worktree.path());
        c.args(options).args(["--", "python3"]);
        c
    } else {
        Command::new("python3")
    };
    let out = cmd.args(["-c", probe]).output().expect("python3");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Abstract unix sockets have no file to hide: Landlock's scope keeps a
/// confined agent from those of processes outside its sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_cannot_connect_to_an_abstract_socket_of_the_host() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::SocketAddr;
    if !landlock_here() {
        return;
    }
    let name = format!("kandev-test-{}", uuid::Uuid::new_v4().simple());
    let addr = SocketAddr::from_abstract_name(&name).expect("an abstract name");
    let _listening = UnixListener::bind_addr(&addr).expect("listen");
    let target = format!("@{name}");
    assert_eq!(
        connecting(unconfined, &target).await,
        format!("connect {target}: ok"),
        "the premise"
    );
    // Unix sockets allowed, so Landlock's scope is what refuses this one.
    assert_eq!(
        connecting(sockets(Allowance::Allow), &target).await,
        format!("connect {target}: denied")
    );
}
