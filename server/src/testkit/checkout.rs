//! A registered repository whose local checkout is a directory of the test's.

use std::path::Path;

use kandev_core::api::Repository;

/// `acme/api` on GitHub, checked out at `local` with `main` as its default branch.
pub fn checkout_repository(local: &Path) -> Repository {
    Repository {
        id: "r".into(),
        workspace_id: "w".into(),
        provider: "github".into(),
        owner: "acme".into(),
        name: "api".into(),
        default_branch: "main".into(),
        local_path: local.display().to_string(),
        ci_wait_timeout_minutes: None,
    }
}
