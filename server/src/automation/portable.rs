//! Export and import of a workspace's automations (the rules are in
//! `kandev_core::portable`). An import is checked whole before anything is
//! written, and one import per workspace runs at a time, on any replica.

use kandev_core::api::{CreateAutomation, NewTrigger, PatchAutomation};
use kandev_core::bounds;
use kandev_core::portable::{self, Document, ImportResult, Step};

use super::AutomationService;
use crate::error::{ServiceError, ServiceResult};

/// Long enough for any import; a replica that dies holding it frees the
/// workspace when it lapses.
const IMPORT_LEASE_SECS: i64 = 300;

impl AutomationService {
    pub async fn export(&self, workspace_id: &str) -> ServiceResult<Document> {
        let automations = self.list(workspace_id).await?;
        let repositories = self.store.list_repositories(workspace_id).await?;
        Ok(portable::export(&automations, &repositories))
    }

    /// Plans the import, checks every step, and (unless `dry_run`) applies it.
    /// Applying is idempotent: if it stops half-way, importing the same
    /// document again finishes the job.
    pub async fn import(&self, workspace_id: &str, doc: Document, dry_run: bool) -> ServiceResult<ImportResult> {
        self.store
            .get_workspace(workspace_id)
            .await
            .map_err(ServiceError::not_found("workspace"))?;
        let lease = format!("automation-import:{workspace_id}");
        let owner = uuid::Uuid::new_v4().to_string();
        if !self
            .store
            .acquire_lease(
                &lease,
                &owner,
                chrono::Duration::seconds(IMPORT_LEASE_SECS),
                self.clock.now(),
            )
            .await?
        {
            return Err(ServiceError::Conflict(
                "another import into this workspace is running; try again when it has finished".into(),
            ));
        }
        let result = self.import_held(workspace_id, doc, dry_run).await;
        if let Err(e) = self.store.release_lease(&lease, &owner).await {
            tracing::warn!(workspace_id, error = %e, "could not release the import lease; it lapses by itself");
        }
        result
    }

    async fn import_held(&self, workspace_id: &str, doc: Document, dry_run: bool) -> ServiceResult<ImportResult> {
        let existing = self.list(workspace_id).await?;
        let repositories = self.store.list_repositories(workspace_id).await?;
        let steps = portable::plan(&doc, &existing, &repositories).map_err(|p| ServiceError::Invalid(p.join("; ")))?;
        let mut problems = vec![];
        for (change, step) in &steps {
            if let Err(e) = self.check_step(workspace_id, step).await {
                problems.push(format!("\"{}\": {e}", change.name));
            }
        }
        if !problems.is_empty() {
            return Err(ServiceError::Invalid(problems.join("; ")));
        }
        let mut changes = Vec::with_capacity(steps.len());
        for (change, step) in steps {
            if !dry_run {
                self.apply(workspace_id, step).await?;
            }
            changes.push(change);
        }
        Ok(ImportResult { dry_run, changes })
    }

    async fn check_step(&self, workspace_id: &str, step: &Step) -> ServiceResult<()> {
        match step {
            Step::Create(req) => self.check_new(workspace_id, req).await,
            Step::Update { id, patch, triggers } => {
                let current = self.get(id).await?;
                // The automation as it would be after the patch, checked as new.
                let merged = CreateAutomation {
                    name: current.name,
                    description: Some(patch.description.clone().unwrap_or(current.description)),
                    prompt: Some(patch.prompt.clone().unwrap_or(current.prompt)),
                    task_title_template: Some(patch.task_title_template.clone().unwrap_or(current.task_title_template)),
                    agent_profile_id: Some(patch.agent_profile_id.clone().unwrap_or(current.agent_profile_id)),
                    executor_profile_id: None,
                    repository_ids: Some(patch.repository_ids.clone().unwrap_or(current.repository_ids)),
                    no_repository: Some(patch.no_repository.unwrap_or(current.no_repository)),
                    max_concurrent_runs: Some(patch.max_concurrent_runs.unwrap_or(current.max_concurrent_runs)),
                    enabled: None,
                    triggers: triggers.clone(),
                };
                if let Some(n) = patch.max_concurrent_runs {
                    // An update keeps the patch rule: out of range is refused, not clamped.
                    bounds::max_concurrent_runs(n).map_err(|e| ServiceError::Invalid(e.0))?;
                }
                self.check_new(workspace_id, &merged).await
            }
            Step::Unchanged => Ok(()),
        }
    }

    async fn apply(&self, workspace_id: &str, step: Step) -> ServiceResult<()> {
        match step {
            Step::Create(req) => self.create(workspace_id, req).await.map(|_| ()),
            Step::Update { id, patch, triggers } => {
                if patch != PatchAutomation::default() {
                    self.patch(&id, patch).await?;
                }
                if let Some(triggers) = triggers {
                    self.replace_triggers(&id, triggers).await?;
                }
                Ok(())
            }
            Step::Unchanged => Ok(()),
        }
    }

    /// Removes the current triggers first: a crash in between leaves an
    /// automation that fires on nothing, never one that fires twice.
    async fn replace_triggers(&self, id: &str, triggers: Vec<NewTrigger>) -> ServiceResult<()> {
        for t in self.get(id).await?.triggers {
            self.delete_trigger(&t.id).await?;
        }
        for t in triggers {
            self.add_trigger(id, t).await?;
        }
        Ok(())
    }
}
