//! The board's JSON, kept per (workspace, archived?, runs?) beside the board
//! version it was read at. The version lives in the database and moves in
//! every transaction that changes a task; the request's admission reads it
//! (`Store::place`), so a cached body costs no read of its own and stays right
//! across replicas and hand-edits.
//!
//! A body read after seeing version `v` shows at least state `v`, so it may
//! answer anyone who saw `v` or older. One reader per key rebuilds while the
//! others wait for it, so a write under load costs one rebuild, not one per
//! waiting client.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

/// Bounds memory: past this many boards the cache starts over.
const MAX_ENTRIES: usize = 1024;
/// Larger boards are rebuilt on every read rather than held.
const MAX_BODY_BYTES: usize = 8 << 20;
/// All bodies held together; a body that would pass it is not kept.
const BUDGET_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    workspace: String,
    archived: bool,
    runs: bool,
}

/// A body and the board version its reader saw before reading it.
struct Entry {
    version: i64,
    body: Bytes,
    _held: Held,
}

/// A body's share of the budget, given back when its entry goes (replaced,
/// forgotten or cleared).
struct Held {
    bytes: usize,
    total: Arc<AtomicUsize>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.total.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Entry>>>;

/// Whether the body was served from the cache or rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    Hit,
    Miss,
}

#[derive(Default)]
pub struct BoardCache {
    slots: Mutex<HashMap<Key, Slot>>,
    held: Arc<AtomicUsize>,
}

impl BoardCache {
    fn slot(&self, key: Key) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slots.len() >= MAX_ENTRIES && !slots.contains_key(&key) {
            slots.clear();
        }
        slots.entry(key).or_default().clone()
    }

    /// The board at `version` or newer: the cached body when it is that new,
    /// else `build()`'s, kept for the next reader.
    pub async fn read<E, F, Fut>(
        &self,
        workspace: &str,
        archived: bool,
        runs: bool,
        version: i64,
        build: F,
    ) -> Result<(Bytes, Read), E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Bytes, E>>,
    {
        let slot = self.slot(Key {
            workspace: workspace.to_string(),
            archived,
            runs,
        });
        let mut entry = slot.lock().await;
        if let Some(e) = entry.as_ref().filter(|e| e.version >= version) {
            return Ok((e.body.clone(), Read::Hit));
        }
        let body = build().await?;
        *entry = None;
        *entry = self.hold(body.len()).map(|held| Entry {
            version,
            body: body.clone(),
            _held: held,
        });
        Ok((body, Read::Miss))
    }

    /// A share of the budget for `bytes`, if it fits.
    fn hold(&self, bytes: usize) -> Option<Held> {
        if bytes > MAX_BODY_BYTES {
            return None;
        }
        let fits = self
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held + bytes <= BUDGET_BYTES).then_some(held + bytes)
            })
            .is_ok();
        fits.then(|| Held {
            bytes,
            total: self.held.clone(),
        })
    }

    /// Bytes of bodies held now.
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Forgets a workspace's boards. Only tests need it: workspaces are never
    /// deleted, and a gone one is refused by the guard before any read.
    #[cfg(test)]
    fn forget(&self, workspace: &str) {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|k, _| k.workspace != workspace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(cache: &BoardCache, version: i64, body: &'static str) -> (Bytes, Read) {
        cache
            .read::<(), _, _>("w", false, false, version, || async move { Ok(Bytes::from(body)) })
            .await
            .expect("read")
    }

    #[tokio::test]
    async fn a_body_answers_its_version_and_older_and_is_rebuilt_for_newer() {
        let cache = BoardCache::default();
        assert_eq!(read(&cache, 3, "three").await, (Bytes::from("three"), Read::Miss));
        assert_eq!(read(&cache, 3, "unused").await, (Bytes::from("three"), Read::Hit));
        // A reader that saw an older version may get the newer body.
        assert_eq!(read(&cache, 2, "unused").await, (Bytes::from("three"), Read::Hit));
        assert_eq!(read(&cache, 4, "four").await, (Bytes::from("four"), Read::Miss));
        assert_eq!(read(&cache, 4, "unused").await, (Bytes::from("four"), Read::Hit));
    }

    #[tokio::test]
    async fn the_flags_are_separate_boards_and_a_forgotten_workspace_is_rebuilt() {
        let cache = BoardCache::default();
        read(&cache, 1, "plain").await;
        let (body, how) = cache
            .read::<(), _, _>("w", true, false, 1, || async { Ok(Bytes::from("archived")) })
            .await
            .expect("read");
        assert_eq!((body, how), (Bytes::from("archived"), Read::Miss));
        cache.forget("w");
        assert_eq!(read(&cache, 1, "again").await, (Bytes::from("again"), Read::Miss));
    }

    #[tokio::test]
    async fn held_bytes_follow_the_bodies_and_the_budget_is_never_passed() {
        let cache = BoardCache::default();
        read(&cache, 1, "12345").await;
        assert_eq!(cache.held_bytes(), 5);
        read(&cache, 2, "123").await;
        assert_eq!(cache.held_bytes(), 3, "a replaced body gives its bytes back");
        cache.forget("w");
        assert_eq!(cache.held_bytes(), 0);
        let big = Bytes::from(vec![b'x'; MAX_BODY_BYTES]);
        for i in 0..(BUDGET_BYTES / MAX_BODY_BYTES + 2) {
            let body = big.clone();
            let (served, _) = cache
                .read::<(), _, _>(&format!("w{i}"), false, false, 1, || async move { Ok(body) })
                .await
                .expect("read");
            assert_eq!(served.len(), MAX_BODY_BYTES, "a body past the budget is still served");
        }
        assert_eq!(cache.held_bytes(), BUDGET_BYTES);
    }

    #[tokio::test]
    async fn a_failed_build_keeps_nothing_and_the_next_reader_builds() {
        let cache = BoardCache::default();
        let failed = cache
            .read("w", false, false, 1, || async { Err::<Bytes, _>("database down") })
            .await;
        assert_eq!(failed, Err("database down"));
        assert_eq!(read(&cache, 1, "built").await.1, Read::Miss);
    }

    #[tokio::test]
    async fn concurrent_readers_of_one_version_build_it_once() {
        let cache = Arc::new(BoardCache::default());
        let builds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut readers = vec![];
        for _ in 0..20 {
            let (cache, builds) = (cache.clone(), builds.clone());
            readers.push(tokio::spawn(async move {
                cache
                    .read::<(), _, _>("w", false, false, 7, || async move {
                        builds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        Ok(Bytes::from("seven"))
                    })
                    .await
            }));
        }
        for r in readers {
            assert_eq!(r.await.expect("join").expect("read").0, Bytes::from("seven"));
        }
        assert_eq!(builds.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
