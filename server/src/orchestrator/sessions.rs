//! Each agent turn holds its session's lease (`session:{id}`) from its
//! claim to its end, so a turn whose replica stopped — a reply's above all,
//! which no run recovery sees — is known and its session opened again,
//! instead of reading as busy, refusing every reply, for ever.

use crate::coord::lease;
use crate::store::StoreResult;
use crate::store::agents::claim_waiting_session_on;

use super::Orchestrator;

/// Why a session waits for input again after its replica stopped mid-turn.
pub const TURN_LOST: &str = "its replica stopped during the turn; reply to go on";

impl Orchestrator {
    /// Claims a waiting session for a reply's turn and its lease, in one
    /// transaction: true for exactly one of several replies racing. Without
    /// the lease nothing is claimed (a session busy with no turn to end it).
    pub async fn claim_reply(&self, session_id: &str) -> StoreResult<bool> {
        let mut tx = self.store.write_tx().await?;
        if !claim_waiting_session_on(&mut tx, session_id).await?
            || !self.leases.hold_in(&mut tx, &lease::session(session_id)).await?
        {
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Whether this replica takes no lease now (its clock is off the
    /// database's, or another process runs under its name): it starts no turn.
    pub fn standing_down(&self) -> bool {
        self.leases.standing_down()
    }

    /// Takes a run's first turn's session lease (the run's own lease keeps
    /// it from recovery until then).
    pub async fn hold_turn(&self, session_id: &str) -> bool {
        self.leases.try_hold(&lease::session(session_id)).await
    }

    /// The turn is over and its session's state written: its lease goes.
    pub async fn turn_over(&self, session_id: &str) {
        self.leases.release(&lease::session(session_id)).await;
    }

    /// Whether this replica holds `lease` (a turn goes on only while it does).
    pub fn holds(&self, lease: &str) -> bool {
        self.leases.holds(lease)
    }

    /// Whether this replica still holds the run of `task_id`; when not, says
    /// what it therefore leaves to the holder (`what`).
    pub(super) fn still_holds_run(&self, task_id: &str, what: &str) -> bool {
        let held = self.holds(&lease::run(task_id));
        if !held {
            tracing::warn!(task_id, "{}: {what}", super::HANDED_OVER);
        }
        held
    }

    /// Every agent-start slot (`CONCURRENT_STARTS`), so a test can hold them
    /// all as eight slow starts would.
    #[doc(hidden)]
    pub fn start_slots(&self) -> &tokio::sync::Semaphore {
        &self.starts
    }

    /// How long the work under `lease` may go on from now (`Leases::left`).
    pub fn lease_left(&self, lease: &str) -> Option<std::time::Duration> {
        self.leases.left(lease)
    }

    /// One pass: every session a stopped replica left mid-turn that this
    /// replica can lease waits for input again.
    pub async fn reopen_orphaned_sessions(&self) -> usize {
        let orphans = match self.store.orphaned_sessions(self.clock.now()).await {
            Ok(o) => o,
            Err(error) => {
                tracing::error!(%error, "could not list orphaned sessions");
                return 0;
            }
        };
        let mut reopened = 0;
        for id in orphans {
            let name = lease::session(&id);
            // Another replica may be at it at the same moment: one wins.
            if !self.leases.try_hold(&name).await {
                continue;
            }
            match self.store.reopen_session(&id, TURN_LOST).await {
                Ok(()) => {
                    tracing::warn!(session_id = %id, "a turn's replica stopped during it; its session waits for input again");
                    reopened += 1;
                }
                Err(error) => tracing::error!(session_id = %id, %error, "could not reopen a session"),
            }
            self.leases.release(&name).await;
        }
        reopened
    }
}
