//! List functions: `size, head, last, tail, range, reverse, coalesce,
//! isEmpty` (`keys` lives with the entity functions).

use crate::errors::{argument, out_of_range, wrong_type};
use rhizome_common::{Result, Value};

/// `size(x)`: number of list elements or string characters.
pub fn size(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::List(items) => Value::Int(items.len() as i64),
        Value::String(s) => Value::Int(s.chars().count() as i64),
        Value::Map(m) => Value::Int(m.len() as i64),
        _ => return Err(wrong_type("size", v)),
    })
}

fn list_arg<'a>(name: &str, v: &'a Value) -> Result<Option<&'a [Value]>> {
    match v {
        Value::Null => Ok(None),
        Value::List(items) => Ok(Some(items)),
        _ => Err(wrong_type(name, v)),
    }
}

/// `head(list)`: the first element, null for `[]`.
pub fn head(v: &Value) -> Result<Value> {
    Ok(list_arg("head", v)?
        .and_then(|l| l.first().cloned())
        .unwrap_or(Value::Null))
}

/// `last(list)`: the last element, null for `[]`.
pub fn last(v: &Value) -> Result<Value> {
    Ok(list_arg("last", v)?
        .and_then(|l| l.last().cloned())
        .unwrap_or(Value::Null))
}

/// `tail(list)`: all but the first element (`[]` for `[]`).
pub fn tail(v: &Value) -> Result<Value> {
    Ok(match list_arg("tail", v)? {
        None => Value::Null,
        Some(l) => Value::List(l.iter().skip(1).cloned().collect()),
    })
}

/// `reverse(x)` for lists and strings.
pub fn reverse(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::List(items) => Value::List(items.iter().rev().cloned().collect()),
        Value::String(s) => Value::String(s.chars().rev().collect()),
        _ => return Err(wrong_type("reverse", v)),
    })
}

/// `coalesce(a, b, ...)`: the first non-null argument.
pub fn coalesce(args: &[Value]) -> Value {
    args.iter()
        .find(|v| !v.is_null())
        .cloned()
        .unwrap_or(Value::Null)
}

/// `isEmpty(x)` for lists, maps and strings.
pub fn is_empty(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::List(items) => Value::Bool(items.is_empty()),
        Value::Map(m) => Value::Bool(m.is_empty()),
        Value::String(s) => Value::Bool(s.is_empty()),
        _ => return Err(wrong_type("isEmpty", v)),
    })
}

/// Longest list `range` builds (protects memory against `range(0, 2^62)`).
const MAX_RANGE: i128 = 1 << 28;

/// How many elements `range(args)` makes, without making them: `None`
/// unless every argument is an integer and the step is not zero (then
/// [`range`] answers null or its error). Callers that hold a memory
/// budget charge the list before [`range`] builds it.
pub fn range_len(args: &[Value]) -> Option<usize> {
    let mut ints = [0i64, 0, 1];
    for (slot, arg) in ints.iter_mut().zip(args) {
        match arg {
            Value::Int(i) => *slot = *i,
            _ => return None,
        }
    }
    let [start, end, step] = ints;
    (step != 0).then(|| {
        range_count(start, end, step)
            .try_into()
            .unwrap_or(usize::MAX)
    })
}

/// Elements from `start` to `end` inclusive by `step` (not zero).
fn range_count(start: i64, end: i64, step: i64) -> i128 {
    let span = end as i128 - start as i128;
    if span != 0 && (span < 0) != (step < 0) {
        0
    } else {
        span / step as i128 + 1
    }
}

/// `range(start, end[, step])`: integers from `start` to `end` inclusive.
/// A zero step is `ArgumentError: NumberOutOfRange`; a non-integer argument
/// `ArgumentError: InvalidArgumentType`. Null arguments give null.
pub fn range(args: &[Value]) -> Result<Value> {
    let mut ints = [0i64, 0, 1];
    for (slot, arg) in ints.iter_mut().zip(args) {
        match arg {
            Value::Int(i) => *slot = *i,
            Value::Null => return Ok(Value::Null),
            other => {
                return Err(argument(
                    "InvalidArgumentType",
                    format!("range() expects integers, got {}", other.type_name()),
                ))
            }
        }
    }
    let [start, end, step] = ints;
    if step == 0 {
        return Err(out_of_range("range() step must not be zero"));
    }
    let count = range_count(start, end, step);
    if count > MAX_RANGE {
        return Err(out_of_range(format!(
            "range() of {count} elements is too large"
        )));
    }
    Ok(Value::List(
        (0..count)
            .map(|i| Value::Int((start as i128 + i * step as i128) as i64))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Value {
        Value::List(v.iter().map(|i| Value::Int(*i)).collect())
    }

    #[test]
    fn range_len_counts_without_building() {
        let n = |v: &[i64]| range_len(&v.iter().map(|i| Value::Int(*i)).collect::<Vec<_>>());
        assert_eq!(n(&[1, 100_000_000]), Some(100_000_000));
        assert_eq!(n(&[10, 1]), Some(0));
        assert_eq!(n(&[0, 10, 3]), Some(4));
        assert_eq!(n(&[0, 10, 0]), None);
        assert_eq!(n(&[i64::MIN, i64::MAX]), Some(usize::MAX));
        assert_eq!(range_len(&[Value::Int(1), Value::Null]), None);
    }

    #[test]
    fn range_direction() {
        assert_eq!(
            range(&[Value::Int(0), Value::Int(1), Value::Int(-123)]).unwrap(),
            ints(&[])
        );
        assert_eq!(
            range(&[Value::Int(3), Value::Int(3), Value::Int(-1)]).unwrap(),
            ints(&[3])
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(
            range(&[Value::Int(0), Value::Int(3)]).unwrap(),
            ints(&[0, 1, 2, 3])
        );
        assert_eq!(
            range(&[Value::Int(10), Value::Int(0), Value::Int(-3)]).unwrap(),
            ints(&[10, 7, 4, 1])
        );
        assert_eq!(
            range(&[Value::Int(0), Value::Int(5), Value::Int(-1)]).unwrap(),
            ints(&[])
        );
        let e = range(&[Value::Int(2), Value::Int(8), Value::Int(0)]).unwrap_err();
        assert_eq!(
            (e.kind, e.code),
            (
                rhizome_common::ErrorKind::ArgumentError,
                Some("NumberOutOfRange")
            )
        );
        let e = range(&[Value::Float(0.0), Value::Int(1), Value::Int(1)]).unwrap_err();
        assert_eq!(
            (e.kind, e.code),
            (
                rhizome_common::ErrorKind::ArgumentError,
                Some("InvalidArgumentType")
            )
        );
        assert!(range(&[Value::Int(0), Value::Bool(true)]).is_err());
    }

    #[test]
    fn list_functions() {
        assert_eq!(head(&ints(&[1, 2])).unwrap(), Value::Int(1));
        assert_eq!(last(&ints(&[])).unwrap(), Value::Null);
        assert_eq!(tail(&ints(&[1, 2, 3])).unwrap(), ints(&[2, 3]));
        assert_eq!(reverse(&ints(&[1, 2])).unwrap(), ints(&[2, 1]));
        assert_eq!(reverse(&"raksO".into()).unwrap(), "Oskar".into());
        assert_eq!(size(&"héllo".into()).unwrap(), Value::Int(5));
        assert_eq!(coalesce(&[Value::Null, Value::Int(2)]), Value::Int(2));
        assert!(head(&Value::Int(1)).is_err());
    }
}
