//! A scenario's working directory (database, server and simulator logs).
//! A passing scenario's is removed: about 4.5 MB each, two per scenario, were
//! left under the temporary directory on every run. A failing one's is kept
//! for the post-mortem, and so is every one while `KANDEV_E2E_KEEP` is set.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set it (to anything) to keep every scenario's directory.
pub const KEEP_VAR: &str = "KANDEV_E2E_KEEP";

pub struct Scratch {
    path: PathBuf,
    keep: AtomicBool,
}

impl Scratch {
    /// An empty directory at `path` (what an earlier run left there is gone),
    /// kept until `release`d: a stack that fails to start leaves its logs.
    pub fn create(path: PathBuf) -> std::io::Result<Scratch> {
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        Ok(Scratch {
            path,
            keep: AtomicBool::new(true),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// From now on the directory goes when this is dropped, unless a panic
    /// is unwinding then or `KANDEV_E2E_KEEP` is set.
    pub fn release(&self) {
        self.keep.store(std::env::var_os(KEEP_VAR).is_some(), Ordering::Relaxed);
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Dropped while a failed scenario unwinds: its files are the evidence.
        if self.keep.load(Ordering::Relaxed) || std::thread::panicking() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_in(root: &tempfile::TempDir) -> Scratch {
        let s = Scratch::create(root.path().join("scenario")).expect("create");
        std::fs::write(s.path().join("server.log"), "log").expect("write");
        s.release();
        s
    }

    #[test]
    fn a_passing_scenarios_directory_is_removed() {
        let root = tempfile::tempdir().expect("tempdir");
        let path = scratch_in(&root).path().to_path_buf();
        assert!(!path.exists(), "{} is left behind", path.display());
    }

    #[test]
    fn a_failing_scenarios_directory_is_kept() {
        let root = tempfile::tempdir().expect("tempdir");
        let path = root.path().join("scenario");
        let unwound = std::panic::catch_unwind(|| {
            let _s = scratch_in(&root);
            panic!("the scenario failed");
        });
        assert!(unwound.is_err());
        assert!(path.join("server.log").exists(), "the failed scenario's log is gone");
    }

    #[test]
    fn a_stack_that_never_started_keeps_its_directory() {
        let root = tempfile::tempdir().expect("tempdir");
        let path = root.path().join("scenario");
        let s = Scratch::create(path.clone()).expect("create");
        std::fs::write(s.path().join("server.log"), "log").expect("write");
        drop(s);
        assert!(path.join("server.log").exists());
    }

    #[test]
    fn what_an_earlier_run_left_is_cleared() {
        let root = tempfile::tempdir().expect("tempdir");
        let first = Scratch::create(root.path().join("scenario")).expect("create");
        std::fs::write(first.path().join("server.log"), "log").expect("write");
        drop(first);
        let again = Scratch::create(root.path().join("scenario")).expect("create");
        assert_eq!(std::fs::read_dir(again.path()).expect("read").count(), 0);
    }
}
