//! What a confined agent cannot do even when the server runs as root (as in
//! CI): hold a capability, read another process's environment through
//! `/proc` (root's `CAP_SYS_ADMIN` or `CAP_PERFMON` reads past Landlock), or
//! open a disk. Run as an ordinary user, these hold without the fix too:
//! each test says which premise it checks.

#![cfg(target_os = "linux")]

use std::process::Command;
use std::time::Duration;

use crate::access_agents::{agent_says, landlock_here, run_by_hand};
use crate::support::{Db, spawn_app};

fn confined_sh(script: &str, args: &[&str]) -> String {
    let worktree = tempfile::tempdir().expect("a worktree");
    let out = Command::new(env!("CARGO_BIN_EXE_kandev"))
        .arg("confine")
        .arg("--worktree")
        .arg(worktree.path())
        .args(["--", "sh", "-c", script, "sh"])
        .args(args)
        .output()
        .expect("kandev confine");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `Cap*` lines of a `/proc/<pid>/status`, by name.
fn capability_sets(status: &str) -> Vec<(String, u64)> {
    status
        .lines()
        .filter_map(|l| l.strip_prefix("Cap")?.split_once(':'))
        .map(|(set, hex)| (set.to_string(), u64::from_str_radix(hex.trim(), 16).expect("hex")))
        .collect()
}

#[test]
fn a_confined_agent_holds_no_capability_even_as_root() {
    let root = rustix::process::geteuid().is_root();
    let ours = capability_sets(&std::fs::read_to_string("/proc/self/status").expect("our status"));
    if root {
        assert!(
            ours.iter().any(|(_, bits)| *bits != 0),
            "the premise: root holds capabilities {ours:?}"
        );
    }
    let sets = capability_sets(&confined_sh("cat /proc/self/status", &[]));
    let names: Vec<&str> = sets.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["Inh", "Prm", "Eff", "Bnd", "Amb"], "{sets:?}");
    for (set, bits) in &sets {
        // An ordinary user cannot shrink its bounding set, nor gain from it (`no_new_privs`).
        if set != "Bnd" || root {
            assert_eq!(*bits, 0, "Cap{set} of a confined agent: {sets:?}");
        }
    }
    let nnp = confined_sh("grep NoNewPrivs /proc/self/status", &[]);
    assert_eq!(nnp.split_whitespace().collect::<Vec<_>>(), ["NoNewPrivs:", "1"]);
}

/// A block device this process can open (as root, a disk or a loop device).
fn an_openable_disk() -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let mut disks: Vec<String> = std::fs::read_dir("/dev")
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|e| e.path().display().to_string())
        .collect();
    disks.sort();
    disks.into_iter().find(|d| std::fs::File::open(d).is_ok())
}

#[test]
fn a_confined_agent_opens_the_everyday_devices_and_no_disk() {
    if !landlock_here() {
        return;
    }
    let disk = an_openable_disk();
    match &disk {
        Some(d) => eprintln!("the premise: this process opens {d}"),
        None => eprintln!("no disk this process can open: checking the everyday devices only"),
    }
    let shm = format!("/dev/shm/kandev-test-{}", std::process::id());
    let mut paths = vec!["/dev/null", "/dev/zero", "/dev/urandom", "/dev/ptmx"];
    paths.extend(disk.as_deref());
    // Opened, never read: a disk is opened and closed at once.
    let said = confined_sh(
        r#"s=$1; shift
           if (: >"$s") 2>/dev/null; then echo "$s: written"; rm -f "$s"; else echo "$s: refused"; fi
           for d in "$@"; do if (: <"$d") 2>/dev/null; then echo "$d: opened"; else echo "$d: refused"; fi; done"#,
        &[&[shm.as_str()], paths.as_slice()].concat(),
    );
    let mut want = vec![format!("{shm}: written")];
    want.extend(["/dev/null", "/dev/zero", "/dev/urandom", "/dev/ptmx"].map(|d| format!("{d}: opened")));
    want.extend(disk.map(|d| format!("{d}: refused")));
    assert_eq!(said.lines().collect::<Vec<_>>(), want);
}

/// The pid of this process's (the server's) child running the mock agent.
async fn a_running_agent() -> String {
    let ours = std::process::id().to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::time::Instant::now() < deadline {
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let dir = entry.path();
            let (Ok(stat), Ok(cmdline)) = (
                std::fs::read_to_string(dir.join("stat")),
                std::fs::read_to_string(dir.join("cmdline")),
            ) else {
                continue;
            };
            // `pid (comm) state ppid …`: comm may hold spaces, so count from its `)`.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1));
            if ppid == Some(ours.as_str()) && cmdline.contains("mock-agent") {
                return entry.file_name().to_string_lossy().into_owned();
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no agent of the other workspace ever ran");
}

/// The server's environment holds its tokens; another workspace's agent's
/// holds its profile's keys. Neither is readable, even under root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_reads_neither_the_server_s_environment_nor_another_workspace_s_agent_s() {
    if !landlock_here() {
        return;
    }
    let app = spawn_app(Db::Sqlite).await;
    let theirs = app.workspace_with_repo("Theirs").await;
    run_by_hand(&app, &theirs, "e2e:delay(60000)").await;
    let pid = a_running_agent().await;
    let ours = app.workspace_with_repo("Ours").await;
    let server = std::process::id();
    let said = agent_says(
        &app,
        &ours,
        &[
            "e2e:read(\"/proc/self/environ\")".to_string(),
            format!("e2e:read(\"/proc/{server}/environ\")"),
            format!("e2e:read(\"/proc/{pid}/environ\")"),
        ]
        .join("\n"),
    )
    .await;
    assert_eq!(
        said.concat(),
        [
            "read /proc/self/environ: ok".to_string(),
            format!("read /proc/{server}/environ: denied"),
            format!("read /proc/{pid}/environ: denied"),
        ]
        .concat(),
        "{said:?}"
    );
    app.stop().await;
}
