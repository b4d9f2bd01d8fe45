//! Every process the server starts for an agent, or in a checkout agents can
//! write, ends with its work, and so does everything it started: a watcher
//! or dev server left running in the background, a planted filter's
//! daemon. Confined, it is started by `kandev confine`, which keeps it
//! (`keeper`) until it exits, the server asks (SIGTERM, through a pidfd, so
//! never another process that took a reaped one's id) or the server dies,
//! and then ends all it started, even what left its process group
//! (`setsid`). Unconfined, it leads a process group of its own, killed when
//! its work ends; a process that calls `setsid` leaves that group.

use std::time::Duration;

/// How long a keeper has to end what it keeps once asked, before its
/// process group is killed instead.
const KEEPER_GRACE: Duration = Duration::from_secs(5);

/// A command the server is about to start, and whether `kandev confine`
/// keeps it.
#[derive(Debug)]
pub struct Launch {
    pub command: tokio::process::Command,
    pub kept: bool,
}

impl Launch {
    /// `cmd`'s process leading a new process group, killed on drop.
    pub fn leading_a_group(mut cmd: tokio::process::Command) -> Self {
        lead_a_group(&mut cmd).kill_on_drop(true);
        Self {
            command: cmd,
            kept: false,
        }
    }

    /// `cmd` being `kandev confine`: it leads a session of its own, and a
    /// kill on drop would end the keeper before it ends what it keeps.
    pub fn kept(mut cmd: tokio::process::Command) -> Self {
        cmd.kill_on_drop(false);
        Self {
            command: cmd,
            kept: true,
        }
    }
}

/// Makes `cmd`'s process the leader of a new process group.
pub fn lead_a_group(cmd: &mut tokio::process::Command) -> &mut tokio::process::Command {
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// What ends a started child and all it started: its keeper, asked, or the
/// process group it leads (SIGKILL). Ended on `kill`, `end` or drop.
#[derive(Debug)]
pub struct ProcessGroup {
    id: Option<u32>,
    keeper: Option<Keeper>,
}

impl ProcessGroup {
    /// The group `child` leads, started from a `Launch` (`kept` as it says).
    /// Call it before `child` is first waited on.
    pub fn of(child: &tokio::process::Child, kept: bool) -> Self {
        Self {
            id: child.id(),
            keeper: kept.then(|| Keeper::of(child)),
        }
    }

    /// Ends every process the child started: a keeper is asked to (it does
    /// so at once, then exits); else the group is killed. Call it before
    /// reaping an unconfined leader, or soon after: once the leader is
    /// reaped and the group empty, its id is free for another process.
    pub fn kill(&mut self) {
        match &self.keeper {
            Some(keeper) => keeper.ask(),
            None => {
                if let Some(id) = self.id.take() {
                    kill_group(id);
                }
            }
        }
    }

    /// Fences a kept child by its turn's lease: its keeper, started with
    /// `until` (`deadline_in`), is told every `every` how long `left` says
    /// the lease vouches for, and ends the agent when that runs out. `None`
    /// for an unconfined child (nothing but the server can end it).
    pub fn fence(
        &self,
        until: Option<u64>,
        every: Duration,
        left: impl Fn() -> Option<Duration> + Send + 'static,
    ) -> Option<TurnFence> {
        #[cfg(target_os = "linux")]
        {
            let pidfd = self.keeper.as_ref()?.pidfd.as_ref()?.try_clone().ok()?;
            let voucher = super::fence::Voucher::new(pidfd, self.id?, until?);
            Some(TurnFence(super::fence::Fence::keep(voucher, every, left)))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (until, every, left);
            None
        }
    }

    /// Ends `child` and all it started, and reaps it: its exit status.
    pub async fn end(mut self, child: &mut tokio::process::Child) -> Option<std::process::ExitStatus> {
        self.kill();
        if self.keeper.is_some() {
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

/// The deadline `left` from now, as a keeper holds its agent to it; `None`
/// where keepers cannot be told one (not Linux).
pub fn deadline_in(left: Duration) -> Option<u64> {
    #[cfg(target_os = "linux")]
    return Some(super::fence::deadline_in(left));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = left;
        None
    }
}

/// A turn's lease fence (`fence`), kept up until dropped.
pub struct TurnFence(#[cfg(target_os = "linux")] super::fence::Fence);

impl TurnFence {
    /// Whether the keeper, which exited with `status`, ended the agent
    /// because the lease was not vouched for in time.
    pub fn ended_it(&self, status: Option<std::process::ExitStatus>) -> bool {
        #[cfg(target_os = "linux")]
        return self.0.ended_it(status);
        #[cfg(not(target_os = "linux"))]
        {
            let _ = status;
            false
        }
    }
}

/// A keeper (`kandev confine`), asked through a pidfd to end what it keeps.
#[derive(Debug)]
struct Keeper {
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl Keeper {
    fn of(_child: &tokio::process::Child) -> Self {
        // Not yet waited on, so not yet reaped: the pidfd is its process's.
        #[cfg(target_os = "linux")]
        let pidfd = _child
            .id()
            .and_then(pid)
            .and_then(|pid| rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok());
        Self {
            #[cfg(target_os = "linux")]
            pidfd,
        }
    }

    /// SIGTERM. A keeper already gone (reaped, even) is not there to hear
    /// it, and no other process can be in its place; one asked again (on
    /// drop after `end`) is already ending.
    fn ask(&self) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.pidfd {
            let _ = rustix::process::pidfd_send_signal(fd, rustix::process::Signal::TERM);
        }
    }
}

/// A child's id as a process id.
#[cfg(target_os = "linux")]
fn pid(id: u32) -> Option<rustix::process::Pid> {
    i32::try_from(id).ok().and_then(rustix::process::Pid::from_raw)
}

#[cfg(target_os = "linux")]
fn kill_group(id: u32) {
    use rustix::process::{Signal, kill_process_group};
    let Some(pid) = pid(id) else {
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
        let mut group = ProcessGroup::of(&child, false);
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
