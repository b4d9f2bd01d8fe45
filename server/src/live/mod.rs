//! Live updates for the browser: a process-local broadcast of "this changed"
//! notices, streamed per workspace over server-sent events.

use kandev_core::api::LiveUpdate;
use tokio::sync::broadcast;

#[derive(Clone)]
pub struct LiveHub {
    tx: broadcast::Sender<(String, LiveUpdate)>,
}

impl Default for LiveHub {
    fn default() -> Self {
        let (tx, _) = broadcast::channel(1024);
        LiveHub { tx }
    }
}

impl LiveHub {
    /// Announces a change in a workspace. Nobody listening is fine.
    pub fn notify(&self, workspace_id: &str, kind: &str, id: &str) {
        let _ = self.tx.send((
            workspace_id.to_string(),
            LiveUpdate {
                kind: kind.to_string(),
                id: id.to_string(),
            },
        ));
    }

    pub fn subscribe(&self) -> broadcast::Receiver<(String, LiveUpdate)> {
        self.tx.subscribe()
    }
}
