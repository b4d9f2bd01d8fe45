//! Gate names and evaluation outcomes, shared by the engine's evaluation record
//! and the editor's "would this fire?" preview so the two cannot drift.

use serde::{Deserialize, Serialize};

/// The first rule that stopped an event for a trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    // github_pr_merged, per event (1–7)
    Payload,
    TaskId,
    MergedState,
    RepoIdentity,
    PrNumber,
    LookupWired,
    TaskResolvable,
    NotAutomationRun,
    // github_pr_merged, per trigger (8–11)
    Workspace,
    Repository,
    BaseBranch,
    FiredSet,
    // shared by the other detectors
    Config,
    WorkspaceMembership,
    Branch,
    Conclusion,
    CheckName,
    Draft,
    Author,
    Label,
    // fire_trigger admission
    AutomationExists,
    AutomationEnabled,
    Dedup,
    ConcurrencyCap,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Payload => "payload",
            Gate::TaskId => "task_id",
            Gate::MergedState => "merged_state",
            Gate::RepoIdentity => "repo_identity",
            Gate::PrNumber => "pr_number",
            Gate::LookupWired => "lookup_wired",
            Gate::TaskResolvable => "task_resolvable",
            Gate::NotAutomationRun => "not_automation_run",
            Gate::Workspace => "workspace",
            Gate::Repository => "repository",
            Gate::BaseBranch => "base_branch",
            Gate::FiredSet => "fired_set",
            Gate::Config => "config",
            Gate::WorkspaceMembership => "workspace_membership",
            Gate::Branch => "branch",
            Gate::Conclusion => "conclusion",
            Gate::CheckName => "check_name",
            Gate::Draft => "draft",
            Gate::Author => "author",
            Gate::Label => "label",
            Gate::AutomationExists => "automation_exists",
            Gate::AutomationEnabled => "automation_enabled",
            Gate::Dedup => "dedup",
            Gate::ConcurrencyCap => "concurrency_cap",
        }
    }

    /// Fluent message id for the gate's explanation in the editor.
    pub fn message_id(self) -> String {
        format!("gate-{}", self.as_str().replace('_', "-"))
    }
}

/// How one evaluation of one trigger ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Fired,
    Deduplicated,
    Capped,
    Stopped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Fired => "fired",
            Outcome::Deduplicated => "deduplicated",
            Outcome::Capped => "capped",
            Outcome::Stopped => "stopped",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Fired, Outcome::Deduplicated, Outcome::Capped, Outcome::Stopped]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_names_are_snake_case_and_match_serde() {
        for g in [
            Gate::Payload,
            Gate::FiredSet,
            Gate::NotAutomationRun,
            Gate::ConcurrencyCap,
        ] {
            let json = serde_json::to_string(&g).unwrap();
            assert_eq!(json, format!("\"{}\"", g.as_str()));
        }
        assert_eq!(Gate::BaseBranch.message_id(), "gate-base-branch");
        assert_eq!(Outcome::parse("capped"), Some(Outcome::Capped));
    }
}
