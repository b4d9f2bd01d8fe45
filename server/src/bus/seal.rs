//! Seals on the events replicas put in the NATS stream, and the check every
//! consumer makes before handling one (`kandev_core::bus_trust` decides).
//! The key is the installation's (`installation_keys`, made by the first
//! replica to start), so a message from anything else that reaches NATS —
//! an agent, another installation — is refused, not handled.

use std::sync::Arc;

use futures::future::BoxFuture;
use kandev_core::bus_trust::{Origin, event_subject, origin, sealed_bytes};
use kandev_core::events::Event;

use crate::metrics::Metrics;
use crate::signature;
use crate::store::Store;

/// The header a seal travels in: HMAC-SHA256 over subject and body, as
/// `sha256=<hex>`.
pub const SEAL_HEADER: &str = "Kandev-Seal";

/// Looks an event up in the outbox by id: its subject and wire body.
pub type Vouch = Arc<dyn Fn(String) -> BoxFuture<'static, Result<Option<(String, Vec<u8>)>, String>> + Send + Sync>;

/// What a NATS bus needs to seal what it publishes and check what it receives.
#[derive(Clone)]
pub struct BusTrust {
    key: Arc<str>,
    vouch: Vouch,
    metrics: Metrics,
}

/// A consumer's verdict on one message.
pub enum Verdict {
    Handle(Box<Event>),
    /// Acknowledged and dropped: forged, or unreadable.
    Drop,
    /// Left unacknowledged, to come again: the outbox could not be read.
    Retry,
}

impl BusTrust {
    pub fn new(key: &str, vouch: Vouch, metrics: Metrics) -> BusTrust {
        BusTrust {
            key: key.into(),
            vouch,
            metrics,
        }
    }

    /// A vouch that reads `store`'s outbox.
    pub fn outbox_of(store: Store) -> Vouch {
        Arc::new(move |id| {
            let store = store.clone();
            Box::pin(async move { store.stored_event(&id).await.map_err(|e| e.to_string()) })
        })
    }

    /// The seal for `body` published on `wire_subject`.
    pub fn seal(&self, wire_subject: &str, body: &[u8]) -> String {
        signature::sign(&self.key, &sealed_bytes(wire_subject, body))
    }

    fn sealed(&self, wire_subject: &str, body: &[u8], seal: Option<&str>) -> bool {
        seal.is_some_and(|s| signature::verify(&self.key, &sealed_bytes(wire_subject, body), s))
    }

    /// Whether to handle a message received on `wire_subject` of the stream
    /// `namespace`: sealed here, or (from a replica older than seals) held
    /// byte for byte in the outbox.
    pub async fn check(&self, namespace: &str, wire_subject: &str, body: &[u8], seal: Option<&str>) -> Verdict {
        let sealed = self.sealed(wire_subject, body, seal);
        let event = match Event::from_wire(body) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(subject = %wire_subject, error = %e, "ignoring malformed bus message");
                return Verdict::Drop;
            }
        };
        let stored = if sealed {
            None
        } else {
            match (self.vouch)(event.id.clone()).await {
                Ok(stored) => stored,
                Err(e) => {
                    tracing::warn!(subject = %wire_subject, id = %event.id, error = %e,
                        "could not read the outbox to check an unsealed bus message; it will come again");
                    return Verdict::Retry;
                }
            }
        };
        let subject = event_subject(namespace, wire_subject);
        let stored = stored.as_ref().map(|(s, b)| (s.as_str(), b.as_slice()));
        match origin(sealed, stored, subject, body) {
            Origin::Sealed | Origin::Stored => Verdict::Handle(Box::new(event)),
            Origin::Forged => {
                self.metrics.bus_message_refused();
                tracing::warn!(subject = %wire_subject, id = %event.id,
                    "refusing a bus message no replica of this installation published (no valid seal, not in the outbox)");
                Verdict::Drop
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trust(key: &str, stored: Option<(&str, &[u8])>) -> BusTrust {
        let stored = stored.map(|(s, b)| (s.to_string(), b.to_vec()));
        BusTrust::new(
            key,
            Arc::new(move |_| {
                let stored = stored.clone();
                Box::pin(async move { Ok(stored) })
            }),
            Metrics::default(),
        )
    }

    const BODY: &[u8] =
        br#"{"id":"e1","type":"a.b","subject":"a.b","source":"t","timestamp":"2026-01-01T00:00:00Z","data":{}}"#;

    #[tokio::test]
    async fn a_message_sealed_with_the_installation_s_key_is_handled() {
        let t = trust("k1", None);
        let seal = t.seal("ns.a.b", BODY);
        assert!(matches!(
            t.check("ns", "ns.a.b", BODY, Some(&seal)).await,
            Verdict::Handle(_)
        ));
    }

    #[tokio::test]
    async fn another_key_another_subject_or_no_seal_is_refused() {
        let t = trust("k1", None);
        let other = trust("k2", None).seal("ns.a.b", BODY);
        assert!(matches!(
            t.check("ns", "ns.a.b", BODY, Some(&other)).await,
            Verdict::Drop
        ));
        let moved = t.seal("ns.a.c", BODY);
        assert!(matches!(
            t.check("ns", "ns.a.b", BODY, Some(&moved)).await,
            Verdict::Drop
        ));
        assert!(matches!(t.check("ns", "ns.a.b", BODY, None).await, Verdict::Drop));
        let metrics = t.metrics.render();
        assert!(metrics.contains("kandev_bus_messages_refused_total 3"), "{metrics}");
    }

    #[tokio::test]
    async fn an_unsealed_message_the_outbox_holds_is_handled() {
        let t = trust("k1", Some(("a.b", BODY)));
        assert!(matches!(t.check("ns", "ns.a.b", BODY, None).await, Verdict::Handle(_)));
    }

    #[tokio::test]
    async fn an_outbox_that_cannot_be_read_leaves_the_message_to_come_again() {
        let t = BusTrust::new(
            "k1",
            Arc::new(|_| Box::pin(async { Err("down".to_string()) })),
            Metrics::default(),
        );
        assert!(matches!(t.check("ns", "ns.a.b", BODY, None).await, Verdict::Retry));
    }
}
