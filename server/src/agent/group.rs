//! Every process the server starts for an agent, or in a checkout agents can
//! write, ends with its work, and so does everything it started: a watcher
//! or dev server left running in the background, a planted filter's
//! daemon. Confined, it is started by `kandev confine`, which keeps it
//! (`keeper`) until it exits or the lifeline the server holds closes, and
//! then ends all it started, even what left its process group (`setsid`).
//! Unconfined, it leads a process group of its own, killed when its work
//! ends; a process that calls `setsid` leaves that group.

use std::os::fd::AsRawFd;
use std::time::Duration;

/// The descriptor a keeper's lifeline has in `kandev confine`.
pub const LIFELINE_FD: i32 = 3;

/// How long a keeper has to end what it keeps, once its lifeline closes,
/// before its process group is killed instead.
const KEEPER_GRACE: Duration = Duration::from_secs(5);

/// The server's end of a keeper's lifeline: while it is open the keeper
/// keeps its agent; closed (dropped, or the server gone) it ends them all.
#[derive(Debug)]
pub struct Lifeline {
    /// Held only to be closed: nothing is written.
    _ours: std::io::PipeWriter,
}

impl Lifeline {
    /// A lifeline handed to `cmd`'s process as `LIFELINE_FD`, and to no
    /// other process (both ends are close-on-exec here).
    pub fn handed_to(cmd: &mut tokio::process::Command) -> std::io::Result<Self> {
        let (theirs, ours) = std::io::pipe()?;
        // SAFETY: between fork and exec this only duplicates a descriptor
        // (or clears close-on-exec on it), which is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let fd = theirs.as_raw_fd();
                let done = if fd == LIFELINE_FD {
                    libc::fcntl(fd, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, LIFELINE_FD)
                };
                if done < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(Self { _ours: ours })
    }
}

/// A command the server is about to start, and the lifeline of its keeper
/// when it has one.
#[derive(Debug)]
pub struct Launch {
    pub command: tokio::process::Command,
    pub lifeline: Option<Lifeline>,
}

impl Launch {
    /// `cmd`'s process leading a new process group, killed on drop.
    pub fn leading_a_group(mut cmd: tokio::process::Command) -> Self {
        lead_a_group(&mut cmd).kill_on_drop(true);
        Self {
            command: cmd,
            lifeline: None,
        }
    }

    /// `cmd` being `kandev confine`: it leads a session of its own, and a
    /// kill on drop would end the keeper before it ends what it keeps.
    pub fn kept(mut cmd: tokio::process::Command, lifeline: Lifeline) -> Self {
        cmd.kill_on_drop(false);
        Self {
            command: cmd,
            lifeline: Some(lifeline),
        }
    }
}

/// Makes `cmd`'s process the leader of a new process group.
pub fn lead_a_group(cmd: &mut tokio::process::Command) -> &mut tokio::process::Command {
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// What ends a started child and all it started: its keeper's lifeline, or
/// the process group it leads (SIGKILL). Ended on `kill`, `end` or drop.
#[derive(Debug)]
pub struct ProcessGroup {
    id: Option<u32>,
    /// Started by a keeper: it ends what it keeps once `lifeline` closes.
    kept: bool,
    lifeline: Option<Lifeline>,
}

impl ProcessGroup {
    /// The group `child` leads, started from a `Launch` with `lifeline`.
    pub fn of(child: &tokio::process::Child, lifeline: Option<Lifeline>) -> Self {
        Self {
            id: child.id(),
            kept: lifeline.is_some(),
            lifeline,
        }
    }

    /// Ends every process the child started: a keeper is told to (it does
    /// so at once, then exits); else the group is killed. Call it before
    /// reaping the leader, or soon after: once the leader is reaped and the
    /// group empty, its id is free for the system to give another process.
    pub fn kill(&mut self) {
        if self.kept {
            self.lifeline = None;
        } else if let Some(id) = self.id.take() {
            kill_group(id);
        }
    }

    /// Ends `child` and all it started, and reaps it: its exit status.
    pub async fn end(mut self, child: &mut tokio::process::Child) -> Option<std::process::ExitStatus> {
        self.kill();
        if self.kept {
            if let Ok(status) = tokio::time::timeout(KEEPER_GRACE, child.wait()).await {
                return status.ok();
            }
            tracing::warn!("an agent's keeper did not end it within {KEEPER_GRACE:?}: killing its process group");
            if let Some(id) = self.id.take() {
                kill_group(id);
            }
        }
        let _ = child.start_kill();
        child.wait().await.ok()
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(target_os = "linux")]
fn kill_group(id: u32) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let Some(pid) = i32::try_from(id).ok().and_then(Pid::from_raw) else {
        return;
    };
    // ESRCH (nothing left in the group) is the common, good case.
    let _ = kill_process_group(pid, Signal::KILL);
}

#[cfg(not(target_os = "linux"))]
fn kill_group(_id: u32) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::Duration;

    use super::{ProcessGroup, lead_a_group};
    use crate::testkit::processes::{ends_within, running, written_line};

    #[tokio::test]
    async fn what_a_leader_started_in_the_background_ends_with_its_group() {
        let dir = tempfile::tempdir().expect("temp dir");
        let pid_file = dir.path().join("pid");
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(format!("sleep 300 & echo $! > {}; wait", pid_file.display()));
        let mut child = lead_a_group(&mut cmd).kill_on_drop(true).spawn().expect("sh");
        let mut group = ProcessGroup::of(&child, None);
        let pid = written_line(&pid_file, Duration::from_secs(10))
            .await
            .expect("a background pid");
        assert!(running(&pid), "the premise: the background sleep runs");
        // As the runtime ends a turn: the group, then the leader.
        group.kill();
        let _ = child.start_kill();
        let _ = child.wait().await;
        assert!(
            ends_within(&pid, Duration::from_secs(10)).await,
            "it outlived its group"
        );
    }
}
