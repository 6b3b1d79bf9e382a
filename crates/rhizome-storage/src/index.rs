//! Property indexes on (label, key): node ids sorted by property value.
//!
//! One sorted array serves both equality seeks and range scans (binary
//! search for the bounds). Integer-keyed indexes also store the keys beside
//! the ids, so seeks on them never touch the property columns.

use crate::catalog::{LabelId, PropertyKeyId};
use crate::segment::ArrayRef;
use rhizome_common::{NodeId, Value};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::ops::Bound;

/// Where an index lies in the segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexMeta {
    /// Indexed label.
    pub label: LabelId,
    /// Indexed key.
    pub key: PropertyKeyId,
    /// Node ids (`u64`) sorted by value.
    pub sorted: ArrayRef,
    /// For indexes whose values are all integers: the keys (`i64`) in the same order.
    pub int_keys: Option<ArrayRef>,
    /// Number of distinct values.
    pub distinct: u64,
}

fn type_rank(v: &Value) -> u8 {
    match v {
        Value::Int(_) | Value::Float(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Date(_) => 3,
        Value::LocalTime(_) => 4,
        Value::Time(_) => 5,
        Value::LocalDateTime(_) => 6,
        Value::DateTime(_) => 7,
        Value::Duration(_) => 8,
        Value::List(_) => 9,
        _ => 10,
    }
}

fn cmp_int_float(i: i64, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Less;
    }
    (i as f64)
        .partial_cmp(&f)
        .unwrap_or(Ordering::Equal)
        .then_with(|| {
            // Equal as floats: compare exactly when the float is integral and in range.
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                i.cmp(&(f as i64))
            } else {
                Ordering::Equal
            }
        })
}

/// The total order of stored values used by indexes: numbers compare by
/// value (integers and floats together), then strings, booleans, temporal
/// values by instant, durations and lists; values of different kinds order by kind.
pub fn index_order(a: &Value, b: &Value) -> Ordering {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => x.total_cmp(y),
        (Value::Int(x), Value::Float(y)) => cmp_int_float(*x, *y),
        (Value::Float(x), Value::Int(y)) => cmp_int_float(*y, *x).reverse(),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (Value::LocalTime(x), Value::LocalTime(y)) => x.cmp(y),
        (Value::Time(x), Value::Time(y)) => {
            let ux = x.nanos - x.offset_seconds as i64 * 1_000_000_000;
            let uy = y.nanos - y.offset_seconds as i64 * 1_000_000_000;
            ux.cmp(&uy)
        }
        (Value::LocalDateTime(x), Value::LocalDateTime(y)) => x.cmp(y),
        (Value::DateTime(x), Value::DateTime(y)) => (x.seconds, x.nanos).cmp(&(y.seconds, y.nanos)),
        (Value::Duration(x), Value::Duration(y)) => {
            (x.months, x.days, x.seconds, x.nanos).cmp(&(y.months, y.days, y.seconds, y.nanos))
        }
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = index_order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => Ordering::Equal,
    }
}

/// A property index read from a segment.
#[derive(Debug, Clone, Copy)]
pub struct PropertyIndex<'a> {
    /// Indexed label.
    pub label: LabelId,
    /// Indexed key.
    pub key: PropertyKeyId,
    /// Number of distinct values.
    pub distinct: u64,
    pub(crate) sorted: &'a [NodeId],
    pub(crate) int_keys: Option<&'a [i64]>,
}

impl<'a> PropertyIndex<'a> {
    /// Number of indexed nodes.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// True if no node is indexed.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// All indexed node ids in value order.
    pub fn sorted_nodes(&self) -> &'a [NodeId] {
        self.sorted
    }

    fn bound_index(
        &self,
        bound: Bound<&Value>,
        lower: bool,
        value_of: &dyn Fn(NodeId) -> Value,
    ) -> usize {
        let ids = self.sorted;
        match bound {
            Bound::Unbounded => {
                if lower {
                    0
                } else {
                    ids.len()
                }
            }
            Bound::Included(v) | Bound::Excluded(v) => {
                let inclusive = matches!(bound, Bound::Included(_));
                // Elements "before" the bound: for a lower bound, those < v
                // (inclusive) or <= v; for an upper bound, those <= v (inclusive) or < v.
                let before = |o: Ordering| match (lower, inclusive) {
                    (true, true) | (false, false) => o == Ordering::Less,
                    (true, false) | (false, true) => o != Ordering::Greater,
                };
                match (self.int_keys, v) {
                    (Some(keys), Value::Int(k)) => keys.partition_point(|x| before(x.cmp(k))),
                    _ => ids.partition_point(|&n| before(index_order(&value_of(n), v))),
                }
            }
        }
    }

    /// Node ids whose value lies within the bounds, in value order.
    /// `value_of` reads a node's indexed property (used for non-integer keys).
    pub fn range(
        &self,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        value_of: &dyn Fn(NodeId) -> Value,
    ) -> &'a [NodeId] {
        let a = self.bound_index(lower, true, value_of);
        let b = self.bound_index(upper, false, value_of);
        if a >= b {
            &[]
        } else {
            &self.sorted[a..b]
        }
    }

    /// Node ids whose value equals `value` (numbers compare by value).
    pub fn seek(&self, value: &Value, value_of: &dyn Fn(NodeId) -> Value) -> &'a [NodeId] {
        if value.is_null() {
            return &[];
        }
        self.range(Bound::Included(value), Bound::Included(value), value_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_mixes_numbers() {
        assert_eq!(
            index_order(&Value::Int(2), &Value::Float(2.5)),
            Ordering::Less
        );
        assert_eq!(
            index_order(&Value::Float(2.0), &Value::Int(2)),
            Ordering::Equal
        );
        assert_eq!(
            index_order(&Value::Int(9), &Value::String("a".into())),
            Ordering::Less
        );
        assert_eq!(
            index_order(
                &Value::List(vec![Value::Int(1)]),
                &Value::List(vec![Value::Int(1), Value::Int(0)])
            ),
            Ordering::Less
        );
    }

    #[test]
    fn seeks_and_ranges() {
        // node i has value values[i]; sorted by value.
        let values = [Value::Int(5), Value::Int(1), Value::Int(5), Value::Int(3)];
        let sorted = [1u64, 3, 0, 2];
        let value_of = |n: NodeId| values[n as usize].clone();
        let idx = PropertyIndex {
            label: 0,
            key: 0,
            distinct: 3,
            sorted: &sorted,
            int_keys: None,
        };
        assert_eq!(idx.seek(&Value::Int(5), &value_of), &[0, 2]);
        assert_eq!(idx.seek(&Value::Float(3.0), &value_of), &[3]);
        assert!(idx.seek(&Value::Int(4), &value_of).is_empty());
        let r = idx.range(
            Bound::Excluded(&Value::Int(1)),
            Bound::Included(&Value::Int(5)),
            &value_of,
        );
        assert_eq!(r, &[3, 0, 2]);
        let keys = [1i64, 3, 5, 5];
        let fast = PropertyIndex {
            int_keys: Some(&keys),
            ..idx
        };
        assert_eq!(fast.seek(&Value::Int(5), &|_| unreachable!()), &[0, 2]);
        assert_eq!(
            fast.range(
                Bound::Unbounded,
                Bound::Excluded(&Value::Int(5)),
                &|_| unreachable!()
            ),
            &[1, 3]
        );
    }
}
