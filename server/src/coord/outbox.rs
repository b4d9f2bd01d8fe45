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
    /// Events published but not yet marked so: marked together on the next
    /// upkeep tick, well before the relay would look at them, instead of one
    /// write each on the publishing path. Lost in a crash, they are sent
    /// again, which every consumer tolerates.
    marks: std::sync::Mutex<Vec<String>>,
}

impl Outbox {
    pub fn new(store: Store, bus: Bus, clock: Arc<dyn Clock>, metrics: Metrics) -> Self {
        Outbox {
            store,
            bus,
            clock,
            metrics,
            marks: Default::default(),
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

    async fn deliver(&self, id: &str, subject: &str, body: Vec<u8>) {
        match self.bus.publish_wire(id, subject, body).await {
            Ok(()) => {
                self.marks
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(id.to_string());
                self.metrics.outbox_published();
            }
            Err(error) => {
                tracing::warn!(event_id = id, subject, %error, "publish failed; the relay will retry");
            }
        }
    }

    /// Marks what this replica published since the last call (every
    /// upkeep tick, and at shutdown).
    pub async fn flush_marks(&self) {
        let ids = std::mem::take(&mut *self.marks.lock().unwrap_or_else(|p| p.into_inner()));
        let now = self.clock.now();
        for chunk in ids.chunks(crate::store::IN_LIST_CHUNK) {
            if let Err(error) = self.store.mark_published(chunk, now).await {
                tracing::warn!(%error, events = chunk.len(), "published but not marked; they may be sent again");
            }
        }
    }

    /// One relay pass: everything still unpublished after its writer's
    /// chance, oldest first. Returns how many it sent.
    pub async fn relay(&self) -> usize {
        self.flush_marks().await;
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

    /// Counts what still waits to be published into the metrics (every
    /// replica, every upkeep tick, after the relay: so it is what the relay
    /// could not send).
    pub async fn measure(&self) {
        match self.store.outbox_waiting().await {
            Ok((events, oldest)) => {
                let age = oldest
                    .map(|at| (self.clock.now() - at).num_milliseconds().max(0) as f64 / 1000.0)
                    .unwrap_or(0.0);
                self.metrics.outbox_waiting(events, age);
            }
            Err(error) => tracing::warn!(%error, "could not count the outbox's backlog"),
        }
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
