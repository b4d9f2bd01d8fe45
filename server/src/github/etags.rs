//! The conditional-read cache: URL → (ETag, body) of the last 200, bounded
//! by bytes and evicting the least recently used, so thousands of watched
//! PRs cannot grow it without end.

use bytes::Bytes;
use lru::LruCache;

/// The cache's default budget.
pub const DEFAULT_BUDGET: usize = 32 * 1024 * 1024;

pub struct EtagCache {
    entries: LruCache<String, (String, Bytes)>,
    bytes: usize,
    budget: usize,
}

fn cost(url: &str, etag: &str, body: &Bytes) -> usize {
    url.len() + etag.len() + body.len()
}

impl EtagCache {
    pub fn new(budget: usize) -> Self {
        EtagCache {
            entries: LruCache::unbounded(),
            bytes: 0,
            budget,
        }
    }

    /// The entry for `url`, marked as just used.
    pub fn get(&mut self, url: &str) -> Option<(String, Bytes)> {
        self.entries.get(url).cloned()
    }

    /// Stores an entry, evicting the least recently used until the cache fits
    /// its budget. An entry larger than the whole budget is not kept.
    pub fn put(&mut self, url: String, etag: String, body: Bytes) {
        let size = cost(&url, &etag, &body);
        if let Some((old_etag, old_body)) = self.entries.pop(&url) {
            self.bytes -= cost(&url, &old_etag, &old_body);
        }
        if size > self.budget {
            return;
        }
        while self.bytes + size > self.budget {
            match self.entries.pop_lru() {
                Some((u, (e, b))) => self.bytes -= cost(&u, &e, &b),
                None => break,
            }
        }
        self.bytes += size;
        self.entries.put(url, (etag, body));
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> Bytes {
        Bytes::from(vec![b'x'; n])
    }

    #[test]
    fn stays_within_its_byte_budget_evicting_the_least_recently_used() {
        let mut c = EtagCache::new(1000);
        for i in 0..5 {
            c.put(format!("u{i}"), "e".into(), body(200));
        }
        assert!(c.bytes() <= 1000, "{}", c.bytes());
        assert!(c.get("u0").is_none(), "the oldest went first");
        assert!(c.get("u4").is_some());
        // Reading u1 makes it recent: the next eviction takes u2.
        assert!(c.get("u1").is_some());
        c.put("u5".into(), "e".into(), body(200));
        assert!(c.get("u1").is_some() && c.get("u2").is_none());
    }

    #[test]
    fn replacing_an_entry_counts_its_new_size_only() {
        let mut c = EtagCache::new(1000);
        c.put("u".into(), "a".into(), body(500));
        c.put("u".into(), "b".into(), body(100));
        assert_eq!(c.bytes(), 1 + 1 + 100);
        assert_eq!(c.len(), 1);
        c.put("big".into(), "e".into(), body(5000));
        assert!(c.get("big").is_none(), "larger than the budget: not kept");
        assert_eq!(c.get("u").unwrap().0, "b");
    }
}
