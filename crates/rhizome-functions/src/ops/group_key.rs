//! [`GroupKey`]: values as keys of hash tables for DISTINCT and grouping.

use super::compare::{equivalent, time_utc_nanos};
use rhizome_common::Value;
use std::hash::{Hash, Hasher};

/// The hasher of the runtime's tables keyed by values (grouping, DISTINCT,
/// hash joins): fast on the short keys these hold, seeded per process.
pub type KeyHasher = foldhash::fast::RandomState;

/// A hash map with [`KeyHasher`].
pub type KeyMap<K, V> = std::collections::HashMap<K, V, KeyHasher>;

/// A hash set with [`KeyHasher`].
pub type KeySet<K> = std::collections::HashSet<K, KeyHasher>;

/// A value under Cypher's *equivalence* ([`equivalent`]): `Eq` and `Hash`
/// agree with it, so `GroupKey` can key a `HashMap`/`HashSet` for DISTINCT,
/// grouping keys and `count(DISTINCT x)`.
///
/// Null is equivalent to null, NaN to NaN, `1` to `1.0`; lists and maps
/// element-wise; zoned times and date-times by instant.
#[derive(Debug, Clone)]
pub struct GroupKey(pub Value);

impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        equivalent(&self.0, &other.0)
    }
}

impl Eq for GroupKey {}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_equivalent(&self.0, state);
    }
}

/// Feeds `v` to `state` consistently with [`equivalent`]: equivalent values
/// hash alike. Lets a runtime hash borrowed values (probe sides, raw hash
/// tables) without wrapping a clone in a [`GroupKey`].
pub fn hash_equivalent<H: Hasher>(v: &Value, state: &mut H) {
    hash_value(v, state)
}

fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    match v {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Int(i) => {
            state.write_u8(2);
            i.hash(state);
        }
        Value::Float(x) => {
            // Integral floats hash as the integer they equal.
            if x.fract() == 0.0 && *x >= -9.223_372_036_854_776e18 && *x < 9.223_372_036_854_776e18
            {
                state.write_u8(2);
                (*x as i64).hash(state);
            } else if x.is_nan() {
                state.write_u8(3);
            } else {
                state.write_u8(4);
                x.to_bits().hash(state);
            }
        }
        Value::String(s) => {
            state.write_u8(5);
            s.hash(state);
        }
        Value::List(items) => {
            state.write_u8(6);
            state.write_usize(items.len());
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Map(map) => {
            state.write_u8(7);
            state.write_usize(map.len());
            for (k, item) in map {
                k.hash(state);
                hash_value(item, state);
            }
        }
        Value::Node(id) => {
            state.write_u8(8);
            id.hash(state);
        }
        Value::Relationship(id) => {
            state.write_u8(9);
            id.hash(state);
        }
        Value::Path(p) => {
            state.write_u8(10);
            p.hash(state);
        }
        Value::Date(d) => {
            state.write_u8(11);
            d.hash(state);
        }
        Value::LocalTime(t) => {
            state.write_u8(12);
            t.hash(state);
        }
        Value::Time(t) => {
            state.write_u8(13);
            time_utc_nanos(t).hash(state);
        }
        Value::LocalDateTime(t) => {
            state.write_u8(14);
            t.hash(state);
        }
        Value::DateTime(t) => {
            state.write_u8(15);
            (t.seconds, t.nanos).hash(state);
        }
        Value::Duration(d) => {
            state.write_u8(16);
            d.hash(state);
        }
    }
}
