//! In-process bus: synchronous delivery on the publisher's task, each matching
//! subscriber in turn, typed values kept as they are.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use kandev_core::events::Event;

use super::Handler;

type Table = RwLock<HashMap<String, Vec<(u64, Handler)>>>;

#[derive(Default)]
pub struct MemoryBus {
    handlers: Arc<Table>,
    next_id: AtomicU64,
}

pub struct MemorySubscription {
    table: Weak<Table>,
    subject: String,
    id: u64,
}

impl MemorySubscription {
    pub fn unsubscribe(self) {
        // Drop does the work.
    }
}

impl Drop for MemorySubscription {
    fn drop(&mut self) {
        if let Some(table) = self.table.upgrade() {
            let mut t = table.write().unwrap_or_else(|p| p.into_inner());
            if let Some(list) = t.get_mut(&self.subject) {
                list.retain(|(id, _)| *id != self.id);
            }
        }
    }
}

impl MemoryBus {
    pub fn subscribe(&self, subject: &str, handler: Handler) -> MemorySubscription {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.handlers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(subject.to_string())
            .or_default()
            .push((id, handler));
        MemorySubscription {
            table: Arc::downgrade(&self.handlers),
            subject: subject.to_string(),
            id,
        }
    }

    pub async fn publish(&self, event: Event) {
        let handlers: Vec<Handler> = self
            .handlers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&event.subject)
            .map(|l| l.iter().map(|(_, h)| h.clone()).collect())
            .unwrap_or_default();
        for h in handlers {
            h(event.clone()).await;
        }
    }
}
