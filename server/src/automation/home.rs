//! The automations home across the caller's workspaces: the agenda and the
//! feed, gathered per workspace and merged by core's rules.

use kandev_core::agenda::{agenda, newest_runs};
use kandev_core::api::{AgendaEntry, Run};

use super::AutomationService;
use crate::error::ServiceResult;

impl AutomationService {
    /// Upcoming scheduled runs of these workspaces' automations, soonest first.
    pub async fn agenda(&self, workspace_ids: &[String], limit: usize) -> ServiceResult<Vec<AgendaEntry>> {
        let mut all = vec![];
        for ws in workspace_ids {
            all.extend(self.store.list_automations(ws).await?);
        }
        Ok(agenda(&all, self.clock.now(), limit))
    }

    /// The newest runs of these workspaces, each marked with its workspace.
    pub async fn feed(&self, workspace_ids: &[String], limit: i64) -> ServiceResult<Vec<Run>> {
        let mut per_workspace = vec![];
        for ws in workspace_ids {
            let mut runs = self.store.list_workspace_runs(ws, limit).await?;
            for r in &mut runs {
                r.workspace_id = Some(ws.clone());
            }
            per_workspace.push(runs);
        }
        Ok(newest_runs(per_workspace, usize::try_from(limit).unwrap_or(0)))
    }
}
