//! Per-type config panels and their dispatcher. The dispatcher is an
//! exhaustive `match`: a new trigger type does not compile without a panel.
//! It threads the workspace id to every panel except `github_pr`, whose
//! selector the spec keeps inert.

mod ci;
mod github_pr;
mod list_input;
mod merged;
mod preview;
mod push;
mod schedule;
mod webhook;

use kandev_core::trigger::TriggerType;
use kandev_core::trigger::config::RepoFilter;
use leptos::prelude::*;
use serde_json::{Value, json};

pub use schedule::SchedulePanel;
pub use webhook::webhook_url;

/// A config panel's inputs: the trigger's config, and where edits go.
#[derive(Clone, Copy)]
pub struct PanelProps {
    pub config: Signal<Value>,
    pub on_config: Callback<Value>,
}

impl PanelProps {
    /// Sets one key, keeping the others.
    pub fn set(&self, key: &str, value: Value) {
        let mut map = self.config.get_untracked().as_object().cloned().unwrap_or_default();
        map.insert(key.to_string(), value);
        self.on_config.run(Value::Object(map));
    }

    pub fn list(&self, key: &str) -> Vec<String> {
        string_list(&self.config.get(), key)
    }

    pub fn repos(&self) -> Vec<RepoFilter> {
        self.config
            .with(|c| serde_json::from_value(c.get("repos").cloned().unwrap_or(json!([]))).unwrap_or_default())
    }

    pub fn set_repos(&self, repos: Vec<RepoFilter>) {
        self.set("repos", serde_json::to_value(repos).unwrap_or(json!([])));
    }
}

pub fn string_list(config: &Value, key: &str) -> Vec<String> {
    config
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

#[component]
pub fn TriggerConfigForm(
    trigger_type: TriggerType,
    props: PanelProps,
    workspace_id: Signal<String>,
    /// The saved automation's id (the webhook URL exists only after save).
    automation_id: Signal<Option<String>>,
) -> impl IntoView {
    match trigger_type {
        TriggerType::Scheduled => view! { <SchedulePanel props=props/> }.into_any(),
        TriggerType::GithubPr => view! { <github_pr::GithubPrPanel props=props/> }.into_any(),
        TriggerType::GithubPrMerged => {
            view! { <merged::MergedPanel props=props workspace_id=workspace_id/> }.into_any()
        }
        TriggerType::GithubPush => view! { <push::PushPanel props=props workspace_id=workspace_id/> }.into_any(),
        TriggerType::GithubCi => view! { <ci::CiPanel props=props workspace_id=workspace_id/> }.into_any(),
        TriggerType::Webhook => view! { <webhook::WebhookPanel automation_id=automation_id/> }.into_any(),
    }
}
