//! Every process the server starts for an agent, or in a checkout agents can
//! write, leads a process group of its own, and the group is killed when the
//! leader's work ends: what an agent or a planted filter started in the
//! background ends with it, instead of running on unseen (and holding our
//! pipes open). A process that calls `setsid` leaves the group; only a
//! cgroup would hold it.

/// Makes `cmd`'s process the leader of a new process group (a confined one
/// makes its own, with `setsid`, in `kandev confine`).
pub fn lead_a_group(cmd: &mut tokio::process::Command) -> &mut tokio::process::Command {
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// The process group a started child leads; killed (SIGKILL) on `kill` or drop.
#[derive(Debug)]
pub struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    /// The group `child` leads (it must have been started through `lead_a_group`).
    pub fn of(child: &tokio::process::Child) -> Self {
        Self(child.id())
    }

    /// Kills every process still in the group. Call it before reaping the
    /// leader, or soon after: once the leader is reaped and the group empty,
    /// its id is free for the system to give another process.
    pub fn kill(&mut self) {
        if let Some(id) = self.0.take() {
            kill_group(id);
        }
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
        let mut group = ProcessGroup::of(&child);
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
