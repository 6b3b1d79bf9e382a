//! A `WHERE x IN list` filter whose list is a slot holding the same large
//! list on many rows (`WITH collect(t.id) AS ids MATCH … WHERE t.id IN ids`,
//! LDBC IC12): the list is turned into a hash set once per distinct list
//! value of a chunk instead of being scanned (and copied) once per row.
//!
//! A filter keeps a row only when the predicate is `true`, and `x IN list`
//! is `true` exactly when some element equals `x`. The set answers that for
//! integer and string values, whose equality is plain equality; a list
//! holding anything else, or a value `x` of another type, takes the general
//! path ([`IN_SET_MIN`] also keeps short lists on it). A list `collect()`
//! made stays typed in its column ([`Column::collected`]): its set is built
//! from the typed elements, and the boxed list is made at most once per
//! list, never per row.

use crate::chunk::{Chunk, Column};
use crate::compile::CExpr;
use crate::expr::{Evaluator, Row};
use rhizome_common::{Result, Value};
use rhizome_functions::aggregate::Collected;
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

fn key(v: &Value) -> Option<Key<'_>> {
    match v {
        Value::Int(i) => Some(Key::Int(*i)),
        Value::String(s) => Some(Key::Str(s)),
        _ => None,
    }
}

/// A row's list: a boxed list value, or a list as `collect()` made it
/// (typed, [`Column::collected`]).
#[derive(Clone, Copy)]
enum ListAt<'a> {
    /// The list value and its items.
    Boxed(&'a Value, &'a [Value]),
    Collected(&'a Collected),
}

impl<'a> ListAt<'a> {
    /// The list in `column` at `row`, if the row holds a list the column
    /// stores (not one made on reading).
    fn of(column: &'a Column, row: usize) -> Option<ListAt<'a>> {
        if let Some(collected) = column.collected(row) {
            return Some(ListAt::Collected(collected));
        }
        match column.value_ref(row) {
            Cow::Borrowed(list @ Value::List(items)) => Some(ListAt::Boxed(list, items)),
            _ => None,
        }
    }

    fn len(self) -> usize {
        match self {
            ListAt::Boxed(_, items) => items.len(),
            ListAt::Collected(c) => c.len(),
        }
    }

    /// The list's identity within a chunk: its address and length.
    fn identity(self) -> (usize, usize) {
        match self {
            ListAt::Boxed(_, items) => (items.as_ptr() as usize, items.len()),
            ListAt::Collected(c) => (c as *const Collected as usize, c.len()),
        }
    }

    /// The elements as a set, or `None` if some element is neither an
    /// integer nor a string.
    fn key_set(self) -> Option<HashSet<Key<'a>>> {
        match self {
            ListAt::Boxed(_, items) => items.iter().map(key).collect(),
            ListAt::Collected(Collected::Ints(xs)) => {
                Some(xs.iter().map(|&x| Key::Int(x)).collect())
            }
            ListAt::Collected(Collected::Values(items)) => items.iter().map(key).collect(),
            ListAt::Collected(Collected::Floats(_)) => None,
        }
    }
}

/// The set of the list last seen, and the list boxed once when a value
/// must be compared the general way.
struct Cached<'a> {
    identity: (usize, usize),
    set: Option<HashSet<Key<'a>>>,
    boxed: Option<Value>,
}

/// The rows of `input` for which `predicate` (of the shape `x IN slot`) is
/// true, or `None` if the predicate does not have that shape or the slot
/// does not hold large stored lists (the caller evaluates it the general
/// way).
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
    // Only worth it when the rows share large stored lists.
    if ListAt::of(column, 0).is_none_or(|l| l.len() < IN_SET_MIN) {
        return Ok(None);
    }
    let mut keep = Vec::with_capacity(input.len());
    let mut cached: Option<Cached<'_>> = None;
    for row in 0..input.len() {
        let r = Row::new(input, row);
        let Some(list) = ListAt::of(column, row) else {
            if eval.predicate(predicate, &r)? {
                keep.push(row as u32);
            }
            continue;
        };
        let identity = list.identity();
        if cached.as_ref().is_none_or(|c| c.identity != identity) {
            cached = Some(Cached {
                identity,
                set: list.key_set(),
                boxed: None,
            });
        }
        let cached = cached.as_mut().expect("set above");
        let value = eval.eval(x, &r)?;
        let found = match (&cached.set, key(&value)) {
            (Some(set), Some(k)) => Some(set.contains(&k)),
            _ => match list {
                ListAt::Boxed(list, _) => rhizome_functions::ops::in_list(&value, list)?,
                ListAt::Collected(c) => {
                    let boxed = cached.boxed.get_or_insert_with(|| c.to_value());
                    rhizome_functions::ops::in_list(&value, boxed)?
                }
            },
        };
        if found == Some(true) {
            keep.push(row as u32);
        }
    }
    Ok(Some(keep))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ColumnData;

    #[test]
    fn collected_lists_are_read_typed_and_keyed_without_boxing() {
        let ints = Column::new(ColumnData::Lists(vec![Collected::Ints(vec![3, 1, 2])]));
        let list = ListAt::of(&ints, 0).expect("a collected list is a stored list");
        assert!(matches!(list, ListAt::Collected(_)));
        assert_eq!(list.len(), 3);
        let set = list.key_set().expect("integers are keys");
        assert!(set.contains(&Key::Int(2)) && !set.contains(&Key::Int(4)));
        // Floats compare equal to integers: no set, the general path.
        let floats = Column::new(ColumnData::Lists(vec![Collected::Floats(vec![1.0])]));
        assert!(ListAt::of(&floats, 0).unwrap().key_set().is_none());
        let mixed = Column::new(ColumnData::Lists(vec![Collected::Values(vec![
            Value::String("a".into()),
            Value::Int(7),
        ])]));
        let set = ListAt::of(&mixed, 0).unwrap().key_set().unwrap();
        assert!(set.contains(&Key::Str("a")) && set.contains(&Key::Int(7)));
        // Values read from a boxed column borrow the list.
        let boxed = Column::new(ColumnData::Values(vec![Value::List(vec![Value::Int(1)])]));
        assert!(matches!(ListAt::of(&boxed, 0), Some(ListAt::Boxed(..))));
        let scalar = Column::new(ColumnData::Values(vec![Value::Int(1)]));
        assert!(ListAt::of(&scalar, 0).is_none());
    }
}
