//! `x IN list` over a list fixed for the whole statement (a literal or a
//! parameter): the list is turned into sorted integer and string vectors
//! once per compiled statement, and each row is answered by a binary
//! search instead of a scan of the list.
//!
//! The answers are exactly [`rhizome_functions::ops::in_list`]'s: `true`
//! when some element equals `x`; else null when some comparison is unknown
//! (an element is null, or `x` is null and the list is not empty); else
//! `false`. Integers and strings are equal only to equal integers and
//! strings — except that an integer also equals an equal float, so a list
//! holding floats answers integers through the general scan, as it answers
//! values of every other type.

use rhizome_common::{Result, Value};
use rhizome_functions::ops;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A statement-constant list on the right of `IN`, and its search
/// vectors, built on first use. A compiled plan lives for one statement,
/// whose parameters do not change, so one build serves every row.
#[derive(Debug)]
pub struct ConstList {
    /// Where the list comes from: a literal or a parameter.
    source: Source,
    /// The list prepared for searching; `None` when the parameter is
    /// missing (the row evaluator raises that error).
    set: OnceLock<Option<InSet>>,
}

/// Where a [`ConstList`] comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A literal value.
    Literal(Value),
    /// A parameter, by name.
    Parameter(String),
}

impl ConstList {
    /// A list read from `source` when first searched.
    pub fn new(source: Source) -> ConstList {
        ConstList {
            source,
            set: OnceLock::new(),
        }
    }

    /// Where the list comes from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The list prepared for searching, `None` if its parameter is missing.
    pub fn set(&self, params: &BTreeMap<String, Value>) -> Option<&InSet> {
        self.set
            .get_or_init(|| match &self.source {
                Source::Literal(v) => Some(InSet::new(v.clone())),
                Source::Parameter(name) => params.get(name).cloned().map(InSet::new),
            })
            .as_ref()
    }
}

/// A list value with its integers and strings sorted for binary search.
#[derive(Debug)]
pub struct InSet {
    /// The list itself (or whatever non-list value the source held).
    list: Value,
    /// The list's integers, sorted and deduplicated.
    ints: Vec<i64>,
    /// The list's strings, sorted and deduplicated.
    strs: Vec<Box<str>>,
    /// Some element is null: a value found nowhere gives null, not false.
    has_null: bool,
    /// Some element is a float: integers need the general scan.
    has_float: bool,
}

impl InSet {
    /// Prepares `list` for searching.
    pub fn new(list: Value) -> InSet {
        let mut set = InSet {
            list: Value::Null,
            ints: Vec::new(),
            strs: Vec::new(),
            has_null: false,
            has_float: false,
        };
        if let Value::List(items) = &list {
            for item in items {
                match item {
                    Value::Int(i) => set.ints.push(*i),
                    Value::String(s) => set.strs.push(s.as_str().into()),
                    Value::Null => set.has_null = true,
                    Value::Float(_) => set.has_float = true,
                    _ => {}
                }
            }
        }
        set.ints.sort_unstable();
        set.ints.dedup();
        set.strs.sort_unstable();
        set.strs.dedup();
        set.list = list;
        set
    }

    /// `x IN list` (null for an unknown answer); an error where
    /// [`ops::in_list`] raises one (the list is not a list).
    pub fn contains(&self, x: &Value) -> Result<Option<bool>> {
        match x {
            Value::Int(i) => {
                if let Some(answer) = self.contains_int(*i) {
                    return Ok(answer);
                }
            }
            Value::String(s) => {
                if let Some(answer) = self.contains_str(s) {
                    return Ok(answer);
                }
            }
            Value::Null => {
                if let Some(answer) = self.contains_null() {
                    return Ok(answer);
                }
            }
            _ => {}
        }
        ops::in_list(x, &self.list)
    }

    /// The answer for the integer `x`; `None` if the general scan must
    /// answer (the list holds floats or is no list).
    #[inline]
    pub fn contains_int(&self, x: i64) -> Option<Option<bool>> {
        if self.has_float || !matches!(self.list, Value::List(_) | Value::Null) {
            return None;
        }
        Some(self.answer(self.ints.binary_search(&x).is_ok()))
    }

    /// The answer for the string `x`; `None` if the list is no list.
    #[inline]
    pub fn contains_str(&self, x: &str) -> Option<Option<bool>> {
        if !matches!(self.list, Value::List(_) | Value::Null) {
            return None;
        }
        Some(self.answer(self.strs.binary_search_by(|s| (**s).cmp(x)).is_ok()))
    }

    /// The answer for a null `x`: false for an empty list, else null;
    /// `None` if the list is no list.
    #[inline]
    pub fn contains_null(&self) -> Option<Option<bool>> {
        match &self.list {
            Value::List(items) if items.is_empty() => Some(Some(false)),
            Value::List(_) | Value::Null => Some(None),
            _ => None,
        }
    }

    #[inline]
    fn answer(&self, found: bool) -> Option<bool> {
        match (&self.list, found) {
            (Value::Null, _) => None,
            (_, true) => Some(true),
            (_, false) if self.has_null => None,
            (_, false) => Some(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    /// Every probe against every list answers as `ops::in_list` does.
    #[test]
    fn agrees_with_the_scan() {
        let lists = [
            Value::List(vec![]),
            Value::List(vec![Value::Int(3), Value::Int(1), Value::Int(3)]),
            Value::List(vec![Value::Int(1), Value::Null, s("a")]),
            Value::List(vec![Value::Float(2.0), Value::Int(5), s("b")]),
            Value::List(vec![Value::List(vec![Value::Int(1)]), s("a")]),
            Value::List(vec![Value::Null]),
            Value::Null,
            Value::Int(4),
        ];
        let probes = [
            Value::Int(1),
            Value::Int(2),
            Value::Int(3),
            Value::Int(5),
            Value::Float(2.0),
            Value::Float(1.0),
            s("a"),
            s("b"),
            s("c"),
            Value::Null,
            Value::Bool(true),
            Value::List(vec![Value::Int(1)]),
        ];
        for list in &lists {
            let set = InSet::new(list.clone());
            for x in &probes {
                let expected = ops::in_list(x, list);
                let got = set.contains(x);
                match (expected, got) {
                    (Ok(e), Ok(g)) => assert_eq!(e, g, "{x:?} IN {list:?}"),
                    (Err(_), Err(_)) => {}
                    (e, g) => panic!("{x:?} IN {list:?}: {e:?} vs {g:?}"),
                }
            }
        }
    }

    #[test]
    fn parameters_are_read_once_and_may_be_missing() {
        let list = ConstList::new(Source::Parameter("xs".into()));
        let mut params = BTreeMap::new();
        params.insert("xs".to_string(), Value::List(vec![Value::Int(7)]));
        assert_eq!(list.set(&params).unwrap().contains_int(7), Some(Some(true)));
        // Built once: later parameters are not read (a statement's are fixed).
        assert!(list.set(&BTreeMap::new()).is_some());
        let missing = ConstList::new(Source::Parameter("ys".into()));
        assert!(missing.set(&params).is_none());
    }
}
