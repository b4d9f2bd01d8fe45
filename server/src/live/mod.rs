//! Live updates for the browser: "this changed" notices, streamed per
//! workspace over server-sent events. In one process they are a local
//! broadcast; with NATS every replica also shares its notices with the
//! others (`relay`), so a browser sees changes whichever replica made them.

mod relay;

use kandev_core::api::{LiveUpdate, SharedLiveUpdate};
use tokio::sync::broadcast;

use crate::bus::BusError;

/// Whose streams a notice is for.
#[derive(Clone, Debug, PartialEq)]
pub enum Audience {
    Workspace(String),
    /// Every open stream, whatever its workspace (a resync).
    Everyone,
}

impl Audience {
    pub fn includes(&self, workspace_id: &str) -> bool {
        match self {
            Audience::Workspace(ws) => ws == workspace_id,
            Audience::Everyone => true,
        }
    }
}

#[derive(Clone)]
pub struct LiveHub {
    tx: broadcast::Sender<(Audience, LiveUpdate)>,
    relay: Option<relay::Outgoing>,
}

impl Default for LiveHub {
    fn default() -> Self {
        let (tx, _) = broadcast::channel(1024);
        LiveHub { tx, relay: None }
    }
}

impl LiveHub {
    /// A hub that shares its notices with the replicas listening on the
    /// same NATS `subject`, and delivers theirs to its own subscribers.
    pub async fn shared(nats_url: &str, subject: &str) -> Result<LiveHub, BusError> {
        let hub = LiveHub::default();
        let relay = relay::Outgoing::connect(nats_url, subject, hub.tx.clone()).await?;
        Ok(LiveHub {
            relay: Some(relay),
            ..hub
        })
    }

    /// Announces a change in a workspace. Nobody listening is fine.
    pub fn notify(&self, workspace_id: &str, kind: &str, id: &str) {
        let update = LiveUpdate {
            kind: kind.to_string(),
            id: id.to_string(),
        };
        if let Some(relay) = &self.relay {
            relay.send(SharedLiveUpdate {
                workspace_id: workspace_id.to_string(),
                update: update.clone(),
            });
        }
        let _ = self.tx.send((Audience::Workspace(workspace_id.to_string()), update));
    }

    pub fn subscribe(&self) -> broadcast::Receiver<(Audience, LiveUpdate)> {
        self.tx.subscribe()
    }
}
