//! The trigger index: the enabled triggers of the event-driven types, held
//! in memory per type and per (type, workspace), so an event reads only its
//! own workspace's triggers and no trigger row from the database.
//!
//! Coherence: every write to an automation or a trigger bumps the
//! `trigger_catalog` version in its own transaction. Each lookup reads that
//! one row first and rebuilds when the version held is older — so the very
//! next event after a write sees it, in this process and on every replica.

use std::collections::HashMap;
use std::sync::Arc;

use kandev_core::trigger::TriggerType;
use kandev_core::trigger::config::{GithubPrMergedConfig, parse_merged};
use tokio::sync::Mutex;

use crate::store::automations::TriggerWithAutomation;
use crate::store::{Store, StoreResult};

/// The types whose detectors evaluate events (the scheduler keeps reading
/// the database: its anchors move on every tick).
const INDEXED: [TriggerType; 3] = [
    TriggerType::GithubPrMerged,
    TriggerType::GithubPush,
    TriggerType::GithubCi,
];

type Triggers = Arc<Vec<TriggerWithAutomation>>;

/// A trigger with its config parsed once, when the index was built.
pub struct Indexed {
    pub trigger: TriggerWithAutomation,
    /// `github_pr_merged` configs (an invalid one keeps its error, so the
    /// trigger is skipped with the config gate, as before).
    pub merged: Option<Result<GithubPrMergedConfig, String>>,
}

impl std::ops::Deref for Indexed {
    type Target = TriggerWithAutomation;
    fn deref(&self) -> &TriggerWithAutomation {
        &self.trigger
    }
}

type InWorkspace = Arc<Vec<Indexed>>;

struct Snapshot {
    version: i64,
    by_type: HashMap<TriggerType, Triggers>,
    by_workspace: HashMap<(TriggerType, String), InWorkspace>,
}

pub struct TriggerIndex {
    store: Store,
    held: Mutex<Option<Arc<Snapshot>>>,
}

impl TriggerIndex {
    pub fn new(store: Store) -> Self {
        TriggerIndex {
            store,
            held: Mutex::new(None),
        }
    }

    /// Every enabled trigger of `ty`, in `(created_at, id)` order.
    pub async fn enabled(&self, ty: TriggerType) -> StoreResult<Triggers> {
        if !INDEXED.contains(&ty) {
            return Ok(Arc::new(self.store.list_enabled_triggers_by_type(ty).await?));
        }
        Ok(self.snapshot().await?.by_type.get(&ty).cloned().unwrap_or_default())
    }

    /// The enabled triggers of `ty` in one workspace, in the same order.
    pub async fn enabled_in(&self, ty: TriggerType, workspace_id: &str) -> StoreResult<InWorkspace> {
        if !INDEXED.contains(&ty) {
            let all = self.store.list_enabled_triggers_by_type(ty).await?;
            return Ok(Arc::new(
                all.into_iter()
                    .filter(|t| t.automation_workspace_id == workspace_id)
                    .map(compile)
                    .collect(),
            ));
        }
        Ok(self
            .snapshot()
            .await?
            .by_workspace
            .get(&(ty, workspace_id.to_string()))
            .cloned()
            .unwrap_or_default())
    }

    async fn snapshot(&self) -> StoreResult<Arc<Snapshot>> {
        // The version is read before the triggers: a write landing between
        // the two leaves a snapshot labelled older than its data, which only
        // costs one more rebuild — never a stale snapshot labelled current.
        let version = self.store.trigger_catalog_version().await?;
        let mut held = self.held.lock().await;
        if let Some(s) = held.as_ref().filter(|s| Some(s.version) == version) {
            return Ok(s.clone());
        }
        if version.is_none() {
            tracing::warn!("the trigger_catalog row is missing; triggers are read for every event");
        }
        let mut by_type = HashMap::new();
        let mut by_workspace: HashMap<(TriggerType, String), Vec<Indexed>> = HashMap::new();
        for ty in INDEXED {
            let all = self.store.list_enabled_triggers_by_type(ty).await?;
            for t in &all {
                by_workspace
                    .entry((ty, t.automation_workspace_id.clone()))
                    .or_default()
                    .push(compile(t.clone()));
            }
            by_type.insert(ty, Arc::new(all));
        }
        let snapshot = Arc::new(Snapshot {
            // No version: a snapshot nobody will match, so the next event reads again.
            version: version.unwrap_or(i64::MIN),
            by_type,
            by_workspace: by_workspace.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
        });
        tracing::debug!(version, "trigger index rebuilt");
        *held = Some(snapshot.clone());
        Ok(snapshot)
    }
}

fn compile(trigger: TriggerWithAutomation) -> Indexed {
    let merged = (trigger.trigger_type == TriggerType::GithubPrMerged)
        .then(|| parse_merged(&trigger.config_raw).map_err(|e| e.to_string()));
    Indexed { trigger, merged }
}
