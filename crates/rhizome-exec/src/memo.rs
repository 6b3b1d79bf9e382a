//! Memoized expression subqueries: one query's cache of subquery values by
//! the values of the slots they read.
//!
//! A subquery the planner marks memoizable
//! ([`rhizome_plan::usage::subquery_memo_key`]: read-only, no procedure
//! calls, no random functions) has, over one snapshot, a value that
//! depends only on its key slots. The cache lives in the
//! [`crate::context::QueryContext`], which reads one snapshot (an updating
//! run drops its context before every write), so a hit is always the value
//! a run would give. It is bounded by a number of cached values; past that
//! it stops taking entries and the rest run as before. Sharded so that
//! workers evaluating subqueries at once seldom wait on each other (a lock
//! is held only for a map probe, never over a run).

use rhizome_common::Value;
use rhizome_functions::ops::{hash_equivalent, KeyHasher, KeyMap};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The most values (key values plus result values, lists counted by
/// their elements) one query's cache holds, about 12 MiB at
/// [`crate::context::VALUE_BYTES`] a value.
pub const MEMO_VALUES: usize = 1 << 18;

const SHARDS: usize = 16;

type Shard = KeyMap<MemoKey, Value>;

/// A subquery ([`crate::compile::CMemo::id`]) and its key values, equal only to
/// an identical key: `1` is not `1.0` nor `-0.0` `0.0` here, since a
/// subquery may tell them apart (`toString`), though Cypher's `=` does not.
#[derive(Debug)]
struct MemoKey(usize, Vec<Value>);

impl PartialEq for MemoKey {
    fn eq(&self, other: &MemoKey) -> bool {
        self.0 == other.0
            && self.1.len() == other.1.len()
            && self.1.iter().zip(&other.1).all(|(a, b)| identical(a, b))
    }
}

impl Eq for MemoKey {}

impl Hash for MemoKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        for v in &self.1 {
            // Identical values are equivalent, so they hash alike.
            hash_equivalent(v, state);
        }
    }
}

/// Structural equality with floats compared bit for bit.
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| identical(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, a), (kb, b))| ka == kb && identical(a, b))
        }
        _ => a == b,
    }
}

/// One query's memoized subquery values, by subquery
/// ([`crate::compile::CMemo::id`]) and key values.
#[derive(Debug)]
pub struct SubqueryMemo {
    shards: Vec<Mutex<Shard>>,
    hasher: KeyHasher,
    values: AtomicUsize,
    capacity: usize,
}

impl Default for SubqueryMemo {
    fn default() -> SubqueryMemo {
        SubqueryMemo::with_capacity(MEMO_VALUES)
    }
}

impl SubqueryMemo {
    /// A cache holding at most `capacity` values.
    pub fn with_capacity(capacity: usize) -> SubqueryMemo {
        SubqueryMemo {
            shards: (0..SHARDS).map(|_| Mutex::new(KeyMap::default())).collect(),
            hasher: KeyHasher::default(),
            values: AtomicUsize::new(0),
            capacity,
        }
    }

    fn shard(&self, key: &MemoKey) -> &Mutex<Shard> {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    /// The cached value of `subquery` for `key`, or the key back if none.
    pub fn get(&self, subquery: usize, key: Vec<Value>) -> Result<Value, Vec<Value>> {
        let key = MemoKey(subquery, key);
        let guard = self.shard(&key).lock().unwrap_or_else(|e| e.into_inner());
        match guard.get(&key) {
            Some(v) => Ok(v.clone()),
            None => Err(key.1),
        }
    }

    /// Whether the cache has room for another entry (a caller may skip
    /// building a key when it has not).
    pub fn has_room(&self) -> bool {
        self.values.load(Ordering::Relaxed) < self.capacity
    }

    /// Caches `value` as `subquery`'s value for `key`, if it fits.
    pub fn insert(&self, subquery: usize, key: Vec<Value>, value: &Value) {
        let size = key.len() + value_count(value);
        let before = self.values.fetch_add(size, Ordering::Relaxed);
        if before + size > self.capacity {
            self.values.fetch_sub(size, Ordering::Relaxed);
            return;
        }
        let key = MemoKey(subquery, key);
        let mut guard = self.shard(&key).lock().unwrap_or_else(|e| e.into_inner());
        if guard.insert(key, value.clone()).is_some() {
            // Another worker cached the same entry meanwhile.
            self.values.fetch_sub(size, Ordering::Relaxed);
        }
    }

    /// Number of cached entries (for tests and PROFILE).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }

    /// True if nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Values in `v`, counting a list's or map's elements (one level deep: a
/// subquery's value is a boolean, a count or a list of projected values).
fn value_count(v: &Value) -> usize {
    match v {
        Value::List(items) => 1 + items.len(),
        Value::Map(m) => 1 + m.len(),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_by_subquery_and_key() {
        let memo = SubqueryMemo::default();
        assert_eq!(memo.get(1, vec![Value::Int(7)]), Err(vec![Value::Int(7)]));
        memo.insert(1, vec![Value::Int(7)], &Value::Int(3));
        assert_eq!(memo.get(1, vec![Value::Int(7)]), Ok(Value::Int(3)));
        assert!(memo.get(2, vec![Value::Int(7)]).is_err());
        assert!(memo.get(1, vec![Value::Int(8)]).is_err());
        assert_eq!(memo.len(), 1);
    }

    #[test]
    fn keys_are_identical_values_not_equal_ones() {
        let memo = SubqueryMemo::default();
        memo.insert(1, vec![Value::Int(1)], &Value::Bool(true));
        assert!(memo.get(1, vec![Value::Float(1.0)]).is_err());
        memo.insert(1, vec![Value::Float(0.0)], &Value::Bool(true));
        assert!(memo.get(1, vec![Value::Float(-0.0)]).is_err());
        assert!(memo.get(1, vec![Value::Float(0.0)]).is_ok());
        let nan = vec![Value::List(vec![Value::Float(f64::NAN)])];
        memo.insert(2, nan.clone(), &Value::Int(4));
        assert_eq!(memo.get(2, nan), Ok(Value::Int(4)));
    }

    #[test]
    fn stops_taking_entries_when_full() {
        let memo = SubqueryMemo::with_capacity(6);
        memo.insert(1, vec![Value::Int(1)], &Value::List(vec![Value::Int(0); 2]));
        assert!(memo.has_room());
        // 4 values held; 1 key value + a list of 3 would make 9 of 6.
        memo.insert(1, vec![Value::Int(2)], &Value::List(vec![Value::Int(0); 3]));
        assert!(memo.get(1, vec![Value::Int(2)]).is_err());
        memo.insert(1, vec![Value::Int(3)], &Value::Int(0));
        assert_eq!(memo.len(), 2);
        assert!(!memo.has_room());
    }
}
