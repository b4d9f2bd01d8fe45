//! `KANDEV_AGENTS_HOME_SHARE`: entries of the server user's home linked
//! into each workspace's own, for agents' logins, and never a way out of it.

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

use crate::access_agents::{agent_says, landlock_here};
use crate::support::{Db, Spawn};

/// Agents keep their logins in the server user's home (`~/.claude`): with a
/// home per workspace, the entries named in `KANDEV_AGENTS_HOME_SHARE` are
/// linked into each and writable, and nothing else of the real home is
/// (not `~/.ssh`, where a planted key would let an agent log in unconfined).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_home_links_the_shared_logins_and_nothing_else_of_the_real_home() {
    if !landlock_here() {
        return;
    }
    let real = tempfile::tempdir().expect("the server user's home");
    for dir in [".login", ".ssh"] {
        std::fs::create_dir_all(real.path().join(dir)).expect("a directory of the home");
    }
    // nextest runs each test in its own process: this HOME is the server's alone.
    unsafe { std::env::set_var("HOME", real.path()) };
    let app = Spawn::new(Db::Sqlite)
        .settings(|s| {
            s.agents_home = kandev_server::config::AgentsHome::Workspace;
            s.agents_home_share = ".login".into();
        })
        .start()
        .await;
    let ws = app.workspace_with_repo("W").await;
    let home = app.dir.path().join("data/agent-homes").join(&ws).join("home");
    let (through_link, keys, direct) = (
        home.join(".login/token"),
        real.path().join(".ssh/authorized_keys"),
        real.path().join(".login/direct"),
    );
    let script = [&through_link, &keys, &direct].map(|p| format!("e2e:write(\"{}\")", p.display()));
    let said = agent_says(&app, &ws, &script.join("\n")).await;
    assert_eq!(
        said.concat(),
        format!(
            "write {}: okwrite {}: deniedwrite {}: ok",
            through_link.display(),
            keys.display(),
            direct.display()
        )
    );
    assert!(real.path().join(".login/token").is_file(), "written in the real home");
    app.stop().await;
}

/// `kandev confine` for an agent of a workspace whose home is `own`, with
/// the server user's home at `real` sharing `share`; what it said on stderr.
fn confined_with_share(real: &Path, own: &Path, share: &str, script: &str) -> String {
    let worktree = tempfile::tempdir().expect("a worktree");
    let out = Command::new(env!("CARGO_BIN_EXE_kandev"))
        .env("HOME", real)
        .arg("confine")
        .arg("--worktree")
        .arg(worktree.path())
        .arg("--home")
        .arg(own.join("home"))
        .arg("--tmp")
        .arg(own.join("tmp"))
        .args(["--share", share, "--", "sh", "-c", script])
        .output()
        .expect("kandev confine");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A shared entry reached through a link (planted while homes were shared)
/// could name anything, `/` included: it is not shared. A link the agents
/// planted in their own home cannot lead the sharing outside it either.
#[test]
fn a_share_reached_through_a_link_is_not_shared_and_leads_nowhere_outside() {
    if !landlock_here() {
        return;
    }
    let (real, own, outside) = (
        tempfile::tempdir().expect("home"),
        tempfile::tempdir().expect("workspace home"),
        tempfile::tempdir().expect("elsewhere"),
    );
    std::os::unix::fs::symlink(outside.path(), real.path().join(".login")).expect("a planted link");
    let said = confined_with_share(real.path(), own.path(), ".login", "echo x > \"$HOME/.login/f\"");
    assert!(
        said.contains(".login leads elsewhere through a link: not shared"),
        "{said}"
    );
    assert!(!outside.path().join("f").exists(), "written through the planted link");

    std::fs::create_dir_all(real.path().join(".cfg/tool")).expect("a login directory");
    std::fs::create_dir_all(own.path().join("home")).expect("the workspace's home");
    std::os::unix::fs::symlink(outside.path(), own.path().join("home/.cfg")).expect("a link the agents planted");
    let said = confined_with_share(real.path(), own.path(), ".cfg/tool", "true");
    assert!(said.contains("could not link") && said.contains("not shared"), "{said}");
    assert!(
        !outside.path().join("tool").exists(),
        "linked outside the workspace's home"
    );
}
