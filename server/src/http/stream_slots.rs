//! The live streams open on this replica, per caller and in all, held to
//! `kandev_core::access::admit_stream`'s bounds. A slot is given back when
//! its stream's producer ends, which it does as soon as the client leaves,
//! or when the server stops (`close`): a stream has no end of its own, and
//! the server's graceful stop waits for every answer to end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kandev_core::access::{StreamRefusal, admit_stream};

#[derive(Default)]
pub struct StreamSlots {
    open: Mutex<Open>,
    closing: tokio_util::sync::CancellationToken,
}

#[derive(Default)]
struct Open {
    by_caller: HashMap<String, usize>,
    total: usize,
}

/// One open stream's place; dropping it gives the place back.
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    caller: String,
}

impl StreamSlots {
    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more stream of `caller`, or why there is none.
    pub fn take(self: &Arc<Self>, caller: &str) -> Result<StreamSlot, StreamRefusal> {
        let mut open = self.open();
        let mine = open.by_caller.get(caller).copied().unwrap_or(0);
        admit_stream(mine, open.total)?;
        open.by_caller.insert(caller.to_string(), mine + 1);
        open.total += 1;
        Ok(StreamSlot {
            slots: self.clone(),
            caller: caller.to_string(),
        })
    }

    /// Ends every stream (their browsers reconnect, to another replica).
    pub fn close(&self) {
        self.closing.cancel();
    }

    /// Resolves once the server stops.
    pub async fn closed(&self) {
        self.closing.cancelled().await
    }

    /// Streams open now, in all.
    pub fn total(&self) -> usize {
        self.open().total
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open();
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_caller.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                open.by_caller.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kandev_core::access::STREAMS_PER_CALLER;

    #[test]
    fn a_slot_given_back_opens_the_way_for_another() {
        let slots = Arc::new(StreamSlots::default());
        let mut held: Vec<_> = (0..STREAMS_PER_CALLER)
            .map(|_| slots.take("mia").expect("a slot"))
            .collect();
        assert_eq!(slots.take("mia").err(), Some(StreamRefusal::Caller));
        assert!(slots.take("leo").is_ok(), "another caller's own bound");
        held.pop();
        assert!(slots.take("mia").is_ok());
        drop(held);
        assert_eq!(slots.total(), 0);
        assert!(slots.open().by_caller.is_empty(), "nothing left behind");
    }
}
