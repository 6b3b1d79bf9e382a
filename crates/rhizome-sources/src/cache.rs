//! The bounded cache of a source, shared by every query on it.
//!
//! Entries are node rows and adjacency lists, keyed by node key (and by
//! relationship type and direction for lists), and *located lists*: an
//! adjacency list made ready for route searches (ids, the weight and the
//! neighbours' coordinates side by side in one allocation), derived from
//! a list and its neighbours' rows. Freshness rule: an entry older than
//! the source's time to live counts as absent and is fetched (or derived)
//! again; a derived entry is as old as the oldest entry it was made from;
//! `clear` empties the cache at once (for cold measurements, or after the
//! backend changed). Size rule: at most `max_entries` entries of all kinds;
//! inserting into a full shard evicts entries of that shard in hash order
//! (roughly random), counted as evictions. The cache is split into shards,
//! each behind its own reader-writer lock: lookups that hit take it shared
//! (a prefetched entry's first use is an atomic flag), so concurrent
//! searches do not wait on each other; only inserts, evictions and the
//! removal of an expired entry take it exclusively. The maps hash with a
//! randomly seeded `foldhash` (keys come from the backend, so the seed
//! keeps colliding keys from being chosen in advance).

use crate::counters::Counters;
use rhizome_common::{NodeId, RelId, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// The relationships of one node of one type in one direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdjacencyList {
    /// Neighbour keys.
    pub neighbours: Vec<i64>,
    /// Relationship keys, parallel to `neighbours`.
    pub rels: Vec<i64>,
    /// Relationship properties in the mapping's order, one row per relationship.
    pub properties: Vec<Vec<Value>>,
}

/// One relationship of a located list: what A* reads per relationship of
/// an expanded node, in one place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocatedRel {
    /// The neighbour's node id (see [`crate::query_graph`] for the layout).
    pub neighbour: NodeId,
    /// The relationship's id.
    pub rel: RelId,
    /// The weight property as a number; NaN where it is not a finite
    /// number (or no weight property was asked for).
    pub weight: f64,
    /// The neighbour's latitude in degrees; NaN where the neighbour has no
    /// numeric coordinates (or does not exist).
    pub lat: f64,
    /// The neighbour's longitude in degrees (NaN as `lat`).
    pub lon: f64,
}

impl LocatedRel {
    /// The neighbour's (latitude, longitude), if it has them.
    #[inline]
    pub fn place(&self) -> Option<(f64, f64)> {
        (!self.lat.is_nan() && !self.lon.is_nan()).then_some((self.lat, self.lon))
    }
}

/// An adjacency list ready for a route search weighing by one property:
/// one allocation holding every relationship's neighbour, id, weight and
/// neighbour coordinates, so a search over a warm cache reads one entry
/// per expanded node and copies, instead of converting keys, parsing
/// property values and looking up every neighbour's row.
pub type LocatedList = Arc<[LocatedRel]>;

/// What the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheKey {
    /// The property row of node `key` of node space `space`.
    Node {
        /// Index of the node space in the mapping.
        space: u16,
        /// The node key.
        key: i64,
    },
    /// The adjacency list of node `key` for relationship type `rel` in
    /// direction `outgoing` (else incoming).
    Adjacency {
        /// Index of the relationship type in the mapping.
        rel: u16,
        /// Outgoing (true) or incoming (false).
        outgoing: bool,
        /// The node key.
        key: i64,
    },
    /// The located list ([`LocatedList`]) of the adjacency list with the
    /// same fields, weighed by property `weight` of the relationship type
    /// (`u16::MAX`: no weight).
    Located {
        /// Index of the relationship type in the mapping.
        rel: u16,
        /// Outgoing (true) or incoming (false).
        outgoing: bool,
        /// Index of the weight property.
        weight: u16,
        /// The node key.
        key: i64,
    },
}

impl CacheKey {
    /// The node key the entry belongs to.
    fn node_key(&self) -> i64 {
        match *self {
            CacheKey::Node { key, .. }
            | CacheKey::Adjacency { key, .. }
            | CacheKey::Located { key, .. } => key,
        }
    }
}

/// A cached value.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheValue {
    /// A node's properties in the mapping's order; `None`: the node does not exist.
    Node(Option<Arc<Vec<Value>>>),
    /// An adjacency list.
    Adjacency(Arc<AdjacencyList>),
    /// A located list.
    Located(LocatedList),
}

struct Entry {
    value: CacheValue,
    at: Instant,
    prefetched: AtomicBool,
}

const SHARDS: usize = 16;

type Shard = RwLock<HashMap<CacheKey, Entry, foldhash::fast::RandomState>>;

/// A bounded, sharded cache with a time to live.
pub struct Cache {
    shards: Vec<Shard>,
    per_shard: usize,
    ttl: Option<Duration>,
}

impl Cache {
    /// A cache of at most `max_entries` entries living `ttl` each.
    pub fn new(max_entries: usize, ttl: Option<Duration>) -> Cache {
        Cache {
            shards: (0..SHARDS)
                .map(|_| RwLock::new(HashMap::with_hasher(Default::default())))
                .collect(),
            per_shard: max_entries.div_ceil(SHARDS).max(1),
            ttl,
        }
    }

    /// The shard of `key`: by its node key (a multiplicative hash, so
    /// consecutive keys spread), so a node's row and lists share a shard.
    fn shard(&self, key: &CacheKey) -> &Shard {
        let h = (key.node_key() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        &self.shards[(h >> 60) as usize % SHARDS]
    }

    fn fresh(&self, at: Instant) -> bool {
        self.ttl.is_none_or(|ttl| at.elapsed() < ttl)
    }

    /// The fresh value of `key`, counting a hit or a miss.
    pub fn get(&self, key: &CacheKey, counters: &Counters) -> Option<CacheValue> {
        let found = self.peek(key, counters);
        match found {
            Some(_) => counters.lookups(1, 0),
            None => counters.lookups(0, 1),
        }
        found.map(|(value, _)| value)
    }

    /// The fresh value of `key` and when it was made, without counting a
    /// hit or a miss (the caller counts its lookups itself); the first use
    /// of a prefetched entry is counted. An expired entry is removed.
    pub fn peek(&self, key: &CacheKey, counters: &Counters) -> Option<(CacheValue, Instant)> {
        let shard = self.shard(key);
        {
            let map = shard.read().unwrap_or_else(|p| p.into_inner());
            match map.get(key) {
                Some(entry) if self.fresh(entry.at) => {
                    if entry.prefetched.load(Ordering::Relaxed)
                        && entry.prefetched.swap(false, Ordering::Relaxed)
                    {
                        counters.prefetch_used();
                    }
                    return Some((entry.value.clone(), entry.at));
                }
                Some(_) => {}
                None => return None,
            }
        }
        let mut map = shard.write().unwrap_or_else(|p| p.into_inner());
        if map.get(key).is_some_and(|e| !self.fresh(e.at)) {
            map.remove(key);
        }
        None
    }

    /// When the fresh entry of `key` was made (no counting), `None` if
    /// there is none.
    pub fn made_at(&self, key: &CacheKey) -> Option<Instant> {
        let map = self.shard(key).read().unwrap_or_else(|p| p.into_inner());
        map.get(key).map(|e| e.at).filter(|&at| self.fresh(at))
    }

    /// True if `key` has a fresh entry (no counting).
    pub fn contains(&self, key: &CacheKey) -> bool {
        self.made_at(key).is_some()
    }

    /// Stores `value`; `prefetched` marks entries no lookup asked for yet.
    /// An existing fresh entry is kept (it may already count as used).
    pub fn insert(&self, key: CacheKey, value: CacheValue, prefetched: bool, counters: &Counters) {
        self.insert_at(key, value, Instant::now(), prefetched, counters);
    }

    /// Stores `value` derived from other entries, the oldest of which was
    /// made at `at`: it expires when that one does. An existing fresh
    /// entry is kept.
    pub fn insert_derived(
        &self,
        key: CacheKey,
        value: CacheValue,
        at: Instant,
        counters: &Counters,
    ) {
        self.insert_at(key, value, at, false, counters);
    }

    fn insert_at(
        &self,
        key: CacheKey,
        value: CacheValue,
        at: Instant,
        prefetched: bool,
        counters: &Counters,
    ) {
        if !self.fresh(at) {
            return;
        }
        let mut shard = self.shard(&key).write().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = shard.get(&key) {
            if self.fresh(old.at) {
                return;
            }
        }
        if shard.len() >= self.per_shard {
            let evict = (self.per_shard / 8).max(1);
            let victims: Vec<CacheKey> = shard.keys().take(evict).copied().collect();
            for v in &victims {
                shard.remove(v);
            }
            counters.evicted(victims.len() as u64);
        }
        if prefetched {
            counters.prefetched(1);
        }
        shard.insert(
            key,
            Entry {
                value,
                at,
                prefetched: AtomicBool::new(prefetched),
            },
        );
    }

    /// Empties the cache.
    pub fn clear(&self) {
        for shard in &self.shards {
            shard.write().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }

    /// Number of entries (fresh or not).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }

    /// True if the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(key: i64) -> CacheKey {
        CacheKey::Node { space: 0, key }
    }

    #[test]
    fn hits_misses_prefetch_and_eviction() {
        let counters = Counters::default();
        let cache = Cache::new(32, None);
        assert_eq!(cache.get(&node(1), &counters), None);
        cache.insert(node(1), CacheValue::Node(None), false, &counters);
        cache.insert(node(2), CacheValue::Node(None), true, &counters);
        assert!(cache.get(&node(1), &counters).is_some());
        assert!(cache.get(&node(2), &counters).is_some());
        assert!(cache.get(&node(2), &counters).is_some());
        let s = counters.snapshot();
        assert_eq!(
            (s.hits, s.misses, s.prefetched, s.prefetch_used),
            (3, 1, 1, 1)
        );
        for k in 0..1000 {
            cache.insert(node(k), CacheValue::Node(None), false, &counters);
        }
        assert!(cache.len() <= 32, "{}", cache.len());
        assert!(counters.snapshot().evicted > 900);
        cache.clear();
        assert!(cache.is_empty());
    }

    #[test]
    fn entries_expire() {
        let counters = Counters::default();
        let cache = Cache::new(100, Some(Duration::from_millis(20)));
        cache.insert(node(1), CacheValue::Node(None), false, &counters);
        assert!(cache.contains(&node(1)));
        std::thread::sleep(Duration::from_millis(40));
        assert!(!cache.contains(&node(1)));
        assert_eq!(cache.get(&node(1), &counters), None);
    }

    fn located(key: i64) -> CacheKey {
        CacheKey::Located {
            rel: 0,
            outgoing: true,
            weight: 0,
            key,
        }
    }

    #[test]
    fn peek_counts_no_lookup_but_the_first_use_of_a_prefetched_entry() {
        let counters = Counters::default();
        let cache = Cache::new(32, None);
        cache.insert(node(1), CacheValue::Node(None), true, &counters);
        assert!(cache.peek(&node(1), &counters).is_some());
        assert!(cache.peek(&node(1), &counters).is_some());
        assert!(cache.peek(&node(2), &counters).is_none());
        let s = counters.snapshot();
        assert_eq!(
            (s.hits, s.misses, s.prefetched, s.prefetch_used),
            (0, 0, 1, 1)
        );
        assert!(cache.get(&node(1), &counters).is_some());
        assert_eq!(counters.snapshot().prefetch_used, 1);
    }

    #[test]
    fn a_derived_entry_expires_with_the_oldest_entry_it_was_made_from() {
        let counters = Counters::default();
        let ttl = Duration::from_millis(60);
        let cache = Cache::new(100, Some(ttl));
        let old = Instant::now();
        std::thread::sleep(Duration::from_millis(30));
        let list = CacheValue::Located(Arc::from(Vec::new()));
        cache.insert_derived(located(1), list.clone(), old, &counters);
        assert_eq!(cache.made_at(&located(1)), Some(old));
        std::thread::sleep(Duration::from_millis(40));
        // 70 ms after `old`: expired, although inserted 40 ms ago.
        assert_eq!(cache.get(&located(1), &counters), None);
        assert_eq!(cache.len(), 0, "an expired entry is removed when met");
        // Something made before the time to live is not stored at all.
        cache.insert_derived(located(2), list, old, &counters);
        assert!(cache.is_empty());
    }

    #[test]
    fn a_fresh_entry_is_kept_and_an_expired_one_replaced() {
        let counters = Counters::default();
        let cache = Cache::new(100, Some(Duration::from_millis(30)));
        let row = |x: i64| CacheValue::Node(Some(Arc::new(vec![Value::Int(x)])));
        cache.insert(node(1), row(1), false, &counters);
        cache.insert(node(1), row(2), false, &counters);
        assert_eq!(cache.get(&node(1), &counters), Some(row(1)));
        std::thread::sleep(Duration::from_millis(40));
        cache.insert(node(1), row(3), false, &counters);
        assert_eq!(cache.get(&node(1), &counters), Some(row(3)));
    }

    #[test]
    fn readers_and_writers_on_several_threads_agree() {
        let counters = Counters::default();
        let cache = Cache::new(4096, None);
        for k in 0..1024 {
            cache.insert(node(k), CacheValue::Node(None), false, &counters);
        }
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (cache, counters) = (&cache, &counters);
                scope.spawn(move || {
                    for round in 0..200 {
                        for k in 0..1024 {
                            assert!(cache.get(&node(k), counters).is_some());
                        }
                        cache.insert(
                            node(10_000 + t * 1000 + round),
                            CacheValue::Node(None),
                            false,
                            counters,
                        );
                    }
                });
            }
        });
        let s = counters.snapshot();
        assert_eq!((s.hits, s.misses), (4 * 200 * 1024, 0));
        assert_eq!(cache.len(), 1024 + 4 * 200);
    }

    #[test]
    fn a_located_relationship_has_a_place_only_with_both_coordinates() {
        let rel = |lat: f64, lon: f64| LocatedRel {
            neighbour: 1,
            rel: 2,
            weight: 3.0,
            lat,
            lon,
        };
        assert_eq!(rel(49.5, 6.1).place(), Some((49.5, 6.1)));
        assert_eq!(rel(f64::NAN, 6.1).place(), None);
        assert_eq!(rel(49.5, f64::NAN).place(), None);
    }
}
