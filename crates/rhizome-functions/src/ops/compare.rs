//! Equality, comparability and orderability: the three ways Cypher relates
//! two values.
//!
//! - *Equality* (`=`, `<>`) is ternary: null on either side gives null;
//!   values of different kinds are unequal; `1 = 1.0`; `NaN` equals nothing.
//! - *Comparability* (`<`, `<=`, `>`, `>=`) is defined within numbers,
//!   strings, booleans, lists (lexicographically) and each temporal type
//!   except durations; anything else compares to null. NaN makes every
//!   inequality false rather than null.
//! - *Orderability* (ORDER BY, min/max) is a total order over all values:
//!   maps < nodes < relationships < lists < paths < datetimes <
//!   local datetimes < dates < times < local times < durations < strings <
//!   booleans < numbers < null, with NaN above every other number.

use rhizome_common::{Duration, Value};
use std::cmp::Ordering;

const NANOS: i128 = 1_000_000_000;

/// Compares an integer with a float exactly (no rounding of large integers);
/// `None` if the float is NaN.
pub(crate) fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= 9_223_372_036_854_775_808.0 {
        return Some(Ordering::Less);
    }
    if f < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    let ti = t as i64;
    Some(i.cmp(&ti).then_with(|| {
        let frac = f - t;
        if frac > 0.0 {
            Ordering::Less
        } else if frac < 0.0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }))
}

/// Numeric comparison of two numbers; `None` if either is NaN or not a number.
pub(crate) fn cmp_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Float(y)) => cmp_int_float(*x, *y),
        (Value::Float(x), Value::Int(y)) => cmp_int_float(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

/// The UTC-normalised nanoseconds of a time with offset (may leave `0..1 day`).
pub(crate) fn time_utc_nanos(t: &rhizome_common::Time) -> i128 {
    t.nanos as i128 - t.offset_seconds as i128 * NANOS
}

/// Cypher equality `a = b`: `None` when the answer is null.
///
/// Lists are equal when they have the same length and pairwise equal
/// elements (a definite `false` anywhere wins over a null); maps when they
/// have the same keys and equal values. Nodes, relationships and paths are
/// equal by identity. Temporal values are equal when they denote the same
/// instant/value within the same temporal type; durations when all
/// components are equal.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            Some(cmp_numbers(a, b) == Some(Ordering::Equal))
        }
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            all_equal(x.iter().zip(y.iter()))
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() || x.keys().zip(y.keys()).any(|(k1, k2)| k1 != k2) {
                return Some(false);
            }
            all_equal(x.values().zip(y.values()))
        }
        (Value::Time(x), Value::Time(y)) => Some(time_utc_nanos(x) == time_utc_nanos(y)),
        (Value::DateTime(x), Value::DateTime(y)) => {
            Some(x.seconds == y.seconds && x.nanos == y.nanos)
        }
        _ => {
            if std::mem::discriminant(a) != std::mem::discriminant(b) {
                Some(false)
            } else {
                Some(a == b)
            }
        }
    }
}

fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    let mut unknown = false;
    for (x, y) in pairs {
        match equals(x, y) {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(true)
    }
}

/// Outcome of comparing two values for an inequality operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    /// The values are ordered.
    Ordered(Ordering),
    /// Comparable kinds, but unordered (NaN involved): every inequality is false.
    Unordered,
    /// Not comparable (or null involved): every inequality is null.
    Null,
}

fn comparison(a: &Value, b: &Value) -> Cmp {
    use Value::*;
    let ord = |o: Ordering| Cmp::Ordered(o);
    match (a, b) {
        (Null, _) | (_, Null) => Cmp::Null,
        (Int(_) | Float(_), Int(_) | Float(_)) => match cmp_numbers(a, b) {
            Some(o) => ord(o),
            None => Cmp::Unordered,
        },
        (String(x), String(y)) => ord(x.cmp(y)),
        (Bool(x), Bool(y)) => ord(x.cmp(y)),
        (List(x), List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                match comparison(p, q) {
                    Cmp::Ordered(Ordering::Equal) => {}
                    other => return other,
                }
            }
            ord(x.len().cmp(&y.len()))
        }
        (Date(x), Date(y)) => ord(x.cmp(y)),
        (LocalTime(x), LocalTime(y)) => ord(x.cmp(y)),
        (Time(x), Time(y)) => ord(time_utc_nanos(x).cmp(&time_utc_nanos(y))),
        (LocalDateTime(x), LocalDateTime(y)) => ord(x.cmp(y)),
        (DateTime(x), DateTime(y)) => ord((x.seconds, x.nanos).cmp(&(y.seconds, y.nanos))),
        _ => Cmp::Null,
    }
}

/// Comparability for `<`, `<=`, `>`, `>=`: `None` when the comparison is null
/// (a null operand, or values that are not comparable such as a string and
/// a number, maps, entities or durations) **or** when NaN is involved — use
/// [`less_than`] and friends to get NaN's `false` results.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match comparison(a, b) {
        Cmp::Ordered(o) => Some(o),
        _ => None,
    }
}

fn inequality(a: &Value, b: &Value, test: fn(Ordering) -> bool) -> Option<bool> {
    match comparison(a, b) {
        Cmp::Ordered(o) => Some(test(o)),
        Cmp::Unordered => Some(false),
        Cmp::Null => None,
    }
}

/// `a < b` with Cypher semantics (null for incomparable values, false with NaN).
pub fn less_than(a: &Value, b: &Value) -> Option<bool> {
    inequality(a, b, Ordering::is_lt)
}

/// `a <= b` with Cypher semantics.
pub fn less_equal(a: &Value, b: &Value) -> Option<bool> {
    inequality(a, b, Ordering::is_le)
}

/// `a > b` with Cypher semantics.
pub fn greater_than(a: &Value, b: &Value) -> Option<bool> {
    inequality(a, b, Ordering::is_gt)
}

/// `a >= b` with Cypher semantics.
pub fn greater_equal(a: &Value, b: &Value) -> Option<bool> {
    inequality(a, b, Ordering::is_ge)
}

fn type_rank(v: &Value) -> u8 {
    match v {
        Value::Map(_) => 0,
        Value::Node(_) => 1,
        Value::Relationship(_) => 2,
        Value::List(_) => 3,
        Value::Path(_) => 4,
        Value::DateTime(_) => 5,
        Value::LocalDateTime(_) => 6,
        Value::Date(_) => 7,
        Value::Time(_) => 8,
        Value::LocalTime(_) => 9,
        Value::Duration(_) => 10,
        Value::String(_) => 11,
        Value::Bool(_) => 12,
        Value::Int(_) | Value::Float(_) => 13,
        Value::Null => 14,
    }
}

/// A duration's approximate length in nanoseconds (a month is 30.436875 days),
/// used only to order durations.
fn duration_length(d: &Duration) -> i128 {
    (d.months as i128 * 2_629_746 + d.days as i128 * 86_400 + d.seconds as i128) * NANOS
        + d.nanos as i128
}

fn order_slices(x: &[Value], y: &[Value]) -> Ordering {
    for (p, q) in x.iter().zip(y.iter()) {
        let o = order(p, q);
        if o != Ordering::Equal {
            return o;
        }
    }
    x.len().cmp(&y.len())
}

/// The total orderability of ORDER BY (ascending): see the module docs for
/// the order between kinds. Within numbers integers and floats are ordered
/// together by value and NaN sorts above +Infinity; lists compare
/// element-wise then by length; maps by size, then keys, then values;
/// entities by id; temporal values chronologically (zoned ones by instant,
/// ties broken by offset/zone); durations by approximate length, then by
/// components.
pub fn order(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    // The common case of sort keys first.
    if let (Int(x), Int(y)) = (a, b) {
        return x.cmp(y);
    }
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Int(_) | Float(_), Int(_) | Float(_)) => {
            let nan_a = matches!(a, Float(x) if x.is_nan());
            let nan_b = matches!(b, Float(x) if x.is_nan());
            match (nan_a, nan_b) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => cmp_numbers(a, b).unwrap_or(Ordering::Equal),
            }
        }
        (String(x), String(y)) => x.cmp(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (List(x), List(y)) => order_slices(x, y),
        (Map(x), Map(y)) => x.len().cmp(&y.len()).then_with(|| {
            for ((k1, v1), (k2, v2)) in x.iter().zip(y.iter()) {
                let o = k1.cmp(k2).then_with(|| order(v1, v2));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        }),
        (Node(x), Node(y)) => x.cmp(y),
        (Relationship(x), Relationship(y)) => x.cmp(y),
        (Path(x), Path(y)) => {
            let n = x.nodes.len().min(y.nodes.len());
            for i in 0..n {
                let o = x.nodes[i].cmp(&y.nodes[i]);
                if o != Ordering::Equal {
                    return o;
                }
                if let (Some(r1), Some(r2)) = (x.rels.get(i), y.rels.get(i)) {
                    let o = r1.cmp(r2);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
            }
            x.nodes.len().cmp(&y.nodes.len())
        }
        (Date(x), Date(y)) => x.cmp(y),
        (LocalTime(x), LocalTime(y)) => x.cmp(y),
        (LocalDateTime(x), LocalDateTime(y)) => x.cmp(y),
        (Time(x), Time(y)) => time_utc_nanos(x)
            .cmp(&time_utc_nanos(y))
            .then(x.offset_seconds.cmp(&y.offset_seconds)),
        (DateTime(x), DateTime(y)) => (x.seconds, x.nanos)
            .cmp(&(y.seconds, y.nanos))
            .then(x.offset_seconds.cmp(&y.offset_seconds))
            .then_with(|| x.zone.cmp(&y.zone)),
        (Duration(x), Duration(y)) => duration_length(x).cmp(&duration_length(y)).then(
            (x.months, x.days, x.seconds, x.nanos).cmp(&(y.months, y.days, y.seconds, y.nanos)),
        ),
        _ => Ordering::Equal,
    }
}

/// ORDER BY ... DESC: the reverse of [`order`] (so nulls come first).
pub fn order_desc(a: &Value, b: &Value) -> Ordering {
    order(b, a)
}

/// Equivalence, the relation of DISTINCT and grouping: like equality, but
/// null is equivalent to null and NaN to NaN, so it is a proper equivalence
/// relation (and `1` is equivalent to `1.0`).
pub fn equivalent(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Null, Null) => true,
        (Null, _) | (_, Null) => false,
        (Float(x), Float(y)) if x.is_nan() && y.is_nan() => true,
        (List(x), List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equivalent(p, q))
        }
        (Map(x), Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && equivalent(v1, v2))
        }
        _ => equals(a, b) == Some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::GroupKey;
    use rhizome_common::{PathValue, Time};
    use std::collections::{BTreeMap, HashSet};

    #[test]
    fn global_sort_order_matches_the_tck() {
        // ReturnOrderBy1 [12]: ascending order of distinct kinds.
        let mut map = BTreeMap::new();
        map.insert("a".to_string(), Value::from("map"));
        let ascending = vec![
            Value::Map(map),
            Value::Node(0),
            Value::Relationship(0),
            Value::List(vec!["list".into()]),
            Value::Path(PathValue {
                nodes: vec![0, 1],
                rels: vec![0],
            }),
            Value::DateTime(rhizome_common::DateTime {
                seconds: 0,
                nanos: 0,
                offset_seconds: 0,
                zone: None,
            }),
            Value::LocalDateTime(rhizome_common::LocalDateTime {
                seconds: 0,
                nanos: 0,
            }),
            Value::Date(rhizome_common::Date { days: 0 }),
            Value::Time(Time {
                nanos: 0,
                offset_seconds: 0,
            }),
            Value::LocalTime(rhizome_common::LocalTime { nanos: 0 }),
            Value::Duration(Duration::default()),
            Value::from("text"),
            Value::Bool(false),
            Value::Bool(true),
            Value::Float(f64::NEG_INFINITY),
            Value::Int(1),
            Value::Float(1.5),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NAN),
            Value::Null,
        ];
        let mut shuffled = ascending.clone();
        shuffled.reverse();
        shuffled.sort_by(order);
        for (a, b) in shuffled.iter().zip(&ascending) {
            assert!(equivalent(a, b), "{a:?} vs {b:?}");
        }
        let mut desc = ascending.clone();
        desc.sort_by(order_desc);
        assert!(desc[0].is_null());
    }

    #[test]
    fn numbers_compare_exactly() {
        assert_eq!(
            cmp_int_float(4_611_686_018_427_387_905, 4_611_686_018_427_387_904.0),
            Some(Ordering::Greater)
        );
        assert_eq!(
            cmp_int_float(i64::MAX, 9_223_372_036_854_775_808.0),
            Some(Ordering::Less)
        );
        assert_eq!(cmp_int_float(-1, -1.5), Some(Ordering::Greater));
        assert_eq!(cmp_int_float(1, f64::NAN), None);
        assert_eq!(order(&Value::Int(1), &Value::Float(1.0)), Ordering::Equal);
    }

    #[test]
    fn equivalence_and_group_keys() {
        let nan = Value::Float(f64::NAN);
        assert!(equivalent(&Value::Null, &Value::Null));
        assert!(equivalent(&nan, &nan));
        assert!(equivalent(&Value::Int(1), &Value::Float(1.0)));
        assert!(!equivalent(&Value::Int(1), &Value::from("1")));
        let keys: HashSet<GroupKey> = [
            Value::Int(1),
            Value::Float(1.0),
            Value::Null,
            Value::Null,
            nan.clone(),
            nan,
            Value::List(vec![Value::Int(2), Value::Null]),
            Value::List(vec![Value::Float(2.0), Value::Null]),
            Value::Float(-0.0),
            Value::Int(0),
            Value::Time(Time {
                nanos: 3_600_000_000_000,
                offset_seconds: 3600,
            }),
            Value::Time(Time {
                nanos: 0,
                offset_seconds: 0,
            }),
        ]
        .into_iter()
        .map(GroupKey)
        .collect();
        assert_eq!(keys.len(), 6, "{keys:?}");
    }

    #[test]
    fn ternary_equality_and_comparison() {
        let list = |v: Vec<Value>| Value::List(v);
        assert_eq!(
            equals(
                &list(vec![Value::Int(1)]),
                &list(vec![Value::Int(1), Value::Null])
            ),
            Some(false)
        );
        assert_eq!(
            equals(
                &list(vec![Value::Int(1), Value::Int(2)]),
                &list(vec![Value::Null, Value::Int(2)])
            ),
            None
        );
        assert_eq!(equals(&Value::Node(1), &Value::Node(1)), Some(true));
        assert_eq!(
            equals(&Value::Node(1), &Value::Relationship(1)),
            Some(false)
        );
        assert_eq!(compare(&Value::Int(1), &Value::from("a")), None);
        assert_eq!(compare(&Value::Float(f64::NAN), &Value::Int(1)), None);
        assert_eq!(
            less_than(&Value::Float(f64::NAN), &Value::Int(1)),
            Some(false)
        );
        assert_eq!(
            greater_equal(&Value::Float(f64::NAN), &Value::from("a")),
            None
        );
        assert_eq!(compare(&Value::Node(1), &Value::Node(2)), None);
    }
}
