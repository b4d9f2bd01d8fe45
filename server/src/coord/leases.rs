//! This replica's leases: taken with one conditional write, renewed in the
//! background while held, and lost when the replica stops renewing — so a
//! dead replica's work moves to another within [`LEASE_TTL`]. While the
//! database cannot be asked, a lease stays held until its last renewal runs
//! out: no other replica can take it before then. It is held only while
//! its last confirmation vouches for the work under it (`core::lease`):
//! a renewal that hangs lets it go as surely as one that fails.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use kandev_core::lease as rule;

use crate::clock::Clock;
use crate::store::Store;
use crate::store::leases::acquire_in;

pub use kandev_core::lease::{RENEW_INTERVAL, TTL as LEASE_TTL};

pub struct Leases {
    store: Store,
    clock: Arc<dyn Clock>,
    replica: String,
    /// Each lease held, and when the database last confirmed it (it expires
    /// a TTL after that, unless renewed).
    held: Mutex<HashMap<String, DateTime<Utc>>>,
    /// Set while this replica's clock disagrees with the database's
    /// (`ClockCheck`): it then takes, renews and holds no lease.
    clock_off: AtomicBool,
    /// Set for good once another process claimed this replica's name
    /// (`Identity`): the leases under it are that process's.
    name_lost: AtomicBool,
}

/// A lease's life as the store takes it (the identity claim's too).
pub(super) fn ttl() -> Duration {
    Duration::from_std(LEASE_TTL).unwrap_or(Duration::seconds(9))
}

impl Leases {
    pub fn new(store: Store, clock: Arc<dyn Clock>, replica: String) -> Self {
        Leases {
            store,
            clock,
            replica,
            held: Mutex::new(HashMap::new()),
            clock_off: AtomicBool::new(false),
            name_lost: AtomicBool::new(false),
        }
    }

    /// Takes, renews and holds no lease from now on (this replica's clock
    /// cannot be trusted to time them), and hands over all it held. Whether
    /// this is the first time.
    pub async fn stand_down(&self) -> bool {
        let first = !self.clock_off.swap(true, Ordering::SeqCst);
        if first {
            self.release_all().await;
        }
        first
    }

    /// Takes and renews leases again once the clocks agree; whether it had
    /// stood down for them.
    pub fn stand_up(&self) -> bool {
        self.clock_off.swap(false, Ordering::SeqCst)
    }

    /// Another process holds this replica's name, and so every lease under
    /// it: this one lets go of them all without a write (the rows are that
    /// process's now) and takes none again. Whether this is the first time.
    pub fn give_up_name(&self) -> bool {
        let first = !self.name_lost.swap(true, Ordering::SeqCst);
        self.set().clear();
        first
    }

    /// Whether it takes, renews and holds no lease (`stand_down`, `give_up_name`).
    pub fn standing_down(&self) -> bool {
        self.clock_off.load(Ordering::SeqCst) || self.name_lost.load(Ordering::SeqCst)
    }

    /// Each reason it may stand down for, and whether it does: `clock`
    /// (`stand_down`) and `name` (`give_up_name`).
    pub fn standing_down_for(&self) -> [(&'static str, bool); 2] {
        [
            ("clock", self.clock_off.load(Ordering::SeqCst)),
            ("name", self.name_lost.load(Ordering::SeqCst)),
        ]
    }

    pub fn replica(&self) -> &str {
        &self.replica
    }

    fn set(&self) -> std::sync::MutexGuard<'_, HashMap<String, DateTime<Utc>>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes (or renews) `name`. `false` while another replica holds it, or
    /// when the database cannot say (fail safe: do not act).
    pub async fn try_hold(&self, name: &str) -> bool {
        self.ask(name).await.unwrap_or_else(|error| {
            tracing::warn!(lease = name, %error, "could not take a lease; not acting on it");
            self.set().remove(name);
            false
        })
    }

    /// Asks the database for `name` (taken, or renewed) and keeps its answer.
    async fn ask(&self, name: &str) -> crate::store::StoreResult<bool> {
        if self.standing_down() {
            self.set().remove(name);
            return Ok(false);
        }
        let asked = self.clock.now();
        let won = self.store.acquire_lease(name, &self.replica, ttl(), asked).await?;
        if won {
            self.set().insert(name.to_string(), asked);
        } else {
            self.set().remove(name);
        }
        Ok(won)
    }

    /// Takes `name` inside a transaction (a run's lease with its run row); it
    /// is renewed from then on once the transaction commits.
    pub async fn hold_in(&self, conn: &mut sqlx::AnyConnection, name: &str) -> crate::store::StoreResult<bool> {
        if self.standing_down() {
            return Ok(false);
        }
        let asked = self.clock.now();
        let won = acquire_in(conn, name, &self.replica, ttl(), asked).await?;
        if won {
            self.set().insert(name.to_string(), asked);
        }
        Ok(won)
    }

    /// Whether this replica holds `name`: taken, neither found taken over
    /// nor dropped by `renew` since, and confirmed recently enough that the
    /// work under it may go on (a renewal that never came back counts).
    pub fn holds(&self, name: &str) -> bool {
        self.left(name).is_some()
    }

    /// How long the work under `name` may go on from now, as its last
    /// confirmation vouches: `None` when not held, or no longer vouched for.
    pub fn left(&self, name: &str) -> Option<std::time::Duration> {
        if self.standing_down() {
            return None;
        }
        let confirmed = *self.set().get(name)?;
        rule::left(confirmed, self.clock.now())
    }

    /// Whether this replica still holds `name`, asked of the database (and
    /// renewed): `false` once another replica has it. When the database
    /// cannot say, what the last confirmation vouches for.
    pub async fn confirm(&self, name: &str) -> bool {
        self.ask(name).await.unwrap_or_else(|error| {
            tracing::warn!(lease = name, %error, "could not confirm a lease; going by its last renewal");
            self.holds(name)
        })
    }

    pub async fn release(&self, name: &str) {
        self.set().remove(name);
        if let Err(error) = self.store.release_lease(name, &self.replica).await {
            tracing::warn!(lease = name, %error, "could not release a lease; it will expire");
        }
    }

    /// Renews every lease held, in batches; a lease not renewed means another
    /// replica took it over (this one stalled past the expiry), and it is
    /// dropped. When the database cannot say, each lease stays held while
    /// its last renewal vouches for it past the next pass (no one can take
    /// it before), and is renewed again then: one failed write must not hand
    /// every running turn to another replica while it goes on here. One
    /// that would run out before the next pass is dropped now, so what runs
    /// under it stops before another replica can take it.
    pub async fn renew(&self) {
        let names: Vec<String> = self.set().keys().cloned().collect();
        if names.is_empty() || self.standing_down() {
            return;
        }
        let asked = self.clock.now();
        let kept: HashSet<String> = match self.store.renew_leases(&names, &self.replica, ttl(), asked).await {
            Ok(kept) => kept.into_iter().collect(),
            Err(error) => {
                tracing::warn!(leases = names.len(), %error, "could not renew leases; each is held until it runs out");
                let mut held = self.set();
                held.retain(|name, at| {
                    let alive = rule::outlives_next_pass(*at, asked);
                    if !alive {
                        tracing::warn!(lease = %name, "a lease would run out unrenewed; dropping it");
                    }
                    alive
                });
                return;
            }
        };
        let mut held = self.set();
        for name in &kept {
            if let Some(at) = held.get_mut(name) {
                *at = asked;
            }
        }
        for name in names.iter().filter(|n| !kept.contains(*n)) {
            if held.remove(name).is_some() {
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
