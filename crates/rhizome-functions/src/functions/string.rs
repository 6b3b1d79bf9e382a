//! String functions: `toLower, toUpper, lTrim, rTrim, trim, left, right,
//! substring, replace, reverse, split`. Positions and lengths count
//! characters (Unicode scalar values). Null in any argument gives null.

use crate::errors::{out_of_range, wrong_type};
use rhizome_common::{Result, Value};

fn str_arg<'a>(name: &str, v: &'a Value) -> Result<Option<&'a str>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        _ => Err(wrong_type(name, v)),
    }
}

fn int_arg(name: &str, v: &Value) -> Result<Option<i64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i)),
        _ => Err(wrong_type(name, v)),
    }
}

fn non_negative(name: &str, n: i64) -> Result<usize> {
    usize::try_from(n).map_err(|_| out_of_range(format!("{name}: negative value {n}")))
}

/// One-argument string functions by lower-case name.
pub fn unary(name: &str, v: &Value) -> Result<Value> {
    let Some(s) = str_arg(name, v)? else {
        return Ok(Value::Null);
    };
    Ok(Value::String(match name {
        "tolower" => s.to_lowercase(),
        "toupper" => s.to_uppercase(),
        "ltrim" => s.trim_start().to_string(),
        "rtrim" => s.trim_end().to_string(),
        "trim" | "btrim" => s.trim().to_string(),
        _ => {
            return Err(rhizome_common::Error::internal(format!(
                "no string function {name}"
            )))
        }
    }))
}

/// `ltrim(s, chars)`, `rtrim(s, chars)`, `btrim(s, chars)`: removes the
/// characters of `chars` from the start, the end, or both ends.
pub fn trim_chars(name: &str, s: &Value, chars: &Value) -> Result<Value> {
    let (Some(s), Some(chars)) = (str_arg(name, s)?, str_arg(name, chars)?) else {
        return Ok(Value::Null);
    };
    let set = |c: char| chars.contains(c);
    Ok(Value::String(
        match name {
            "ltrim" => s.trim_start_matches(set),
            "rtrim" => s.trim_end_matches(set),
            _ => s.trim_matches(set),
        }
        .to_string(),
    ))
}

/// `left(s, n)`: the first `n` characters.
pub fn left(s: &Value, n: &Value) -> Result<Value> {
    let (Some(s), Some(n)) = (str_arg("left", s)?, int_arg("left", n)?) else {
        return Ok(Value::Null);
    };
    let n = non_negative("left", n)?;
    Ok(Value::String(s.chars().take(n).collect()))
}

/// `right(s, n)`: the last `n` characters.
pub fn right(s: &Value, n: &Value) -> Result<Value> {
    let (Some(s), Some(n)) = (str_arg("right", s)?, int_arg("right", n)?) else {
        return Ok(Value::Null);
    };
    let n = non_negative("right", n)?;
    let count = s.chars().count();
    Ok(Value::String(
        s.chars().skip(count.saturating_sub(n)).collect(),
    ))
}

/// `substring(s, start[, length])`: from 0-based `start`, at most `length`
/// characters; a start past the end gives `''`.
pub fn substring(args: &[Value]) -> Result<Value> {
    let Some(s) = str_arg("substring", &args[0])? else {
        return Ok(Value::Null);
    };
    let Some(start) = int_arg("substring", &args[1])? else {
        return Ok(Value::Null);
    };
    let start = non_negative("substring start", start)?;
    let chars = s.chars().skip(start);
    Ok(Value::String(match args.get(2) {
        None => chars.collect(),
        Some(len) => match int_arg("substring", len)? {
            None => return Ok(Value::Null),
            Some(len) => chars.take(non_negative("substring length", len)?).collect(),
        },
    }))
}

/// `replace(s, search, replacement)`: every occurrence.
pub fn replace(s: &Value, search: &Value, with: &Value) -> Result<Value> {
    let (Some(s), Some(search), Some(with)) = (
        str_arg("replace", s)?,
        str_arg("replace", search)?,
        str_arg("replace", with)?,
    ) else {
        return Ok(Value::Null);
    };
    Ok(Value::String(s.replace(search, with)))
}

/// `split(s, delimiter)`: the delimiter may be a string or a list of
/// strings; an empty delimiter splits into characters.
pub fn split(s: &Value, delimiter: &Value) -> Result<Value> {
    let Some(s) = str_arg("split", s)? else {
        return Ok(Value::Null);
    };
    let delims: Vec<String> = match delimiter {
        Value::Null => return Ok(Value::Null),
        Value::String(d) => vec![d.clone()],
        Value::List(items) => {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Value::Null => return Ok(Value::Null),
                    Value::String(d) => out.push(d.clone()),
                    other => return Err(wrong_type("split", other)),
                }
            }
            out
        }
        other => return Err(wrong_type("split", other)),
    };
    if delims.iter().all(String::is_empty) {
        return Ok(Value::List(
            s.chars().map(|c| Value::String(c.to_string())).collect(),
        ));
    }
    let mut parts = Vec::new();
    let mut rest = s;
    loop {
        let next = delims
            .iter()
            .filter(|d| !d.is_empty())
            .filter_map(|d| rest.find(d.as_str()).map(|i| (i, d.len())))
            .min();
        match next {
            Some((i, len)) => {
                parts.push(Value::String(rest[..i].to_string()));
                rest = &rest[i + len..];
            }
            None => {
                parts.push(Value::String(rest.to_string()));
                break;
            }
        }
    }
    Ok(Value::List(parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::String(x.to_string())
    }

    #[test]
    fn string_functions() {
        assert_eq!(
            substring(&[s("0123456789"), Value::Int(1)]).unwrap(),
            s("123456789")
        );
        assert_eq!(
            substring(&[s("0123"), Value::Int(1), Value::Int(2)]).unwrap(),
            s("12")
        );
        assert_eq!(substring(&[s("0123"), Value::Int(10)]).unwrap(), s(""));
        assert!(substring(&[s("0123"), Value::Int(-1)]).is_err());
        assert_eq!(left(&s("hello"), &Value::Int(2)).unwrap(), s("he"));
        assert_eq!(right(&s("hello"), &Value::Int(10)).unwrap(), s("hello"));
        assert_eq!(unary("trim", &s("  a b  ")).unwrap(), s("a b"));
        assert_eq!(unary("ltrim", &s("  a ")).unwrap(), s("a "));
        assert_eq!(unary("toupper", &s("abc")).unwrap(), s("ABC"));
        assert_eq!(replace(&s("hello"), &s("l"), &s("L")).unwrap(), s("heLLo"));
        assert_eq!(
            split(&s("a,b,,c,"), &s(",")).unwrap(),
            Value::List(vec![s("a"), s("b"), s(""), s("c"), s("")])
        );
        assert_eq!(
            split(&s("a-b_c"), &Value::List(vec![s("-"), s("_")])).unwrap(),
            Value::List(vec![s("a"), s("b"), s("c")])
        );
        assert_eq!(unary("tolower", &Value::Null).unwrap(), Value::Null);
        assert!(unary("tolower", &Value::Int(1)).is_err());
    }
}
