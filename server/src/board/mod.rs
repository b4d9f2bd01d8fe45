//! The task board service: tasks, their moves (by core's board rules),
//! comments, events and archiving. Review hand-off, approve and reject live in
//! `review`, because approving can start the merger.

mod cache;
mod review;

pub use cache::Body;
pub use review::{MergeStarter, PrLinker};

use std::sync::{Arc, RwLock};

use kandev_core::api::{
    Actor, ArchiveResult, Comment, CreateTask, LIVE_TASK_UPDATED, Origin, PatchTask, Task, TaskEvent,
};
use kandev_core::api::{EVENT_ARCHIVED, EVENT_CREATED, EVENT_STATUS_CHANGED, EVENT_UNARCHIVED};
use kandev_core::board::{TaskStatus, check_move};
use kandev_core::bounds;
use serde_json::{Value, json};

use crate::clock::Clock;
use crate::error::{ServiceError, ServiceResult};
use crate::live::LiveHub;
use crate::metrics::Metrics;
use crate::store::{NewTask, Store};

/// Why a move is refused while the merger holds the task.
pub const MERGE_IN_PROGRESS: &str =
    "the merger is merging this task's pull request: cancel the merge first (POST /tasks/{id}/cancel-merge)";

fn invalid(e: bounds::OutOfBounds) -> ServiceError {
    ServiceError::Invalid(e.0)
}

/// Told when a task is archived or deleted, so its agent sessions stop.
pub trait TaskListener: Send + Sync {
    fn task_closed(&self, task_id: &str);
}

pub struct BoardService {
    store: Store,
    clock: Arc<dyn Clock>,
    live: LiveHub,
    listeners: RwLock<Vec<Arc<dyn TaskListener>>>,
    merge: RwLock<Option<Arc<dyn MergeStarter>>>,
    linker: RwLock<Option<Arc<dyn PrLinker>>>,
    cache: cache::BoardCache,
    metrics: Metrics,
}

impl BoardService {
    pub fn new(store: Store, clock: Arc<dyn Clock>, live: LiveHub, metrics: Metrics) -> Self {
        BoardService {
            store,
            clock,
            live,
            cache: cache::BoardCache::default(),
            metrics,
            listeners: RwLock::new(vec![]),
            merge: RwLock::new(None),
            linker: RwLock::new(None),
        }
    }

    /// Wired at construction by the composition root.
    pub fn add_listener(&self, l: Arc<dyn TaskListener>) {
        self.listeners.write().unwrap_or_else(|p| p.into_inner()).push(l);
    }

    pub fn set_merge_starter(&self, m: Arc<dyn MergeStarter>) {
        *self.merge.write().unwrap_or_else(|p| p.into_inner()) = Some(m);
    }

    pub fn set_pr_linker(&self, l: Arc<dyn PrLinker>) {
        *self.linker.write().unwrap_or_else(|p| p.into_inner()) = Some(l);
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    fn touched(&self, task: &Task) {
        self.live.notify(&task.workspace_id, LIVE_TASK_UPDATED, &task.id);
    }

    pub async fn get(&self, id: &str) -> ServiceResult<Task> {
        self.store.get_task(id).await.map_err(ServiceError::not_found("task"))
    }

    pub async fn create(&self, workspace_id: &str, req: CreateTask, actor: &Actor) -> ServiceResult<Task> {
        self.store
            .get_workspace(workspace_id)
            .await
            .map_err(ServiceError::not_found("workspace"))?;
        let title = bounds::required_name("title", &req.title).map_err(invalid)?;
        bounds::text("description", req.description.as_deref().unwrap_or_default()).map_err(invalid)?;
        let mut base_branch = String::new();
        if let Some(repo_id) = req.repository_id.as_deref().filter(|r| !r.is_empty()) {
            let repo = self
                .store
                .get_repository(repo_id)
                .await
                .map_err(|_| ServiceError::Invalid("repository not found".into()))?;
            if repo.workspace_id != workspace_id {
                return Err(ServiceError::Invalid(
                    "repository does not belong to this workspace".into(),
                ));
            }
            base_branch = repo.default_branch;
        }
        let status = req.status.unwrap_or(TaskStatus::Todo);
        if status == TaskStatus::HumanReview {
            return Err(ServiceError::Invalid(
                "a task enters human_review only through a review hand-off".into(),
            ));
        }
        let now = self.clock.now();
        let task = self
            .store
            .create_task_recording(
                &NewTask {
                    workspace_id: workspace_id.to_string(),
                    title: title.to_string(),
                    description: req.description.unwrap_or_default(),
                    status,
                    origin: Origin::User,
                    repository_id: req.repository_id.filter(|r| !r.is_empty()),
                    base_branch,
                    metadata: json!({}),
                },
                (EVENT_CREATED, &json!({"status": status.as_str()})),
                actor,
                now,
            )
            .await?;
        self.touched(&task);
        Ok(task)
    }

    pub async fn list(
        &self,
        workspace_id: &str,
        include_archived: bool,
        include_runs: bool,
    ) -> ServiceResult<Vec<Task>> {
        self.store
            .get_workspace(workspace_id)
            .await
            .map_err(ServiceError::not_found("workspace"))?;
        Ok(self
            .store
            .list_tasks(workspace_id, include_archived, include_runs)
            .await?)
    }

    /// The board as the JSON `list` would serialize, served from the cache
    /// when no task of the workspace changed since `version` (the board
    /// version the caller read when it admitted the request).
    pub async fn list_json(
        &self,
        workspace_id: &str,
        version: i64,
        include_archived: bool,
        include_runs: bool,
    ) -> ServiceResult<cache::Body> {
        let (body, how) = self
            .cache
            .read(workspace_id, include_archived, include_runs, version, || async {
                let tasks = self
                    .store
                    .list_tasks(workspace_id, include_archived, include_runs)
                    .await?;
                serde_json::to_vec(&tasks)
                    .map(bytes::Bytes::from)
                    .map_err(|e| ServiceError::Internal(format!("board JSON: {e}")))
            })
            .await?;
        self.metrics.board_read(match how {
            cache::Read::Hit => "hit",
            cache::Read::Miss => "miss",
        });
        Ok(body)
    }

    /// Edits text and moves status by the board rules (409 when refused).
    /// The move goes first, so a refused or lost move leaves the text as it
    /// was; a text-only edit is one statement.
    pub async fn patch(&self, id: &str, req: PatchTask, actor: &Actor) -> ServiceResult<Task> {
        if let Some(title) = &req.title {
            bounds::required_name("title", title).map_err(invalid)?;
        }
        if let Some(d) = &req.description {
            bounds::text("description", d).map_err(invalid)?;
        }
        let mut moved = false;
        if let Some(to) = req.status {
            let task = self.get(id).await?;
            check_move(task.status, to).map_err(|e| ServiceError::Conflict(e.to_string()))?;
            if to != task.status {
                self.move_status(&task, task.status, to, json!({}), actor).await?;
                moved = true;
            }
        }
        let task = if req.title.is_some() || req.description.is_some() {
            let title = req.title.as_deref().map(kandev_core::schema::trim_space);
            self.store
                .update_task_text(id, title, req.description.as_deref(), self.clock.now())
                .await
                .map_err(ServiceError::not_found("task"))?
        } else {
            self.get(id).await?
        };
        if moved || req.title.is_some() || req.description.is_some() {
            self.touched(&task);
        }
        Ok(task)
    }

    /// Compare-and-swap a status and record the move. 409 if it lost a
    /// race, or while the merger holds the task (its merge state is the
    /// merger's to leave).
    pub async fn move_status(
        &self,
        task: &Task,
        from: TaskStatus,
        to: TaskStatus,
        extra: Value,
        actor: &Actor,
    ) -> ServiceResult<()> {
        self.swap(task, from, to, extra, actor, false, None).await
    }

    /// [`BoardService::move_status`] that also records `event` in the same
    /// transaction (a rejection and its reason).
    pub async fn move_status_recording(
        &self,
        task: &Task,
        from: TaskStatus,
        to: TaskStatus,
        actor: &Actor,
        event: (&str, Value),
    ) -> ServiceResult<()> {
        self.swap(task, from, to, json!({}), actor, false, Some(event)).await
    }

    /// [`BoardService::move_status`] for the merger's own moves (approve's
    /// move into `running`, the job's exits, a cancelled merge).
    pub async fn move_status_for_merge(
        &self,
        task: &Task,
        from: TaskStatus,
        to: TaskStatus,
        extra: Value,
        actor: &Actor,
    ) -> ServiceResult<()> {
        self.swap(task, from, to, extra, actor, true, None).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn swap(
        &self,
        task: &Task,
        from: TaskStatus,
        to: TaskStatus,
        extra: Value,
        actor: &Actor,
        for_merger: bool,
        also: Option<(&str, Value)>,
    ) -> ServiceResult<()> {
        let now = self.clock.now();
        let mut payload = json!({"from": from.as_str(), "to": to.as_str()});
        if let (Some(p), Some(extra)) = (payload.as_object_mut(), extra.as_object()) {
            p.extend(extra.clone());
        }
        let mut events = vec![(EVENT_STATUS_CHANGED, payload)];
        events.extend(also);
        if !self
            .store
            .swap_task_status(&task.id, from, to, now, for_merger, &events, actor)
            .await?
        {
            if !for_merger && self.store.get_merger_job(&task.id).await?.is_some() {
                return Err(ServiceError::Conflict(MERGE_IN_PROGRESS.into()));
            }
            return Err(ServiceError::Conflict(format!("task is no longer {}", from.as_str())));
        }
        self.live.notify(&task.workspace_id, LIVE_TASK_UPDATED, &task.id);
        Ok(())
    }

    pub async fn delete(&self, id: &str) -> ServiceResult<()> {
        let task = self.get(id).await?;
        self.notify_closed(id);
        self.store.delete_task(id).await?;
        self.touched(&task);
        Ok(())
    }

    /// Archiving hides a task and keeps it; repeating it reports `already_archived`.
    pub async fn archive(&self, id: &str, actor: &Actor) -> ServiceResult<ArchiveResult> {
        let now = self.clock.now();
        let already = self
            .store
            .archive_task(id, EVENT_ARCHIVED, actor, now)
            .await
            .map_err(ServiceError::not_found("task"))?;
        if !already {
            self.notify_closed(id);
            let task = self.get(id).await?;
            self.touched(&task);
        }
        Ok(ArchiveResult {
            success: true,
            already_archived: already,
        })
    }

    pub async fn unarchive(&self, id: &str, actor: &Actor) -> ServiceResult<Task> {
        let task = self.get(id).await?;
        if task.archived_at.is_some() {
            let now = self.clock.now();
            self.store.unarchive_task(id, EVENT_UNARCHIVED, actor, now).await?;
        }
        let task = self.get(id).await?;
        self.touched(&task);
        Ok(task)
    }

    fn notify_closed(&self, id: &str) {
        let listeners = self.listeners.read().unwrap_or_else(|p| p.into_inner()).clone();
        for l in listeners {
            l.task_closed(id);
        }
    }

    /// A comment, authored by the actor's name (`agent` for an automation run).
    pub async fn add_comment(&self, id: &str, body: &str, actor: &Actor) -> ServiceResult<Comment> {
        let task = self.get(id).await?;
        if kandev_core::schema::is_blank(body) {
            return Err(ServiceError::Invalid("body is required".into()));
        }
        bounds::text("body", body).map_err(invalid)?;
        let author = match actor {
            Actor::Automation { .. } => "agent",
            other => other.display_name(),
        };
        let c = self.store.add_comment(id, body, author, self.clock.now()).await?;
        self.touched(&task);
        Ok(c)
    }

    pub async fn comments(&self, id: &str) -> ServiceResult<Vec<Comment>> {
        self.get(id).await?;
        Ok(self.store.list_comments(id).await?)
    }

    pub async fn events(&self, id: &str) -> ServiceResult<Vec<TaskEvent>> {
        self.get(id).await?;
        Ok(self.store.list_events(id).await?)
    }

    /// Records an event and announces the change.
    pub async fn record(&self, task: &Task, kind: &str, payload: Value, actor: &Actor) -> ServiceResult<TaskEvent> {
        let e = self
            .store
            .add_event(&task.id, kind, &payload, actor, self.clock.now())
            .await?;
        self.touched(task);
        Ok(e)
    }
}
