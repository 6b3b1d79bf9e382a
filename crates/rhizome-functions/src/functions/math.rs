//! Numeric functions: `abs, ceil, floor, round, sign, sqrt, exp, log, log10,
//! sin, cos, tan, cot, asin, acos, atan, atan2, degrees, radians,
//! haversin, e, pi, rand`.
//!
//! Null in, null out. A non-numeric argument is `TypeError:
//! InvalidArgumentType`.

use crate::errors::{argument, overflow, wrong_type};
use rhizome_common::{Result, Value};

/// The argument as a float, `None` for null.
pub(crate) fn float_arg(name: &str, v: &Value) -> Result<Option<f64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i as f64)),
        Value::Float(x) => Ok(Some(*x)),
        _ => Err(wrong_type(name, v)),
    }
}

fn float_fn(name: &str, v: &Value, f: fn(f64) -> f64) -> Result<Value> {
    Ok(float_arg(name, v)?.map_or(Value::Null, |x| Value::Float(f(x))))
}

/// `abs(x)`: integers stay integers (`abs(-2^63)` overflows).
pub fn abs(v: &Value) -> Result<Value> {
    match v {
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| overflow("abs")),
        _ => float_fn("abs", v, f64::abs),
    }
}

/// `ceil(x)` (always a float).
pub fn ceil(v: &Value) -> Result<Value> {
    float_fn("ceil", v, f64::ceil)
}

/// `floor(x)` (always a float).
pub fn floor(v: &Value) -> Result<Value> {
    float_fn("floor", v, f64::floor)
}

/// `sign(x)`: -1, 0 or 1 as an integer (0 for NaN).
pub fn sign(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Int(i) => Value::Int(i.signum()),
        other => match float_arg("sign", other)? {
            None => Value::Null,
            Some(x) if x > 0.0 => Value::Int(1),
            Some(x) if x < 0.0 => Value::Int(-1),
            Some(_) => Value::Int(0),
        },
    })
}

/// Applies a one-argument float function by name (`sqrt`, `sin`, ...).
pub fn unary(name: &str, v: &Value) -> Result<Value> {
    let f: fn(f64) -> f64 = match name {
        "sqrt" => f64::sqrt,
        "exp" => f64::exp,
        "log" => f64::ln,
        "log10" => f64::log10,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "cot" => |x: f64| 1.0 / x.tan(),
        "asin" => f64::asin,
        "acos" => f64::acos,
        "atan" => f64::atan,
        "degrees" => f64::to_degrees,
        "radians" => f64::to_radians,
        "haversin" => |x: f64| (1.0 - x.cos()) / 2.0,
        _ => {
            return Err(rhizome_common::Error::internal(format!(
                "no math function {name}"
            )))
        }
    };
    float_fn(name, v, f)
}

/// `isNaN(x)`: true only for a float NaN.
pub fn is_nan(v: &Value) -> Result<Value> {
    Ok(float_arg("isNaN", v)?.map_or(Value::Null, |x| Value::Bool(x.is_nan())))
}

/// `atan2(y, x)`.
pub fn atan2(y: &Value, x: &Value) -> Result<Value> {
    Ok(match (float_arg("atan2", y)?, float_arg("atan2", x)?) {
        (Some(y), Some(x)) => Value::Float(y.atan2(x)),
        _ => Value::Null,
    })
}

/// Rounding modes of `round(x, precision, mode)` (as Java's `RoundingMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Up,
    Down,
    Ceiling,
    Floor,
    HalfUp,
    HalfDown,
    HalfEven,
}

/// `round(x)`, `round(x, precision)`, `round(x, precision, mode)`.
///
/// Without a precision, halves round towards positive infinity (`round(-1.5)
/// = -1.0`, as Java's `Math.round`); with a precision the default mode is
/// `HALF_UP` (away from zero). The result is a float.
pub fn round(args: &[Value]) -> Result<Value> {
    let Some(x) = float_arg("round", &args[0])? else {
        return Ok(Value::Null);
    };
    if args.len() == 1 {
        if !x.is_finite() {
            return Ok(Value::Float(x));
        }
        // `x - floor(x)` is exact, unlike `x + 0.5` (Java's Math.round).
        let f = x.floor();
        return Ok(Value::Float(if x - f >= 0.5 { f + 1.0 } else { f }));
    }
    let precision = match &args[1] {
        Value::Null => return Ok(Value::Null),
        Value::Int(p) => *p,
        other => return Err(wrong_type("round precision", other)),
    };
    let mode = match args.get(2) {
        None => Mode::HalfUp,
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::String(m)) => match m.to_ascii_uppercase().as_str() {
            "UP" => Mode::Up,
            "DOWN" => Mode::Down,
            "CEILING" => Mode::Ceiling,
            "FLOOR" => Mode::Floor,
            "HALF_UP" => Mode::HalfUp,
            "HALF_DOWN" => Mode::HalfDown,
            "HALF_EVEN" => Mode::HalfEven,
            _ => {
                return Err(argument(
                    "InvalidArgumentValue",
                    format!("unknown rounding mode `{m}`"),
                ))
            }
        },
        Some(other) => return Err(wrong_type("round mode", other)),
    };
    if !x.is_finite() {
        return Ok(Value::Float(x));
    }
    Ok(Value::Float(round_decimal(x, precision, mode)))
}

/// Rounds the shortest decimal representation of `x` (like Java's
/// `BigDecimal.valueOf(x).setScale(precision, mode)`).
fn round_decimal(x: f64, precision: i64, mode: Mode) -> f64 {
    let negative = x.is_sign_negative();
    let repr = format!("{:e}", x.abs());
    let (mantissa, exp) = repr.split_once('e').unwrap_or((&repr, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // value = 0.d1d2d3... * 10^(exp + 1)
    let point = exp + 1; // digits before the decimal point
    let keep = point + precision; // number of leading digits to keep
    if keep < 0 {
        let away = matches!(mode, Mode::Up)
            || (mode == Mode::Ceiling && !negative)
            || (mode == Mode::Floor && negative);
        let magnitude = if away {
            10f64.powi(-(precision as i32))
        } else {
            0.0
        };
        return if negative { -magnitude } else { magnitude };
    }
    let keep = keep as usize;
    let mut kept: Vec<u8> = digits.iter().copied().take(keep).collect();
    while kept.len() < keep {
        kept.push(0);
    }
    let rest: Vec<u8> = digits.iter().copied().skip(keep).collect();
    let rest_nonzero = rest.iter().any(|d| *d != 0);
    let first = rest.first().copied().unwrap_or(0);
    let beyond_half = rest.iter().skip(1).any(|d| *d != 0);
    let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
    let increment = match mode {
        Mode::Up => rest_nonzero,
        Mode::Down => false,
        Mode::Ceiling => rest_nonzero && !negative,
        Mode::Floor => rest_nonzero && negative,
        Mode::HalfUp => first >= 5,
        Mode::HalfDown => first > 5 || (first == 5 && beyond_half),
        Mode::HalfEven => first > 5 || (first == 5 && (beyond_half || last_odd)),
    };
    let mut text: String = if kept.is_empty() {
        "0".to_string()
    } else {
        kept.iter().map(|d| (b'0' + d) as char).collect()
    };
    if increment {
        // Add one unit in the last kept place.
        let mut bytes: Vec<u8> = text.bytes().collect();
        let mut i = bytes.len();
        loop {
            if i == 0 {
                bytes.insert(0, b'1');
                break;
            }
            i -= 1;
            if bytes[i] == b'9' {
                bytes[i] = b'0';
            } else {
                bytes[i] += 1;
                break;
            }
        }
        text = String::from_utf8(bytes).unwrap_or_default();
    }
    let value: f64 = format!("{text}e{}", -precision).parse().unwrap_or(0.0);
    if negative {
        -value
    } else {
        value
    }
}

/// `rand()`: a uniformly distributed float in `[0, 1)`.
pub fn rand() -> Value {
    Value::Float((super::misc::random_u64() >> 11) as f64 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(args: &[Value]) -> f64 {
        match round(args).unwrap() {
            Value::Float(x) => x,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rounding() {
        assert_eq!(r(&[Value::Float(-1.5)]), -1.0);
        assert_eq!(r(&[Value::Float(2.5)]), 3.0);
        assert_eq!(r(&[Value::Float(0.49999999999999994)]), 0.0);
        assert_eq!(r(&[Value::Float(5.123456), Value::Int(3)]), 5.123);
        assert_eq!(r(&[Value::Float(-1.5), Value::Int(0)]), -2.0);
        assert_eq!(r(&[Value::Float(2.675), Value::Int(2)]), 2.68);
        assert_eq!(
            r(&[Value::Float(1.25), Value::Int(1), "HALF_EVEN".into()]),
            1.2
        );
        assert_eq!(
            r(&[Value::Float(1.21), Value::Int(1), "CEILING".into()]),
            1.3
        );
        assert_eq!(r(&[Value::Float(1234.5), Value::Int(-2)]), 1200.0);
        assert!(round(&[Value::Float(1.0), Value::Int(1), "SIDEWAYS".into()]).is_err());
    }

    #[test]
    fn math_basics() {
        assert_eq!(abs(&Value::Int(-3)).unwrap(), Value::Int(3));
        assert!(abs(&Value::Int(i64::MIN)).is_err());
        assert_eq!(sign(&Value::Float(-0.5)).unwrap(), Value::Int(-1));
        assert_eq!(
            unary("sqrt", &Value::Float(12.96)).unwrap(),
            Value::Float(3.6)
        );
        assert_eq!(ceil(&Value::Int(1)).unwrap(), Value::Float(1.0));
        assert_eq!(unary("log", &Value::Null).unwrap(), Value::Null);
        assert!(unary("sqrt", &"x".into()).is_err());
        assert_eq!(
            unary("haversin", &Value::Float(0.0)).unwrap(),
            Value::Float(0.0)
        );
    }
}
