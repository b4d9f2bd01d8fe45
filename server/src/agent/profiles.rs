//! Agent profiles: a name and a command that speaks ACP over stdio. The
//! built-in `mock` profile runs `kandev mock-agent`.

use std::collections::BTreeMap;

use kandev_core::api::{AgentProfile, CreateAgentProfile, MOCK_AGENT_PROFILE_ID};

use crate::error::{ServiceError, ServiceResult};
use crate::store::{Store, StoreError};

/// The built-in profile: this very binary, in mock-agent mode.
pub fn mock_profile() -> AgentProfile {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "kandev".into());
    AgentProfile {
        id: MOCK_AGENT_PROFILE_ID.into(),
        name: "Mock agent".into(),
        command: exe,
        args: vec!["mock-agent".into()],
        env: BTreeMap::new(),
        builtin: true,
    }
}

pub async fn list(store: &Store) -> ServiceResult<Vec<AgentProfile>> {
    let mut out = vec![mock_profile()];
    out.extend(store.list_agent_profiles().await?);
    Ok(out)
}

pub async fn create(
    store: &Store,
    req: CreateAgentProfile,
    now: chrono::DateTime<chrono::Utc>,
) -> ServiceResult<AgentProfile> {
    if req.name.trim().is_empty() {
        return Err(ServiceError::Invalid("name is required".into()));
    }
    if req.command.trim().is_empty() {
        return Err(ServiceError::Invalid("command is required".into()));
    }
    let p = AgentProfile {
        id: String::new(),
        name: req.name.trim().into(),
        command: req.command.trim().into(),
        args: req.args,
        env: req.env,
        builtin: false,
    };
    Ok(store.create_agent_profile(&p, now).await?)
}

/// Which profile runs a session: the automation's, else `KANDEV_DEFAULT_AGENT`
/// (a profile id or name, or a command line), else the mock agent.
pub async fn resolve(store: &Store, profile_id: &str, default_agent: Option<&str>) -> ServiceResult<AgentProfile> {
    if !profile_id.is_empty() {
        return by_id_or_name(store, profile_id)
            .await?
            .ok_or_else(|| ServiceError::Invalid(format!("agent profile {profile_id} does not exist")));
    }
    let Some(default) = default_agent.map(str::trim).filter(|d| !d.is_empty()) else {
        return Ok(mock_profile());
    };
    if let Some(p) = by_id_or_name(store, default).await? {
        return Ok(p);
    }
    let mut words = default.split_whitespace().map(str::to_string);
    let command = words.next().unwrap_or_default();
    Ok(AgentProfile {
        id: "default".into(),
        name: "Default agent".into(),
        command,
        args: words.collect(),
        env: BTreeMap::new(),
        builtin: true,
    })
}

async fn by_id_or_name(store: &Store, key: &str) -> ServiceResult<Option<AgentProfile>> {
    if key == MOCK_AGENT_PROFILE_ID {
        return Ok(Some(mock_profile()));
    }
    match store.get_agent_profile(key).await {
        Ok(p) => return Ok(Some(p)),
        Err(StoreError::NotFound) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(store.list_agent_profiles().await?.into_iter().find(|p| p.name == key))
}
