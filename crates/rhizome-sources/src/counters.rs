//! What a source did: round trips, rows, bytes, cache hits and misses,
//! prefetched entries used, time waiting on the backend.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Live counters of a source, shared by every query on it.
#[derive(Debug, Default)]
pub struct Counters {
    round_trips: AtomicU64,
    requests: AtomicU64,
    rows: AtomicU64,
    bytes: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    prefetched: AtomicU64,
    prefetch_used: AtomicU64,
    evicted: AtomicU64,
    wait_nanos: AtomicU64,
}

/// A copy of the counters at one moment; differences of two snapshots
/// describe what happened in between.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Waits for the backend (several requests pipelined count once).
    pub round_trips: u64,
    /// Statements or commands sent.
    pub requests: u64,
    /// Rows (PostgreSQL) or hashes and list elements (Redis) received.
    pub rows: u64,
    /// Bytes of the values received (decoded sizes).
    pub bytes: u64,
    /// Lookups answered by the cache.
    pub hits: u64,
    /// Lookups that had to fetch.
    pub misses: u64,
    /// Entries put into the cache by a prefetcher, not by a request.
    pub prefetched: u64,
    /// Prefetched entries that a later lookup used.
    pub prefetch_used: u64,
    /// Entries evicted to keep the cache within its size.
    pub evicted: u64,
    /// Time spent waiting for the backend.
    pub waiting: Duration,
}

impl CounterSnapshot {
    /// Prefetched entries not used (yet).
    pub fn prefetch_wasted(&self) -> u64 {
        self.prefetched.saturating_sub(self.prefetch_used)
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &CounterSnapshot) -> CounterSnapshot {
        CounterSnapshot {
            round_trips: self.round_trips - earlier.round_trips,
            requests: self.requests - earlier.requests,
            rows: self.rows - earlier.rows,
            bytes: self.bytes - earlier.bytes,
            hits: self.hits - earlier.hits,
            misses: self.misses - earlier.misses,
            prefetched: self.prefetched - earlier.prefetched,
            prefetch_used: self.prefetch_used - earlier.prefetch_used,
            evicted: self.evicted - earlier.evicted,
            waiting: self.waiting.saturating_sub(earlier.waiting),
        }
    }

    /// One line for reports.
    pub fn render(&self) -> String {
        format!(
            "round trips {}, requests {}, rows {}, bytes {}, cache hits {}, misses {}, prefetched {} (used {}, unused {}), evicted {}, waiting {:.1} ms",
            self.round_trips,
            self.requests,
            self.rows,
            self.bytes,
            self.hits,
            self.misses,
            self.prefetched,
            self.prefetch_used,
            self.prefetch_wasted(),
            self.evicted,
            self.waiting.as_secs_f64() * 1e3
        )
    }
}

impl Counters {
    /// One round trip carrying `requests` requests, answered after `waited`.
    pub fn round_trip(&self, requests: u64, waited: Duration) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.requests.fetch_add(requests, Ordering::Relaxed);
        self.wait_nanos
            .fetch_add(waited.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Rows and bytes received.
    pub fn received(&self, rows: u64, bytes: u64) {
        self.rows.fetch_add(rows, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Cache lookups.
    pub fn lookups(&self, hits: u64, misses: u64) {
        if hits > 0 {
            self.hits.fetch_add(hits, Ordering::Relaxed);
        }
        if misses > 0 {
            self.misses.fetch_add(misses, Ordering::Relaxed);
        }
    }

    /// Entries added by a prefetcher.
    pub fn prefetched(&self, n: u64) {
        self.prefetched.fetch_add(n, Ordering::Relaxed);
    }

    /// A prefetched entry used for the first time.
    pub fn prefetch_used(&self) {
        self.prefetch_used.fetch_add(1, Ordering::Relaxed);
    }

    /// Entries evicted.
    pub fn evicted(&self, n: u64) {
        self.evicted.fetch_add(n, Ordering::Relaxed);
    }

    /// The current values.
    pub fn snapshot(&self) -> CounterSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CounterSnapshot {
            round_trips: get(&self.round_trips),
            requests: get(&self.requests),
            rows: get(&self.rows),
            bytes: get(&self.bytes),
            hits: get(&self.hits),
            misses: get(&self.misses),
            prefetched: get(&self.prefetched),
            prefetch_used: get(&self.prefetch_used),
            evicted: get(&self.evicted),
            waiting: Duration::from_nanos(get(&self.wait_nanos)),
        }
    }
}
