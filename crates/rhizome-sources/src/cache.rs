//! The bounded cache of a source, shared by every query on it.
//!
//! Entries are node rows and adjacency lists, keyed by node key (and by
//! relationship type and direction for lists). Freshness rule: an entry
//! older than the source's time to live counts as absent and is fetched
//! again; `clear` empties the cache at once (for cold measurements, or after
//! the backend changed). Size rule: at most `max_entries` entries; inserting
//! into a full shard evicts entries of that shard in hash order (roughly
//! random), counted as evictions. The cache is split into shards, each
//! behind its own mutex, so concurrent queries rarely wait on each other.

use crate::counters::Counters;
use rhizome_common::Value;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex};
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
}

/// A cached value.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheValue {
    /// A node's properties in the mapping's order; `None`: the node does not exist.
    Node(Option<Arc<Vec<Value>>>),
    /// An adjacency list.
    Adjacency(Arc<AdjacencyList>),
}

struct Entry {
    value: CacheValue,
    at: Instant,
    prefetched: bool,
}

const SHARDS: usize = 16;

/// A bounded, sharded cache with a time to live.
pub struct Cache {
    shards: Vec<Mutex<HashMap<CacheKey, Entry>>>,
    per_shard: usize,
    ttl: Option<Duration>,
    hasher: std::hash::RandomState,
}

impl Cache {
    /// A cache of at most `max_entries` entries living `ttl` each.
    pub fn new(max_entries: usize, ttl: Option<Duration>) -> Cache {
        Cache {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard: max_entries.div_ceil(SHARDS).max(1),
            ttl,
            hasher: std::hash::RandomState::new(),
        }
    }

    fn shard(&self, key: &CacheKey) -> &Mutex<HashMap<CacheKey, Entry>> {
        &self.shards[(self.hasher.hash_one(key) as usize) % SHARDS]
    }

    /// The fresh value of `key`, counting a hit or a miss.
    pub fn get(&self, key: &CacheKey, counters: &Counters) -> Option<CacheValue> {
        let mut shard = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        let fresh = match shard.get_mut(key) {
            Some(entry) if self.ttl.is_none_or(|ttl| entry.at.elapsed() < ttl) => {
                if entry.prefetched {
                    entry.prefetched = false;
                    counters.prefetch_used();
                }
                Some(entry.value.clone())
            }
            Some(_) => {
                shard.remove(key);
                None
            }
            None => None,
        };
        match fresh {
            Some(_) => counters.lookups(1, 0),
            None => counters.lookups(0, 1),
        }
        fresh
    }

    /// True if `key` has a fresh entry (no counting).
    pub fn contains(&self, key: &CacheKey) -> bool {
        let shard = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        shard
            .get(key)
            .is_some_and(|e| self.ttl.is_none_or(|ttl| e.at.elapsed() < ttl))
    }

    /// Stores `value`; `prefetched` marks entries no lookup asked for yet.
    /// An existing fresh entry is kept (it may already count as used).
    pub fn insert(&self, key: CacheKey, value: CacheValue, prefetched: bool, counters: &Counters) {
        let mut shard = self.shard(&key).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = shard.get(&key) {
            if self.ttl.is_none_or(|ttl| old.at.elapsed() < ttl) {
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
                at: Instant::now(),
                prefetched,
            },
        );
    }

    /// Empties the cache.
    pub fn clear(&self) {
        for shard in &self.shards {
            shard.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }

    /// Number of entries (fresh or not).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
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
}
