//! Typed trigger configurations with their absent-field defaults.
//!
//! Configs are stored raw (JSON text) and parsed at evaluation time. Absent or
//! `null` fields take their zero value, mirroring the original engine's decoding;
//! a value of the wrong type makes the whole config invalid.

use serde::{Deserialize, Serialize};

use super::TriggerType;
#[cfg(feature = "zones")]
use crate::cron;
use crate::lenient::null_as_default;

/// A repository filter entry. `name: ""` is an organisation wildcard (shown as
/// `owner/*`), meaningful only to the merged-PR matcher.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RepoFilter {
    #[serde(default, deserialize_with = "null_as_default")]
    pub owner: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
}

impl RepoFilter {
    pub fn new(owner: &str, name: &str) -> Self {
        RepoFilter {
            owner: owner.to_string(),
            name: name.to_string(),
        }
    }

    pub fn is_org_wildcard(&self) -> bool {
        self.name.is_empty()
    }

    /// How a selector badge shows the entry: `owner/name`, or `owner/*`.
    pub fn display(&self) -> String {
        if self.is_org_wildcard() {
            format!("{}/*", self.owner)
        } else {
            format!("{}/{}", self.owner, self.name)
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduledConfig {
    #[serde(default, deserialize_with = "null_as_default")]
    pub cron_expression: String,
    /// IANA zone; empty means UTC.
    #[serde(default, deserialize_with = "null_as_default")]
    pub timezone: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GithubPrConfig {
    /// Only `opened` is meaningful: each open PR fires once per automation.
    #[serde(default, deserialize_with = "null_as_default")]
    pub events: Vec<String>,
    /// Empty means the trigger never polls.
    #[serde(default, deserialize_with = "null_as_default")]
    pub repos: Vec<RepoFilter>,
    /// Base-branch globs; empty matches all.
    #[serde(default, deserialize_with = "null_as_default")]
    pub branches: Vec<String>,
    /// Exact author logins; empty matches all.
    #[serde(default, deserialize_with = "null_as_default")]
    pub authors: Vec<String>,
    /// Any listed label matches; empty is no filter.
    #[serde(default, deserialize_with = "null_as_default")]
    pub labels: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub exclude_draft: bool,
    /// Editor-only draft key: the backend ignores it (spec keeps this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_repos: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GithubPrMergedConfig {
    /// Absent means `false`: an accidentally empty config matches nothing.
    #[serde(default, deserialize_with = "null_as_default")]
    pub all_repos: bool,
    #[serde(default, deserialize_with = "null_as_default")]
    pub repos: Vec<RepoFilter>,
    /// Globs on the PR's base branch, stored verbatim; normalised at match time.
    #[serde(default, deserialize_with = "null_as_default")]
    pub base_branches: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GithubPushConfig {
    #[serde(default, deserialize_with = "null_as_default")]
    pub repos: Vec<RepoFilter>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub branches: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GithubCiConfig {
    #[serde(default, deserialize_with = "null_as_default")]
    pub repos: Vec<RepoFilter>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub conclusions: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub check_names: Vec<String>,
    /// Head-branch globs; empty matches all.
    #[serde(default, deserialize_with = "null_as_default")]
    pub branches: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebhookConfig {}

/// A parsed trigger configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum TriggerConfig {
    Scheduled(ScheduledConfig),
    GithubPr(GithubPrConfig),
    GithubPrMerged(GithubPrMergedConfig),
    GithubPush(GithubPushConfig),
    GithubCi(GithubCiConfig),
    Webhook(WebhookConfig),
}

/// Why a stored config could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Configs must be JSON objects: serde would otherwise accept an array as a
/// struct, which the engine's decoding never did.
fn parse_as<T: for<'de> Deserialize<'de>>(raw: &str) -> Result<T, ConfigError> {
    let value: serde_json::Value = serde_json::from_str(raw).map_err(|e| ConfigError(e.to_string()))?;
    if !value.is_object() {
        return Err(ConfigError("config must be a JSON object".into()));
    }
    serde_json::from_value(value).map_err(|e| ConfigError(e.to_string()))
}

/// Parses a stored config for its type.
pub fn parse_config(t: TriggerType, raw: &str) -> Result<TriggerConfig, ConfigError> {
    Ok(match t {
        TriggerType::Scheduled => TriggerConfig::Scheduled(parse_as(raw)?),
        TriggerType::GithubPr => TriggerConfig::GithubPr(parse_as(raw)?),
        TriggerType::GithubPrMerged => TriggerConfig::GithubPrMerged(parse_as(raw)?),
        TriggerType::GithubPush => TriggerConfig::GithubPush(parse_as(raw)?),
        TriggerType::GithubCi => TriggerConfig::GithubCi(parse_as(raw)?),
        TriggerType::Webhook => TriggerConfig::Webhook(parse_as(raw)?),
    })
}

pub fn parse_merged(raw: &str) -> Result<GithubPrMergedConfig, ConfigError> {
    parse_as(raw)
}

pub fn parse_push(raw: &str) -> Result<GithubPushConfig, ConfigError> {
    parse_as(raw)
}

pub fn parse_ci(raw: &str) -> Result<GithubCiConfig, ConfigError> {
    parse_as(raw)
}

pub fn parse_pr(raw: &str) -> Result<GithubPrConfig, ConfigError> {
    parse_as(raw)
}

pub fn parse_scheduled(raw: &str) -> Result<ScheduledConfig, ConfigError> {
    parse_as(raw)
}

#[cfg(feature = "zones")]
/// Save-time validation: the engine's only per-type check is the schedule,
/// which must parse and have a run after `now`. Every other config is stored
/// as given, even a dead one.
pub fn validate_for_save(
    t: TriggerType,
    raw: &serde_json::Value,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), String> {
    if t != TriggerType::Scheduled {
        return Ok(());
    }
    let cfg: ScheduledConfig =
        parse_as(&raw.to_string()).map_err(|e| format!("invalid scheduled trigger config: {e}"))?;
    if cfg.cron_expression.trim().is_empty() {
        return Ok(());
    }
    cron::validate_schedule(&cfg.cron_expression, &cfg.timezone, now)
        .map_err(|e| format!("invalid schedule \"{}\": {e}", cfg.cron_expression))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_absent_all_repos_defaults_to_false() {
        let cfg = parse_merged("{}").unwrap();
        assert!(!cfg.all_repos);
        assert!(cfg.repos.is_empty());
        assert!(cfg.base_branches.is_empty());
    }

    #[test]
    fn merged_default_registry_config_parses_to_all_repos() {
        let cfg = parse_merged(r#"{"all_repos":true,"repos":[],"base_branches":[]}"#).unwrap();
        assert!(cfg.all_repos);
    }

    #[test]
    fn null_fields_read_as_their_zero_values() {
        let cfg = parse_merged(r#"{"all_repos":null,"repos":null,"base_branches":null}"#).unwrap();
        assert_eq!(cfg, GithubPrMergedConfig::default());
        let f: RepoFilter = serde_json::from_str(r#"{"owner":"acme","name":null}"#).unwrap();
        assert!(f.is_org_wildcard());
    }

    #[test]
    fn wrong_types_make_the_config_invalid() {
        assert!(parse_merged(r#"{"all_repos":"yes"}"#).is_err());
        assert!(parse_merged("[]").is_err());
        assert!(parse_merged("not json").is_err());
        assert!(parse_push(r#"{"repos":"acme/api"}"#).is_err());
    }

    #[test]
    fn every_type_parses_its_registry_default_and_the_empty_object() {
        for e in crate::registry::ENTRIES {
            assert!(parse_config(e.trigger_type, e.default_config).is_ok(), "{}", e.label);
            assert!(parse_config(e.trigger_type, "{}").is_ok(), "{}", e.label);
        }
    }

    #[test]
    fn other_types_have_open_defaults_where_the_engine_says_so() {
        let pr = parse_pr("{}").unwrap();
        assert!(pr.repos.is_empty() && pr.branches.is_empty() && !pr.exclude_draft);
        assert_eq!(pr.all_repos, None);
        let ci = parse_ci(r#"{"repos":[{"owner":"o","name":"n"}]}"#).unwrap();
        assert_eq!(ci.repos, vec![RepoFilter::new("o", "n")]);
        let s = parse_scheduled(r#"{"cron_expression":"@daily"}"#).unwrap();
        assert_eq!(s.timezone, "");
    }

    #[test]
    fn save_validation_checks_only_the_schedule() {
        use serde_json::json;
        let now = || {
            chrono::DateTime::parse_from_rfc3339("2026-03-08T09:00:00Z")
                .unwrap()
                .to_utc()
        };
        assert!(validate_for_save(TriggerType::GithubPrMerged, &json!("garbage"), now()).is_ok());
        assert!(validate_for_save(TriggerType::Scheduled, &json!({"cron_expression": ""}), now()).is_ok());
        assert!(validate_for_save(TriggerType::Scheduled, &json!({"cron_expression": "0 9 * * 1"}), now()).is_ok());
        let err = validate_for_save(TriggerType::Scheduled, &json!({"cron_expression": "nope"}), now()).unwrap_err();
        assert!(err.starts_with("invalid schedule \"nope\": "), "{err}");
        let err = validate_for_save(TriggerType::Scheduled, &json!({"cron_expression": 5}), now()).unwrap_err();
        assert!(err.starts_with("invalid scheduled trigger config: "), "{err}");
        let err = validate_for_save(
            TriggerType::Scheduled,
            &json!({"cron_expression": "@daily", "timezone": "Mars/Olympus"}),
            now(),
        )
        .unwrap_err();
        assert!(err.starts_with("invalid schedule \"@daily\": "), "{err}");
    }

    #[test]
    fn org_wildcard_displays_as_owner_star() {
        assert_eq!(RepoFilter::new("acme", "").display(), "acme/*");
        assert_eq!(RepoFilter::new("acme", "api").display(), "acme/api");
    }
}
