//! The event bus port with two adapters: in-process (delivery on the
//! publisher's task, values kept typed) and NATS JetStream (JSON on the wire,
//! durable, one handler per consumer group across replicas). Consumers decode both forms through
//! `kandev_core::events::FromPayload` and ignore malformed data.

mod address;
mod memory;
mod nats;
mod seal;

use std::sync::Arc;

use chrono::Utc;
use futures::future::BoxFuture;
use kandev_core::events::{Event, Payload};

pub use address::{NatsAddress, nats_address};
pub use memory::MemoryBus;
pub use nats::{NatsBus, OPEN_NATS, live_subject};
pub use seal::{BusTrust, SEAL_HEADER, Vouch};

/// A subscriber callback. It runs to completion before the next delivery to
/// the same subscription.
pub type Handler = Arc<dyn Fn(Event) -> BoxFuture<'static, ()> + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("nats connect: {0}")]
    Connect(String),
    #[error("publish: {0}")]
    Publish(String),
    #[error("subscribe: {0}")]
    Subscribe(String),
}

#[derive(Clone)]
pub struct Bus {
    inner: Arc<Adapter>,
}

enum Adapter {
    Memory(MemoryBus),
    Nats(Box<NatsBus>),
}

/// A live subscription; `unsubscribe` (or dropping it) stops delivery.
pub struct Subscription {
    inner: SubscriptionInner,
}

enum SubscriptionInner {
    Memory(memory::MemorySubscription),
    Nats(nats::NatsSubscription),
}

impl Subscription {
    pub async fn unsubscribe(self) {
        match self.inner {
            SubscriptionInner::Memory(s) => s.unsubscribe(),
            SubscriptionInner::Nats(s) => s.unsubscribe().await,
        }
    }
}

impl Bus {
    pub fn memory() -> Bus {
        Bus {
            inner: Arc::new(Adapter::Memory(MemoryBus::default())),
        }
    }

    /// NATS JetStream; every replica of one installation uses the same
    /// `namespace`, and the same key in `trust`.
    pub async fn nats(url: &str, namespace: &str, trust: BusTrust) -> Result<Bus, BusError> {
        Ok(Bus {
            inner: Arc::new(Adapter::Nats(Box::new(NatsBus::connect(url, namespace, trust).await?))),
        })
    }

    pub fn kind(&self) -> &'static str {
        match &*self.inner {
            Adapter::Memory(_) => "in-process",
            Adapter::Nats(_) => "nats",
        }
    }

    /// Publishes a new event at once (tests, and events no state change
    /// stands behind). State changes publish through the outbox instead.
    pub async fn publish(&self, subject: &str, source: &str, data: Payload) -> Result<(), BusError> {
        self.publish_event(new_event(subject, source, data)).await
    }

    pub async fn publish_event(&self, event: Event) -> Result<(), BusError> {
        match &*self.inner {
            Adapter::Memory(m) => {
                m.publish(event).await;
                Ok(())
            }
            Adapter::Nats(n) => n.publish_wire(&event.id, &event.subject, event.to_wire()).await,
        }
    }

    /// Publishes an event stored as its wire body (the outbox relay). In
    /// process, the handlers have run when this returns; on NATS, the event
    /// is stored in the stream.
    pub async fn publish_wire(&self, id: &str, subject: &str, body: Vec<u8>) -> Result<(), BusError> {
        match &*self.inner {
            Adapter::Memory(m) => {
                match Event::from_wire(&body) {
                    Ok(event) => m.publish(event).await,
                    Err(e) => tracing::warn!(id, subject, error = %e, "dropping an unreadable outbox event"),
                }
                Ok(())
            }
            Adapter::Nats(n) => n.publish_wire(id, subject, body).await,
        }
    }

    /// Delivers `subject` to `handler`. Across replicas, one member of each
    /// `group` handles each event (JetStream durable consumer); in process
    /// every subscriber runs.
    pub async fn subscribe(&self, subject: &str, group: &str, handler: Handler) -> Result<Subscription, BusError> {
        let inner = match &*self.inner {
            Adapter::Memory(m) => SubscriptionInner::Memory(m.subscribe(subject, handler)),
            Adapter::Nats(n) => SubscriptionInner::Nats(n.subscribe(subject, group, handler).await?),
        };
        Ok(Subscription { inner })
    }

    /// Waits until everything published so far has reached the server (NATS);
    /// a no-op in-process.
    pub async fn flush(&self) -> Result<(), BusError> {
        match &*self.inner {
            Adapter::Memory(_) => Ok(()),
            Adapter::Nats(n) => n.flush().await,
        }
    }
}

/// A new event with a fresh id, stamped now.
pub fn new_event(subject: &str, source: &str, data: Payload) -> Event {
    Event {
        id: uuid::Uuid::new_v4().to_string(),
        subject: subject.to_string(),
        source: source.to_string(),
        timestamp: Utc::now(),
        data,
    }
}

/// Wraps an async closure as a [`Handler`].
pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Event) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    Arc::new(move |e| Box::pin(f(e)))
}
