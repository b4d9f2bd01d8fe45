//! Deployments, for a branch whose rules require the head deployed to some
//! environments before it merges.

use kandev_core::github_path::{query_value, repo as repo_path};

use super::client::{GithubClient, GithubResult};
use super::model::{Deployment, DeploymentStatus};

impl GithubClient {
    /// The newest status of the newest deployment of `sha` to `environment`
    /// (GitHub lists both newest first); `None` when there is no deployment
    /// or it has no status yet.
    pub async fn newest_deployment_state(
        &self,
        owner: &str,
        repo: &str,
        sha: &str,
        environment: &str,
    ) -> GithubResult<Option<String>> {
        let base = repo_path(owner, repo)?;
        let deployments: Vec<Deployment> = self
            .get(
                &format!(
                    "{base}/deployments?sha={}&environment={}&per_page=1",
                    query_value(sha),
                    query_value(environment)
                ),
                true,
            )
            .await?;
        let Some(newest) = deployments.first() else {
            return Ok(None);
        };
        let statuses: Vec<DeploymentStatus> = self
            .get(&format!("{base}/deployments/{}/statuses?per_page=1", newest.id), true)
            .await?;
        Ok(statuses.first().map(|s| s.state.clone()))
    }
}
