//! This replica's leases: taken with one conditional write, renewed in the
//! background while held, and lost when the replica stops renewing — so a
//! dead replica's work moves to another within [`LEASE_TTL`].

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use chrono::Duration;

use crate::clock::Clock;
use crate::store::Store;
use crate::store::leases::acquire_in;

/// How long a lease lives without renewal (renewed every third of it).
pub const LEASE_TTL: std::time::Duration = std::time::Duration::from_secs(9);

pub struct Leases {
    store: Store,
    clock: Arc<dyn Clock>,
    replica: String,
    held: Mutex<HashSet<String>>,
}

fn ttl() -> Duration {
    Duration::from_std(LEASE_TTL).unwrap_or(Duration::seconds(9))
}

impl Leases {
    pub fn new(store: Store, clock: Arc<dyn Clock>, replica: String) -> Self {
        Leases {
            store,
            clock,
            replica,
            held: Mutex::new(HashSet::new()),
        }
    }

    pub fn replica(&self) -> &str {
        &self.replica
    }

    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes (or renews) `name`. `false` while another replica holds it, or
    /// when the database cannot say (fail safe: do not act).
    pub async fn try_hold(&self, name: &str) -> bool {
        match self
            .store
            .acquire_lease(name, &self.replica, ttl(), self.clock.now())
            .await
        {
            Ok(true) => {
                self.set().insert(name.to_string());
                true
            }
            Ok(false) => {
                self.set().remove(name);
                false
            }
            Err(error) => {
                tracing::warn!(lease = name, %error, "could not take a lease; not acting on it");
                self.set().remove(name);
                false
            }
        }
    }

    /// Takes `name` inside a transaction (a run's lease with its run row); it
    /// is renewed from then on once the transaction commits.
    pub async fn hold_in(&self, conn: &mut sqlx::AnyConnection, name: &str) -> crate::store::StoreResult<bool> {
        let won = acquire_in(conn, name, &self.replica, ttl(), self.clock.now()).await?;
        if won {
            self.set().insert(name.to_string());
        }
        Ok(won)
    }

    /// Whether this replica still believes it holds `name`.
    pub fn holds(&self, name: &str) -> bool {
        self.set().contains(name)
    }

    pub async fn release(&self, name: &str) {
        self.set().remove(name);
        if let Err(error) = self.store.release_lease(name, &self.replica).await {
            tracing::warn!(lease = name, %error, "could not release a lease; it will expire");
        }
    }

    /// Renews every lease held, in batches; a lease not renewed means another
    /// replica took it over (this one stalled past the expiry), and it is
    /// dropped. When the database cannot say, every lease is dropped, as
    /// [`Leases::try_hold`] does for one (fail safe: do not act).
    pub async fn renew(&self) {
        let names: Vec<String> = self.set().iter().cloned().collect();
        if names.is_empty() {
            return;
        }
        let kept: HashSet<String> = match self
            .store
            .renew_leases(&names, &self.replica, ttl(), self.clock.now())
            .await
        {
            Ok(kept) => kept.into_iter().collect(),
            Err(error) => {
                tracing::warn!(leases = names.len(), %error, "could not renew leases; not acting on them");
                let mut held = self.set();
                for name in &names {
                    held.remove(name);
                }
                return;
            }
        };
        let mut held = self.set();
        for name in names.iter().filter(|n| !kept.contains(*n)) {
            if held.remove(name) {
                tracing::warn!(lease = %name, "lost a lease to another replica");
            }
        }
    }

    /// A clean stop hands everything over at once instead of after the expiry.
    pub async fn release_all(&self) {
        self.set().clear();
        if let Err(error) = self.store.release_leases_of(&self.replica).await {
            tracing::warn!(%error, "could not release this replica's leases; they will expire");
        }
    }
}
