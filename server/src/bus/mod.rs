//! The event bus port with two adapters: in-process (delivery on the
//! publisher's task, values kept typed) and NATS (JSON on the wire,
//! asynchronous delivery). Consumers decode both forms through
//! `kandev_core::events::FromPayload` and ignore malformed data.

mod memory;
mod nats;

use std::sync::Arc;

use chrono::Utc;
use futures::future::BoxFuture;
use kandev_core::events::{Event, Payload};

pub use memory::MemoryBus;
pub use nats::NatsBus;

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
    Nats(NatsBus),
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

    pub async fn nats(url: &str) -> Result<Bus, BusError> {
        Ok(Bus {
            inner: Arc::new(Adapter::Nats(NatsBus::connect(url).await?)),
        })
    }

    pub fn kind(&self) -> &'static str {
        match &*self.inner {
            Adapter::Memory(_) => "in-process",
            Adapter::Nats(_) => "nats",
        }
    }

    pub async fn publish(&self, subject: &str, source: &str, data: Payload) -> Result<(), BusError> {
        let event = Event {
            id: uuid::Uuid::new_v4().to_string(),
            subject: subject.to_string(),
            source: source.to_string(),
            timestamp: Utc::now(),
            data,
        };
        match &*self.inner {
            Adapter::Memory(m) => {
                m.publish(event).await;
                Ok(())
            }
            Adapter::Nats(n) => n.publish(event).await,
        }
    }

    pub async fn subscribe(&self, subject: &str, handler: Handler) -> Result<Subscription, BusError> {
        let inner = match &*self.inner {
            Adapter::Memory(m) => SubscriptionInner::Memory(m.subscribe(subject, handler)),
            Adapter::Nats(n) => SubscriptionInner::Nats(n.subscribe(subject, handler).await?),
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

/// Wraps an async closure as a [`Handler`].
pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Event) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    Arc::new(move |e| Box::pin(f(e)))
}
