//! The outbox: an event is written in the same transaction as the state it
//! announces, then published by whoever gets there first — the writer right
//! after its commit, or the relay for anything a crash or a failed publish
//! left behind. Publishing twice is harmless: the event id is the JetStream
//! message id (the server drops the repeat) and every consumer is idempotent.

use std::sync::Arc;

use chrono::Duration;
use kandev_core::events::{Event, Payload};
use sqlx::AnyConnection;

use crate::bus::{Bus, new_event};
use crate::clock::Clock;
use crate::metrics::Metrics;
use crate::store::{Store, StoreResult};

/// Events older than this are the relay's (their writer had its chance).
const RELAY_AFTER_MS: i64 = 1500;
/// Published events and delivery ids are kept this long, then pruned.
const KEEP_PUBLISHED_HOURS: i64 = 1;
const KEEP_DELIVERIES_DAYS: i64 = 3;

pub struct Outbox {
    store: Store,
    bus: Bus,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
}

impl Outbox {
    pub fn new(store: Store, bus: Bus, clock: Arc<dyn Clock>, metrics: Metrics) -> Self {
        Outbox {
            store,
            bus,
            clock,
            metrics,
        }
    }

    /// A new event, to be written with [`Outbox::write`].
    pub fn event(&self, subject: &str, source: &str, data: Payload) -> Event {
        let mut e = new_event(subject, source, data);
        e.timestamp = self.clock.now();
        e
    }

    /// Writes `event` on the transaction's connection.
    pub async fn write(&self, conn: &mut AnyConnection, event: &Event) -> StoreResult<()> {
        crate::store::outbox::enqueue(conn, event).await
    }

    /// After the commit: publishes this event now. A failure leaves it for
    /// the relay.
    pub async fn committed(&self, event: &Event) {
        self.deliver(&event.id, &event.subject, event.to_wire()).await;
    }

    /// Writes and commits a lone event (no other state changes with it), then publishes it.
    pub async fn publish(&self, subject: &str, source: &str, data: Payload) -> StoreResult<()> {
        let event = self.event(subject, source, data);
        let mut tx = self.store.write_tx().await?;
        self.write(&mut tx, &event).await?;
        tx.commit().await?;
        self.committed(&event).await;
        Ok(())
    }

    async fn deliver(&self, id: &str, subject: &str, body: Vec<u8>) {
        match self.bus.publish_wire(id, subject, body).await {
            Ok(()) => {
                if let Err(error) = self.store.mark_published(id, self.clock.now()).await {
                    tracing::warn!(event_id = id, %error, "published but not marked; it may be sent again");
                }
                self.metrics.outbox_published();
            }
            Err(error) => {
                tracing::warn!(event_id = id, subject, %error, "publish failed; the relay will retry");
            }
        }
    }

    /// One relay pass: everything still unpublished after its writer's
    /// chance, oldest first. Returns how many it sent.
    pub async fn relay(&self) -> usize {
        let until = self.clock.now() - Duration::milliseconds(RELAY_AFTER_MS);
        let pending = match self.store.pending_events(until, 500).await {
            Ok(p) => p,
            Err(error) => {
                tracing::error!(%error, "the outbox relay could not read pending events");
                return 0;
            }
        };
        let n = pending.len();
        for p in pending {
            tracing::debug!(event_id = %p.id, subject = %p.subject, "relaying an event left in the outbox");
            self.deliver(&p.id, &p.subject, p.body).await;
        }
        n
    }

    /// Forgets what was published long ago, and old GitHub delivery ids.
    pub async fn prune(&self) {
        let now = self.clock.now();
        let before = now - Duration::hours(KEEP_PUBLISHED_HOURS);
        let deliveries = now - Duration::days(KEEP_DELIVERIES_DAYS);
        if let Err(error) = self.store.prune_delivered(before, deliveries).await {
            tracing::warn!(%error, "could not prune the outbox");
        }
    }
}
