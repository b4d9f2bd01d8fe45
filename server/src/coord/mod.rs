//! Coordination between replicas and across crashes, beneath the engine:
//! the outbox (state and event in one transaction, a relay that publishes),
//! leases (singleton work with an owner and an expiry) and this replica's
//! identity. It knows nothing of runs or merges: the orchestrator and the
//! merger decide what to lease and what to recover.

mod clock_check;
mod identity;
mod leases;
mod outbox;
mod tenure;

pub use clock_check::{ClockCheck, off_by};
pub use identity::{Identity, NAME_TAKEN, taken_by};
pub use leases::{LEASE_TTL, Leases, RENEW_INTERVAL};
pub use outbox::Outbox;
pub use tenure::Tenure;

/// A fresh identity for this process: leases name it as their owner.
pub fn new_replica_id() -> String {
    format!("replica-{}", uuid::Uuid::new_v4().simple())
}

/// The lease names of singleton work.
pub mod lease {
    pub const POLLER: &str = "pr-poller";
    pub const SCHEDULER: &str = "scheduler";
    pub const PR_EVALUATOR: &str = "github-pr-evaluator";
    pub const OUTBOX: &str = "outbox-relay";
    pub const RECOVERY: &str = "recovery";

    /// The lease of one merge job.
    pub fn merge(task_id: &str) -> String {
        format!("merge:{task_id}")
    }

    /// The lease of one run's agent turn.
    pub fn run(task_id: &str) -> String {
        format!("run:{task_id}")
    }

    /// A replica's claim on its name, held by the process running as it.
    pub fn replica(name: &str) -> String {
        format!("replica:{name}")
    }

    /// The lease of one session's turn in progress (a run's, or a reply's).
    pub fn session(session_id: &str) -> String {
        format!("session:{session_id}")
    }
}
