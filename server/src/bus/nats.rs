//! NATS JetStream bus: every event is stored in one stream (per namespace)
//! and each consumer group reads it through a durable pull consumer with
//! explicit acks. Replicas bound to the same durable share its messages (one
//! replica handles each), a message is acknowledged only after its handler
//! returns, and one a dead replica held is redelivered to another after the
//! ack wait. Publishes carry the event id as `Nats-Msg-Id`, so the server
//! drops a republished event within its duplicate window. Each carries a
//! seal, and a consumer handles only what a replica of this installation
//! published (`seal`): anything that reaches NATS can publish into the stream.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::seal::{BusTrust, SEAL_HEADER, Verdict};
use super::{BusError, Handler};

/// How long a handler may hold a message before it is redelivered elsewhere.
const ACK_WAIT: Duration = Duration::from_secs(30);
/// Messages one replica handles at once per consumer.
const PARALLEL: usize = 16;

pub struct NatsBus {
    client: async_nats::Client,
    js: jetstream::Context,
    namespace: String,
    trust: BusTrust,
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

/// Logged at start when NATS takes clients without credentials.
pub const OPEN_NATS: &str = "NATS takes clients without credentials: anything that reaches it can read every \
     event, take messages off Kandev's consumers or delete the stream (seals stop only forged events); \
     give NATS a user and password and put them in KANDEV_NATS_URL";

/// Whether the NATS at `server` takes a client without credentials: it took
/// Kandev's own if that had none, else a client trying without is let in
/// (a server may give such clients a user of its own: `no_auth_user`).
async fn takes_anyone(server: &str, credentialed: bool) -> bool {
    if !credentialed {
        return true;
    }
    let probe = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(2))
        .connect(server);
    // The probe's client, if any, is dropped at once.
    matches!(tokio::time::timeout(Duration::from_secs(3), probe).await, Ok(Ok(_)))
}

impl NatsBus {
    pub async fn connect(url: &str, namespace: &str, trust: BusTrust) -> Result<NatsBus, BusError> {
        let address = super::nats_address(url, async_nats::ConnectOptions::new())?;
        let (server, credentialed) = (address.server.clone(), address.credentialed);
        let client = address
            .options
            .connect(address.server)
            .await
            .map_err(|e| BusError::Connect(e.to_string()))?;
        if takes_anyone(&server, credentialed).await {
            tracing::warn!("{OPEN_NATS}");
        }
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
        Ok(NatsBus {
            client,
            js,
            namespace,
            trust,
        })
    }

    fn wire_subject(&self, subject: &str) -> String {
        format!("{}.{subject}", self.namespace)
    }

    pub async fn publish_wire(&self, id: &str, subject: &str, body: Vec<u8>) -> Result<(), BusError> {
        let wire_subject = self.wire_subject(subject);
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", id);
        headers.insert(SEAL_HEADER, self.trust.seal(&wire_subject, &body).as_str());
        let ack = self
            .js
            .publish_with_headers(wire_subject, headers, body.into())
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
        let (trust, namespace) = (self.trust.clone(), self.namespace.clone());
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
                let (handler, subject, trust, namespace) =
                    (handler.clone(), subject.clone(), trust.clone(), namespace.clone());
                tokio::spawn(async move {
                    let seal = msg
                        .headers
                        .as_ref()
                        .and_then(|h| h.get(SEAL_HEADER))
                        .map(|v| v.as_str());
                    match trust.check(&namespace, &msg.subject, &msg.payload, seal).await {
                        Verdict::Handle(event) => handler(*event).await,
                        Verdict::Drop => {}
                        // Not acknowledged: it comes again after the ack wait.
                        Verdict::Retry => return,
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
