//! Type conversion: `toBoolean, toInteger, toFloat, toString`, their
//! `...OrNull` forms, and the `...List` forms.
//!
//! Strings convert leniently and give null when they do not denote a value
//! (`toInteger('foo')` is null, `toInteger('1.7')` is 1, surrounding
//! whitespace is ignored). Values that can never convert (lists, maps,
//! entities, ...) are `TypeError: InvalidArgumentValue`, except in the
//! `OrNull` forms.

use crate::display::format_float;
use crate::errors::invalid_value;
use rhizome_common::{Result, Value};

fn cannot(name: &str, v: &Value) -> rhizome_common::Error {
    invalid_value(format!(
        "{name}() cannot convert a value of type {}",
        v.type_name()
    ))
}

/// Parses a float as Java's `Double.parseDouble` would (trimmed; `NaN` and
/// `Infinity` spelled that way only).
fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim();
    match t {
        "NaN" => return Some(f64::NAN),
        "Infinity" | "+Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if t.is_empty()
        || t.bytes()
            .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
    {
        return None;
    }
    t.parse::<f64>().ok()
}

fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Some(i);
    }
    let f = parse_float(t)?;
    (f.is_finite() && f > -9.223_372_036_854_776e18 && f < 9.223_372_036_854_776e18)
        .then_some(f.trunc() as i64)
}

/// `toBoolean(x)`: booleans, strings `'true'`/`'false'` (any case,
/// trimmed; other strings give null) and integers (non-zero is true).
pub fn to_boolean(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Bool(b) => Value::Bool(*b),
        Value::Int(i) => Value::Bool(*i != 0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Null,
        },
        _ => return Err(cannot("toBoolean", v)),
    })
}

/// `toInteger(x)`: integers, floats (truncated), booleans (1/0) and
/// numeric strings.
pub fn to_integer(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(*i),
        Value::Float(x) => {
            if x.is_finite() && *x > -9.223_372_036_854_776e18 && *x < 9.223_372_036_854_776e18 {
                Value::Int(x.trunc() as i64)
            } else {
                return Err(crate::errors::overflow("toInteger"));
            }
        }
        Value::Bool(b) => Value::Int(*b as i64),
        Value::String(s) => parse_int(s).map_or(Value::Null, Value::Int),
        _ => return Err(cannot("toInteger", v)),
    })
}

/// `toFloat(x)`: numbers and numeric strings.
pub fn to_float(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Float(*i as f64),
        Value::Float(x) => Value::Float(*x),
        Value::String(s) => parse_float(s).map_or(Value::Null, Value::Float),
        _ => return Err(cannot("toFloat", v)),
    })
}

/// The string form of a scalar as `toString` and string concatenation
/// produce it (no quotes); `None` for values without one.
pub(crate) fn plain_string(v: &Value) -> Option<String> {
    Some(match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => format_float(*x),
        Value::String(s) => s.clone(),
        Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_) => crate::temporal::format::format_temporal(v)?,
        Value::Duration(d) => d.to_string(),
        _ => return None,
    })
}

/// Like [`plain_string`] for concatenation, falling back to the literal form.
pub(crate) fn string_of(v: &Value) -> String {
    plain_string(v).unwrap_or_else(|| v.to_string())
}

/// `toString(x)`: numbers, booleans, strings, temporal values, durations.
pub fn to_string(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        _ => plain_string(v)
            .map(Value::String)
            .ok_or_else(|| cannot("toString", v)),
    }
}

/// The `...OrNull` form of a conversion: errors become null.
pub fn or_null(f: fn(&Value) -> Result<Value>, v: &Value) -> Value {
    f(v).unwrap_or(Value::Null)
}

/// The `...List` form: converts each element with the `OrNull` form.
pub fn list_of(name: &str, f: fn(&Value) -> Result<Value>, v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::List(items) => Ok(Value::List(items.iter().map(|x| or_null(f, x)).collect())),
        _ => Err(cannot(name, v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tck_conversions() {
        assert_eq!(to_integer(&Value::Float(82.9)).unwrap(), Value::Int(82));
        assert_eq!(to_integer(&"foo".into()).unwrap(), Value::Null);
        assert_eq!(to_integer(&"".into()).unwrap(), Value::Null);
        assert_eq!(to_integer(&"1.7".into()).unwrap(), Value::Int(1));
        assert_eq!(to_integer(&" 42 ".into()).unwrap(), Value::Int(42));
        assert_eq!(to_integer(&"2.9".into()).unwrap(), Value::Int(2));
        for bad in [
            Value::List(vec![]),
            Value::Map(Default::default()),
            Value::Node(1),
        ] {
            let e = to_integer(&bad).unwrap_err();
            assert_eq!(e.code, Some("InvalidArgumentValue"));
            assert!(to_string(&bad).is_err());
        }
        assert_eq!(to_boolean(&"true".into()).unwrap(), Value::Bool(true));
        assert_eq!(to_boolean(&" tru ".into()).unwrap(), Value::Null);
        assert_eq!(to_boolean(&"f alse".into()).unwrap(), Value::Null);
        assert!(to_boolean(&Value::Float(1.0)).is_err());
        assert_eq!(to_float(&"1.5".into()).unwrap(), Value::Float(1.5));
        assert_eq!(to_float(&"1e3".into()).unwrap(), Value::Float(1000.0));
        assert_eq!(to_float(&"inf".into()).unwrap(), Value::Null);
        assert_eq!(to_string(&Value::Float(2.3)).unwrap(), "2.3".into());
        assert_eq!(to_string(&Value::Float(1.0)).unwrap(), "1.0".into());
        assert_eq!(to_string(&Value::Bool(false)).unwrap(), "false".into());
        assert_eq!(or_null(to_integer, &Value::List(vec![])), Value::Null);
        assert_eq!(
            list_of(
                "toIntegerList",
                to_integer,
                &Value::List(vec!["1".into(), Value::List(vec![])])
            )
            .unwrap(),
            Value::List(vec![Value::Int(1), Value::Null])
        );
    }
}
