//! Working directories for agent sessions: a git worktree of the run's
//! repository when it has a local checkout, otherwise a scratch directory.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kandev_core::api::Repository;
use tokio::io::AsyncReadExt;

use super::confine::{Confinement, inherited_env, start};
use super::group::{Launch, ProcessGroup};

/// Longest a git command of ours may take: a checkout's filters are the
/// repository's to configure, and one that hangs must not hang every run.
const GIT_LIMIT: Duration = Duration::from_secs(120);

/// Where a task's session works.
pub fn path_for(data_dir: &Path, task_id: &str) -> PathBuf {
    data_dir.join("worktrees").join(task_id)
}

/// Where a git command of ours runs: in `checkout`, writing `worktree` (and
/// the checkout's `.git`), confined as an agent is when `confinement` says so.
struct Git<'a> {
    checkout: &'a Path,
    worktree: &'a Path,
    confinement: Option<&'a Confinement>,
}

impl Git<'_> {
    async fn run(&self, args: &[&str]) -> Result<(), String> {
        self.run_within(args, GIT_LIMIT).await
    }

    /// Runs git in a checkout an earlier run's agent could write to (its
    /// hooks, config and attributes are shared with every worktree): with
    /// none of the server's environment, without the hooks and fsmonitor such
    /// an agent could plant, and confined like it, so a filter it planted
    /// (they run on checkout) reaches no more than the agent did.
    async fn run_within(&self, args: &[&str], limit: Duration) -> Result<(), String> {
        let checkout = self.checkout.to_string_lossy();
        let mut full: Vec<&str> = vec![
            "-C",
            &checkout,
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ];
        full.extend_from_slice(args);
        let dot_git = self.checkout.join(".git");
        let Launch { mut command, kept } = start(self.confinement, self.worktree, &[&dot_git], "git", &full);
        let mut child = command
            .current_dir(self.checkout)
            .env_clear()
            .envs(inherited_env())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("git: {e}"))?;
        let mut group = ProcessGroup::of(&child, kept);
        let stderr = child.stderr.take();
        let said = tokio::spawn(async move {
            let mut text = Vec::new();
            if let Some(mut stderr) = stderr {
                let _ = stderr.read_to_end(&mut text).await;
            }
            text
        });
        let status = tokio::time::timeout(limit, child.wait()).await;
        // What git's filters left running ends with git (and lets go of its stderr).
        group.kill();
        let status = match status {
            Ok(status) => status.map_err(|e| format!("git: {e}"))?,
            Err(_) => return Err(format!("git {} took longer than {limit:?}", args.join(" "))),
        };
        if status.success() {
            said.abort();
            return Ok(());
        }
        // A process that left the group may still hold stderr: say what arrived by then.
        let said = tokio::time::timeout(Duration::from_secs(1), said).await;
        let said = said.ok().and_then(Result::ok).unwrap_or_default();
        Err(String::from_utf8_lossy(&said).trim().to_string())
    }
}

/// The local checkout a repository names, as an absolute path: `None` when
/// it names none (no path, or no `.git` there).
pub fn checkout(local_path: &str) -> Result<Option<PathBuf>, String> {
    if local_path.is_empty() || !Path::new(local_path).join(".git").exists() {
        return Ok(None);
    }
    std::path::absolute(local_path).map(Some).map_err(|e| e.to_string())
}

/// Creates the working directory (absolute path) for a task's session.
pub async fn prepare(
    data_dir: &Path,
    task_id: &str,
    repo: Option<&Repository>,
    confinement: Option<&Confinement>,
) -> Result<PathBuf, String> {
    let dir = path_for(data_dir, task_id);
    let dir = if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir().map_err(|e| e.to_string())?.join(dir)
    };
    if dir.exists() {
        return Ok(dir);
    }
    let checked_out = match repo {
        Some(r) => checkout(&r.local_path)?.map(|local| (r, local)),
        None => None,
    };
    if let Some((repo, local)) = checked_out {
        // Made empty first: a confined git may write only beneath it.
        tokio::fs::create_dir_all(&dir).await.map_err(|e| e.to_string())?;
        let target = dir.display().to_string();
        let git = Git {
            checkout: &local,
            worktree: &dir,
            confinement,
        };
        let branch = if repo.default_branch.is_empty() {
            "HEAD"
        } else {
            &repo.default_branch
        };
        // Names go after `--`, so a branch named like an option stays a name.
        // The branch may only exist on the remote: fall back to the checkout's HEAD.
        if git
            .run(&["worktree", "add", "--detach", "--", &target, branch])
            .await
            .is_err()
        {
            git.run(&["worktree", "add", "--detach", "--", &target, "HEAD"]).await?;
        }
        return Ok(dir);
    }
    tokio::fs::create_dir_all(&dir).await.map_err(|e| e.to_string())?;
    Ok(dir)
}

/// Removes a task's working directory (and its worktree registration).
pub async fn remove(
    data_dir: &Path,
    task_id: &str,
    repo_local_path: Option<&str>,
    confinement: Option<&Confinement>,
) -> Result<(), String> {
    let dir = path_for(data_dir, task_id);
    if !dir.exists() {
        return Ok(());
    }
    let dir = std::path::absolute(&dir).map_err(|e| e.to_string())?;
    if let Some(local) = checkout(repo_local_path.unwrap_or_default())? {
        let git = Git {
            checkout: &local,
            worktree: &dir,
            confinement,
        };
        let _ = git
            .run(&["worktree", "remove", "--force", "--", &dir.display().to_string()])
            .await;
    }
    if dir.exists() {
        tokio::fs::remove_dir_all(&dir).await.map_err(|e| e.to_string())?;
    }
    if dir.exists() {
        Err(format!("{} is still there", dir.display()))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::{Git, prepare};
    use crate::testkit::checkout_repository;

    fn sh(dir: &Path, script: &str) {
        let ok = Command::new("sh").arg("-c").arg(script).current_dir(dir).status();
        assert!(ok.is_ok_and(|s| s.success()), "{script}");
    }

    /// A checkout as an earlier run's agent could leave it: a post-checkout
    /// hook, an fsmonitor command, and a smudge filter, each recording that
    /// it ran (the filter, with what environment).
    fn planted_checkout(root: &Path) -> std::path::PathBuf {
        let repo = root.join("repo");
        std::fs::create_dir_all(&repo).expect("repo dir");
        let spy = root.display();
        sh(
            &repo,
            &format!(
                "git init -q -b main . && echo '* filter=spy' > .gitattributes && echo hi > a.txt \
                 && git add . && git -c user.name=t -c user.email=t@example.com commit -qm one \
                 && printf '#!/bin/sh\\ntouch {spy}/hook-ran\\n' > .git/hooks/post-checkout \
                 && chmod +x .git/hooks/post-checkout \
                 && printf '#!/bin/sh\\ntouch {spy}/fsmonitor-ran\\n' > {spy}/fsmonitor && chmod +x {spy}/fsmonitor \
                 && git config core.fsmonitor {spy}/fsmonitor \
                 && git config filter.spy.smudge 'env > {spy}/filter-env; cat'"
            ),
        );
        repo
    }

    #[tokio::test]
    async fn a_worktree_is_made_without_planted_hooks_and_without_the_server_s_environment() {
        // Set by cargo for the test process, as the server has its own settings.
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some(), "the premise");
        let root = tempfile::tempdir().expect("temp dir");
        let repo = planted_checkout(root.path());
        let dir = prepare(&root.path().join("data"), "t1", Some(&checkout_repository(&repo)), None)
            .await
            .expect("a worktree");
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).expect("checked out"), "hi\n");
        assert!(!root.path().join("hook-ran").exists(), "a planted hook ran");
        assert!(!root.path().join("fsmonitor-ran").exists(), "a planted fsmonitor ran");
        // The repository's own filter still runs (git-lfs is one), with nothing of ours.
        let seen = std::fs::read_to_string(root.path().join("filter-env")).expect("the filter ran");
        assert!(!seen.contains("CARGO_MANIFEST_DIR="), "{seen}");
        assert!(seen.contains("PATH="), "{seen}");
    }

    #[tokio::test]
    async fn a_git_command_that_hangs_is_ended_at_its_limit() {
        let root = tempfile::tempdir().expect("temp dir");
        let repo = planted_checkout(root.path());
        sh(&repo, "git config filter.spy.smudge 'sleep 60'");
        let wt = root.path().join("wt");
        let target = wt.display().to_string();
        let git = Git {
            checkout: &repo,
            worktree: &wt,
            confinement: None,
        };
        let started = Instant::now();
        let r = git
            .run_within(
                &["worktree", "add", "--detach", "--", &target, "main"],
                Duration::from_millis(500),
            )
            .await;
        assert!(r.is_err_and(|e| e.contains("took longer than")));
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    /// git in a checkout whose smudge filter starts `sleep 300` in the
    /// background (its pid written to `pid`) and then runs `then`.
    async fn checkout_with_a_lingering_filter(root: &Path, then: &str, limit: Duration) -> Result<(), String> {
        let repo = planted_checkout(root);
        let pid = root.join("pid");
        let filter = format!("sleep 300 >/dev/null & echo $! > {}; {then}", pid.display());
        sh(&repo, &format!("git config filter.spy.smudge '{filter}'"));
        let wt = root.join("wt");
        let target = wt.display().to_string();
        let git = Git {
            checkout: &repo,
            worktree: &wt,
            confinement: None,
        };
        git.run_within(&["worktree", "add", "--detach", "--", &target, "main"], limit)
            .await
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn what_a_filter_left_running_ends_with_git_and_does_not_hold_it() {
        use crate::testkit::processes::{ends_within, written_line};
        let root = tempfile::tempdir().expect("temp dir");
        let started = Instant::now();
        // The filter's background process keeps git's stderr open: waiting
        // for its end would last the whole limit.
        let r = checkout_with_a_lingering_filter(root.path(), "cat", Duration::from_secs(20)).await;
        assert_eq!(r, Ok(()));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        let pid = written_line(&root.path().join("pid"), Duration::from_secs(1)).await;
        let pid = pid.expect("the filter ran");
        assert!(
            ends_within(&pid, Duration::from_secs(10)).await,
            "the filter's sleep outlived git"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn what_a_hanging_filter_started_ends_with_git_at_its_limit() {
        use crate::testkit::processes::{ends_within, written_line};
        let root = tempfile::tempdir().expect("temp dir");
        let r = checkout_with_a_lingering_filter(root.path(), "sleep 60", Duration::from_millis(500)).await;
        assert!(r.is_err_and(|e| e.contains("took longer than")));
        let pid = written_line(&root.path().join("pid"), Duration::from_secs(1)).await;
        let pid = pid.expect("the filter ran");
        assert!(
            ends_within(&pid, Duration::from_secs(10)).await,
            "the filter's sleep outlived git"
        );
    }
}
