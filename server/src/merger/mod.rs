//! The post-approve merger: a native, deterministic worker. For each approved
//! task whose PR is bound, it re-reads the PR before every decision (so a
//! re-run is always safe), waits for required checks, brings a branch that is
//! behind up to date once, merges with the checked head SHA pinned, and ends
//! the task `done` or `blocked` with a reason. Jobs survive restarts.

mod job;
mod merge_call;
mod read;
mod read_back;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kandev_core::api::Task;
use kandev_core::board::{PrRef, TaskStatus};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::board::{BoardService, MergeStarter};
use crate::clock::Clock;
use crate::coord::{Leases, lease};
use crate::error::ServiceResult;
use crate::github::GithubService;
use crate::store::{MergerJob, Store};

#[derive(Debug, Clone)]
pub struct MergerSettings {
    pub poll_interval: Duration,
    pub default_timeout: Duration,
}

pub struct Merger {
    store: Store,
    board: Arc<BoardService>,
    github: Arc<GithubService>,
    clock: Arc<dyn Clock>,
    settings: MergerSettings,
    leases: Arc<Leases>,
    running: Mutex<HashSet<String>>,
    tracker: TaskTracker,
    shutdown: CancellationToken,
}

/// Job states as stored.
pub const JOB_PENDING: &str = "pending";
pub const JOB_RUNNING: &str = "running";

impl Merger {
    pub fn new(
        store: Store,
        board: Arc<BoardService>,
        github: Arc<GithubService>,
        clock: Arc<dyn Clock>,
        settings: MergerSettings,
        leases: Arc<Leases>,
    ) -> Self {
        Merger {
            store,
            board,
            github,
            clock,
            settings,
            leases,
            running: Mutex::new(HashSet::new()),
            tracker: TaskTracker::new(),
            shutdown: CancellationToken::new(),
        }
    }

    /// Resumes every unfinished job nobody drives, from GitHub's state: at
    /// start, and again whenever a replica that drove one stopped (its job
    /// lease expired). A job whose task is no longer running is stale (the
    /// task finished or the approval never landed) and is removed.
    pub async fn resume_all(self: &Arc<Self>) {
        let jobs = match self.store.list_merger_jobs().await {
            Ok(j) => j,
            Err(e) => {
                tracing::error!(error = %e, "could not list merger jobs");
                return;
            }
        };
        for job in jobs {
            match self.store.get_task(&job.task_id).await {
                Ok(t) if t.status == TaskStatus::Running => {
                    self.spawn(job.task_id.clone());
                }
                _ => {
                    let _ = self
                        .store
                        .delete_stale_merger_job(&job.task_id, self.stale_before())
                        .await;
                }
            }
        }
    }

    fn spawn(self: &Arc<Self>, task_id: String) {
        if !self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(task_id.clone())
        {
            return;
        }
        let me = self.clone();
        self.tracker.spawn(async move {
            // One replica drives a job: whoever holds its lease.
            let name = lease::merge(&task_id);
            if me.leases.try_hold(&name).await {
                tracing::info!(task_id = %task_id, "driving a merge");
                me.run(&task_id).await;
                me.leases.release(&name).await;
            }
            me.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&task_id);
        });
    }

    fn stale_before(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now() - chrono::Duration::minutes(1)
    }

    /// Stops every job where it is; the job rows stay for the next start.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }

    /// Waits until every job started so far has ended (tests).
    pub async fn wait_idle(&self) {
        self.tracker.close();
        self.tracker.wait().await;
        self.tracker.reopen();
    }
}

/// `Arc<Merger>` is what approve holds.
pub struct MergerHandle(pub Arc<Merger>);

#[async_trait]
impl MergeStarter for MergerHandle {
    async fn prepare(&self, task: &Task, pr: &PrRef, approved: Option<&str>) -> ServiceResult<()> {
        let m = &self.0;
        let comments: Vec<String> = m
            .store
            .list_comments(&task.id)
            .await?
            .into_iter()
            .rev()
            .map(|c| c.body)
            .collect();
        let repository = m
            .store
            .repository_ci_wait(&task.workspace_id, &pr.owner, &pr.repo)
            .await?;
        let workspace = m
            .store
            .github_settings(&task.workspace_id)
            .await?
            .ci_wait_timeout_minutes;
        let minutes = kandev_core::merger::ci_wait_minutes(
            kandev_core::board::ci_wait_timeout_minutes(&task.description, &comments),
            repository,
            workspace,
            i64::try_from(m.settings.default_timeout.as_secs() / 60).unwrap_or(i64::MAX),
        );
        let job = MergerJob {
            task_id: task.id.clone(),
            owner: pr.owner.clone(),
            repo: pr.repo.clone(),
            pr_number: pr.number,
            state: JOB_PENDING.into(),
            timeout_minutes: minutes as i64,
            pr_node_id: String::new(),
            // The head the person saw, or — when the approval named none —
            // the head of the merger's first read, moments from now.
            memory: approved.map(kandev_core::merger::pin).unwrap_or_default(),
        };
        if !m.store.insert_merger_job(&job, m.clock.now()).await? {
            return Err(crate::error::ServiceError::Conflict(
                crate::board::MERGE_IN_PROGRESS.into(),
            ));
        }
        Ok(())
    }

    async fn abandon(&self, task_id: &str) {
        let _ = self.0.store.delete_merger_job(task_id).await;
    }

    async fn start(&self, task_id: &str) {
        self.0.spawn(task_id.to_string());
    }

    async fn withdraw(&self, task_id: &str) -> ServiceResult<()> {
        let m = &self.0;
        let Some(job) = m.store.get_merger_job(task_id).await? else {
            return Ok(());
        };
        if !job.memory.queued || job.pr_node_id.is_empty() {
            return Ok(());
        }
        match m.github.client().dequeue(&job.pr_node_id).await {
            Ok(()) => Ok(()),
            // Already out of the queue (merged, or ejected): nothing to undo.
            Err(crate::github::GithubError::Graphql(msg)) if msg.to_lowercase().contains("not in the merge queue") => {
                Ok(())
            }
            Err(e) => Err(crate::error::ServiceError::Upstream(format!(
                "could not take the PR out of GitHub's merge queue ({e}); the merge was not cancelled"
            ))),
        }
    }
}
