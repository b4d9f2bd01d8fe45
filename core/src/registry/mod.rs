//! The trigger-type registry: the contract values behind the condition picker.
//!
//! Array order is picker order. The API serves [`registry`] and the editor
//! compiles the same data in, so both always agree.

mod prompts;

use serde::{Deserialize, Serialize};

use crate::trigger::TriggerType;

pub use prompts::*;

/// One `{{key}}` the prompt editor offers, with user-visible copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Placeholder {
    pub key: String,
    pub description: String,
    pub example: String,
}

/// A registry entry as the API serves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TriggerTypeInfo {
    #[serde(rename = "type")]
    pub trigger_type: TriggerType,
    pub label: String,
    pub description: String,
    pub category: String,
    pub enabled: bool,
    pub placeholders: Vec<Placeholder>,
    pub default_prompt: String,
    pub default_task_title: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub default_config: serde_json::Value,
}

/// Static contract values for one trigger type.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub trigger_type: TriggerType,
    pub label: &'static str,
    pub description: &'static str,
    pub category: &'static str,
    pub enabled: bool,
    /// Written as compact JSON, like its neighbours.
    pub default_config: &'static str,
    pub default_task_title: &'static str,
    pub default_prompt: &'static str,
    pub placeholders: &'static [(&'static str, &'static str, &'static str)],
}

pub const CATEGORY_SCHEDULE: &str = "schedule";
pub const CATEGORY_GITHUB: &str = "github";
pub const CATEGORY_WEBHOOK: &str = "webhook";

/// The three placeholders every trigger type offers after its own.
pub const COMMON_PLACEHOLDERS: &[(&str, &str, &str)] = &[
    (
        "trigger.type",
        "Trigger type (scheduled, github_pr, webhook, etc.)",
        "scheduled",
    ),
    ("trigger.timestamp", "When the trigger fired", "2026-03-08T12:00:00Z"),
    ("data.*", "Access any field from trigger data", "data.action"),
];

pub const GITHUB_PR_MERGED_DESCRIPTION: &str = "Triggers when a pull request linked to a task in this workspace is merged. Detected by Kandev's PR poller, so it can lag the merge by up to a minute.";

/// The registry, in array (= picker) order. `github_pr_merged` sits at index 2.
pub const ENTRIES: [Entry; 6] = [
    Entry {
        trigger_type: TriggerType::Scheduled,
        label: "Scheduled",
        description: "Runs on a cron schedule",
        category: CATEGORY_SCHEDULE,
        enabled: true,
        default_config: r#"{"cron_expression":"0 */6 * * *","timezone":"UTC"}"#,
        default_task_title: "",
        default_prompt: SCHEDULED_PROMPT,
        placeholders: &[],
    },
    Entry {
        trigger_type: TriggerType::GithubPr,
        label: "New pull requests",
        description: "Polls GitHub for PRs matching your filters (repo, branch, author, labels)",
        category: CATEGORY_GITHUB,
        enabled: true,
        default_config: r#"{"events":["opened"],"repos":[],"exclude_draft":false}"#,
        default_task_title: "[Auto] {{pr.repo}}#{{pr.number}} — {{pr.title}}",
        default_prompt: GITHUB_PR_PROMPT,
        placeholders: &[
            ("pr.number", "Pull request number", "42"),
            ("pr.title", "Pull request title", "Fix the bug"),
            ("pr.url", "Pull request URL", "https://github.com/org/repo/pull/42"),
            ("pr.author", "PR author login", "alice"),
            ("pr.repo", "Repository (owner/name)", "org/repo"),
            ("pr.branch", "Head branch name", "fix-bug"),
            ("pr.base_branch", "Base branch name", "main"),
            ("pr.body", "Pull request body text", "Fixes #123"),
        ],
    },
    Entry {
        trigger_type: TriggerType::GithubPrMerged,
        label: "Pull request merged",
        description: GITHUB_PR_MERGED_DESCRIPTION,
        category: CATEGORY_GITHUB,
        enabled: true,
        default_config: r#"{"all_repos":true,"repos":[],"base_branches":[]}"#,
        default_task_title: "[Auto] PR merged — {{data.repo}}#{{data.pr_number}}",
        default_prompt: GITHUB_PR_MERGED_PROMPT,
        placeholders: &[
            (
                "data.task_id",
                "Id of the task whose pull request merged",
                "t_01H8XK...",
            ),
            ("data.repo", "Repository the pull request belonged to", "acme/api"),
            ("data.pr_number", "Pull request number", "7"),
            ("data.pr_url", "Pull request URL", "https://github.com/acme/api/pull/7"),
            ("data.base_branch", "Branch the pull request merged into", "main"),
            ("data.merged_at", "Merge timestamp, RFC3339 UTC", "2026-03-08T12:00:00Z"),
        ],
    },
    Entry {
        trigger_type: TriggerType::GithubPush,
        label: "Push to branch",
        description: "Webhook-driven: triggers when commits are pushed to matching branches. Requires a workspace GitHub App connection subscribed to push events.",
        category: CATEGORY_GITHUB,
        enabled: true,
        default_config: r#"{"repos":[],"branches":["main"]}"#,
        default_task_title: "[Auto] Push to {{push.branch}} — {{push.repo}}",
        default_prompt: GITHUB_PUSH_PROMPT,
        placeholders: &[
            ("push.branch", "Branch that was pushed to", "main"),
            ("push.repo", "Repository (owner/name)", "org/repo"),
            ("push.sha", "Commit SHA", "abc1234"),
            ("push.message", "Commit message", "feat: add feature"),
        ],
    },
    Entry {
        trigger_type: TriggerType::GithubCi,
        label: "CI check result",
        description: "Webhook-driven: triggers when a CI check completes with matching conclusion. Requires a workspace GitHub App connection subscribed to check_run events.",
        category: CATEGORY_GITHUB,
        enabled: true,
        default_config: r#"{"repos":[],"conclusions":["failure"]}"#,
        default_task_title: "[Auto] CI {{ci.conclusion}} — {{ci.check_name}}",
        default_prompt: GITHUB_CI_PROMPT,
        placeholders: &[
            ("ci.check_name", "CI check/workflow name", "build"),
            ("ci.conclusion", "CI conclusion", "failure"),
            ("ci.repo", "Repository (owner/name)", "org/repo"),
            ("ci.url", "CI run URL", "https://github.com/..."),
        ],
    },
    Entry {
        trigger_type: TriggerType::Webhook,
        label: "Webhook",
        description: "Triggers when an HTTP POST is received at the automation's webhook URL",
        category: CATEGORY_WEBHOOK,
        enabled: true,
        default_config: "{}",
        default_task_title: "",
        default_prompt: WEBHOOK_PROMPT,
        placeholders: &[(
            "webhook.body",
            "Full webhook request body (JSON)",
            "{\"event\":\"deploy\"}",
        )],
    },
];

/// The static entry for a type. Every type has one, so this cannot fail.
pub fn entry(t: TriggerType) -> &'static Entry {
    // ENTRIES is indexed in TriggerType::ALL order; the guard test pins both.
    let index = TriggerType::ALL.iter().position(|x| *x == t).unwrap_or(0);
    &ENTRIES[index]
}

/// Looks a type up by its stored name; unknown names (e.g. `manual`) give `None`.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    TriggerType::parse(name).map(entry)
}

impl Entry {
    /// The type's own placeholders followed by the three common ones.
    pub fn all_placeholders(&self) -> Vec<Placeholder> {
        self.placeholders
            .iter()
            .chain(COMMON_PLACEHOLDERS.iter())
            .map(|(key, description, example)| Placeholder {
                key: (*key).to_string(),
                description: (*description).to_string(),
                example: (*example).to_string(),
            })
            .collect()
    }

    /// The default configuration as a JSON value.
    pub fn default_config_value(&self) -> serde_json::Value {
        serde_json::from_str(self.default_config).unwrap_or_else(|_| serde_json::json!({}))
    }

    pub fn info(&self) -> TriggerTypeInfo {
        TriggerTypeInfo {
            trigger_type: self.trigger_type,
            label: self.label.to_string(),
            description: self.description.to_string(),
            category: self.category.to_string(),
            enabled: self.enabled,
            placeholders: self.all_placeholders(),
            default_prompt: self.default_prompt.to_string(),
            default_task_title: self.default_task_title.to_string(),
            default_config: self.default_config_value(),
        }
    }
}

/// The registry as served by `GET /api/v1/automation-trigger-types`.
pub fn registry() -> Vec<TriggerTypeInfo> {
    ENTRIES.iter().map(Entry::info).collect()
}

/// Whether `prompt` still equals one of the registry's default prompts, or the
/// editor's form default (the `scheduled` prompt). Only then may the editor
/// replace it when the condition changes.
pub fn is_default_prompt(prompt: &str) -> bool {
    ENTRIES.iter().any(|e| e.default_prompt == prompt)
}

#[cfg(test)]
mod tests;
