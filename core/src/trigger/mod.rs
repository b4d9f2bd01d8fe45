//! Trigger types, their typed configurations and the matching helpers.

pub mod config;
pub mod detect;
pub mod matching;
pub mod moved_repo;

use serde::{Deserialize, Serialize};

/// The six registry trigger types, in registry order.
///
/// `manual` is not a trigger type: it is a firing kind with no registry entry
/// (see [`FiringType`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TriggerType {
    Scheduled,
    GithubPr,
    GithubPrMerged,
    GithubPush,
    GithubCi,
    Webhook,
}

impl TriggerType {
    /// Every trigger type in registry (and picker) order.
    pub const ALL: [TriggerType; 6] = [
        TriggerType::Scheduled,
        TriggerType::GithubPr,
        TriggerType::GithubPrMerged,
        TriggerType::GithubPush,
        TriggerType::GithubCi,
        TriggerType::Webhook,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TriggerType::Scheduled => "scheduled",
            TriggerType::GithubPr => "github_pr",
            TriggerType::GithubPrMerged => "github_pr_merged",
            TriggerType::GithubPush => "github_push",
            TriggerType::GithubCi => "github_ci",
            TriggerType::Webhook => "webhook",
        }
    }

    /// Parses a stored type name; unknown names (including `manual`) give `None`.
    pub fn parse(s: &str) -> Option<TriggerType> {
        TriggerType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl std::fmt::Display for TriggerType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What started a firing: a registry trigger type, or the manual Run button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FiringType {
    Trigger(TriggerType),
    Manual,
}

impl FiringType {
    pub const MANUAL: &'static str = "manual";

    pub fn as_str(self) -> &'static str {
        match self {
            FiringType::Trigger(t) => t.as_str(),
            FiringType::Manual => Self::MANUAL,
        }
    }

    pub fn parse(s: &str) -> Option<FiringType> {
        if s == Self::MANUAL {
            return Some(FiringType::Manual);
        }
        TriggerType::parse(s).map(FiringType::Trigger)
    }

    pub fn trigger_type(self) -> Option<TriggerType> {
        match self {
            FiringType::Trigger(t) => Some(t),
            FiringType::Manual => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_manual_is_not_a_trigger_type() {
        for t in TriggerType::ALL {
            assert_eq!(TriggerType::parse(t.as_str()), Some(t));
            assert_eq!(FiringType::parse(t.as_str()), Some(FiringType::Trigger(t)));
        }
        assert_eq!(TriggerType::parse("manual"), None);
        assert_eq!(FiringType::parse("manual"), Some(FiringType::Manual));
        assert_eq!(FiringType::parse("nope"), None);
    }

    #[test]
    fn serde_uses_snake_case_names() {
        let json = serde_json::to_string(&TriggerType::GithubPrMerged).unwrap();
        assert_eq!(json, "\"github_pr_merged\"");
    }
}
