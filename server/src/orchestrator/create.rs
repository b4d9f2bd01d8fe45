//! Run tasks. `create_with_firing`: the engine's own path, the run written in
//! the firing's transaction. `create_automation_task`: `automation.triggered`'s
//! path — reload (one read), resolve prompt/title/repository, create the hidden
//! run task with its run row and its turn lease in one transaction, then
//! auto-start the agent. An event that already has its run (redelivered, or
//! raced by another replica) changes nothing.

use std::sync::Arc;

use kandev_core::TriggerType;
use kandev_core::api::{
    Automation, LIVE_RUN_UPDATED, META_AGENT_PROFILE_ID, META_AUTOMATION_ID, META_AUTOMATION_NAME,
    META_EXECUTOR_PROFILE_ID, META_TARGET_TASK_ID, META_TRIGGER_ID, META_TRIGGER_TYPE, Origin, Repository, Task,
};
use kandev_core::board::{PrRef, TaskStatus};
use kandev_core::events::AutomationTriggered;
use kandev_core::firing::{
    FAIL_AUTOMATION_NOT_FOUND, FAIL_NO_REPOSITORY, FAIL_NO_RUNTIME, FAIL_TASK_NOT_CREATED, RunRow, resolve_prompt,
    resolve_title, row_dedup_key,
};
use kandev_core::repository_choice::{RepositorySource, run_repository_source};
use kandev_core::run_status::RunStatus;
use serde_json::{Map, Value, json};

use super::{Orchestrator, RunStart};
use crate::coord::lease;
use crate::store::automations::mark_fired_on;
use crate::store::runs::insert_run_on;
use crate::store::tasks::insert_task_on;
use crate::store::{NewRun, NewTask, StoreError, StoreResult};

/// What [`Orchestrator::create_with_firing`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inline {
    /// The run task, its row and the firing's anchors are written.
    Created,
    /// The firing's key already has its run (another replica, or a trigger
    /// earlier in the same event): nothing written.
    AlreadyFired,
    /// Nothing written: the caller hands the firing to the orchestrator
    /// through `automation.triggered`.
    HandOff,
}

/// A run ready to write.
struct Prepared {
    task: NewTask,
    prompt: String,
    repository: Option<Repository>,
}

/// What [`Orchestrator::write_run`] did.
enum Written {
    /// The run task, as stored.
    Run(Box<Task>),
    /// The firing already had its run (redelivered, or raced by a replica).
    AlreadyAnswered,
    /// Nothing was written: the task could not be created.
    TaskFailed(StoreError),
    /// Nothing was written: the run row could not be (the task was rolled back).
    RunRowFailed(StoreError),
}

impl Orchestrator {
    pub(crate) async fn create_automation_task(self: &Arc<Self>, event_id: &str, ev: AutomationTriggered) {
        // One read: the automation and whether this event already has its run.
        let automation = match self.store.automation_for_run(&ev.automation_id, event_id).await {
            Ok((_, Some(run_id))) => return already_answered(event_id, &run_id),
            Ok((a, None)) => a,
            Err(error) => {
                if !matches!(error, StoreError::NotFound) {
                    tracing::warn!(automation_id = %ev.automation_id, %error, "could not load the automation");
                }
                // Deleted since: a redelivered event may still have its run.
                match self.store.run_for_event(event_id).await {
                    Ok(Some(run_id)) => return already_answered(event_id, &run_id),
                    Ok(None) => {}
                    Err(error) => tracing::warn!(event_id, %error, "could not check for this event's run; going on"),
                }
                // Deleted: no workspace to tell.
                self.record_failed_run(&ev, event_id, FAIL_AUTOMATION_NOT_FOUND, None)
                    .await;
                return;
            }
        };
        if !automation.enabled {
            tracing::debug!(automation_id = %automation.id, "automation disabled before its task was created; nothing written");
            return;
        }
        let now = self.clock.now();
        let Some(prepared) = self.prepare(&automation, &ev, now).await else {
            self.record_failed_run(&ev, event_id, FAIL_NO_REPOSITORY, Some(&automation))
                .await;
            return;
        };
        let task = match self.write_run(&ev, event_id, &prepared.task, now, false).await {
            Written::Run(task) => *task,
            Written::AlreadyAnswered => return,
            Written::TaskFailed(error) => {
                tracing::error!(automation_id = %ev.automation_id, %error, "could not create the run task");
                self.record_failed_run(&ev, event_id, FAIL_TASK_NOT_CREATED, Some(&automation))
                    .await;
                return;
            }
            // `deleteAbandonedTask`: the task went with the rolled-back
            // transaction, and with no row the key was never consumed.
            Written::RunRowFailed(error) => {
                tracing::error!(automation_id = %ev.automation_id, %error, "could not record the run; its task was not kept");
                return;
            }
        };
        self.begin(task, &automation, &ev, prepared).await;
    }

    /// The firing path's own run: when admission has passed, the engine
    /// writes the run task, its run row and lease together with the firing's
    /// anchors in one transaction, so a firing costs one commit instead of two
    /// plus a trip through the outbox and the bus. Anything unusual (no
    /// repository, a write refused for another reason than the key) is handed
    /// back for the `automation.triggered` path, which records it as the spec
    /// says; nothing of this attempt is left written.
    pub async fn create_with_firing(
        self: &Arc<Self>,
        automation: &Automation,
        ev: &AutomationTriggered,
        event_id: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Inline {
        let Some(prepared) = self.prepare(automation, ev, now).await else {
            return Inline::HandOff;
        };
        let task = match self.write_run(ev, event_id, &prepared.task, now, true).await {
            Written::Run(task) => *task,
            Written::AlreadyAnswered => return Inline::AlreadyFired,
            Written::TaskFailed(error) | Written::RunRowFailed(error) => {
                tracing::debug!(automation_id = %ev.automation_id, %error, "could not write the run with its firing; handing it to the orchestrator");
                return Inline::HandOff;
            }
        };
        self.begin(task, automation, ev, prepared).await;
        Inline::Created
    }

    /// Prompt, title, repository and the run task to write; `None` when the
    /// run needs a repository and none resolves.
    async fn prepare(
        &self,
        automation: &Automation,
        ev: &AutomationTriggered,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<Prepared> {
        let prompt = resolve_prompt(
            &automation.prompt,
            &automation.name,
            &ev.trigger_type,
            &ev.trigger_data,
            now,
        );
        let title = resolve_title(
            &automation.task_title_template,
            &automation.name,
            &ev.trigger_type,
            &ev.trigger_data,
            now,
        );
        let source = run_repository_source(&ev.trigger_type, automation.no_repository);
        let repository = match source {
            RepositorySource::Nothing => None,
            _ => Some(
                self.resolve_repository(&automation.workspace_id, &automation.repository_ids, ev, source)
                    .await?,
            ),
        };
        let mut metadata = Map::new();
        metadata.insert(META_AUTOMATION_ID.into(), json!(automation.id));
        metadata.insert(META_AUTOMATION_NAME.into(), json!(automation.name));
        metadata.insert(META_TRIGGER_ID.into(), json!(ev.trigger_id));
        metadata.insert(META_TRIGGER_TYPE.into(), json!(ev.trigger_type));
        metadata.insert(META_AGENT_PROFILE_ID.into(), json!(automation.agent_profile_id));
        metadata.insert(META_EXECUTOR_PROFILE_ID.into(), json!(automation.executor_profile_id));
        if ev.trigger_type == TriggerType::GithubPrMerged.as_str() {
            // The validated event target: the only task this run may archive.
            let target = ev
                .trigger_data
                .get("task_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            metadata.insert(META_TARGET_TASK_ID.into(), json!(target));
        }
        let task = NewTask {
            workspace_id: automation.workspace_id.clone(),
            title,
            description: prompt.clone(),
            status: TaskStatus::Running,
            origin: Origin::AutomationRun,
            repository_id: repository.as_ref().map(|r| r.id.clone()),
            base_branch: repository
                .as_ref()
                .map(|r| r.default_branch.clone())
                .unwrap_or_default(),
            metadata: Value::Object(metadata),
        };
        Some(Prepared {
            task,
            prompt,
            repository,
        })
    }

    /// After the run is written: links a `github_pr` firing's PR and queues
    /// the agent's start.
    async fn begin(
        self: &Arc<Self>,
        task: Task,
        automation: &Automation,
        ev: &AutomationTriggered,
        prepared: Prepared,
    ) {
        if ev.trigger_type == TriggerType::GithubPr.as_str() {
            self.associate_pr(&task, &ev.trigger_data).await;
        }
        let Some(runtime) = self.runtime() else {
            self.mark_run_failed_by_task_id(&task.id, FAIL_NO_RUNTIME).await;
            return;
        };
        let start = RunStart {
            task: task.clone(),
            prompt: prepared.prompt,
            agent_profile_id: automation.agent_profile_id.clone(),
            executor_profile_id: automation.executor_profile_id.clone(),
            repository: prepared.repository,
            automation_id: automation.id.clone(),
        };
        // The run is written and its lease held (and renewed): the event is
        // handled. The agent starts after, a bounded number at a time, so a
        // slow worktree never holds the bus; if this replica dies first,
        // recovery resumes the run once its lease lapses.
        let me = self.clone();
        self.tracker.spawn(async move {
            let Ok(_turn) = me.starts.acquire().await else { return };
            // Lost while it waited its turn: the holder resumes the run, and
            // a worktree or session made here would be beside its own.
            if !me.still_holds_run(&task.id, "its agent was not started") {
                return;
            }
            if let Err(error) = runtime.start_run(start).await {
                tracing::warn!(task_id = %task.id, %error, "auto-start failed");
                if me.still_holds_run(&task.id, "its start's failure is not the run's") {
                    me.mark_run_failed_by_task_id(&task.id, &error).await;
                }
            }
        });
    }

    /// The run's repository ("None" never gets here): `github_pr` takes the PR's; every other type uses
    /// the automation's `repository_ids` (skipping unloadable ones), else the
    /// workspace's first repository — never the merged PR's repository.
    async fn resolve_repository(
        &self,
        workspace_id: &str,
        ids: &[String],
        ev: &AutomationTriggered,
        source: RepositorySource,
    ) -> Option<Repository> {
        if source == RepositorySource::PullRequest {
            let full = ev.trigger_data.get("repo").and_then(Value::as_str).unwrap_or_default();
            let (owner, name) = full.split_once('/')?;
            let repos = self.store.list_repositories(workspace_id).await.ok()?;
            let mut repo = repos
                .into_iter()
                .find(|r| r.owner.eq_ignore_ascii_case(owner) && r.name.eq_ignore_ascii_case(name))?;
            if let Some(base) = ev
                .trigger_data
                .get("base_branch")
                .and_then(Value::as_str)
                .filter(|b| !b.is_empty())
            {
                repo.default_branch = base.to_string();
            }
            return Some(repo);
        }
        for id in ids {
            match self.store.get_repository(id).await {
                Ok(r) => return Some(with_default_branch(r)),
                Err(error) => {
                    tracing::warn!(repository_id = %id, %error, "skipping an unloadable repository")
                }
            }
        }
        let first = self
            .store
            .list_repositories(workspace_id)
            .await
            .ok()?
            .into_iter()
            .next()?;
        Some(with_default_branch(first))
    }

    /// The task, its `task_created` row (carrying the event's key: this row
    /// is what consumes it) and the lease of its agent turn, in one
    /// transaction: when the unique key or event id refuses the row (the
    /// firing already has its run), or the row cannot be written, the task is
    /// rolled back with it. `with_anchors` writes the firing's anchors too (the
    /// trigger's last evaluation, the automation's last firing).
    async fn write_run(
        &self,
        ev: &AutomationTriggered,
        event_id: &str,
        new_task: &NewTask,
        now: chrono::DateTime<chrono::Utc>,
        with_anchors: bool,
    ) -> Written {
        let mut tx = match self.store.write_tx().await {
            Ok(tx) => tx,
            Err(e) => return Written::TaskFailed(e),
        };
        let task = match insert_task_on(&mut tx, new_task, now).await {
            Ok(t) => t,
            Err(e) => return Written::TaskFailed(e),
        };
        let row = NewRun {
            automation_id: ev.automation_id.clone(),
            trigger_id: ev.trigger_id.clone(),
            trigger_type: ev.trigger_type.clone(),
            task_id: task.id.clone(),
            status: RunStatus::TaskCreated,
            dedup_key: row_dedup_key(&ev.trigger_type, &ev.dedup_key, RunRow::TaskCreated),
            trigger_data: ev.trigger_data.clone(),
            error_message: String::new(),
            event_id: event_id.to_string(),
        };
        let run_id = match insert_run_on(&mut tx, &row, now).await {
            Ok(id) => id,
            Err(StoreError::Conflict(_)) => {
                tracing::debug!(automation_id = %ev.automation_id, dedup_key = %ev.dedup_key, "this firing already has its run; no second task");
                return Written::AlreadyAnswered;
            }
            Err(e) => return Written::RunRowFailed(e),
        };
        let committed: StoreResult<()> = async {
            if with_anchors {
                mark_fired_on(&mut tx, &ev.trigger_id, &ev.automation_id, now).await?;
            }
            self.leases.hold_in(&mut tx, &lease::run(&task.id)).await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        if let Err(e) = committed {
            return Written::RunRowFailed(e);
        }
        self.metrics.run(RunStatus::TaskCreated.as_str());
        // The run's workspace is the task's: no read needed to announce it.
        self.live.notify(&new_task.workspace_id, LIVE_RUN_UPDATED, &run_id);
        Written::Run(Box::new(task))
    }

    /// A failure before any task existed. For `github_pr_merged` the row
    /// carries no key, so the firing stays retriable. The automation's
    /// workspace, when it still has one, is notified with the row.
    async fn record_failed_run(
        &self,
        ev: &AutomationTriggered,
        event_id: &str,
        error: &str,
        automation: Option<&kandev_core::api::Automation>,
    ) {
        let row = NewRun {
            automation_id: ev.automation_id.clone(),
            trigger_id: ev.trigger_id.clone(),
            trigger_type: ev.trigger_type.clone(),
            task_id: String::new(),
            status: RunStatus::Failed,
            dedup_key: row_dedup_key(&ev.trigger_type, &ev.dedup_key, RunRow::PreTaskFailed),
            trigger_data: ev.trigger_data.clone(),
            error_message: error.to_string(),
            event_id: event_id.to_string(),
        };
        let about = automation.map(|a| (a.workspace_id.as_str(), a.name.as_str()));
        match self.store.insert_pre_task_failure(&row, about, self.clock.now()).await {
            Ok(run_id) => {
                self.metrics.run(RunStatus::Failed.as_str());
                self.notify_run(&ev.automation_id, &run_id).await;
            }
            Err(StoreError::Conflict(_)) => {
                tracing::debug!(automation_id = %ev.automation_id, event_id, "this firing's failure is already recorded")
            }
            Err(e) => {
                tracing::error!(automation_id = %ev.automation_id, error = %e, "could not record a failed run")
            }
        }
    }

    /// Links the PR of a `github_pr` firing to its run task (never for any
    /// other type: that is the merged trigger's loop guard).
    async fn associate_pr(&self, task: &kandev_core::api::Task, data: &Value) {
        let linker = self.linker.read().unwrap_or_else(|p| p.into_inner()).clone();
        let (Some(linker), Some(url)) = (linker, data.get("html_url").and_then(Value::as_str)) else {
            return;
        };
        let Some(pr) = PrRef::parse(url) else { return };
        if let Err(error) = linker.link(task, &pr).await {
            tracing::warn!(task_id = %task.id, %error, "could not link the PR to its run task");
        }
    }

    pub(super) async fn notify_run(&self, automation_id: &str, run_id: &str) {
        if let Ok(a) = self.store.automation_brief(automation_id).await {
            self.live.notify(&a.workspace_id, LIVE_RUN_UPDATED, run_id);
        }
    }
}

fn already_answered(event_id: &str, run_id: &str) {
    tracing::debug!(event_id, run_id, "automation.triggered already answered; nothing to do");
}

fn with_default_branch(mut r: Repository) -> Repository {
    if r.default_branch.is_empty() {
        r.default_branch = "main".into();
    }
    r
}
