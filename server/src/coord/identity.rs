//! This process's claim on its replica name (`core::replica`): taken before
//! anything is done under the name, renewed with the leases, and, if ever
//! found in another process's hands, given up with every lease under it.

use std::sync::Arc;
use std::time::Duration;

use kandev_core::replica::{Instance, start_time, surely_gone};

use super::leases::ttl;
use super::{LEASE_TTL, RENEW_INTERVAL, lease};
use crate::clock::Clock;
use crate::store::Store;

/// What a process says when another took its replica name mid-life.
pub const NAME_TAKEN: &str = "another process claimed this replica's name: this one takes no lease any more; stop it, and give each replica its own KANDEV_REPLICA_ID";

pub struct Identity {
    store: Store,
    clock: Arc<dyn Clock>,
    name: String,
    me: Instance,
    /// The claim: `replica:{name}`, owned by `me`.
    lease: String,
    owner: String,
}

impl Identity {
    pub fn new(store: Store, clock: Arc<dyn Clock>, name: &str) -> Self {
        let pid = std::process::id();
        let me = Instance {
            boot: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .map(|b| b.trim().to_string())
                .unwrap_or_else(|_| "unknown-boot".into()),
            pid,
            start: started(pid).unwrap_or(0),
            nonce: uuid::Uuid::new_v4().simple().to_string(),
        };
        Self {
            store,
            clock,
            name: name.to_string(),
            lease: lease::replica(name),
            owner: me.owner(),
            me,
        }
    }

    /// Claims the name: at once if free, run out, or held by a process of
    /// this machine that has ended; else once the holder's claim runs out.
    /// `Err` (why) while another process still renews it.
    pub async fn claim(&self) -> Result<(), String> {
        let (name, owner) = (&self.lease, &self.owner);
        let give_up = tokio::time::Instant::now() + LEASE_TTL + 2 * RENEW_INTERVAL;
        let mut said = false;
        loop {
            let now = self.clock.now();
            if self
                .store
                .acquire_lease(name, owner, ttl(), now)
                .await
                .map_err(|e| e.to_string())?
            {
                return Ok(());
            }
            let holder = self.store.lease_owner(name).await.map_err(|e| e.to_string())?;
            if let Some(holder) = holder.filter(|h| surely_gone(h, &self.me, started)) {
                let taken = self.store.take_lease_from(name, &holder, owner, ttl(), now).await;
                if taken.map_err(|e| e.to_string())? {
                    tracing::info!(replica = %self.name, "took over this replica's name from a process that ended");
                    return Ok(());
                }
                continue;
            }
            if tokio::time::Instant::now() > give_up {
                return Err(taken_by(&self.name));
            }
            if !said {
                tracing::info!(replica = %self.name, "waiting for an earlier process's claim on this replica's name to run out");
                said = true;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Renews the claim: `false` once another process holds it. A database
    /// that cannot say changes nothing (the leases' own rules apply).
    pub async fn keep(&self) -> bool {
        match self
            .store
            .acquire_lease(&self.lease, &self.owner, ttl(), self.clock.now())
            .await
        {
            Ok(kept) => kept,
            Err(error) => {
                tracing::warn!(%error, "could not renew this replica's claim on its name");
                true
            }
        }
    }

    pub async fn release(&self) {
        if let Err(error) = self.store.release_lease(&self.lease, &self.owner).await {
            tracing::warn!(%error, "could not release this replica's name; it will expire");
        }
    }
}

/// Why a process does not start under a name another process holds.
pub fn taken_by(name: &str) -> String {
    format!(
        "another kandev process runs as replica `{name}` and still renews its claim: give each replica its own KANDEV_REPLICA_ID"
    )
}

/// When process `pid` started, from `/proc` (`None`: no such process).
fn started(pid: u32) -> Option<u64> {
    start_time(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}
