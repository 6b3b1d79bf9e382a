//! A `WHERE x IN list` filter whose list is a slot holding the same large
//! list on many rows (`WITH collect(t.id) AS ids MATCH … WHERE t.id IN ids`,
//! LDBC IC12): the list is turned into a hash set once per distinct list
//! value of a chunk instead of being scanned (and copied) once per row.
//!
//! A filter keeps a row only when the predicate is `true`, and `x IN list`
//! is `true` exactly when some element equals `x`. The set answers that for
//! integer and string values, whose equality is plain equality; a list
//! holding anything else, or a value `x` of another type, takes the general
//! path ([`IN_SET_MIN`] also keeps short lists on it).

use crate::chunk::Chunk;
use crate::compile::CExpr;
use crate::expr::{Evaluator, Row};
use rhizome_common::{Result, Value};
use rhizome_plan::BinaryOp;
use std::borrow::Cow;
use std::collections::HashSet;

/// Lists shorter than this are scanned.
pub const IN_SET_MIN: usize = 16;

/// An element the set holds.
#[derive(Hash, PartialEq, Eq)]
enum Key<'a> {
    Int(i64),
    Str(&'a str),
}

/// A list's identity within a chunk (its elements' address and length),
/// and its elements as a set (`None`: some element is neither an integer
/// nor a string).
type CachedSet<'a> = ((usize, usize), Option<HashSet<Key<'a>>>);

fn key(v: &Value) -> Option<Key<'_>> {
    match v {
        Value::Int(i) => Some(Key::Int(*i)),
        Value::String(s) => Some(Key::Str(s)),
        _ => None,
    }
}

/// The rows of `input` for which `predicate` (of the shape `x IN slot`) is
/// true, or `None` if the predicate does not have that shape or the slot
/// does not hold borrowed lists (the caller evaluates it the general way).
pub fn select_in_slot(
    eval: &Evaluator<'_>,
    predicate: &CExpr,
    input: &Chunk,
) -> Result<Option<Vec<u32>>> {
    let CExpr::Binary(BinaryOp::In, x, list) = predicate else {
        return Ok(None);
    };
    let CExpr::Slot(slot) = **list else {
        return Ok(None);
    };
    let Some(column) = input.column(slot) else {
        return Ok(None);
    };
    // Only worth it when the rows share large lists stored as values.
    match column.value_ref(0) {
        Cow::Borrowed(Value::List(items)) if items.len() >= IN_SET_MIN => {}
        _ => return Ok(None),
    }
    let mut keep = Vec::with_capacity(input.len());
    // The set of the list last seen, by the list's address and length.
    let mut cached: Option<CachedSet<'_>> = None;
    for row in 0..input.len() {
        let r = Row::new(input, row);
        let list_value = column.value_ref(row);
        let Cow::Borrowed(list_ref) = list_value else {
            if eval.predicate(predicate, &r)? {
                keep.push(row as u32);
            }
            continue;
        };
        let Value::List(items) = list_ref else {
            if eval.predicate(predicate, &r)? {
                keep.push(row as u32);
            }
            continue;
        };
        let id = (items.as_ptr() as usize, items.len());
        if cached.as_ref().is_none_or(|(seen, _)| *seen != id) {
            let set: Option<HashSet<Key<'_>>> = items.iter().map(key).collect();
            cached = Some((id, set));
        }
        let set = cached.as_ref().and_then(|(_, s)| s.as_ref());
        let value = eval.eval(x, &r)?;
        match (set, key(&value)) {
            (Some(set), Some(k)) => {
                if set.contains(&k) {
                    keep.push(row as u32);
                }
            }
            _ => {
                if rhizome_functions::ops::in_list(&value, list_ref)? == Some(true) {
                    keep.push(row as u32);
                }
            }
        }
    }
    Ok(Some(keep))
}
