//! Three-valued boolean logic, null tests and list membership.

use super::compare::equals;
use crate::errors::wrong_type;
use rhizome_common::{Result, Value};

fn truth(op: &str, v: &Value) -> Result<Option<bool>> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        _ => Err(wrong_type(op, v)),
    }
}

fn to_value(b: Option<bool>) -> Value {
    b.map_or(Value::Null, Value::Bool)
}

/// `a AND b`: false wins over null; non-boolean operands are a `TypeError`.
pub fn and(a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = (truth("AND", a)?, truth("AND", b)?);
    Ok(to_value(match (x, y) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }))
}

/// `a OR b`: true wins over null.
pub fn or(a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = (truth("OR", a)?, truth("OR", b)?);
    Ok(to_value(match (x, y) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }))
}

/// `a XOR b`: null if either side is null.
pub fn xor(a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = (truth("XOR", a)?, truth("XOR", b)?);
    Ok(to_value(match (x, y) {
        (Some(p), Some(q)) => Some(p != q),
        _ => None,
    }))
}

/// `NOT a`: null stays null.
pub fn not(a: &Value) -> Result<Value> {
    Ok(to_value(truth("NOT", a)?.map(|b| !b)))
}

/// `a IS NULL`.
pub fn is_null(a: &Value) -> bool {
    a.is_null()
}

/// `a IS NOT NULL`.
pub fn is_not_null(a: &Value) -> bool {
    !a.is_null()
}

/// `x IN list`: true if some element equals `x`; otherwise null if some
/// comparison was null (e.g. `null IN [1]`, `2 IN [1, null]`), else false.
/// A null list gives null; a list that is not a list is a `TypeError`.
pub fn in_list(x: &Value, list: &Value) -> Result<Option<bool>> {
    let items = match list {
        Value::Null => return Ok(None),
        Value::List(items) => items,
        _ => return Err(wrong_type("IN", list)),
    };
    let mut unknown = false;
    for item in items {
        match equals(x, item) {
            Some(true) => return Ok(Some(true)),
            None => unknown = true,
            Some(false) => {}
        }
    }
    Ok(if unknown { None } else { Some(false) })
}

/// `a = b` as a value (null for an unknown answer).
pub fn eq_value(a: &Value, b: &Value) -> Value {
    to_value(equals(a, b))
}

/// `a <> b` as a value.
pub fn ne_value(a: &Value, b: &Value) -> Value {
    to_value(equals(a, b).map(|e| !e))
}
