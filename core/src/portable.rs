//! Automations as a portable document (exported as YAML, imported with a
//! dry-run diff). The document names repositories `owner/name`, never by id,
//! and carries no secret (webhook secrets stay with their automation), so it
//! moves between workspaces and servers. Fields are only ever added, with
//! defaults, so a document from an older version still reads.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::TriggerType;
use crate::api::{Automation, CreateAutomation, NewTrigger, PatchAutomation, Repository};

/// The document version this build writes and reads.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    pub version: u32,
    #[serde(default)]
    pub automations: Vec<PortableAutomation>,
}

fn yes() -> bool {
    true
}

fn one() -> i64 {
    1
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_one(n: &i64) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One automation, as a person would write it by hand: defaults omitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortableAutomation {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    #[serde(default)]
    pub prompt: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_title_template: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent_profile_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub executor_profile_id: String,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub max_concurrent_runs: i64,
    /// `owner/name` of the workspace's repositories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repositories: Vec<String>,
    /// "None — no repository" (added after version 1's first release; absent reads `false`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_repository: bool,
    #[serde(default)]
    pub triggers: Vec<PortableTrigger>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortableTrigger {
    #[serde(rename = "type")]
    pub trigger_type: TriggerType,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    #[serde(default = "empty_object")]
    pub config: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

fn repo_name(r: &Repository) -> String {
    format!("{}/{}", r.owner, r.name)
}

/// The workspace's automations as a document, sorted by name so an export
/// of unchanged automations is byte-for-byte the same.
pub fn export(automations: &[Automation], repositories: &[Repository]) -> Document {
    let names: HashMap<&str, String> = repositories.iter().map(|r| (r.id.as_str(), repo_name(r))).collect();
    let mut out: Vec<PortableAutomation> = automations
        .iter()
        .map(|a| PortableAutomation {
            name: a.name.clone(),
            description: a.description.clone(),
            enabled: a.enabled,
            prompt: a.prompt.clone(),
            task_title_template: a.task_title_template.clone(),
            agent_profile_id: a.agent_profile_id.clone(),
            executor_profile_id: a.executor_profile_id.clone(),
            max_concurrent_runs: a.max_concurrent_runs,
            repositories: a
                .repository_ids
                .iter()
                .filter_map(|id| names.get(id.as_str()).cloned())
                .collect(),
            no_repository: a.no_repository,
            triggers: a
                .triggers
                .iter()
                .map(|t| PortableTrigger {
                    trigger_type: t.trigger_type,
                    enabled: t.enabled,
                    config: t.config.clone(),
                })
                .collect(),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Document {
        version: VERSION,
        automations: out,
    }
}

/// What an import does to one automation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ImportAction {
    Create,
    Update,
    Unchanged,
}

/// One line of the import's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportChange {
    pub name: String,
    pub action: ImportAction,
    /// The fields an update changes, in document order.
    pub fields: Vec<String>,
}

/// The import's answer: the diff, and whether it was only a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportResult {
    pub dry_run: bool,
    pub changes: Vec<ImportChange>,
}

/// A planned step: the diff line, and what to send to the service.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Create(CreateAutomation),
    Update {
        id: String,
        patch: PatchAutomation,
        /// The triggers to put in place of the current ones, when they differ.
        triggers: Option<Vec<NewTrigger>>,
    },
    Unchanged,
}

/// Matches the document to the workspace by automation name. Automations the
/// document does not name are left alone: an import adds and updates, it
/// never deletes. Every problem is reported at once, and none is written.
pub fn plan(
    doc: &Document,
    existing: &[Automation],
    repositories: &[Repository],
) -> Result<Vec<(ImportChange, Step)>, Vec<String>> {
    let mut problems = vec![];
    if doc.version != VERSION {
        problems.push(format!(
            "unsupported document version {}: this server reads version {VERSION}",
            doc.version
        ));
        return Err(problems);
    }
    let repo_ids: HashMap<String, &str> = repositories
        .iter()
        .map(|r| (repo_name(r).to_lowercase(), r.id.as_str()))
        .collect();
    let mut by_name: HashMap<&str, Vec<&Automation>> = HashMap::new();
    for a in existing {
        by_name.entry(a.name.trim()).or_default().push(a);
    }
    let mut seen = BTreeSet::new();
    let mut steps = vec![];
    for p in &doc.automations {
        let name = p.name.trim();
        if name.is_empty() {
            problems.push("an automation has no name".into());
            continue;
        }
        if !seen.insert(name) {
            problems.push(format!("\"{name}\" appears twice in the document"));
            continue;
        }
        let mut ids = vec![];
        for r in &p.repositories {
            match repo_ids.get(&r.trim().to_lowercase()) {
                // A repository listed twice is meant once.
                Some(id) if ids.iter().any(|x| x == id) => {}
                Some(id) => ids.push(id.to_string()),
                None => problems.push(format!(
                    "\"{name}\": repository {r} is not in this workspace (add it first)"
                )),
            }
        }
        let triggers: Vec<NewTrigger> = p
            .triggers
            .iter()
            .map(|t| NewTrigger {
                trigger_type: t.trigger_type,
                config: t.config.clone(),
                enabled: Some(t.enabled),
            })
            .collect();
        let step = match by_name.get(name).map(Vec::as_slice) {
            None | Some([]) => (
                ImportChange {
                    name: name.into(),
                    action: ImportAction::Create,
                    fields: vec![],
                },
                Step::Create(CreateAutomation {
                    name: name.into(),
                    description: Some(p.description.clone()),
                    prompt: Some(p.prompt.clone()),
                    task_title_template: Some(p.task_title_template.clone()),
                    agent_profile_id: Some(p.agent_profile_id.clone()),
                    executor_profile_id: Some(p.executor_profile_id.clone()),
                    repository_ids: Some(ids),
                    no_repository: Some(p.no_repository),
                    max_concurrent_runs: Some(p.max_concurrent_runs),
                    enabled: Some(p.enabled),
                    triggers: Some(triggers),
                }),
            ),
            Some([current]) => update(current, p, ids, triggers),
            Some(_) => {
                problems.push(format!(
                    "several automations in this workspace are named \"{name}\": rename them before importing"
                ));
                continue;
            }
        };
        steps.push(step);
    }
    if problems.is_empty() { Ok(steps) } else { Err(problems) }
}

fn update(
    current: &Automation,
    p: &PortableAutomation,
    ids: Vec<String>,
    triggers: Vec<NewTrigger>,
) -> (ImportChange, Step) {
    let mut fields = vec![];
    let mut patch = PatchAutomation::default();
    let mut text = |field: &str, now: &str, want: &str, slot: &mut Option<String>| {
        if now != want {
            fields.push(field.to_string());
            *slot = Some(want.to_string());
        }
    };
    text(
        "description",
        &current.description,
        &p.description,
        &mut patch.description,
    );
    text("prompt", &current.prompt, &p.prompt, &mut patch.prompt);
    text(
        "task_title_template",
        &current.task_title_template,
        &p.task_title_template,
        &mut patch.task_title_template,
    );
    text(
        "agent_profile_id",
        &current.agent_profile_id,
        &p.agent_profile_id,
        &mut patch.agent_profile_id,
    );
    text(
        "executor_profile_id",
        &current.executor_profile_id,
        &p.executor_profile_id,
        &mut patch.executor_profile_id,
    );
    if current.enabled != p.enabled {
        fields.push("enabled".into());
        patch.enabled = Some(p.enabled);
    }
    if current.max_concurrent_runs != p.max_concurrent_runs {
        fields.push("max_concurrent_runs".into());
        patch.max_concurrent_runs = Some(p.max_concurrent_runs);
    }
    let same_repos = current.repository_ids.iter().collect::<BTreeSet<_>>() == ids.iter().collect::<BTreeSet<_>>();
    if !same_repos {
        fields.push("repositories".into());
        patch.repository_ids = Some(ids);
    }
    if current.no_repository != p.no_repository {
        fields.push("no_repository".into());
        patch.no_repository = Some(p.no_repository);
    }
    let now: Vec<(TriggerType, bool, &Value)> = current
        .triggers
        .iter()
        .map(|t| (t.trigger_type, t.enabled, &t.config))
        .collect();
    let want: Vec<(TriggerType, bool, &Value)> = triggers
        .iter()
        .map(|t| (t.trigger_type, t.enabled.unwrap_or(true), &t.config))
        .collect();
    let triggers = if now == want {
        None
    } else {
        fields.push("triggers".into());
        Some(triggers)
    };
    let action = if fields.is_empty() {
        ImportAction::Unchanged
    } else {
        ImportAction::Update
    };
    let step = if fields.is_empty() {
        Step::Unchanged
    } else {
        Step::Update {
            id: current.id.clone(),
            patch,
            triggers,
        }
    };
    (
        ImportChange {
            name: current.name.trim().to_string(),
            action,
            fields,
        },
        step,
    )
}

#[cfg(test)]
mod tests;
