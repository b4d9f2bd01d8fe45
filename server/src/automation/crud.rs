//! Automation CRUD, triggers, the run log and the manual run.

use kandev_core::TriggerType;
use kandev_core::api::{
    Automation, CreateAutomation, CreatedAutomation, Evaluation, MOCK_AGENT_PROFILE_ID, ManualRunResult, NewTrigger,
    PatchAutomation, PatchTrigger, Run, Trigger,
};
use kandev_core::firing::{clamp_max_concurrent_runs_on_create, manual_data};
use kandev_core::trigger::FiringType;
use kandev_core::trigger::config::validate_for_save;
use kandev_core::{bounds, repository_choice};

use super::{AutomationService, FireOutcome, FireRequest};
use crate::error::{ServiceError, ServiceResult};
use crate::store::NewAutomation;

/// 16 random bytes as 32 lowercase hex characters. No fallback: if the
/// system's randomness fails, creating the automation fails.
fn new_webhook_secret() -> ServiceResult<String> {
    crate::access::credentials::random_hex::<16>()
}

fn invalid(e: bounds::OutOfBounds) -> ServiceError {
    ServiceError::Invalid(e.0)
}

/// A stored trigger config is at most 64 KiB of JSON.
fn validate_trigger(t: &NewTrigger, now: chrono::DateTime<chrono::Utc>) -> ServiceResult<()> {
    if !t.config.is_object() && t.trigger_type == TriggerType::Scheduled {
        return Err(ServiceError::Invalid(
            "invalid scheduled trigger config: config must be a JSON object".into(),
        ));
    }
    bounds::text("config", &t.config.to_string()).map_err(invalid)?;
    validate_for_save(t.trigger_type, &t.config, now).map_err(ServiceError::Invalid)
}

/// The text fields of an automation, each within its bound.
fn check_texts(name: &str, description: &str, prompt: &str, title: &str) -> ServiceResult<()> {
    bounds::name("name", name).map_err(invalid)?;
    bounds::text("description", description).map_err(invalid)?;
    bounds::text("prompt", prompt).map_err(invalid)?;
    bounds::name("task_title_template", title).map_err(invalid)
}

impl AutomationService {
    async fn check_repositories(&self, workspace_id: &str, ids: &[String]) -> ServiceResult<()> {
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            if !seen.insert(id) {
                return Err(ServiceError::Invalid(format!("repository {id} is listed twice")));
            }
            match self.store.get_repository(id).await {
                Ok(r) if r.workspace_id == workspace_id => {}
                Ok(_) | Err(crate::store::StoreError::NotFound) => {
                    return Err(ServiceError::Invalid(format!(
                        "repository {id} does not belong to this workspace"
                    )));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    async fn check_agent_profile(&self, id: &str) -> ServiceResult<()> {
        if id.is_empty() || id == MOCK_AGENT_PROFILE_ID {
            return Ok(());
        }
        match self.store.get_agent_profile(id).await {
            Ok(_) => Ok(()),
            Err(crate::store::StoreError::NotFound) => {
                Err(ServiceError::Invalid(format!("agent profile {id} does not exist")))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Every rule a new automation must pass, without writing anything.
    pub(super) async fn check_new(&self, workspace_id: &str, req: &CreateAutomation) -> ServiceResult<()> {
        let name = bounds::required_name("name", &req.name).map_err(invalid)?;
        check_texts(
            name,
            req.description.as_deref().unwrap_or_default(),
            req.prompt.as_deref().unwrap_or_default(),
            req.task_title_template.as_deref().unwrap_or_default(),
        )?;
        // Create keeps the engine's rule (`<= 0` becomes 1); above the cap is refused.
        bounds::max_concurrent_runs(clamp_max_concurrent_runs_on_create(req.max_concurrent_runs)).map_err(invalid)?;
        repository_choice::settle(req.no_repository, req.repository_ids.clone())
            .map_err(|e| ServiceError::Invalid(e.into()))?;
        self.check_repositories(workspace_id, req.repository_ids.as_deref().unwrap_or_default())
            .await?;
        self.check_agent_profile(req.agent_profile_id.as_deref().unwrap_or_default())
            .await?;
        kandev_core::executors::check(req.executor_profile_id.as_deref().unwrap_or_default())
            .map_err(ServiceError::Invalid)?;
        let now = self.clock.now();
        for t in req.triggers.as_deref().unwrap_or_default() {
            validate_trigger(t, now)?;
        }
        Ok(())
    }

    /// Validates everything first, then writes the automation, its triggers and
    /// repositories in one transaction.
    pub async fn create(&self, workspace_id: &str, req: CreateAutomation) -> ServiceResult<CreatedAutomation> {
        self.store
            .get_workspace(workspace_id)
            .await
            .map_err(ServiceError::not_found("workspace"))?;
        self.check_new(workspace_id, &req).await?;
        let name = kandev_core::schema::trim_space(&req.name);
        let max_concurrent_runs = clamp_max_concurrent_runs_on_create(req.max_concurrent_runs);
        let (no_repository, repository_ids) = repository_choice::settle(req.no_repository, req.repository_ids)
            .map_err(|e| ServiceError::Invalid(e.into()))?;
        let (no_repository, repository_ids) = (no_repository.unwrap_or(false), repository_ids.unwrap_or_default());
        let agent_profile_id = req.agent_profile_id.unwrap_or_default();
        let triggers = req.triggers.unwrap_or_default();
        let secret = new_webhook_secret()?;
        let created = self
            .store
            .create_automation(
                &NewAutomation {
                    workspace_id: workspace_id.to_string(),
                    name: name.to_string(),
                    description: req.description.unwrap_or_default(),
                    prompt: req.prompt.unwrap_or_default(),
                    task_title_template: req.task_title_template.unwrap_or_default(),
                    agent_profile_id,
                    executor_profile_id: req.executor_profile_id.unwrap_or_default(),
                    repository_ids,
                    no_repository,
                    enabled: req.enabled.unwrap_or(true),
                    max_concurrent_runs,
                    webhook_secret: secret.clone(),
                    triggers: triggers
                        .into_iter()
                        .map(|t| (t.trigger_type, t.config, t.enabled.unwrap_or(true)))
                        .collect(),
                },
                self.clock.now(),
            )
            .await?;
        Ok(CreatedAutomation {
            automation: created,
            webhook_secret: secret,
        })
    }

    pub async fn get(&self, id: &str) -> ServiceResult<Automation> {
        self.store
            .get_automation(id)
            .await
            .map_err(ServiceError::not_found("automation"))
    }

    pub async fn list(&self, workspace_id: &str) -> ServiceResult<Vec<Automation>> {
        let list = self.store.list_automations(workspace_id).await?;
        // An automation proves its workspace exists; only an empty list needs the check.
        if list.is_empty() {
            self.store
                .get_workspace(workspace_id)
                .await
                .map_err(ServiceError::not_found("workspace"))?;
        }
        Ok(list)
    }

    /// Checks each field given, then writes only those (see
    /// `Store::update_automation`): a concurrent edit of another field stays.
    pub async fn patch(&self, id: &str, mut req: PatchAutomation) -> ServiceResult<Automation> {
        let a = self.get(id).await?;
        if let Some(name) = &req.name {
            req.name = Some(bounds::required_name("name", name).map_err(invalid)?.to_string());
        }
        if let Some(n) = req.max_concurrent_runs {
            req.max_concurrent_runs = Some(bounds::max_concurrent_runs(n).map_err(invalid)?);
        }
        if let Some(p) = &req.agent_profile_id {
            self.check_agent_profile(p).await?;
        }
        // Settled here so the stored pair never contradicts itself.
        (req.no_repository, req.repository_ids) =
            repository_choice::settle(req.no_repository, req.repository_ids.take())
                .map_err(|e| ServiceError::Invalid(e.into()))?;
        if let Some(ids) = &req.repository_ids {
            self.check_repositories(&a.workspace_id, ids).await?;
        }
        if let Some(v) = &req.executor_profile_id {
            kandev_core::executors::check(v).map_err(ServiceError::Invalid)?;
        }
        check_texts(
            req.name.as_deref().unwrap_or(&a.name),
            req.description.as_deref().unwrap_or(&a.description),
            req.prompt.as_deref().unwrap_or(&a.prompt),
            req.task_title_template.as_deref().unwrap_or(&a.task_title_template),
        )?;
        self.store
            .update_automation(id, &req, self.clock.now())
            .await
            .map_err(ServiceError::not_found("automation"))?;
        self.get(id).await
    }

    pub async fn delete(&self, id: &str) -> ServiceResult<()> {
        if !self.store.delete_automation(id).await? {
            return Err(ServiceError::NotFound("automation not found".into()));
        }
        Ok(())
    }

    pub async fn add_trigger(&self, automation_id: &str, t: NewTrigger) -> ServiceResult<Trigger> {
        self.get(automation_id).await?;
        validate_trigger(&t, self.clock.now())?;
        Ok(self
            .store
            .add_trigger(
                automation_id,
                t.trigger_type,
                &t.config,
                t.enabled.unwrap_or(true),
                self.clock.now(),
            )
            .await?)
    }

    /// Writes only the fields the PATCH names: a disable sent while someone
    /// else edits the config stays a disable. A new config is validated
    /// against the trigger's type, which never changes.
    pub async fn patch_trigger(&self, id: &str, req: PatchTrigger) -> ServiceResult<Trigger> {
        let t = self
            .store
            .get_trigger(id)
            .await
            .map_err(ServiceError::not_found("trigger"))?;
        if let Some(config) = &req.config {
            validate_trigger(
                &NewTrigger {
                    trigger_type: t.trigger_type,
                    config: config.clone(),
                    enabled: None,
                },
                self.clock.now(),
            )?;
        }
        self.store
            .update_trigger(id, req.config.as_ref(), req.enabled, self.clock.now())
            .await
            .map_err(ServiceError::not_found("trigger"))
    }

    pub async fn delete_trigger(&self, id: &str) -> ServiceResult<()> {
        if !self.store.delete_trigger(id).await? {
            return Err(ServiceError::NotFound("trigger not found".into()));
        }
        Ok(())
    }

    pub async fn webhook_secret(&self, id: &str) -> ServiceResult<String> {
        self.store
            .webhook_secret(id)
            .await
            .map_err(ServiceError::not_found("automation"))
    }

    /// A new webhook secret replaces the old one at once; senders with the old one are refused from now on.
    pub async fn rotate_webhook_secret(&self, id: &str) -> ServiceResult<String> {
        let secret = new_webhook_secret()?;
        self.store
            .set_webhook_secret(id, &secret, self.clock.now())
            .await
            .map_err(ServiceError::not_found("automation"))?;
        Ok(secret)
    }

    pub async fn runs(&self, automation_id: &str, limit: i64) -> ServiceResult<Vec<Run>> {
        self.get(automation_id).await?;
        Ok(self.store.list_runs(automation_id, limit.max(1)).await?)
    }

    pub async fn workspace_runs(&self, workspace_id: &str, limit: i64) -> ServiceResult<Vec<Run>> {
        self.store
            .get_workspace(workspace_id)
            .await
            .map_err(ServiceError::not_found("workspace"))?;
        Ok(self
            .store
            .list_workspace_runs(workspace_id, limit.clamp(1, *bounds::LIMIT.end()))
            .await?)
    }

    /// Deletes the run's task first (gone is fine), then the row.
    pub async fn delete_run(&self, run_id: &str) -> ServiceResult<()> {
        let run = self
            .store
            .get_run_record(run_id)
            .await
            .map_err(ServiceError::not_found("run"))?;
        if !run.task_id.is_empty() {
            match self.board.delete(&run.task_id).await {
                Ok(()) | Err(ServiceError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        self.store.delete_run(run_id).await?;
        Ok(())
    }

    /// Deletes every run and its task. This erases the automation's dedup memory.
    pub async fn delete_runs(&self, automation_id: &str) -> ServiceResult<()> {
        self.get(automation_id).await?;
        for task_id in self.store.delete_runs(automation_id).await? {
            match self.board.delete(&task_id).await {
                Ok(()) | Err(ServiceError::NotFound(_)) => {}
                Err(e) => tracing::warn!(task_id, error = %e, "could not delete a run task"),
            }
        }
        Ok(())
    }

    pub async fn evaluations(&self, automation_id: &str, limit: i64) -> ServiceResult<Vec<Evaluation>> {
        self.get(automation_id).await?;
        self.recorder.flush().await;
        Ok(self
            .store
            .list_evaluations(automation_id, limit.clamp(1, *bounds::LIMIT.end()))
            .await?)
    }

    /// Run now: type `manual`, data `{"source":"manual"}`, no dedup. The
    /// trigger id is the automation's first trigger (any type), or empty.
    pub async fn run_manually(&self, automation_id: &str) -> ServiceResult<ManualRunResult> {
        let a = self.get(automation_id).await?;
        let trigger_id = a.triggers.first().map(|t| t.id.clone()).unwrap_or_default();
        let outcome = self
            .fire_trigger(FireRequest {
                automation_id: a.id,
                trigger_id,
                trigger_type: FiringType::MANUAL.into(),
                data: manual_data(),
                dedup_key: String::new(),
            })
            .await?;
        Ok(match outcome {
            FireOutcome::Fired => ManualRunResult {
                triggered: true,
                skipped: false,
                reason: String::new(),
            },
            FireOutcome::Skipped { reason, .. } | FireOutcome::Capped { reason } => ManualRunResult {
                triggered: false,
                skipped: true,
                reason,
            },
        })
    }
}
