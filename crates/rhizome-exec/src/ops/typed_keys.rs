//! Composite group keys read from typed columns: each row's key columns
//! (integers, booleans, string views, node ids, constants) are written into
//! one reusable byte buffer, so a grouping over several columns, some of
//! them strings, finds a row's group by hashing bytes instead of building a
//! boxed value per key and row. Nothing is allocated per row: the buffer is
//! reused, and a key's bytes are copied into the table only for a new group.
//!
//! The encoding is prefix-free (a tag per column, strings with their
//! length), so two different keys never share bytes: `("ab", "c")` and
//! `("a", "bc")` differ. Equal bytes mean equal keys; equivalent keys of
//! different types (`1` and `1.0`) may have different bytes, which is why
//! the aggregate resolves a new byte key through its boxed-key table.

use crate::chunk::{Chunk, NULL_ID};
use crate::compile::CExpr;
use crate::vector::Vector;
use rhizome_common::{NodeId, Value};

/// Column tags of the encoding.
const NULL: u8 = 0;
const INT: u8 = 1;
const STR: u8 = 2;
const NODE: u8 = 3;
const BOOL: u8 = 4;

/// One key column of a chunk, typed; `'v` borrows the vectors and chunk.
#[derive(Debug, Clone, Copy)]
pub enum KeyColumn<'v> {
    /// Integers with their null mask.
    Ints(&'v [i64], Option<&'v [bool]>),
    /// Booleans with their null mask.
    Bools(&'v [bool], Option<&'v [bool]>),
    /// String views with their null mask.
    Strs(&'v [&'v str], Option<&'v [bool]>),
    /// Node ids (`NULL_ID` for null), read through the selection if any.
    Nodes(&'v [NodeId], Option<&'v [u32]>),
    /// The same integer, boolean, string or null on every row.
    Const(&'v Value),
}

/// The typed key columns of `exprs` over `chunk`, or `None` if one of them
/// is not typed (a float, list or mixed column, or one the vector evaluator
/// left to the row evaluator). `vectors[i]` is `exprs[i]`'s vector; a slot
/// of node ids needs none (it is read from the chunk).
pub fn key_columns<'v>(
    exprs: &[CExpr],
    vectors: &'v [Option<Vector<'v>>],
    chunk: &'v Chunk,
) -> Option<Vec<KeyColumn<'v>>> {
    exprs
        .iter()
        .zip(vectors)
        .map(|(e, v)| {
            if let CExpr::Slot(s) = e {
                if let Some((ids, selection)) = chunk.column(*s).and_then(|c| c.node_ids()) {
                    return Some(KeyColumn::Nodes(ids, selection));
                }
            }
            Some(match v.as_ref()? {
                Vector::Ints(xs, nulls) => KeyColumn::Ints(xs, nulls.as_deref()),
                Vector::Bools(xs, nulls) => KeyColumn::Bools(xs, nulls.as_deref()),
                Vector::Strs(xs, nulls) => KeyColumn::Strs(xs, nulls.as_deref()),
                Vector::Const(
                    c @ (Value::Null | Value::Int(_) | Value::Bool(_) | Value::String(_)),
                ) => KeyColumn::Const(c),
                _ => return None,
            })
        })
        .collect()
}

/// True if the slot `e` is of node ids in `chunk`: [`key_columns`] reads it
/// without a vector.
pub fn is_node_slot(e: &CExpr, chunk: &Chunk) -> bool {
    matches!(e, CExpr::Slot(s) if chunk.column(*s).and_then(|c| c.node_ids()).is_some())
}

/// True if row `row` of a column with null mask `nulls` is null.
#[inline]
fn is_null(nulls: Option<&[bool]>, row: usize) -> bool {
    nulls.is_some_and(|m| m[row])
}

impl KeyColumn<'_> {
    /// Appends row `row`'s encoding to `buf`.
    #[inline]
    pub fn encode(&self, row: usize, buf: &mut Vec<u8>) {
        match *self {
            KeyColumn::Ints(_, nulls) | KeyColumn::Bools(_, nulls) | KeyColumn::Strs(_, nulls)
                if is_null(nulls, row) =>
            {
                buf.push(NULL)
            }
            KeyColumn::Ints(xs, _) => int(buf, INT, xs[row] as u64),
            KeyColumn::Bools(xs, _) => buf.extend_from_slice(&[BOOL, xs[row] as u8]),
            KeyColumn::Strs(xs, _) => string(buf, xs[row]),
            KeyColumn::Nodes(ids, selection) => {
                match ids[selection.map_or(row, |sel| sel[row] as usize)] {
                    NULL_ID => buf.push(NULL),
                    id => int(buf, NODE, id),
                }
            }
            KeyColumn::Const(v) => match v {
                Value::Int(x) => int(buf, INT, *x as u64),
                Value::Bool(b) => buf.extend_from_slice(&[BOOL, *b as u8]),
                Value::String(s) => string(buf, s),
                _ => buf.push(NULL),
            },
        }
    }

    /// Row `row`'s key as a value (built once per new group).
    pub fn value(&self, row: usize) -> Value {
        match *self {
            KeyColumn::Ints(_, nulls) | KeyColumn::Bools(_, nulls) | KeyColumn::Strs(_, nulls)
                if is_null(nulls, row) =>
            {
                Value::Null
            }
            KeyColumn::Ints(xs, _) => Value::Int(xs[row]),
            KeyColumn::Bools(xs, _) => Value::Bool(xs[row]),
            KeyColumn::Strs(xs, _) => Value::String(xs[row].to_owned()),
            KeyColumn::Nodes(ids, selection) => {
                match ids[selection.map_or(row, |sel| sel[row] as usize)] {
                    NULL_ID => Value::Null,
                    id => Value::Node(id),
                }
            }
            KeyColumn::Const(v) => v.clone(),
        }
    }
}

/// Appends a tag and a 64-bit payload.
#[inline]
fn int(buf: &mut Vec<u8>, tag: u8, x: u64) {
    buf.push(tag);
    buf.extend_from_slice(&x.to_le_bytes());
}

/// Appends a string with its length, so the encoding stays prefix-free.
#[inline]
fn string(buf: &mut Vec<u8>, s: &str) {
    buf.push(STR);
    buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

/// Row `row`'s key over `columns`, encoded into `buf` (cleared first).
#[inline]
pub fn encode_row(columns: &[KeyColumn<'_>], row: usize, buf: &mut Vec<u8>) {
    buf.clear();
    for column in columns {
        column.encode(row, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(columns: &[KeyColumn<'_>], row: usize) -> Vec<u8> {
        let mut buf = Vec::new();
        encode_row(columns, row, &mut buf);
        buf
    }

    #[test]
    fn different_keys_never_share_bytes() {
        let left = ["ab", "a", "", "x"];
        let right = ["c", "bc", "abc", ""];
        let columns = [KeyColumn::Strs(&left, None), KeyColumn::Strs(&right, None)];
        let all: Vec<_> = (0..4).map(|r| bytes(&columns, r)).collect();
        for i in 0..4 {
            for j in 0..i {
                assert_ne!(all[i], all[j], "rows {i} and {j}");
            }
        }
        // An integer, a node id and a null are told apart by their tags.
        let ints = [7i64, 0];
        let nodes = [7u64, NULL_ID];
        let nulls = [false, true];
        let a = bytes(&[KeyColumn::Ints(&ints, None)], 0);
        let b = bytes(&[KeyColumn::Nodes(&nodes, None)], 0);
        let c = bytes(&[KeyColumn::Ints(&ints, Some(&nulls))], 1);
        let d = bytes(&[KeyColumn::Nodes(&nodes, None)], 1);
        assert_ne!(a, b);
        assert_eq!(c, d, "a null is a null whatever the column's type");
    }

    #[test]
    fn values_match_the_encoded_rows() {
        let strs = ["p", "q"];
        let snulls = [false, true];
        let ints = [-3i64, 9];
        let nodes = [11u64, 12, 13];
        let selection = [2u32, 0];
        let constant = Value::String("k".into());
        let columns = [
            KeyColumn::Strs(&strs, Some(&snulls)),
            KeyColumn::Ints(&ints, None),
            KeyColumn::Nodes(&nodes, Some(&selection)),
            KeyColumn::Const(&constant),
        ];
        let row = |r: usize| columns.iter().map(|c| c.value(r)).collect::<Vec<_>>();
        assert_eq!(
            row(0),
            vec![
                Value::String("p".into()),
                Value::Int(-3),
                Value::Node(13),
                Value::String("k".into())
            ]
        );
        assert_eq!(
            row(1),
            vec![
                Value::Null,
                Value::Int(9),
                Value::Node(11),
                constant.clone()
            ]
        );
        // The const column encodes as the same string read from a view.
        let k = ["k"];
        assert_eq!(
            bytes(&[KeyColumn::Const(&constant)], 0),
            bytes(&[KeyColumn::Strs(&k, None)], 0)
        );
    }
}
