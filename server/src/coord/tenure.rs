//! What keeps this replica's leases its own, once per renewal pass and in
//! this order: its name still its process's (`Identity`), its clock still
//! agreeing with the database's (`ClockCheck`), then every lease renewed.

use std::sync::Arc;

use super::{ClockCheck, Identity, Leases, NAME_TAKEN};

pub struct Tenure {
    pub leases: Arc<Leases>,
    pub identity: Identity,
    pub clock: ClockCheck,
}

impl Tenure {
    /// Before anything runs under the name: claims it (`Err`: why not),
    /// then reads the clocks, so a replica whose clock is off takes no
    /// lease from its first.
    pub async fn begin(&self) -> Result<(), String> {
        self.identity.claim().await?;
        self.clock.check().await;
        Ok(())
    }

    pub async fn pass(&self) {
        if !self.identity.keep().await && self.leases.give_up_name() {
            tracing::error!("{NAME_TAKEN}");
        }
        self.clock.check().await;
        self.leases.renew().await;
    }

    /// A clean stop: every lease handed over at once, then the name.
    pub async fn end(&self) {
        self.leases.release_all().await;
        self.identity.release().await;
    }
}
