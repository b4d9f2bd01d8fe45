//! The editor's state: one signal per field, the trigger draft, and the
//! automation as last saved (to diff against on update).

use kandev_core::api::Automation;
use kandev_core::editor::condition_type;
use kandev_core::editor::draft::{DraftTrigger, types};
use kandev_core::registry;
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct Form {
    pub ws: Signal<String>,
    pub name: RwSignal<String>,
    pub title: RwSignal<String>,
    pub prompt: RwSignal<String>,
    pub agent: RwSignal<String>,
    pub executor: RwSignal<String>,
    /// The automation's repositories; the dropdown shows and edits the first.
    pub repositories: RwSignal<Vec<String>>,
    /// "None — no repository" chosen in the dropdown.
    pub no_repository: RwSignal<bool>,
    pub enabled: RwSignal<bool>,
    pub max_runs: RwSignal<String>,
    pub draft: RwSignal<Vec<DraftTrigger>>,
    pub saved: RwSignal<Option<Automation>>,
    /// The resolved condition; changes only when the condition does.
    pub condition: Memo<Option<TriggerType>>,
}

impl Form {
    /// A new automation: the `scheduled` default prompt, enabled, one run.
    pub fn new(ws: Signal<String>) -> Form {
        let draft = RwSignal::new(vec![]);
        Form {
            ws,
            name: RwSignal::new(String::new()),
            title: RwSignal::new(String::new()),
            prompt: RwSignal::new(registry::entry(TriggerType::Scheduled).default_prompt.to_string()),
            agent: RwSignal::new(String::new()),
            executor: RwSignal::new(String::new()),
            repositories: RwSignal::new(vec![]),
            no_repository: RwSignal::new(false),
            enabled: RwSignal::new(true),
            max_runs: RwSignal::new("1".into()),
            draft,
            saved: RwSignal::new(None),
            condition: Memo::new(move |_| draft.with(|d| condition_type(&types(d)))),
        }
    }

    /// Loads a saved automation into every field.
    pub fn load(&self, a: &Automation) {
        self.name.set(a.name.clone());
        self.title.set(a.task_title_template.clone());
        self.prompt.set(a.prompt.clone());
        self.agent.set(a.agent_profile_id.clone());
        self.executor.set(a.executor_profile_id.clone());
        self.repositories.set(a.repository_ids.clone());
        self.no_repository.set(a.no_repository);
        self.enabled.set(a.enabled);
        self.max_runs.set(a.max_concurrent_runs.to_string());
        self.draft
            .set(a.triggers.iter().map(DraftTrigger::from_saved).collect());
        self.saved.set(Some(a.clone()));
    }

    pub fn saved_id(&self) -> Signal<Option<String>> {
        let saved = self.saved;
        Signal::derive(move || saved.with(|s| s.as_ref().map(|a| a.id.clone())))
    }
}
