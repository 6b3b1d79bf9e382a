//! Keys of relationships whose rows have no key column (`"key": null` in
//! the mapping): **row-number keys**.
//!
//! Such a relationship is identified by its row: its space, its start
//! node's key, its end node's key and its *ordinal* among the rows of the
//! same space between the same two nodes (parallel duplicates), those rows
//! ordered by their property values (in the mapping's order). Both ends'
//! lists hold every row between the two nodes, so a relationship read
//! from its start node's outgoing list and from its end node's incoming
//! list gets the same ordinal; rows equal in every value are
//! interchangeable, so which of them takes which ordinal cannot be told
//! apart. PostgreSQL's `ctid` is not used: `VACUUM FULL` and updates move
//! rows, while this rule depends only on the values.
//!
//! The key is a function of the row, so it is the same in every process
//! that reads the same rows ([`row_key`]): the 64-bit FNV-1a hash of the
//! 20 bytes start key (`i64`, little-endian), end key (`i64`, LE) and
//! ordinal (`u32`, LE), folded to the 48 key bits of a relationship id as
//! `(h ^ (h >> 48)) & (2^48 - 1)`. The space is not hashed: it is the
//! id's top 16 bits already. The tuple itself does not fit 48 bits (two
//! LDBC node keys alone need 86), so two rows of one space may hash
//! alike. The source keeps the key of every tuple it has read and detects
//! that: the row read second takes the next free key (`key + 1`, ...,
//! wrapping at 2^48), so ids stay unique within a process, and only such
//! a row can get another id in a process that read the two rows in the
//! other order. For a space of which a process reads `n` relationships,
//! the expected number of such pairs is about `n^2 / 2^49` (70,000: 1 in
//! 100,000; a million: 1 in 560). The source keeps at most
//! [`MAX_ROW_KEYS`] tuples; a query that would need more fails with a
//! clear error rather than risk an undetected duplicate.

use crate::cache::AdjacencyList;
use crate::fetch::ListRef;
use rhizome_common::{Error, ErrorKind, Result, Value};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Mutex;

/// Most tuples one source keeps (about 60 bytes each).
pub const MAX_ROW_KEYS: usize = 1 << 24;

/// The 48 key bits of a relationship id.
const KEY_MASK: u64 = (1 << 48) - 1;

/// The row-number key of the relationship from `start` to `end` with
/// `ordinal` among the rows of its space between those two nodes, before
/// any collision (see the module documentation): 64-bit FNV-1a of the
/// little-endian bytes of `start`, `end` and `ordinal`, folded to 48 bits.
pub fn row_key(start: i64, end: i64, ordinal: u32) -> i64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let bytes = start
        .to_le_bytes()
        .into_iter()
        .chain(end.to_le_bytes())
        .chain(ordinal.to_le_bytes());
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(PRIME);
    }
    ((h ^ (h >> 48)) & KEY_MASK) as i64
}

/// (start key, end key, ordinal among duplicates).
type RowTuple = (i64, i64, u32);

/// A source's row-number keys (see the module documentation).
#[derive(Default)]
pub struct RowKeys {
    numbered: Mutex<Numbered>,
}

#[derive(Default)]
struct Numbered {
    /// (space, key) → the tuple holding it.
    taken: HashMap<(u16, i64), RowTuple>,
    /// Tuples that collided, and the key each took instead of its hash.
    moved: HashMap<(u16, RowTuple), i64>,
}

impl Numbered {
    fn len(&self) -> usize {
        self.taken.len()
    }

    /// The key of `tuple` in `space`, taking one if it has none yet; `None`
    /// when a new one would pass [`MAX_ROW_KEYS`].
    fn key(&mut self, space: u16, tuple: RowTuple) -> Option<i64> {
        self.key_hashed(space, tuple, row_key(tuple.0, tuple.1, tuple.2))
    }

    /// [`Self::key`] with the tuple's hash given (tests give colliding ones).
    fn key_hashed(&mut self, space: u16, tuple: RowTuple, hashed: i64) -> Option<i64> {
        match self.taken.get(&(space, hashed)) {
            Some(t) if *t == tuple => return Some(hashed),
            None => {
                if self.taken.len() >= MAX_ROW_KEYS {
                    return None;
                }
                self.taken.insert((space, hashed), tuple);
                return Some(hashed);
            }
            Some(_) => {}
        }
        if let Some(&k) = self.moved.get(&(space, tuple)) {
            return Some(k);
        }
        if self.taken.len() >= MAX_ROW_KEYS {
            return None;
        }
        let mut k = hashed;
        loop {
            k = ((k as u64 + 1) & KEY_MASK) as i64;
            if let std::collections::hash_map::Entry::Vacant(e) = self.taken.entry((space, k)) {
                e.insert(tuple);
                self.moved.insert((space, tuple), k);
                return Some(k);
            }
        }
    }
}

/// Orders the values of one property: by kind, then by value (floats by
/// their total order, so NaN has a place). Only the kinds a source
/// decodes occur; others compare by their rendering.
fn value_order(a: &Value, b: &Value) -> Ordering {
    fn kind(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int(_) => 2,
            Value::Float(_) => 3,
            Value::String(_) => 4,
            Value::List(_) => 5,
            _ => 6,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => x.total_cmp(y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::List(x), Value::List(y)) => rows_order(x, y),
        _ => kind(a)
            .cmp(&kind(b))
            .then_with(|| format!("{a:?}").cmp(&format!("{b:?}"))),
    }
}

/// Orders two rows of values lexicographically.
fn rows_order(a: &[Value], b: &[Value]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| value_order(x, y))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

impl RowKeys {
    /// Tuples keyed so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True before the first tuple is keyed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Numbered> {
        self.numbered.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives the relationships of the fetched lists whose space has no key
    /// (`keyless(space)`) their row-number keys, in place of the zeros the
    /// backends decode. `source` names the source in errors.
    pub fn number(
        &self,
        source: &str,
        keyless: &dyn Fn(u16) -> bool,
        lists: &mut [(ListRef, i64, AdjacencyList)],
    ) -> Result<()> {
        if !lists.iter().any(|(list, _, _)| keyless(list.rel)) {
            return Ok(());
        }
        let mut numbered = self.lock();
        let mut order: Vec<usize> = Vec::new();
        for (list, key, adjacency) in lists.iter_mut() {
            if !keyless(list.rel) {
                continue;
            }
            let a = &*adjacency;
            order.clear();
            order.extend(0..a.neighbours.len());
            order.sort_unstable_by(|&i, &j| {
                a.neighbours[i]
                    .cmp(&a.neighbours[j])
                    .then_with(|| rows_order(&a.properties[i], &a.properties[j]))
            });
            let mut ordinal = 0u32;
            for (n, &i) in order.iter().enumerate() {
                let neighbour = adjacency.neighbours[i];
                if n > 0 && adjacency.neighbours[order[n - 1]] == neighbour {
                    ordinal += 1;
                } else {
                    ordinal = 0;
                }
                let (start, end) = if list.outgoing {
                    (*key, neighbour)
                } else {
                    (neighbour, *key)
                };
                let Some(row_key) = numbered.key(list.rel, (start, end, ordinal)) else {
                    return Err(Error::new(
                        ErrorKind::QueryAborted,
                        format!(
                            "graph source `{source}` has keyed {MAX_ROW_KEYS} relationships without a key column (row-number keys), its most; give the relationship space a key column (`key`) or reconnect the source"
                        ),
                    ));
                };
                adjacency.rels[i] = row_key;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(neighbours: &[i64], weights: &[i64]) -> AdjacencyList {
        AdjacencyList {
            neighbours: neighbours.to_vec(),
            rels: vec![0; neighbours.len()],
            properties: weights.iter().map(|&w| vec![Value::Int(w)]).collect(),
        }
    }

    const OUT: ListRef = ListRef {
        rel: 0,
        outgoing: true,
    };
    const IN: ListRef = ListRef {
        rel: 0,
        outgoing: false,
    };

    #[test]
    fn a_relationship_gets_one_key_from_either_end_and_duplicates_get_their_own() {
        let keys = RowKeys::default();
        // Node 1 has three roads to 2 (weights 7, 5, 7) and one to 3.
        let mut from_start = vec![(OUT, 1, list(&[2, 3, 2, 2], &[7, 1, 5, 7]))];
        keys.number("s", &|_| true, &mut from_start).unwrap();
        let out = &from_start[0].2.rels;
        // Read again from node 2's incoming list, in another order.
        let mut from_end = vec![(IN, 2, list(&[1, 1, 1], &[5, 7, 7]))];
        keys.number("s", &|_| true, &mut from_end).unwrap();
        let inc = &from_end[0].2.rels;
        assert_eq!(inc[0], out[2], "the weight-5 road has one key");
        let mut sevens = vec![inc[1], inc[2]];
        sevens.sort();
        let mut out_sevens = vec![out[0], out[3]];
        out_sevens.sort();
        assert_eq!(sevens, out_sevens, "the two weight-7 duplicates");
        assert_ne!(inc[1], inc[2], "parallel duplicates are told apart");
        let mut all = out.clone();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 4, "four rows, four keys");
        assert_eq!(keys.len(), 4);
        // Read again: the same keys.
        let mut again = vec![(OUT, 1, list(&[2, 2, 3, 2], &[5, 7, 1, 7]))];
        keys.number("s", &|_| true, &mut again).unwrap();
        assert_eq!(again[0].2.rels[0], out[2]);
        assert_eq!(again[0].2.rels[2], out[1]);
        assert_eq!(keys.len(), 4);
    }

    /// 64-bit FNV-1a folded to 48 bits, written out again from its
    /// definition (docs/sources.md), so that a change of [`row_key`] fails.
    fn documented(start: i64, end: i64, ordinal: u32) -> i64 {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&start.to_le_bytes());
        bytes.extend_from_slice(&end.to_le_bytes());
        bytes.extend_from_slice(&ordinal.to_le_bytes());
        let mut h: u64 = 14695981039346656037;
        for b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
        }
        ((h ^ (h >> 48)) % (1u64 << 48)) as i64
    }

    #[test]
    fn keys_are_a_documented_function_of_the_row() {
        // The bus rows of docs/sources.md: 1 -> 2, ordinals 0, 1, 2.
        assert_eq!(row_key(1, 2, 0), 77_359_922_345_766);
        assert_eq!(row_key(1, 2, 1), 266_511_728_322_701);
        assert_eq!(row_key(1, 2, 2), 262_006_263_529_038);
        for (s, e, o) in [
            (1, 2, 0),
            (0, 0, 0),
            (-1, i64::MAX, u32::MAX),
            (4_398_046_511_146, 2_199_023_255_594, 3),
        ] {
            assert_eq!(row_key(s, e, o), documented(s, e, o), "{s} {e} {o}");
            assert!((0..1 << 48).contains(&row_key(s, e, o)));
        }
    }

    #[test]
    fn two_sources_reading_in_different_orders_give_the_same_keys() {
        // Two sources (two processes): one reads node 1's outgoing list,
        // the other node 2's incoming list first, then node 1's.
        let first = RowKeys::default();
        let mut a = vec![(OUT, 1, list(&[2, 3, 2, 2], &[7, 1, 5, 7]))];
        first.number("s", &|_| true, &mut a).unwrap();
        let second = RowKeys::default();
        let mut b = vec![(IN, 2, list(&[1, 1, 1], &[5, 7, 7]))];
        second.number("s", &|_| true, &mut b).unwrap();
        let mut c = vec![(OUT, 1, list(&[3, 2, 2, 2], &[1, 7, 7, 5]))];
        second.number("s", &|_| true, &mut c).unwrap();
        let mut keys_a = a[0].2.rels.clone();
        keys_a.sort();
        let mut keys_c = c[0].2.rels.clone();
        keys_c.sort();
        assert_eq!(keys_a, keys_c);
        // The road to 3 and the weight-5 road by their rows.
        assert_eq!(a[0].2.rels[1], c[0].2.rels[0]);
        assert_eq!(a[0].2.rels[1], row_key(1, 3, 0));
        assert_eq!(a[0].2.rels[2], c[0].2.rels[3]);
        assert_eq!(a[0].2.rels[2], row_key(1, 2, 0), "5 sorts before 7");
    }

    #[test]
    fn a_collision_takes_the_next_free_key_and_keeps_it() {
        let mut n = Numbered::default();
        let top = KEY_MASK as i64;
        assert_eq!(n.key_hashed(0, (1, 2, 0), top), Some(top));
        // Another row with the same hash: the next key, wrapping at 2^48.
        assert_eq!(n.key_hashed(0, (5, 6, 0), top), Some(0));
        assert_eq!(n.key_hashed(0, (7, 8, 0), top), Some(1));
        // Asked again: the same keys.
        assert_eq!(n.key_hashed(0, (5, 6, 0), top), Some(0));
        assert_eq!(n.key_hashed(0, (1, 2, 0), top), Some(top));
        assert_eq!(n.key_hashed(0, (7, 8, 0), top), Some(1));
        // A row whose own hash was taken by a moved one moves on too.
        assert_eq!(n.key_hashed(0, (9, 9, 0), 0), Some(2));
        // Another space has keys of its own.
        assert_eq!(n.key_hashed(1, (5, 6, 0), top), Some(top));
        assert_eq!(n.len(), 5);
    }

    #[test]
    fn spaces_with_a_key_column_keep_their_keys() {
        let keys = RowKeys::default();
        let mut lists = vec![(OUT, 1, list(&[2], &[1]))];
        lists[0].2.rels[0] = 99;
        keys.number("s", &|_| false, &mut lists).unwrap();
        assert_eq!(lists[0].2.rels[0], 99);
        assert!(keys.is_empty());
    }

    #[test]
    fn values_are_ordered_totally() {
        let values = [
            Value::Null,
            Value::Bool(false),
            Value::Int(-3),
            Value::Float(f64::NAN),
            Value::Float(1.5),
            Value::String("a".into()),
            Value::List(vec![Value::Int(1)]),
        ];
        for a in &values {
            assert_eq!(value_order(a, a), Ordering::Equal);
            for b in &values {
                assert_eq!(value_order(a, b), value_order(b, a).reverse());
            }
        }
    }
}
