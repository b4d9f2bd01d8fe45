//! Saving: create sends the automation with its triggers; update sends the
//! full automation, then the trigger diff core computes, then re-reads. An
//! update that fails part-way re-reads too, so the form shows what was saved
//! and the next save sends only what is still missing (never a trigger twice).

use kandev_core::api::{Automation, CreateAutomation, CreatedAutomation, PatchAutomation, Trigger};
use kandev_core::editor::draft::{
    DraftTrigger, is_webhook_mode, no_repository_for_save, repository_ids_for_save, trigger_changes,
};
use kandev_core::editor::parse_max_runs;
use leptos::prelude::*;

use super::form::Form;
use crate::api::{self, ApiResult};

pub enum Saved {
    /// Created; a webhook automation shows its URL and secret once.
    Created {
        id: String,
        webhook_secret: Option<String>,
    },
    Updated,
}

fn repository_ids(form: &Form) -> Vec<String> {
    repository_ids_for_save(form.condition.get_untracked(), &form.repositories.get_untracked())
}

fn no_repository(form: &Form) -> bool {
    no_repository_for_save(form.condition.get_untracked(), form.no_repository.get_untracked())
}

pub async fn save(form: Form) -> ApiResult<Saved> {
    let max_runs = parse_max_runs(&form.max_runs.get_untracked());
    form.max_runs.set(max_runs.to_string());
    let draft = form.draft.get_untracked();
    let saved = form.saved.get_untracked();
    let Some(saved) = saved else {
        let body = CreateAutomation {
            name: form.name.get_untracked().trim().to_string(),
            description: None,
            prompt: Some(form.prompt.get_untracked()),
            task_title_template: Some(form.title.get_untracked()),
            agent_profile_id: Some(form.agent.get_untracked()),
            executor_profile_id: Some(form.executor.get_untracked()),
            repository_ids: Some(repository_ids(&form)),
            no_repository: Some(no_repository(&form)),
            max_concurrent_runs: Some(max_runs),
            enabled: Some(form.enabled.get_untracked()),
            triggers: Some(draft.iter().map(|d| d.to_new()).collect()),
        };
        let ws = form.ws.get_untracked();
        let created: CreatedAutomation = api::post(&format!("/api/v1/workspaces/{ws}/automations"), &body).await?;
        let webhook_secret = is_webhook_mode(&draft).then_some(created.webhook_secret);
        return Ok(Saved::Created {
            id: created.automation.id,
            webhook_secret,
        });
    };
    let id = saved.id.clone();
    let steps = update(&form, &saved, &draft, &id).await;
    // Success or not, the form now holds what the server holds.
    match api::automation(&id).await {
        Ok(fresh) => form.load(&fresh),
        Err(e) if steps.is_ok() => return Err(e),
        Err(_) => {}
    }
    steps.map(|()| Saved::Updated)
}

async fn update(form: &Form, saved: &Automation, draft: &[DraftTrigger], id: &str) -> ApiResult<()> {
    let max_runs = parse_max_runs(&form.max_runs.get_untracked());
    let patch = PatchAutomation {
        name: Some(form.name.get_untracked().trim().to_string()),
        description: Some(saved.description.clone()),
        prompt: Some(form.prompt.get_untracked()),
        task_title_template: Some(form.title.get_untracked()),
        agent_profile_id: Some(form.agent.get_untracked()),
        executor_profile_id: Some(form.executor.get_untracked()),
        repository_ids: Some(repository_ids(form)),
        no_repository: Some(no_repository(form)),
        enabled: Some(form.enabled.get_untracked()),
        max_concurrent_runs: Some(max_runs),
    };
    api::patch::<_, Automation>(&format!("/api/v1/automations/{id}"), &patch).await?;
    let changes = trigger_changes(&saved.triggers, draft);
    for tid in &changes.delete {
        api::delete(&format!("/api/v1/automation-triggers/{tid}")).await?;
    }
    for (tid, p) in &changes.update {
        api::patch::<_, Trigger>(&format!("/api/v1/automation-triggers/{tid}"), p).await?;
    }
    for n in &changes.create {
        api::post::<_, Trigger>(&format!("/api/v1/automations/{id}/triggers"), n).await?;
    }
    Ok(())
}
