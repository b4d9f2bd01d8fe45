//! Kandev's GitHub side: the REST client, the PR sync and poller, PR links,
//! webhook deliveries and the repository-selector helpers. A simulator with
//! the same REST shapes lives in `crate::github_sim`.

mod batch;
pub mod client;
mod deployments;
mod etags;
mod link;
pub mod model;
mod modes;
mod moved;
pub mod poller;
mod reread;
mod sync;
mod webhook;

pub use client::{GithubClient, GithubError};
pub use link::requested_pr;
pub use webhook::{Delivery, DeliveryAck};

use std::sync::Arc;

use crate::clock::Clock;
use crate::coord::Outbox;
use crate::live::LiveHub;
use crate::store::Store;

pub struct GithubService {
    client: Arc<GithubClient>,
    store: Store,
    outbox: Arc<Outbox>,
    live: LiveHub,
    clock: Arc<dyn Clock>,
    webhook_secret: Option<String>,
    /// The sweep's last probe of each watched link.
    probes: poller::ProbeMemory,
    /// Watched links GitHub answered 404 for, and the sweeps each sits out.
    unreadable: poller::Unreadable,
    /// PRs read again because GitHub's API lagged their delivery.
    rereads: reread::Rereads,
}

impl GithubService {
    pub fn new(
        client: Arc<GithubClient>,
        store: Store,
        outbox: Arc<Outbox>,
        live: LiveHub,
        clock: Arc<dyn Clock>,
        webhook_secret: Option<String>,
    ) -> Self {
        GithubService {
            client,
            store,
            outbox,
            live,
            clock,
            webhook_secret: webhook_secret.filter(|s| !s.is_empty()),
            probes: Default::default(),
            unreadable: Default::default(),
            rereads: Default::default(),
        }
    }

    pub fn client(&self) -> &Arc<GithubClient> {
        &self.client
    }

    pub fn store(&self) -> &Store {
        &self.store
    }
}
