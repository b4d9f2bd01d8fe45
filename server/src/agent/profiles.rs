//! Agent profiles: a name and a command that speaks ACP over stdio. The
//! built-in `mock` profile runs `kandev mock-agent`.

use std::collections::BTreeMap;

use kandev_core::api::{AgentProfile, CreateAgentProfile, MOCK_AGENT_PROFILE_ID, PatchAgentProfile};
use kandev_core::bounds;

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

fn invalid(e: bounds::OutOfBounds) -> ServiceError {
    ServiceError::Invalid(e.0)
}

/// At most 64 arguments and 64 variables, each within its bound; variable
/// names hold no `=` or NUL (`kandev_core::schema::ENV_KEY`).
fn check(p: &AgentProfile) -> ServiceResult<()> {
    if p.args.len() > 64 || p.env.len() > 64 {
        return Err(ServiceError::Invalid("at most 64 args and 64 env variables".into()));
    }
    for a in &p.args {
        bounds::text("args", a).map_err(invalid)?;
    }
    for (k, v) in &p.env {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(ServiceError::Invalid(format!(
                "{k:?} is not an environment variable name"
            )));
        }
        bounds::name("env key", k).map_err(invalid)?;
        bounds::text("env value", v).map_err(invalid)?;
    }
    Ok(())
}

pub async fn create(
    store: &Store,
    req: CreateAgentProfile,
    now: chrono::DateTime<chrono::Utc>,
) -> ServiceResult<AgentProfile> {
    let p = AgentProfile {
        id: String::new(),
        name: bounds::required_name("name", &req.name).map_err(invalid)?.into(),
        command: bounds::required_name("command", &req.command).map_err(invalid)?.into(),
        args: req.args,
        env: req.env,
        builtin: false,
    };
    check(&p)?;
    Ok(store.create_agent_profile(&p, now).await?)
}

/// Changes a stored profile; the built-in one cannot change.
pub async fn update(store: &Store, id: &str, req: PatchAgentProfile) -> ServiceResult<AgentProfile> {
    if id == MOCK_AGENT_PROFILE_ID {
        return Err(ServiceError::Conflict("the built-in mock profile cannot change".into()));
    }
    let mut p = store
        .get_agent_profile(id)
        .await
        .map_err(ServiceError::not_found("agent profile"))?;
    if let Some(v) = req.name {
        p.name = bounds::required_name("name", &v).map_err(invalid)?.into();
    }
    if let Some(v) = req.command {
        p.command = bounds::required_name("command", &v).map_err(invalid)?.into();
    }
    if let Some(v) = req.args {
        p.args = v;
    }
    if let Some(v) = req.env {
        p.env = v;
    }
    check(&p)?;
    store.update_agent_profile(&p).await?;
    Ok(p)
}

pub async fn delete(store: &Store, id: &str) -> ServiceResult<()> {
    if id == MOCK_AGENT_PROFILE_ID {
        return Err(ServiceError::Conflict(
            "the built-in mock profile cannot be deleted".into(),
        ));
    }
    store
        .delete_agent_profile(id)
        .await
        .map_err(ServiceError::not_found("agent profile"))
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
