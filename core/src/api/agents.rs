use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An agent profile as stored and run: the command and its environment.
/// Never sent over the API (its `env` values may be secrets): see [`AgentProfileInfo`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProfile {
    pub id: String,
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// The built-in `mock` profile cannot be changed.
    pub builtin: bool,
}

/// An agent profile as the API shows it: the environment's keys, never its values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentProfileInfo {
    pub id: String,
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env_keys: Vec<String>,
    pub builtin: bool,
}

impl From<&AgentProfile> for AgentProfileInfo {
    fn from(p: &AgentProfile) -> Self {
        AgentProfileInfo {
            id: p.id.clone(),
            name: p.name.clone(),
            command: p.command.clone(),
            args: p.args.clone(),
            env_keys: p.env.keys().cloned().collect(),
            builtin: p.builtin,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateAgentProfile {
    pub name: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// `PATCH /agent-profiles/{id}`: what is given replaces what was stored
/// (`env` as a whole).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchAgentProfile {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
}

/// The built-in profile that runs `kandev mock-agent`.
pub const MOCK_AGENT_PROFILE_ID: &str = "mock";
