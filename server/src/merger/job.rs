//! One merge job: read, decide (in core), act, repeat until done or blocked.

use kandev_core::api::{Actor, EVENT_BLOCKED, EVENT_COMPLETED, EVENT_MERGE_PROGRESS, EVENT_MERGED, Task};
use kandev_core::board::{TaskStatus, merger_finish};
use kandev_core::merger::{
    KeepBranch, Policy, Said, Step, bind, branch_home, decide, enqueued, kept_failing, may_delete, retry_delay, settle,
    short, update_requested, waiting,
};
use serde_json::json;
use std::time::Duration;

use super::merge_call::{AfterMerge, Refusals};
use super::{JOB_RUNNING, Merger};
use crate::github::GithubError;
use crate::github::model::PullRequest;
use crate::store::MergerJob;

/// How a job ended.
pub(super) enum End {
    Done(Said),
    Blocked(Said),
    /// Shutting down: the job row stays and resumes on the next start.
    Suspended,
    /// The merge was cancelled (its job row is gone); the task has moved.
    Cancelled,
}

/// What a failed GitHub read means for the job.
enum ReadFailure {
    /// It will not pass by waiting (401, 403, 404, a refusal, an answer
    /// Kandev cannot read): the job ends blocked, naming it.
    Block(Said),
    /// It may pass (5xx, a timeout, a lost connection, a rate limit — for
    /// which GitHub may say how long to wait).
    Retry(String, Option<Duration>),
}

fn classify(e: &GithubError, reading: &Said) -> ReadFailure {
    if let Some(retry) = passing(e) {
        return retry;
    }
    let reading = vec![reading.clone()];
    match e {
        GithubError::Unauthorized => ReadFailure::Block(Said::new("token-refused").list("reading", reading)),
        GithubError::Forbidden(m) => {
            ReadFailure::Block(Said::new("forbidden").list("reading", reading).with("message", m))
        }
        GithubError::NotFound => ReadFailure::Block(Said::new("not-found").list("reading", reading)),
        GithubError::NotConfigured => ReadFailure::Block(Said::new("not-configured")),
        other => ReadFailure::Block(Said::new("unusable").list("reading", reading).with("error", other)),
    }
}

/// A failure that may pass by waiting (5xx, a timeout, a lost connection,
/// a rate limit, for which GitHub says how long), as a retry.
fn passing(e: &GithubError) -> Option<ReadFailure> {
    match e {
        GithubError::RateLimited(until) => {
            let now = chrono::Utc::now().timestamp().max(0) as u64;
            Some(ReadFailure::Retry(
                e.to_string(),
                Some(Duration::from_secs(until.saturating_sub(now).max(1))),
            ))
        }
        GithubError::Server(_) | GithubError::Timeout | GithubError::Transport(_) | GithubError::Incomplete(_) => {
            Some(ReadFailure::Retry(e.to_string(), None))
        }
        _ => None,
    }
}

impl Merger {
    pub(super) async fn run(&self, task_id: &str) {
        let Ok(Some(job)) = self.store.get_merger_job(task_id).await else {
            return;
        };
        let Ok(task) = self.board.get(task_id).await else {
            let _ = self.store.delete_merger_job(task_id).await;
            return;
        };
        if task.status != TaskStatus::Running {
            let _ = self.store.delete_stale_merger_job(task_id, self.stale_before()).await;
            return;
        }
        match self.drive(&task, job).await {
            End::Done(summary) => self.finish(&task, true, &summary).await,
            End::Blocked(reason) => self.finish(&task, false, &reason).await,
            End::Suspended => {}
            End::Cancelled => tracing::info!(task_id, "merge cancelled"),
        }
    }

    /// Whether the job still exists: a cancelled merge has none, and must not
    /// write to GitHub or to the task again.
    async fn still_wanted(&self, task_id: &str) -> bool {
        matches!(self.store.get_merger_job(task_id).await, Ok(Some(_)))
    }

    /// Sleeps before a retry of a failed read; counts how long GitHub has been
    /// failing against the CI wait. `Err` ends the job.
    async fn after_failure(
        &self,
        failure: ReadFailure,
        retries: &mut u32,
        failing_since: &mut Option<chrono::DateTime<chrono::Utc>>,
        policy: &Policy,
    ) -> Result<(), End> {
        let (message, retry_after) = match failure {
            ReadFailure::Block(reason) => return Err(End::Blocked(reason)),
            ReadFailure::Retry(m, after) => (m, after),
        };
        let now = self.clock.now();
        let since = *failing_since.get_or_insert(now);
        let limit = chrono::Duration::minutes(policy.timeout_minutes as i64);
        if now - since >= limit {
            return Err(End::Blocked(kept_failing(policy.timeout_minutes, &message)));
        }
        let delay = retry_delay(
            *retries,
            self.settings.poll_interval.max(Duration::from_secs(1)),
            rand::random(),
            retry_after,
        );
        *retries += 1;
        tracing::warn!(%message, retry_in = ?delay, "a GitHub read failed; retrying");
        tokio::select! {
            _ = self.shutdown.cancelled() => Err(End::Suspended),
            _ = tokio::time::sleep(delay) => Ok(()),
        }
    }

    /// A progress event: the step, its English detail, and the sentence
    /// itself for the web to say in the reader's language.
    pub(super) async fn progress(&self, task: &Task, step: &str, said: Said) {
        let _ = self
            .board
            .record(
                task,
                EVENT_MERGE_PROGRESS,
                json!({"step": step, "detail": said.english(), "said": said}),
                &Actor::Merger,
            )
            .await;
    }

    /// Sleeps one poll interval; `false` when shutting down.
    async fn pause(&self) -> bool {
        tokio::select! {
            _ = self.shutdown.cancelled() => false,
            _ = tokio::time::sleep(self.settings.poll_interval) => true,
        }
    }

    async fn drive(&self, task: &Task, mut job: MergerJob) -> End {
        let policy = Policy {
            // A stored value is untrusted (an older version, a hand edit): pull it into range.
            timeout_minutes: kandev_core::bounds::stored_ci_wait_minutes(job.timeout_minutes) as u64,
        };
        let settings = self.store.github_settings(&task.workspace_id).await.unwrap_or_default();
        let mut last_wait = None;
        job.state = JOB_RUNNING.into();
        let lease_name = crate::coord::lease::merge(&task.id);
        let (mut retries, mut failing_since) = (0u32, None);
        let mut refusals = Refusals::default();
        loop {
            // Shutting down, or another replica took the job over (this one
            // stalled past its lease): stop here, the job row stays.
            if self.shutdown.is_cancelled() || !self.leases.holds(&lease_name) {
                return End::Suspended;
            }
            if !self.still_wanted(&task.id).await {
                return self.cancelled(&job).await;
            }
            // Read the PR first, every time.
            let reading = match self.read(&job, refusals.queue_hint).await {
                Ok(r) => r,
                Err(e) => {
                    let failure = classify(&e.error, &e.what);
                    if let Err(end) = self
                        .after_failure(failure, &mut retries, &mut failing_since, &policy)
                        .await
                    {
                        return end;
                    }
                    continue;
                }
            };
            (retries, failing_since) = (0, None);
            // A PR GitHub shows queued is queued, whoever put it there (an
            // enqueue whose answer was lost, a person).
            if reading.facts.queue_position.is_some() && !job.memory.queued {
                job.memory.queued = true;
                job.pr_node_id = reading.pr.node_id.clone();
            }
            // The approval binds to the head it named (or the first read's);
            // a head with the approved diff (the merger's own update, a
            // rebase) takes its place.
            let mut bound = job.memory.clone();
            if let Some(approved) = &reading.approved_diff {
                bound = settle(&bound, approved.as_deref());
            }
            if let Some(diff) = &reading.diff {
                bound = bind(&bound, &reading.snapshot.head_sha, diff.as_deref());
            }
            if bound != job.memory {
                let unbound = std::mem::replace(&mut job.memory, bound);
                match self.store.update_merger_job(&job, self.clock.now()).await {
                    Ok(true) => {}
                    Ok(false) => return self.cancelled(&job).await,
                    // Not stored, a takeover could bind a later head: forget
                    // it, and bind (and store) again on the next read.
                    Err(e) => {
                        job.memory = unbound;
                        tracing::warn!(task_id = %task.id, error = %e, "could not store the approved head");
                        if !self.pause().await {
                            return End::Suspended;
                        }
                        continue;
                    }
                }
            }
            let state = job.memory.clone();
            let now = self.clock.now();
            let pr = &reading.pr;
            let snap = &reading.snapshot;
            match decide(snap, &reading.verdict, &reading.facts, &state, &policy, now) {
                Step::Complete(summary) => return End::Done(summary),
                Step::Block(reason) => return End::Blocked(reason),
                Step::Wait(pending) => {
                    job.memory = waiting(&state, &snap.head_sha, now);
                    if let Ok(false) = self.store.update_merger_job(&job, now).await {
                        return self.cancelled(&job).await;
                    }
                    let said = Said::new("waiting")
                        .list("pending", pending)
                        .with("sha", short(&snap.head_sha));
                    if last_wait.as_ref() != Some(&said) {
                        self.progress(task, "waiting_for_checks", said.clone()).await;
                        last_wait = Some(said);
                    }
                    if !self.pause().await {
                        return End::Suspended;
                    }
                }
                Step::UpdateBranch { expected_head_sha } => {
                    if !self.still_wanted(&task.id).await {
                        return self.cancelled(&job).await;
                    }
                    self.progress(
                        task,
                        "updating_branch",
                        Said::new("updating-branch")
                            .with("head", &pr.head.branch)
                            .with("base", &pr.base.branch),
                    )
                    .await;
                    match self
                        .github
                        .client()
                        .update_branch(&job.owner, &job.repo, job.pr_number, &expected_head_sha)
                        .await
                    {
                        // 202: GitHub updates the branch later; wait for the new head.
                        Ok(_) => {
                            job.memory = update_requested(&state, &expected_head_sha, self.clock.now());
                            if let Ok(false) = self.store.update_merger_job(&job, self.clock.now()).await {
                                return self.cancelled(&job).await;
                            }
                        }
                        Err(GithubError::Unprocessable(m)) if m.to_lowercase().contains("conflict") => {
                            return End::Blocked(Said::new("conflict"));
                        }
                        // The head moved since the read: start the evaluation over.
                        Err(GithubError::Unprocessable(m)) if m.to_lowercase().contains("expected head sha") => {
                            self.progress(task, "head_moved", Said::new("head-moved")).await;
                            if !self.pause().await {
                                return End::Suspended;
                            }
                        }
                        Err(e) => {
                            let failure = match classify(&e, &Said::new("reading-update")) {
                                ReadFailure::Block(_) => {
                                    ReadFailure::Block(Said::new("update-failed").with("error", &e))
                                }
                                retry => retry,
                            };
                            if let Err(end) = self
                                .after_failure(failure, &mut retries, &mut failing_since, &policy)
                                .await
                            {
                                return end;
                            }
                        }
                    }
                }
                Step::Merge { sha } => {
                    // A cancel that came while checks were read stops here:
                    // nothing is merged behind the person's back.
                    if !self.still_wanted(&task.id).await {
                        return self.cancelled(&job).await;
                    }
                    match self
                        .merge_call(task, &job, &settings, &reading, &sha, &mut refusals)
                        .await
                    {
                        AfterMerge::End(end) => return end,
                        AfterMerge::ReadAgain => {}
                        AfterMerge::Pause => {
                            if !self.pause().await {
                                return End::Suspended;
                            }
                        }
                        AfterMerge::Limited(e) => {
                            if let Some(wait) = passing(&e)
                                && let Err(end) = self
                                    .after_failure(wait, &mut retries, &mut failing_since, &policy)
                                    .await
                            {
                                return end;
                            }
                        }
                    }
                }
                Step::Enqueue { sha } => {
                    if !self.still_wanted(&task.id).await {
                        return self.cancelled(&job).await;
                    }
                    self.progress(task, "enqueuing", Said::new("enqueuing").with("sha", short(&sha)))
                        .await;
                    match self.github.client().enqueue(&pr.node_id, &sha).await {
                        Ok(entry) => {
                            job.memory = enqueued(&state, &sha, self.clock.now());
                            job.pr_node_id = pr.node_id.clone();
                            if let Ok(false) = self.store.update_merger_job(&job, self.clock.now()).await {
                                return self.cancelled(&job).await;
                            }
                            self.progress(
                                task,
                                "queued",
                                Said::new("queued").with("position", entry.position.max(1)),
                            )
                            .await;
                        }
                        Err(GithubError::Graphql(m)) => {
                            return End::Blocked(Said::new("enqueue-refused").with("message", m));
                        }
                        // Unknown whether it was queued: the next read says.
                        Err(e) if e.is_uncertain() => {
                            if !self.pause().await {
                                return End::Suspended;
                            }
                        }
                        // Not processed: wait as GitHub says, then read again.
                        Err(e) if e.is_rate_limit() => {
                            if let Some(wait) = passing(&e)
                                && let Err(end) = self
                                    .after_failure(wait, &mut retries, &mut failing_since, &policy)
                                    .await
                            {
                                return end;
                            }
                        }
                        Err(e) => return End::Blocked(Said::new("enqueue-failed").with("error", e)),
                    }
                }
            }
        }
    }

    /// The merge was cancelled while this job ran: a PR it queued leaves the
    /// queue (the cancel may have looked before the enqueue landed).
    async fn cancelled(&self, job: &MergerJob) -> End {
        if job.memory.queued
            && !job.pr_node_id.is_empty()
            && let Err(e) = self.github.client().dequeue(&job.pr_node_id).await
        {
            tracing::warn!(task_id = %job.task_id, error = %e, "could not take a cancelled merge out of the queue");
        }
        End::Cancelled
    }

    pub(super) async fn merged(
        &self,
        task: &Task,
        pr: &PullRequest,
        settings: &kandev_core::api::GithubWorkspaceSettings,
        method: &str,
        sha: &str,
    ) {
        let _ = self
            .board
            .record(
                task,
                EVENT_MERGED,
                json!({"pr_url": pr.html_url, "sha": sha, "merge_method": method}),
                &Actor::Merger,
            )
            .await;
        // The branch lives in the head's repository — a fork's, perhaps — and
        // stays while open PRs are based on it (deleting it would close them).
        let client = self.github.client();
        let branch = &pr.head.branch;
        let decided = match branch_home(settings.delete_branch, branch, pr.head.repo_full_name()) {
            Err(keep) => Err(keep),
            Ok((owner, repo)) => {
                let based_on: Option<Vec<i64>> = client
                    .open_pulls_based_on(owner, repo, branch)
                    .await
                    .ok()
                    .map(|prs| prs.iter().map(|p| p.number).collect());
                may_delete(based_on.as_deref()).map(|()| (owner, repo))
            }
        };
        match decided {
            Ok((owner, repo)) => {
                if let Err(e) = client.delete_branch(owner, repo, branch).await {
                    tracing::info!(task_id = %task.id, error = %e, "could not delete the merged branch");
                }
            }
            Err(KeepBranch::NotAsked) => {}
            Err(keep) => {
                tracing::info!(task_id = %task.id, branch = %branch, "kept the merged branch: {}", keep.describe());
            }
        }
    }

    /// `running` → `done` or `blocked`, with the summary or reason as an event.
    async fn finish(&self, task: &Task, merged: bool, said: &Said) {
        let to = match merger_finish(TaskStatus::Running, merged) {
            Ok(s) => s,
            Err(_) => return,
        };
        if let Err(e) = self
            .board
            .move_status_for_merge(task, TaskStatus::Running, to, json!({}), &Actor::Merger)
            .await
        {
            tracing::warn!(task_id = %task.id, error = %e, "the merged task had already moved");
        }
        let text = said.english();
        let (kind, payload) = if merged {
            (EVENT_COMPLETED, json!({"summary": text, "said": said}))
        } else {
            (EVENT_BLOCKED, json!({"reason": text, "said": said}))
        };
        let _ = self.board.record(task, kind, payload, &Actor::Merger).await;
        let _ = self.store.delete_merger_job(&task.id).await;
        tracing::info!(task_id = %task.id, outcome = kind, detail = %text, "merge job finished");
    }
}
