//! User namespaces: in one, an agent holds every capability again (over
//! that namespace), which opens netfilter, mounts of its own and the rest of
//! the kernel's namespaced surfaces, so confined agents make none unless
//! `KANDEV_AGENTS_USER_NAMESPACES=allow`.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use kandev_server::config::{Allowance, Settings};

use crate::access_agents::{agent_says, landlock_here};
use crate::access_sockets::python_confined;
use crate::support::{Db, Spawn};

/// Tries each way of making a user namespace, then what must keep working
/// (threads and child processes, which glibc starts with `clone3` and falls
/// back to `clone` when it is missing).
const PROBE: &str = r#"
import ctypes, os, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
t = threading.Thread(target=lambda: None); t.start(); t.join(); print("thread ok")
print("spawn", subprocess.run(["true"]).returncode)
r = libc.syscall(435, None, 0); print("clone3", r, ctypes.get_errno() if r else 0)
pid = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)
if pid == 0:
    os._exit(0)
if pid > 0:
    os.waitpid(pid, 0); print("clone ok")
else:
    print("clone", ctypes.get_errno())
r = libc.unshare(0x10000000); print("unshare", r, ctypes.get_errno() if r else 0)
"#;

const MADE: &str = "thread ok\nspawn 0\nclone3 -1 22\nclone ok\nunshare 0 0\n";

#[test]
fn a_confined_agent_makes_no_user_namespace_unless_they_are_allowed() {
    let free = python_confined(PROBE, None);
    if free != MADE {
        eprintln!("this kernel lets no one here make a user namespace ({free}): nothing to keep agents from");
        return;
    }
    // EPERM, as where the kernel disallows them; `clone3` as on a kernel without it.
    assert_eq!(
        python_confined(PROBE, Some(&[])),
        "thread ok\nspawn 0\nclone3 -1 38\nclone 1\nunshare -1 1\n"
    );
    assert_eq!(python_confined(PROBE, Some(&["--allow-user-namespaces"])), MADE);
}

/// What an agent of a server with `edit` made to its settings found after
/// trying `unshare -U` in its worktree.
async fn unsharing(edit: impl FnOnce(&mut Settings) + 'static) -> String {
    let app = Spawn::new(Db::Sqlite).settings(edit).start().await;
    let ws = app.workspace_with_repo("W").await;
    let prompt = "e2e:spawn(\"unshare -U true && touch made\")\ne2e:delay(1500)\ne2e:read(\"made\")";
    let said = agent_says(&app, &ws, prompt).await;
    app.stop().await;
    // One message: "spawned={pid}" and then what the read found.
    let said = said.concat();
    said.find("read").map_or(said.clone(), |at| said[at..].to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_s_agents_make_user_namespaces_only_where_its_setting_allows_them() {
    if python_confined(PROBE, None) != MADE || !landlock_here() {
        return;
    }
    let allow = |s: &mut Settings| s.agents_user_namespaces = Allowance::Allow;
    assert_eq!(unsharing(allow).await, "read made: ok");
    assert_eq!(
        unsharing(|_| {}).await,
        "read made: No such file or directory (os error 2)",
        "denied by default"
    );
}
