//! String predicates (`STARTS WITH`, `ENDS WITH`, `CONTAINS`) and `=~`.

use crate::errors::{argument, wrong_type};
use regex::Regex;
use rhizome_common::{Result, Value};
use std::cell::RefCell;
use std::collections::HashMap;

fn both_strings<'a>(a: &'a Value, b: &'a Value) -> Option<(&'a str, &'a str)> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some((x, y)),
        _ => None,
    }
}

/// `a STARTS WITH b`: null unless both operands are strings.
pub fn starts_with(a: &Value, b: &Value) -> Option<bool> {
    both_strings(a, b).map(|(x, y)| x.starts_with(y))
}

/// `a ENDS WITH b`: null unless both operands are strings.
pub fn ends_with(a: &Value, b: &Value) -> Option<bool> {
    both_strings(a, b).map(|(x, y)| x.ends_with(y))
}

/// `a CONTAINS b`: null unless both operands are strings.
pub fn contains(a: &Value, b: &Value) -> Option<bool> {
    both_strings(a, b).map(|(x, y)| x.contains(y))
}

const REGEX_CACHE_LIMIT: usize = 64;

thread_local! {
    static REGEX_CACHE: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

/// Compiles `pattern` anchored at both ends (Cypher's `=~` matches the whole
/// string, like Java's `String.matches`), caching per thread.
fn compiled(pattern: &str) -> Result<Regex> {
    REGEX_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(re) = cache.get(pattern) {
            return Ok(re.clone());
        }
        let re = Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
            argument(
                "InvalidArgumentValue",
                format!("invalid regular expression `{pattern}`: {e}"),
            )
        })?;
        if cache.len() >= REGEX_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re.clone());
        Ok(re)
    })
}

/// `s =~ pattern`: whole-string regular-expression match. Null if either
/// side is null; a non-string subject gives null; a non-string pattern is a
/// `TypeError`; an invalid pattern is an `ArgumentError`.
pub fn regex_match(s: &Value, pattern: &Value) -> Result<Option<bool>> {
    match (s, pattern) {
        (Value::Null, _) | (_, Value::Null) => Ok(None),
        (_, Value::String(p)) => {
            let re = compiled(p)?;
            Ok(match s {
                Value::String(text) => Some(re.is_match(text)),
                _ => None,
            })
        }
        _ => Err(wrong_type("=~", pattern)),
    }
}
