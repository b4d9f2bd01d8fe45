//! A repository renamed or transferred on GitHub: its open links are read
//! again under the old name (GitHub redirects it), and each read moves its
//! link to the name GitHub reports (`store_row`), so the PR's next delivery,
//! under the new name, finds it. The poller's sweep does the same for a
//! rename no delivery announced.

use std::sync::Arc;

use super::GithubService;
use crate::store::StoreResult;
use crate::store::repo_moves::Followed;

/// Says what followed a move, when anything did.
pub(super) fn log_followed(followed: Followed, from: (&str, &str), to: (&str, &str)) {
    if followed != Followed::default() {
        tracing::info!(from = %format!("{}/{}", from.0, from.1), to = %format!("{}/{}", to.0, to.1),
            repositories = followed.repositories, triggers = followed.triggers,
            "registered repositories and automation filters follow the moved repository");
    }
}

impl GithubService {
    /// Renames what names the repository (registered repositories, trigger
    /// filters) to the name GitHub announced, before any link is read again.
    pub(super) async fn follow_names(&self, from: (&str, &str), to: (&str, &str)) -> StoreResult<()> {
        let followed = self.store.follow_repository(from, to).await?;
        log_followed(followed, from, to);
        Ok(())
    }

    /// Reads every open link into `old_owner/old_repo` again, in the
    /// background (a delivery is answered at once; shutdown waits for it).
    pub(super) fn follow_move(self: &Arc<Self>, old_owner: &str, old_repo: &str) {
        let (service, owner, repo) = (Arc::clone(self), old_owner.to_string(), old_repo.to_string());
        self.read_in_background(async move {
            let rows = match service.store.open_task_prs_in(&owner, &repo).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(owner, repo, error = %e, "could not list the links of a moved repository; the poller's sweep moves them");
                    return;
                }
            };
            tracing::info!(owner, repo, links = rows.len(), "GitHub moved this repository; reading its open links again");
            for row in &rows {
                if service.stopping() {
                    return;
                }
                if let Err(e) = service.sync_row(row).await {
                    tracing::warn!(task_id = %row.task_id, error = %e, "could not read a moved repository's link; the poller's sweep retries");
                }
            }
        });
    }
}
