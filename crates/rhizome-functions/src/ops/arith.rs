//! Arithmetic operators: `+ - * / % ^` and unary minus.
//!
//! Integers never wrap: overflow raises `ArithmeticError`. Integer division
//! and modulo by zero raise `ArithmeticError`; float division follows IEEE 754
//! (`1.0 / 0` is `Infinity`, `0.0 / 0` is `NaN`). Mixing an integer with a
//! float computes in floats. Null on either side gives null.

use crate::errors::{arithmetic, overflow, wrong_type};
use crate::functions::convert::string_of;
use crate::temporal::{arith as tarith, duration as dur};
use rhizome_common::{Result, Value};

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(x) => Some(*x),
        _ => None,
    }
}

fn is_temporal_instant(v: &Value) -> bool {
    matches!(
        v,
        Value::Date(_)
            | Value::LocalTime(_)
            | Value::Time(_)
            | Value::LocalDateTime(_)
            | Value::DateTime(_)
    )
}

fn type_mismatch(op: &str, a: &Value, b: &Value) -> rhizome_common::Error {
    crate::errors::invalid_type(format!(
        "cannot apply `{op}` to {} and {}",
        a.type_name(),
        b.type_name()
    ))
}

/// `a + b`: numeric addition; string concatenation (a string with a
/// string, integer, float or boolean, either side); list concatenation
/// (list + list) or append/prepend (list + element, element + list);
/// temporal + duration, duration + temporal, duration + duration.
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_add(*y).ok_or_else(|| overflow("addition"))?),
        (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a).unwrap() + as_f64(b).unwrap()),
        (String(x), String(y)) => String(format!("{x}{y}")),
        (String(x), Int(_) | Float(_) | Bool(_)) => String(format!("{x}{}", string_of(b))),
        (Int(_) | Float(_) | Bool(_), String(y)) => String(format!("{}{y}", string_of(a))),
        (List(x), List(y)) => {
            let mut out = Vec::with_capacity(x.len() + y.len());
            out.extend(x.iter().cloned());
            out.extend(y.iter().cloned());
            List(out)
        }
        (List(x), _) => {
            let mut out = x.clone();
            out.push(b.clone());
            List(out)
        }
        (_, List(y)) => {
            let mut out = Vec::with_capacity(y.len() + 1);
            out.push(a.clone());
            out.extend(y.iter().cloned());
            List(out)
        }
        (Duration(x), Duration(y)) => Duration(dur::add(x, y)?),
        (t, Duration(d)) if is_temporal_instant(t) => tarith::plus(t, d)?,
        (Duration(d), t) if is_temporal_instant(t) => tarith::plus(t, d)?,
        _ => return Err(type_mismatch("+", a, b)),
    })
}

/// `a - b`: numeric subtraction, temporal - duration, duration - duration.
pub fn subtract(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_sub(*y).ok_or_else(|| overflow("subtraction"))?),
        (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a).unwrap() - as_f64(b).unwrap()),
        (Duration(x), Duration(y)) => Duration(dur::add(x, &dur::negate(y)?)?),
        (t, Duration(d)) if is_temporal_instant(t) => tarith::plus(t, &dur::negate(d)?)?,
        _ => return Err(type_mismatch("-", a, b)),
    })
}

/// `a * b`: numeric multiplication; duration * number and number * duration
/// (fractions of a unit cascade into smaller units).
pub fn multiply(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x
            .checked_mul(*y)
            .ok_or_else(|| overflow("multiplication"))?),
        (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a).unwrap() * as_f64(b).unwrap()),
        (Duration(d), Int(i)) | (Int(i), Duration(d)) => Duration(dur::mul_int(d, *i)?),
        (Duration(d), Float(f)) | (Float(f), Duration(d)) => Duration(dur::mul_float(d, *f)?),
        _ => return Err(type_mismatch("*", a, b)),
    })
}

/// `a / b`: integer division truncates toward zero and fails on a zero
/// divisor; float division follows IEEE 754; duration / number.
pub fn divide(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_), Int(0)) => return Err(arithmetic("/ by zero").with_code("DivisionByZero")),
        (Int(x), Int(y)) => Int(x.checked_div(*y).ok_or_else(|| overflow("division"))?),
        (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a).unwrap() / as_f64(b).unwrap()),
        (Duration(d), Int(_) | Float(_)) => {
            let divisor = as_f64(b).unwrap();
            if divisor == 0.0 {
                return Err(arithmetic("/ by zero").with_code("DivisionByZero"));
            }
            Duration(dur::div_float(d, divisor)?)
        }
        _ => return Err(type_mismatch("/", a, b)),
    })
}

/// `a % b`: remainder with the sign of the dividend; integer modulo by zero
/// fails, float modulo by zero is NaN.
pub fn modulo(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_), Int(0)) => return Err(arithmetic("/ by zero").with_code("DivisionByZero")),
        (Int(x), Int(y)) => Int(x.checked_rem(*y).unwrap_or(0)),
        (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a).unwrap() % as_f64(b).unwrap()),
        _ => return Err(type_mismatch("%", a, b)),
    })
}

/// `a ^ b`: exponentiation, always a float.
pub fn power(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_) | Float(_), Int(_) | Float(_)) => {
            Float(as_f64(a).unwrap().powf(as_f64(b).unwrap()))
        }
        _ => return Err(type_mismatch("^", a, b)),
    })
}

/// Unary `-a` for numbers and durations (`-(-2^63)` overflows).
pub fn negate(a: &Value) -> Result<Value> {
    use Value::*;
    Ok(match a {
        Null => Null,
        Int(x) => Int(x.checked_neg().ok_or_else(|| overflow("negation"))?),
        Float(x) => Float(-x),
        Duration(d) => Duration(dur::negate(d)?),
        _ => return Err(wrong_type("unary minus", a)),
    })
}

/// Unary `+a`: numbers and durations unchanged, anything else a type error.
pub fn unary_plus(a: &Value) -> Result<Value> {
    match a {
        Value::Null | Value::Int(_) | Value::Float(_) | Value::Duration(_) => Ok(a.clone()),
        _ => Err(wrong_type("unary plus", a)),
    }
}
