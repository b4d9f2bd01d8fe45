//! The board's JSON, kept per (workspace, archived?, runs?) beside the board
//! version it was read at. The version lives in the database and moves in
//! every transaction that changes a task; the request's admission reads it
//! (`Store::place`), so a cached body costs no read of its own and stays right
//! across replicas and hand-edits.
//!
//! A body read after seeing version `v` shows at least state `v`, so it may
//! answer anyone who saw `v` or older. One reader per key rebuilds while the
//! readers that need something newer wait for it; readers the held body is
//! new enough for never wait. A rebuild is stamped with the highest version
//! any reader had admitted with when it began, so under a stream of writes
//! one rebuild answers every reader queued behind it.
//!
//! A body's gzip form is made once, by its first reader that accepts gzip,
//! and kept beside it: browsers always ask for gzip, and compressing the
//! same board for every reader and every live tick cost more than the read.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::OnceCell;

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

/// Past this size a body is compressed off the runtime's threads.
const COMPRESS_INLINE_BYTES: usize = 64 << 10;

/// A body and the board version its reader saw before reading it.
struct Entry {
    version: i64,
    body: Body,
    _held: Held,
}

/// A board's JSON and, once a reader asked for it, its gzip form.
#[derive(Clone, Debug)]
pub struct Body {
    pub plain: Bytes,
    gzip: Arc<OnceCell<Bytes>>,
}

impl Body {
    fn new(plain: Bytes) -> Body {
        Body {
            plain,
            gzip: Arc::default(),
        }
    }

    /// The body gzip-compressed: made by the first caller, shared by the rest
    /// (its budget share is the plain body's; the gzip form is smaller).
    pub async fn gzip(&self) -> Bytes {
        let plain = self.plain.clone();
        self.gzip
            .get_or_init(|| async move {
                if plain.len() <= COMPRESS_INLINE_BYTES {
                    return gzip(&plain);
                }
                let big = plain.clone();
                tokio::task::spawn_blocking(move || gzip(&big))
                    .await
                    .unwrap_or_else(|_| gzip(&plain))
            })
            .await
            .clone()
    }
}

fn gzip(plain: &[u8]) -> Bytes {
    use std::io::Write;
    let mut out = flate2::write::GzEncoder::new(Vec::with_capacity(plain.len() / 4), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = out.write_all(plain);
    Bytes::from(out.finish().unwrap_or_default())
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

/// One board's body, its readers' versions and its rebuild turn.
#[derive(Default)]
struct Slot {
    /// The newest body; a reader it is new enough for takes it without
    /// waiting behind a rebuild.
    latest: Mutex<Option<Entry>>,
    /// The highest version any reader of this board has admitted with.
    seen: AtomicI64,
    /// One rebuild at a time.
    turn: tokio::sync::Mutex<()>,
}

impl Slot {
    fn hit(&self, version: i64) -> Option<Body> {
        let latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        latest.as_ref().filter(|e| e.version >= version).map(|e| e.body.clone())
    }
}

/// Whether the body was served from the cache or rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    Hit,
    Miss,
}

#[derive(Default)]
pub struct BoardCache {
    slots: Mutex<HashMap<Key, Arc<Slot>>>,
    held: Arc<AtomicUsize>,
}

impl BoardCache {
    fn slot(&self, key: Key) -> Arc<Slot> {
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
    ) -> Result<(Body, Read), E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Bytes, E>>,
    {
        let slot = self.slot(Key {
            workspace: workspace.to_string(),
            archived,
            runs,
        });
        slot.seen.fetch_max(version, Ordering::AcqRel);
        if let Some(body) = slot.hit(version) {
            return Ok((body, Read::Hit));
        }
        let _turn = slot.turn.lock().await;
        if let Some(body) = slot.hit(version) {
            return Ok((body, Read::Hit));
        }
        // Every version counted in `seen` was read, committed, before the
        // build reads: its body is at least that new, so it answers all
        // those readers, not only this one.
        let at = slot.seen.load(Ordering::Acquire).max(version);
        let body = Body::new(build().await?);
        let mut latest = slot.latest.lock().unwrap_or_else(|p| p.into_inner());
        *latest = None;
        *latest = self.hold(body.plain.len()).map(|held| Entry {
            version: at,
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
        let (body, how) = cache
            .read::<(), _, _>("w", false, false, version, || async move { Ok(Bytes::from(body)) })
            .await
            .expect("read");
        (body.plain, how)
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
        assert_eq!((body.plain, how), (Bytes::from("archived"), Read::Miss));
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
            assert_eq!(
                served.plain.len(),
                MAX_BODY_BYTES,
                "a body past the budget is still served"
            );
        }
        assert_eq!(cache.held_bytes(), BUDGET_BYTES);
    }

    #[tokio::test]
    async fn a_failed_build_keeps_nothing_and_the_next_reader_builds() {
        let cache = BoardCache::default();
        let failed = cache
            .read("w", false, false, 1, || async { Err::<Bytes, _>("database down") })
            .await;
        assert_eq!(failed.err(), Some("database down"));
        assert_eq!(read(&cache, 1, "built").await.1, Read::Miss);
    }

    /// A rebuild for `version` that waits for `go` before it answers.
    fn held_rebuild(
        cache: &Arc<BoardCache>,
        version: i64,
        go: tokio::sync::oneshot::Receiver<()>,
    ) -> tokio::task::JoinHandle<(Bytes, Read)> {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .read::<(), _, _>("w", false, false, version, || async move {
                    let _ = go.await;
                    Ok(Bytes::from(format!("v{version}")))
                })
                .await
                .map(|(body, how)| (body.plain, how))
                .expect("read")
        })
    }

    #[tokio::test]
    async fn a_reader_the_held_body_is_new_enough_for_does_not_wait_behind_a_rebuild() {
        let cache = Arc::new(BoardCache::default());
        read(&cache, 5, "five").await;
        let (go, wait) = tokio::sync::oneshot::channel();
        let rebuild = held_rebuild(&cache, 9, wait);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let quick = tokio::time::timeout(std::time::Duration::from_secs(1), read(&cache, 4, "unused")).await;
        assert_eq!(
            quick.expect("not held behind the rebuild"),
            (Bytes::from("five"), Read::Hit)
        );
        let _ = go.send(());
        assert_eq!(rebuild.await.expect("join"), (Bytes::from("v9"), Read::Miss));
    }

    #[tokio::test]
    async fn one_rebuild_answers_every_reader_that_queued_behind_the_one_before() {
        let cache = Arc::new(BoardCache::default());
        let builds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (go, wait) = tokio::sync::oneshot::channel();
        let first = held_rebuild(&cache, 6, wait);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        // Writes land while the first rebuild runs; readers see newer versions.
        let mut later = vec![];
        for version in [7, 8, 9] {
            let (cache, builds) = (cache.clone(), builds.clone());
            later.push(tokio::spawn(async move {
                cache
                    .read::<(), _, _>("w", false, false, version, || async move {
                        builds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        Ok(Bytes::from("after"))
                    })
                    .await
                    .expect("read")
            }));
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let _ = go.send(());
        assert_eq!(first.await.expect("join").0, Bytes::from("v6"));
        for r in later {
            assert_eq!(r.await.expect("join").0.plain, Bytes::from("after"));
        }
        assert_eq!(
            builds.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "one rebuild for versions 7, 8 and 9"
        );
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
            assert_eq!(r.await.expect("join").expect("read").0.plain, Bytes::from("seven"));
        }
        assert_eq!(builds.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_bodys_gzip_form_is_made_once_and_a_new_version_gets_its_own() {
        use std::io::Read as _;
        let cache = BoardCache::default();
        let json = Bytes::from(format!("[{}]", vec!["{\"title\":\"a task\"}"; 200].join(",")));
        let board = |v: i64| {
            let json = json.clone();
            let cache = &cache;
            async move {
                cache
                    .read::<(), _, _>("w", false, false, v, || async move { Ok(json) })
                    .await
                    .expect("read")
                    .0
            }
        };
        let (first, second) = (board(1).await.gzip().await, board(1).await.gzip().await);
        assert_eq!(first.as_ptr(), second.as_ptr(), "the second reader takes the kept form");
        assert!(first.len() < json.len() / 4, "{} of {}", first.len(), json.len());
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&first[..])
            .read_to_end(&mut unzipped)
            .expect("gzip");
        assert_eq!(unzipped, json);
        let newer = board(2).await.gzip().await;
        assert_ne!(newer.as_ptr(), first.as_ptr(), "a rebuilt body is compressed afresh");
    }
}
