//! Working directories for agent sessions: a git worktree of the run's
//! repository when it has a local checkout, otherwise a scratch directory.

use std::path::{Path, PathBuf};

use kandev_core::api::Repository;
use tokio::process::Command;

/// Where a task's session works.
pub fn path_for(data_dir: &Path, task_id: &str) -> PathBuf {
    data_dir.join("worktrees").join(task_id)
}

async fn git(args: &[&str], cwd: &Path) -> Result<(), String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .output()
        .await
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Creates the working directory (absolute path) for a task's session.
pub async fn prepare(data_dir: &Path, task_id: &str, repo: Option<&Repository>) -> Result<PathBuf, String> {
    let dir = path_for(data_dir, task_id);
    let dir = if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir().map_err(|e| e.to_string())?.join(dir)
    };
    if dir.exists() {
        return Ok(dir);
    }
    if let Some(repo) = repo.filter(|r| !r.local_path.is_empty() && Path::new(&r.local_path).join(".git").exists()) {
        let parent = dir.parent().unwrap_or(Path::new("."));
        tokio::fs::create_dir_all(parent).await.map_err(|e| e.to_string())?;
        let target = dir.display().to_string();
        let local = Path::new(&repo.local_path);
        let branch = if repo.default_branch.is_empty() {
            "HEAD"
        } else {
            &repo.default_branch
        };
        // Names go after `--`, so a branch named like an option stays a name.
        // The branch may only exist on the remote: fall back to the checkout's HEAD.
        if git(&["worktree", "add", "--detach", "--", &target, branch], local)
            .await
            .is_err()
        {
            git(&["worktree", "add", "--detach", "--", &target, "HEAD"], local).await?;
        }
        return Ok(dir);
    }
    tokio::fs::create_dir_all(&dir).await.map_err(|e| e.to_string())?;
    Ok(dir)
}

/// Removes a task's working directory (and its worktree registration).
pub async fn remove(data_dir: &Path, task_id: &str, repo_local_path: Option<&str>) -> Result<(), String> {
    let dir = path_for(data_dir, task_id);
    if !dir.exists() {
        return Ok(());
    }
    if let Some(local) = repo_local_path.filter(|p| !p.is_empty() && Path::new(p).join(".git").exists()) {
        let _ = git(
            &["worktree", "remove", "--force", "--", &dir.display().to_string()],
            Path::new(local),
        )
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
