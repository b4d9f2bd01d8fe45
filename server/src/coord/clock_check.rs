//! Lease expiries are written and compared in each replica's own time, so
//! replicas whose clocks disagree can both believe they hold one lease: a
//! clock ahead takes leases that have not run out; one behind writes
//! expiries already past for the others. Before every renewal pass each
//! replica reads the database's clock (PostgreSQL: SQLite has one process)
//! and, while its own is off it by more than `core::lease::MAX_SKEW`, takes
//! and renews no lease, handing over at once all it held.

use std::sync::Arc;

use kandev_core::lease::{ClockReading, MAX_SKEW, read_clock};

use super::Leases;
use crate::clock::Clock;
use crate::store::Store;

pub struct ClockCheck {
    store: Store,
    /// The clock lease times come from (in tests, a clock held still for
    /// the rest of the server is not this one: it reads the real time).
    wall: Arc<dyn Clock>,
    leases: Arc<Leases>,
}

impl ClockCheck {
    pub fn new(store: Store, wall: Arc<dyn Clock>, leases: Arc<Leases>) -> Self {
        Self { store, wall, leases }
    }

    /// One reading: stands the leases down while the clocks disagree, up
    /// once they agree; a reading that cannot tell changes nothing.
    pub async fn check(&self) {
        let before = self.wall.now();
        let db = match self.store.database_clock().await {
            Ok(Some(db)) => db,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "could not read the database's clock");
                return;
            }
        };
        match read_clock(before, db, self.wall.now()) {
            ClockReading::Agrees => {
                if self.leases.stand_up() {
                    tracing::warn!("this replica's clock agrees with the database's again: it takes leases again");
                }
            }
            ClockReading::Disagrees { ahead_ms } => {
                if self.leases.stand_down().await {
                    let way = if ahead_ms > 0 { "ahead of" } else { "behind" };
                    tracing::error!("{}", off_by(ahead_ms.unsigned_abs(), way));
                }
            }
            ClockReading::Unclear => {}
        }
    }
}

/// What a replica says when its clock is `by` ms `way` the database's.
pub fn off_by(by: u64, way: &str) -> String {
    format!(
        "this replica's clock is {by} ms {way} the database's: it takes and renews no lease until they agree within {} ms (keep every replica's clock and the database's synchronised, by NTP)",
        MAX_SKEW.as_millis()
    )
}
