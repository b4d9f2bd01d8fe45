//! Live notices shared between replicas over plain NATS publish/subscribe,
//! not JetStream: a notice is only a hint to refetch, and a browser reloads
//! whatever it shows when its stream reconnects, so at most once is enough
//! and nothing is stored. The connection is opened without echo, so a
//! replica never hears its own notices back (its subscribers had them at once).
//! What other replicas sent while NATS was out of reach is lost, so on every
//! reconnect this replica tells all its browsers to read again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::StreamExt;
use kandev_core::api::{LiveUpdate, SharedLiveUpdate};
use tokio::sync::{Notify, broadcast, mpsc};
use tokio::task::JoinHandle;

use super::Audience;
use crate::bus::BusError;

/// Notices waiting to be published; past this a notice is dropped rather
/// than making the change that announced it wait for NATS.
const QUEUE: usize = 4096;

#[derive(Clone)]
pub(super) struct Outgoing {
    tx: mpsc::Sender<SharedLiveUpdate>,
    dropping: Arc<AtomicBool>,
    _incoming: Arc<StopOnDrop>,
}

/// Ends the tasks that deliver other replicas' notices and resync after a
/// reconnect once the last hub is gone (they hold the NATS connection open).
struct StopOnDrop(Vec<JoinHandle<()>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

impl Outgoing {
    pub(super) async fn connect(
        url: &str,
        subject: &str,
        local: broadcast::Sender<(Audience, LiveUpdate)>,
    ) -> Result<Outgoing, BusError> {
        let reconnected = Arc::new(Notify::new());
        let on_event = reconnected.clone();
        // async-nats reports the first connection as `Connected` too; only
        // the ones after it follow an outage.
        let connects = Arc::new(AtomicUsize::new(0));
        let address = crate::bus::nats_address(url, async_nats::ConnectOptions::new())?;
        let client = address
            .options
            .no_echo()
            .event_callback(move |event| {
                let on_event = on_event.clone();
                let connects = connects.clone();
                async move {
                    match event {
                        async_nats::Event::Connected if connects.fetch_add(1, Ordering::Relaxed) > 0 => {
                            on_event.notify_one()
                        }
                        async_nats::Event::Disconnected => tracing::warn!(
                            "live updates lost NATS: browsers miss other replicas' changes until it is back"
                        ),
                        _ => {}
                    }
                }
            })
            .connect(address.server)
            .await
            .map_err(|e| BusError::Connect(format!("live updates: {e}")))?;
        let mut incoming = client
            .subscribe(subject.to_string())
            .await
            .map_err(|e| BusError::Subscribe(format!("live updates: {e}")))?;
        // Once flushed, the server holds the subscription: a notice another
        // replica sends after this replica reports ready reaches it.
        client
            .flush()
            .await
            .map_err(|e| BusError::Subscribe(format!("live updates: {e}")))?;
        let resync = tokio::spawn(resync_after_reconnects(client.clone(), reconnected, local.clone()));
        let deliver = tokio::spawn(async move {
            while let Some(msg) = incoming.next().await {
                match SharedLiveUpdate::decode(&msg.payload) {
                    Some(shared) => {
                        let _ = local.send((Audience::Workspace(shared.workspace_id), shared.update));
                    }
                    None => tracing::debug!("ignoring a malformed live update from another replica"),
                }
            }
        });
        let (tx, mut queued) = mpsc::channel::<SharedLiveUpdate>(QUEUE);
        let subject = subject.to_string();
        tokio::spawn(async move {
            while let Some(shared) = queued.recv().await {
                if let Err(e) = client.publish(subject.clone(), shared.encode().into()).await {
                    tracing::warn!(error = %e, "could not share a live update with the other replicas");
                }
            }
        });
        Ok(Outgoing {
            tx,
            dropping: Arc::new(AtomicBool::new(false)),
            _incoming: Arc::new(StopOnDrop(vec![deliver, resync])),
        })
    }

    /// Queues a notice for the other replicas without waiting.
    pub(super) fn send(&self, shared: SharedLiveUpdate) {
        match self.tx.try_send(shared) {
            Ok(()) => self.dropping.store(false, Ordering::Relaxed),
            Err(mpsc::error::TrySendError::Full(_)) => {
                if !self.dropping.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "live updates are not reaching NATS fast enough: other replicas' browsers miss some until it catches up"
                    );
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

/// After each (re)connection, once the server holds the subscription again
/// (the flush's round trip comes after the client re-sends it), tells every
/// local stream to read again: notices sent while apart never arrive.
async fn resync_after_reconnects(
    client: async_nats::Client,
    reconnected: Arc<Notify>,
    local: broadcast::Sender<(Audience, LiveUpdate)>,
) {
    loop {
        reconnected.notified().await;
        match client.flush().await {
            Ok(()) => {
                tracing::info!("live updates reached NATS again: every open page reads again");
                let _ = local.send((Audience::Everyone, LiveUpdate::resync()));
            }
            // Out of reach again: the next reconnect tries once more.
            Err(e) => tracing::debug!(error = %e, "live updates: no flush after a reconnect"),
        }
    }
}
