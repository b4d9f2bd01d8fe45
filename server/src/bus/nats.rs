//! NATS bus: the whole envelope travels as JSON; each subscription delivers on
//! its own task, so delivery is asynchronous to the publisher.

use futures::StreamExt;
use kandev_core::events::Event;
use tokio::task::JoinHandle;

use super::{BusError, Handler};

pub struct NatsBus {
    client: async_nats::Client,
}

pub struct NatsSubscription {
    task: JoinHandle<()>,
}

impl NatsSubscription {
    pub async fn unsubscribe(self) {
        // Aborting drops the subscriber, which unsubscribes on the server.
        self.task.abort();
        let _ = self.task.await;
    }
}

impl NatsBus {
    pub async fn connect(url: &str) -> Result<NatsBus, BusError> {
        let client = async_nats::connect(url)
            .await
            .map_err(|e| BusError::Connect(e.to_string()))?;
        Ok(NatsBus { client })
    }

    pub async fn publish(&self, event: Event) -> Result<(), BusError> {
        self.client
            .publish(event.subject.clone(), event.to_wire().into())
            .await
            .map_err(|e| BusError::Publish(e.to_string()))
    }

    pub async fn flush(&self) -> Result<(), BusError> {
        self.client.flush().await.map_err(|e| BusError::Publish(e.to_string()))
    }

    pub async fn subscribe(&self, subject: &str, handler: Handler) -> Result<NatsSubscription, BusError> {
        let mut sub = self
            .client
            .subscribe(subject.to_string())
            .await
            .map_err(|e| BusError::Subscribe(e.to_string()))?;
        // Make sure the server has the subscription before we report success,
        // so a publish right after start is not lost.
        self.client
            .flush()
            .await
            .map_err(|e| BusError::Subscribe(e.to_string()))?;
        let subject = subject.to_string();
        let task = tokio::spawn(async move {
            while let Some(msg) = sub.next().await {
                match Event::from_wire(&msg.payload) {
                    Ok(event) => handler(event).await,
                    Err(e) => {
                        tracing::warn!(subject = %subject, error = %e, "ignoring malformed bus message")
                    }
                }
            }
        });
        Ok(NatsSubscription { task })
    }
}
