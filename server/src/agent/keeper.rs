//! `kandev confine` does not become its agent: it stays beside it as its
//! keeper, so nothing the agent starts outlives it. A process group is not
//! enough: one `setsid` (a daemon, `setsid`, Python's `start_new_session`)
//! leaves it. The keeper is the agent's child subreaper, so whatever the
//! agent orphans becomes the keeper's child, and it ends them all, child by
//! child, when the agent exits, when the server asks (SIGTERM: the turn
//! ended), when the server dies (it watches the server through a pidfd), or
//! when the turn's lease is no longer vouched for in time (`fence`).
//! The agent runs one Landlock layer below its keeper, so it can neither
//! signal nor trace it (kernels with Landlock's scopes, ABI 6).

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use landlock::{Ruleset, RulesetAttr, Scope};
use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;
use rustix::process::{
    Pid, PidfdFlags, Signal, WaitOptions, WaitStatus, getpid, getppid, kill_process, pidfd_open, set_child_subreaper,
    wait,
};

use super::confine::CONFINE_SAYS;
use super::fence;

/// The status a shell gives a command that SIGKILL ended.
pub const KILLED: i32 = 128 + 9;

/// The signals that ask a keeper to end its agent (the server sends SIGTERM).
const ASKED: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Starts `command` (the agent) and keeps it until it exits, the keeper is
/// asked to end it, `server` (the keeper's parent) ends, or the deadline
/// (`until`, and each later one the server sends) passes; then ends all it
/// left and exits, with the agent's status where it exited. Returns only
/// if the agent could not start: why.
pub fn keep(mut command: Command, server: Option<Pid>, until: Option<u64>) -> String {
    // Blocked before any other thread exists, so all share the mask and
    // only `fence::hear` takes these; the agent starts with none blocked
    // (the standard library clears the mask in a child).
    let asked = block(&[&ASKED[..], &[fence::word()]].concat());
    if let Err(e) = set_child_subreaper(Some(getpid())) {
        eprintln!(
            "{CONFINE_SAYS} could not keep what the agent starts ({e}): a process that leaves its group outlives it"
        );
    }
    // The agent's own layer: it signals and traces its own processes only.
    let mut below = Ruleset::default()
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .and_then(|r| r.create())
        .ok();
    // SAFETY: this process has one thread, so the child may allocate; it
    // only makes a Landlock system call before `exec`.
    unsafe {
        command.pre_exec(move || match below.take() {
            Some(layer) => layer.restrict_self().map(drop).map_err(std::io::Error::other),
            None => Ok(()),
        });
    }
    let agent = match command.spawn() {
        Ok(child) => Pid::from_child(&child),
        Err(e) => return format!("could not start {}: {e}", command.get_program().to_string_lossy()),
    };
    if let Some(asked) = asked {
        beside("the server's word", move || fence::hear(asked, until));
    }
    if let Some(server) = server {
        beside("the server's end", move || {
            outlive(server);
            KILLED
        });
    }
    loop {
        match wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == agent => end(exit_code(status)),
            // An orphan the keeper adopted, reaped so it lingers as no zombie.
            Ok(_) | Err(Errno::INTR) => {}
            // Another thread reaped the agent: it is ending everything.
            Err(_) => end(KILLED),
        }
    }
}

/// Waits for `what` on a thread of its own, then ends everything, exiting
/// with the status the wait returns. A thread that cannot be had (an agent
/// already exhausting the process table) is said, not fatal: the keeper
/// must not die and leave the agent unkept.
fn beside(what: &str, wait: impl FnOnce() -> i32 + Send + 'static) {
    let waiting = std::thread::Builder::new().spawn(move || end(wait()));
    if let Err(e) = waiting {
        eprintln!("{CONFINE_SAYS} cannot wait for {what} ({e}): the agent ends when it exits or its group is killed");
    }
}

/// Blocks `signals` on this thread: the set, or `None` (said) if it could not.
fn block(signals: &[i32]) -> Option<libc::sigset_t> {
    // SAFETY: the set is initialised by `sigemptyset` before any other use.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for s in signals {
            libc::sigaddset(&mut set, *s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            eprintln!("{CONFINE_SAYS} could not wait for the server's word: the agent ends only when it exits");
            return None;
        }
        Some(set)
    }
}

/// Returns once `server` has ended, or at once if it is no longer this
/// process's parent (it ended before it could be watched).
fn outlive(server: Pid) {
    let watched = pidfd_open(server, PidfdFlags::empty());
    if getppid() != Some(server) {
        return;
    }
    match watched {
        Ok(fd) => wait_readable(&fd),
        // A kernel without pidfds (before 5.3): the parent, every second.
        Err(_) => {
            while getppid() == Some(server) {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

/// A pidfd turns readable when its process ends.
fn wait_readable(fd: &OwnedFd) {
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        match poll(&mut fds, None) {
            Err(Errno::INTR) => {}
            _ => return,
        }
    }
}

/// What a shell reports for a command that ended with `status`.
fn exit_code(status: WaitStatus) -> i32 {
    status
        .exit_status()
        .or_else(|| status.terminating_signal().map(|s| 128 + s))
        .unwrap_or(KILLED)
}

/// Held by whichever thread ends everything first; the others wait on it
/// until the process exits.
static ENDING: Mutex<()> = Mutex::new(());

/// Ends every process the keeper still has, then the keeper.
fn end(code: i32) -> ! {
    let _first = ENDING.lock();
    end_descendants();
    std::process::exit(code)
}

/// Kills every child, reaps the dead, and again: each death hands its own
/// children to the keeper, so this goes down the tree until none is left.
/// It never blocks on a child: the main thread may be reaping too.
fn end_descendants() {
    loop {
        let Some(children) = children() else {
            eprintln!("{CONFINE_SAYS} cannot list what the agent left running (no /proc): it is not ended");
            return;
        };
        for pid in children {
            let _ = kill_process(pid, Signal::KILL);
        }
        loop {
            match wait(WaitOptions::NOHANG) {
                Ok(Some(_)) | Err(Errno::INTR) => {}
                // Some still dying.
                Ok(None) => break,
                // None left.
                Err(_) => return,
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// This process's children, from `/proc` (`None` if it cannot be read).
fn children() -> Option<Vec<Pid>> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut found = Vec::new();
    for task in tasks.flatten() {
        match std::fs::read_to_string(task.path().join("children")) {
            Ok(list) => found.extend(list.split_whitespace().filter_map(pid)),
            // A kernel without the list: whose parent we are, from each process.
            Err(_) => return children_by_parent(),
        }
    }
    Some(found)
}

fn children_by_parent() -> Option<Vec<Pid>> {
    let me = getpid().as_raw_nonzero().to_string();
    let all = std::fs::read_dir("/proc").ok()?;
    Some(
        all.flatten()
            .filter(|p| {
                let stat = std::fs::read_to_string(p.path().join("stat")).unwrap_or_default();
                // `pid (comm) state ppid …`, and `comm` may hold anything.
                let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
                after.split_whitespace().nth(1) == Some(me.as_str())
            })
            .filter_map(|p| pid(p.file_name().to_str()?))
            .collect(),
    )
}

fn pid(s: &str) -> Option<Pid> {
    s.parse().ok().and_then(Pid::from_raw)
}
