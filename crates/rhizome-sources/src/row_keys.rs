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
//! The tuple does not fit the 48 key bits of a relationship id (two node
//! keys alone may need 86), so the source numbers the tuples in the order
//! it first reads them and keeps the numbers for its lifetime: `id(r)` and
//! `elementId(r)` stay the same across queries, sessions and cache clears
//! while the rows are unchanged (a changed row is a new tuple, so a new
//! key). A new process numbers afresh. The numbering holds at most
//! [`MAX_ROW_KEYS`] tuples; a query that would need more fails with a
//! clear error rather than reusing a key.

use crate::cache::AdjacencyList;
use crate::fetch::ListRef;
use rhizome_common::{Error, ErrorKind, Result, Value};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Mutex;

/// Most tuples one source numbers (about 60 bytes each).
pub const MAX_ROW_KEYS: usize = 1 << 24;

/// (relationship space, start key, end key, ordinal among duplicates).
type RowTuple = (u16, i64, i64, u32);

/// A source's numbering of keyless relationships (see the module
/// documentation).
#[derive(Default)]
pub struct RowKeys {
    numbered: Mutex<Numbered>,
}

#[derive(Default)]
struct Numbered {
    keys: HashMap<RowTuple, i64>,
    next: i64,
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
    /// Tuples numbered so far.
    pub fn len(&self) -> usize {
        self.lock().keys.len()
    }

    /// True before the first tuple is numbered.
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
        let Numbered { keys, next } = &mut *numbered;
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
                let tuple = (list.rel, start, end, ordinal);
                let len = keys.len();
                let row_key = *keys.entry(tuple).or_insert_with(|| {
                    *next += 1;
                    *next - 1
                });
                if len >= MAX_ROW_KEYS && keys.len() > len {
                    keys.remove(&tuple);
                    return Err(Error::new(
                        ErrorKind::QueryAborted,
                        format!(
                            "graph source `{source}` has numbered {MAX_ROW_KEYS} relationships without a key column (row-number keys), its most; give the relationship space a key column (`key`) or reconnect the source"
                        ),
                    ));
                }
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
