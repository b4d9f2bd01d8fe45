//! NATS JetStream bus: every event is stored in one stream (per namespace)
//! and each consumer group reads it through a durable pull consumer with
//! explicit acks. Replicas bound to the same durable share its messages (one
//! replica handles each), a message is acknowledged only after its handler
//! returns, and one a dead replica held is redelivered to another after the
//! ack wait. Publishes carry the event id as `Nats-Msg-Id`, so the server
//! drops a republished event within its duplicate window.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use futures::StreamExt;
use kandev_core::events::Event;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::{BusError, Handler};

/// How long a handler may hold a message before it is redelivered elsewhere.
const ACK_WAIT: Duration = Duration::from_secs(30);
/// Messages one replica handles at once per consumer.
const PARALLEL: usize = 16;

pub struct NatsBus {
    client: async_nats::Client,
    js: jetstream::Context,
    namespace: String,
}

pub struct NatsSubscription {
    task: JoinHandle<()>,
}

impl NatsSubscription {
    pub async fn unsubscribe(self) {
        // Messages in flight stay unacknowledged and are redelivered.
        self.task.abort();
        let _ = self.task.await;
    }
}

/// A name NATS accepts for a stream or durable consumer.
fn token(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The plain NATS subject on which the replicas of `namespace` share live
/// notices; outside the stream's `namespace.>`, so none is stored.
pub fn live_subject(namespace: &str) -> String {
    format!("{}_live", token(namespace))
}

impl NatsBus {
    pub async fn connect(url: &str, namespace: &str) -> Result<NatsBus, BusError> {
        let client = async_nats::connect(url)
            .await
            .map_err(|e| BusError::Connect(e.to_string()))?;
        let js = jetstream::new(client.clone());
        let namespace = token(namespace);
        js.get_or_create_stream(stream::Config {
            name: namespace.clone(),
            subjects: vec![format!("{namespace}.>")],
            retention: stream::RetentionPolicy::Limits,
            storage: stream::StorageType::File,
            max_age: Duration::from_secs(24 * 3600),
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        })
        .await
        .map_err(|e| BusError::Connect(format!("JetStream stream {namespace}: {e}")))?;
        Ok(NatsBus { client, js, namespace })
    }

    fn wire_subject(&self, subject: &str) -> String {
        format!("{}.{subject}", self.namespace)
    }

    pub async fn publish_wire(&self, id: &str, subject: &str, body: Vec<u8>) -> Result<(), BusError> {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", id);
        let ack = self
            .js
            .publish_with_headers(self.wire_subject(subject), headers, body.into())
            .await
            .map_err(|e| BusError::Publish(e.to_string()))?;
        // Published means stored: wait for the server's acknowledgement.
        ack.await.map_err(|e| BusError::Publish(e.to_string()))?;
        Ok(())
    }

    pub async fn flush(&self) -> Result<(), BusError> {
        self.client.flush().await.map_err(|e| BusError::Publish(e.to_string()))
    }

    pub async fn subscribe(&self, subject: &str, group: &str, handler: Handler) -> Result<NatsSubscription, BusError> {
        let durable = token(&format!("{}_{group}", self.namespace));
        let stream = self
            .js
            .get_stream(&self.namespace)
            .await
            .map_err(|e| BusError::Subscribe(e.to_string()))?;
        let consumer: consumer::PullConsumer = stream
            .get_or_create_consumer(
                &durable,
                consumer::pull::Config {
                    durable_name: Some(durable.clone()),
                    filter_subject: self.wire_subject(subject),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: ACK_WAIT,
                    deliver_policy: consumer::DeliverPolicy::All,
                    max_ack_pending: 1000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| BusError::Subscribe(format!("{durable}: {e}")))?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|e| BusError::Subscribe(format!("{durable}: {e}")))?;
        let subject = subject.to_string();
        let task = tokio::spawn(async move {
            let slots = Arc::new(Semaphore::new(PARALLEL));
            while let Some(next) = messages.next().await {
                let msg = match next {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::warn!(subject = %subject, error = %e, "JetStream consumer error; continuing");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                };
                let Ok(permit) = slots.clone().acquire_owned().await else {
                    break;
                };
                let (handler, subject) = (handler.clone(), subject.clone());
                tokio::spawn(async move {
                    match Event::from_wire(&msg.payload) {
                        Ok(event) => handler(event).await,
                        Err(e) => tracing::warn!(subject = %subject, error = %e, "ignoring malformed bus message"),
                    }
                    if let Err(e) = msg.ack().await {
                        tracing::warn!(subject = %subject, error = %e, "could not acknowledge a message; it will come again");
                    }
                    drop(permit);
                });
            }
        });
        Ok(NatsSubscription { task })
    }
}
