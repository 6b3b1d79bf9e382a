//! Chunks: the unit of data flowing between operators.
//!
//! A [`Chunk`] holds up to [`CHUNK_SIZE`] rows of a plan's slot space as
//! columns. A column is shared data plus an optional *selection*: row `r` of
//! the column is `data[selection[r]]`. Operators that multiply or drop rows
//! (expand, filter) build a new selection per chunk and pass every column they
//! do not change through untouched (one reference-count increment per column
//! per chunk), so pass-through values are never copied per row. Node and
//! relationship columns hold plain ids, with [`NULL_ID`] for null.

use rhizome_common::{NodeId, RelId, Value};
use rhizome_functions::aggregate::Collected;
use std::borrow::Cow;
use std::sync::Arc;

/// Rows per chunk produced by scans and expansions.
pub const CHUNK_SIZE: usize = 2048;

/// The id that stands for null in node and relationship columns.
pub const NULL_ID: u64 = u64::MAX;

/// The values of one column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// Node ids ([`NULL_ID`] for null).
    Nodes(Vec<NodeId>),
    /// Relationship ids ([`NULL_ID`] for null).
    Rels(Vec<RelId>),
    /// Any values.
    Values(Vec<Value>),
    /// Lists as `collect()` made them (typed where it could), boxed into
    /// a [`Value::List`] only when a row's value is read: an aggregate's
    /// output keeps 8 bytes an element until a consumer needs the list.
    Lists(Vec<Collected>),
}

impl ColumnData {
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Nodes(v) | ColumnData::Rels(v) => v.len(),
            ColumnData::Values(v) => v.len(),
            ColumnData::Lists(v) => v.len(),
        }
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `index` (which must be in range).
    #[inline]
    pub fn value(&self, index: usize) -> Value {
        match self {
            ColumnData::Nodes(v) => match v[index] {
                NULL_ID => Value::Null,
                id => Value::Node(id),
            },
            ColumnData::Rels(v) => match v[index] {
                NULL_ID => Value::Null,
                id => Value::Relationship(id),
            },
            ColumnData::Values(v) => v[index].clone(),
            ColumnData::Lists(v) => v[index].to_value(),
        }
    }
}

/// Values that own no heap memory (numbers, ids, dates, ...) are released
/// with their buffer at once rather than dropped one by one.
impl Drop for ColumnData {
    fn drop(&mut self) {
        if let ColumnData::Values(values) = self {
            clear_values(values, false);
        }
    }
}

/// Empties `values`, keeping the buffer. Values that own no heap memory
/// (nodes, numbers, dates, ...) are not dropped one by one: a block of
/// only such values, as `owning_none` says or one check of each value's
/// kind finds, is released at once.
pub(crate) fn clear_values(values: &mut Vec<Value>, owning_none: bool) {
    if owning_none || values.iter().all(owns_nothing) {
        // SAFETY: shortening to zero exposes no uninitialised element;
        // the values forgotten own no memory, so nothing leaks.
        unsafe { values.set_len(0) };
    } else {
        values.clear();
    }
}

/// True if dropping `value` frees nothing.
fn owns_nothing(value: &Value) -> bool {
    matches!(
        value,
        Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Node(_)
            | Value::Relationship(_)
            | Value::Date(_)
            | Value::LocalTime(_)
            | Value::Time(_)
            | Value::LocalDateTime(_)
    )
}

/// The ids `read` finds in `slot` of the picked rows (`NULL_ID` where the
/// slot is unset); generic so that the read is inlined into the loop.
#[inline]
fn gather_ids(
    picks: &[(&Chunk, u32)],
    slot: usize,
    read: impl Fn(&Column, usize) -> Option<u64>,
) -> Vec<u64> {
    picks
        .iter()
        .map(|(c, row)| {
            c.column(slot)
                .and_then(|col| read(col, *row as usize))
                .unwrap_or(NULL_ID)
        })
        .collect()
}

/// Which variant of [`ColumnData`] a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    Nodes,
    Rels,
    Values,
}

/// A column of a chunk: shared data and an optional selection into it.
#[derive(Debug, Clone)]
pub struct Column {
    data: Arc<ColumnData>,
    selection: Option<Arc<[u32]>>,
}

impl Column {
    /// A column over all of `data`.
    pub fn new(data: ColumnData) -> Column {
        Column {
            data: Arc::new(data),
            selection: None,
        }
    }

    /// Index into the data for `row`.
    #[inline]
    fn index(&self, row: usize) -> usize {
        match &self.selection {
            Some(sel) => sel[row] as usize,
            None => row,
        }
    }

    /// The value at `row`.
    #[inline]
    pub fn value(&self, row: usize) -> Value {
        self.data.value(self.index(row))
    }

    /// Appends the values of the first `rows` rows to `out`, matching the
    /// column's kind and selection once rather than per row.
    pub fn append_values(&self, rows: usize, out: &mut Vec<Value>) {
        match (&*self.data, self.selection.as_deref()) {
            (ColumnData::Nodes(v), None) => out.extend(v[..rows].iter().map(|&id| match id {
                NULL_ID => Value::Null,
                id => Value::Node(id),
            })),
            (ColumnData::Rels(v), None) => out.extend(v[..rows].iter().map(|&id| match id {
                NULL_ID => Value::Null,
                id => Value::Relationship(id),
            })),
            (ColumnData::Values(v), None) => out.extend_from_slice(&v[..rows]),
            (ColumnData::Lists(v), None) => out.extend(v[..rows].iter().map(Collected::to_value)),
            (data, Some(selection)) => out.extend(
                selection[..rows]
                    .iter()
                    .map(|&index| data.value(index as usize)),
            ),
        }
    }

    /// The node ids of a node column and its selection (row `r` is
    /// `ids[selection[r]]`), for batch reads of node properties.
    #[inline]
    pub fn node_ids(&self) -> Option<(&[NodeId], Option<&[u32]>)> {
        match &*self.data {
            ColumnData::Nodes(ids) => Some((ids, self.selection.as_deref())),
            _ => None,
        }
    }

    /// How many of the first `rows` rows are not null: `count(x)` of the
    /// column, read from its ids or values without building any.
    pub fn count_non_null(&self, rows: usize) -> usize {
        match (&*self.data, self.selection.as_deref()) {
            (ColumnData::Nodes(v) | ColumnData::Rels(v), None) => {
                v[..rows].iter().filter(|&&id| id != NULL_ID).count()
            }
            (ColumnData::Nodes(v) | ColumnData::Rels(v), Some(selection)) => selection[..rows]
                .iter()
                .filter(|&&i| v[i as usize] != NULL_ID)
                .count(),
            (ColumnData::Values(v), None) => v[..rows].iter().filter(|x| !x.is_null()).count(),
            (ColumnData::Values(v), Some(selection)) => selection[..rows]
                .iter()
                .filter(|&&i| !v[i as usize].is_null())
                .count(),
            // A collected list is never null.
            (ColumnData::Lists(_), _) => rows,
        }
    }

    /// True if the column's values own no heap memory (node and
    /// relationship ids, or null).
    pub fn holds_ids(&self) -> bool {
        self.kind() != ColumnKind::Values
    }

    fn kind(&self) -> ColumnKind {
        match &*self.data {
            ColumnData::Nodes(_) => ColumnKind::Nodes,
            ColumnData::Rels(_) => ColumnKind::Rels,
            ColumnData::Values(_) | ColumnData::Lists(_) => ColumnKind::Values,
        }
    }

    /// The length of the list at `row` if the column holds collected
    /// lists ([`ColumnData::Lists`]): `size()` without boxing the list.
    #[inline]
    pub fn list_len(&self, row: usize) -> Option<usize> {
        match &*self.data {
            ColumnData::Lists(v) => Some(v[self.index(row)].len()),
            _ => None,
        }
    }

    /// The value at `row`, borrowed where the column stores values (node
    /// and relationship ids are made into values, which allocates nothing).
    #[inline]
    pub fn value_ref(&self, row: usize) -> Cow<'_, Value> {
        let index = self.index(row);
        match &*self.data {
            ColumnData::Values(v) => Cow::Borrowed(&v[index]),
            data => Cow::Owned(data.value(index)),
        }
    }

    /// The node id at `row`, if this is a node column (`NULL_ID` for null).
    #[inline]
    pub fn node(&self, row: usize) -> Option<NodeId> {
        match &*self.data {
            ColumnData::Nodes(v) => Some(v[self.index(row)]),
            ColumnData::Values(v) => match &v[self.index(row)] {
                Value::Node(id) => Some(*id),
                Value::Null => Some(NULL_ID),
                _ => None,
            },
            ColumnData::Rels(_) | ColumnData::Lists(_) => None,
        }
    }

    /// The relationship id at `row`, if this is a relationship column (`NULL_ID` for null).
    #[inline]
    pub fn rel(&self, row: usize) -> Option<RelId> {
        match &*self.data {
            ColumnData::Rels(v) => Some(v[self.index(row)]),
            ColumnData::Values(v) => match &v[self.index(row)] {
                Value::Relationship(id) => Some(*id),
                Value::Null => Some(NULL_ID),
                _ => None,
            },
            ColumnData::Nodes(_) | ColumnData::Lists(_) => None,
        }
    }

    /// The column restricted to `rows` (indices into this column's rows).
    pub fn select(&self, rows: &Arc<[u32]>) -> Column {
        let selection: Arc<[u32]> = match &self.selection {
            None => rows.clone(),
            Some(sel) => rows.iter().map(|&r| sel[r as usize]).collect(),
        };
        Column {
            data: self.data.clone(),
            selection: Some(selection),
        }
    }

    /// The data, if the column has no selection (for fast paths).
    pub fn dense(&self) -> Option<&ColumnData> {
        self.selection.is_none().then_some(&*self.data)
    }
}

/// Up to [`CHUNK_SIZE`] rows (sometimes more, after a join) over a plan's slots.
/// A slot without a column is null in every row.
#[derive(Debug, Clone, Default)]
pub struct Chunk {
    len: usize,
    columns: Vec<Option<Column>>,
}

impl Chunk {
    /// A chunk of `len` rows and `width` slots, all null.
    pub fn new(width: usize, len: usize) -> Chunk {
        Chunk {
            len,
            columns: vec![None; width],
        }
    }

    /// One row with the given values (used to start inner plans from an outer row).
    pub fn single_row(values: &[Value]) -> Chunk {
        Chunk {
            len: 1,
            columns: values
                .iter()
                .map(|v| (!v.is_null()).then(|| Column::new(ColumnData::Values(vec![v.clone()]))))
                .collect(),
        }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// The column of `slot`, if set.
    #[inline]
    pub fn column(&self, slot: usize) -> Option<&Column> {
        self.columns.get(slot).and_then(|c| c.as_ref())
    }

    /// The value of `slot` in `row`.
    #[inline]
    pub fn value(&self, slot: usize, row: usize) -> Value {
        match self.column(slot) {
            Some(c) => c.value(row),
            None => Value::Null,
        }
    }

    /// All slot values of `row`.
    pub fn row_values(&self, row: usize) -> Vec<Value> {
        (0..self.columns.len())
            .map(|s| self.value(s, row))
            .collect()
    }

    /// Sets a slot's column (its length must be `len`).
    pub fn set_column(&mut self, slot: usize, column: Column) {
        if slot >= self.columns.len() {
            self.columns.resize(slot + 1, None);
        }
        self.columns[slot] = Some(column);
    }

    /// Clears a slot to null.
    pub fn clear_column(&mut self, slot: usize) {
        if let Some(c) = self.columns.get_mut(slot) {
            *c = None;
        }
    }

    /// The chunk restricted to (and reordered/repeated as) `rows`.
    pub fn select(&self, rows: Vec<u32>) -> Chunk {
        self.select_shared(&rows.into())
    }

    /// [`Chunk::select`] with a selection that may be shared by several
    /// chunks (as a row repeated for every chunk of a scan is).
    pub fn select_shared(&self, rows: &Arc<[u32]>) -> Chunk {
        Chunk {
            len: rows.len(),
            columns: self
                .columns
                .iter()
                .map(|c| c.as_ref().map(|c| c.select(rows)))
                .collect(),
        }
    }

    /// A chunk of the picked rows (`(chunk, row)`, in order), as wide as the
    /// widest picked chunk. A slot keeps an id column when every picked
    /// chunk has ids or nothing there, so gathered node and relationship
    /// columns are copied as ids, never as values; a slot no picked chunk
    /// sets stays unset.
    pub fn gather(picks: &[(&Chunk, u32)]) -> Chunk {
        Chunk::gather_slots(picks, None)
    }

    /// [`Chunk::gather`] of only the slots in `only` (all if `None`); the
    /// others stay unset.
    pub fn gather_slots(picks: &[(&Chunk, u32)], only: Option<&[usize]>) -> Chunk {
        let width = picks.iter().map(|(c, _)| c.width()).max().unwrap_or(0);
        let mut out = Chunk::new(width, picks.len());
        let all: Vec<usize>;
        let slots = match only {
            Some(slots) => slots,
            None => {
                all = (0..width).collect();
                &all
            }
        };
        for &slot in slots.iter().filter(|&&s| s < width) {
            // Nodes / Rels if every picked column holds that kind of id,
            // Values if they differ or hold values, None if none is set.
            let mut kind: Option<ColumnKind> = None;
            for (c, _) in picks {
                let Some(column) = c.column(slot) else {
                    continue;
                };
                let this = column.kind();
                kind = Some(match kind {
                    Some(seen) if seen != this => ColumnKind::Values,
                    _ => this,
                });
            }
            let data = match kind {
                None => continue,
                Some(ColumnKind::Nodes) => {
                    ColumnData::Nodes(gather_ids(picks, slot, |c, row| c.node(row)))
                }
                Some(ColumnKind::Rels) => {
                    ColumnData::Rels(gather_ids(picks, slot, |c, row| c.rel(row)))
                }
                Some(ColumnKind::Values) => ColumnData::Values(
                    picks
                        .iter()
                        .map(|(c, row)| c.value(slot, *row as usize))
                        .collect(),
                ),
            };
            out.set_column(slot, Column::new(data));
        }
        out
    }

    /// Appends the rows of `other` (same width) by materializing both into value columns.
    /// Used only by breakers and small results, never on the streaming path.
    pub fn concat(chunks: &[Chunk], width: usize) -> Chunk {
        let len = chunks.iter().map(|c| c.len).sum();
        let mut out = Chunk::new(width, len);
        for slot in 0..width {
            if chunks.iter().all(|c| c.column(slot).is_none()) {
                continue;
            }
            let mut values = Vec::with_capacity(len);
            for c in chunks {
                for row in 0..c.len {
                    values.push(c.value(slot, row));
                }
            }
            out.set_column(slot, Column::new(ColumnData::Values(values)));
        }
        out
    }
}

/// Builds a chunk row by row (for breakers that materialize, like aggregation and sort).
#[derive(Debug)]
pub struct RowBuilder {
    width: usize,
    columns: Vec<Vec<Value>>,
    len: usize,
}

impl RowBuilder {
    /// An empty builder for `width` slots.
    pub fn new(width: usize) -> RowBuilder {
        RowBuilder {
            width,
            columns: vec![Vec::new(); width],
            len: 0,
        }
    }

    /// Appends a row given as values per slot (missing slots are null).
    pub fn push_row(&mut self, values: impl IntoIterator<Item = Value>) {
        let mut n = 0;
        for (slot, v) in values.into_iter().enumerate().take(self.width) {
            self.columns[slot].push(v);
            n = slot + 1;
        }
        for column in &mut self.columns[n..] {
            column.push(Value::Null);
        }
        self.len += 1;
    }

    /// Number of rows so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no rows were pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The finished chunk; slots that are null in every row get no column.
    pub fn finish(self) -> Chunk {
        let mut chunk = Chunk::new(self.width, self.len);
        for (slot, values) in self.columns.into_iter().enumerate() {
            if values.iter().any(|v| !v.is_null()) {
                chunk.set_column(slot, Column::new(ColumnData::Values(values)));
            }
        }
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_drops_owning_values_and_forgets_plain_ones() {
        let shared: Arc<str> = Arc::from("x");
        let zone = rhizome_common::temporal::DateTime {
            seconds: 0,
            nanos: 0,
            offset_seconds: 0,
            zone: Some(shared.clone()),
        };
        let mut values = vec![Value::Int(1), Value::DateTime(zone)];
        assert_eq!(Arc::strong_count(&shared), 2);
        clear_values(&mut values, false);
        assert!(values.is_empty());
        assert_eq!(
            Arc::strong_count(&shared),
            1,
            "the owning value was dropped"
        );
        values.extend([Value::Node(3), Value::Null, Value::Float(0.5)]);
        let capacity = values.capacity();
        clear_values(&mut values, false);
        assert!(values.is_empty());
        assert_eq!(values.capacity(), capacity, "the buffer is kept");
    }

    #[test]
    fn appended_values_are_the_row_values_with_and_without_selection() {
        let nodes = Column::new(ColumnData::Nodes(vec![10, NULL_ID, 12, 13]));
        let rels = Column::new(ColumnData::Rels(vec![7, 8, NULL_ID]));
        let values = Column::new(ColumnData::Values(vec![
            Value::String("a".into()),
            Value::Null,
            Value::Int(3),
        ]));
        let selection: Arc<[u32]> = Arc::from(vec![2, 0, 0]);
        for (column, rows) in [
            (nodes.clone(), 4),
            (nodes.select(&selection), 3),
            (rels.clone(), 3),
            (rels.select(&selection), 3),
            (values.clone(), 2),
            (values.select(&selection), 3),
        ] {
            let mut out = vec![Value::Bool(true)];
            column.append_values(rows, &mut out);
            let expected: Vec<Value> = std::iter::once(Value::Bool(true))
                .chain((0..rows).map(|r| column.value(r)))
                .collect();
            assert_eq!(out, expected);
        }
        assert!(nodes.holds_ids() && rels.select(&selection).holds_ids());
        assert!(!values.holds_ids());
    }

    #[test]
    fn selection_composes() {
        let mut chunk = Chunk::new(2, 4);
        chunk.set_column(0, Column::new(ColumnData::Nodes(vec![10, 11, NULL_ID, 13])));
        let a = chunk.select(vec![3, 3, 0, 2]);
        let b = a.select(vec![1, 2]);
        assert_eq!(b.len(), 2);
        assert_eq!(b.value(0, 0), Value::Node(13));
        assert_eq!(b.value(0, 1), Value::Node(10));
        assert_eq!(a.value(0, 3), Value::Null);
        assert_eq!(a.value(1, 0), Value::Null);
        assert_eq!(a.column(0).unwrap().node(3), Some(NULL_ID));
    }

    #[test]
    fn gather_keeps_id_columns() {
        let mut a = Chunk::new(3, 2);
        a.set_column(0, Column::new(ColumnData::Nodes(vec![1, 2])));
        a.set_column(1, Column::new(ColumnData::Rels(vec![5, 6])));
        let mut b = Chunk::new(2, 2);
        b.set_column(0, Column::new(ColumnData::Nodes(vec![3, NULL_ID])));
        b.set_column(
            1,
            Column::new(ColumnData::Values(vec![Value::Int(7), Value::Null])),
        );
        let b = b.select(vec![1, 0]);
        let g = Chunk::gather(&[(&a, 1), (&b, 1), (&b, 0), (&a, 0)]);
        assert_eq!((g.len(), g.width()), (4, 3));
        assert!(matches!(
            g.column(0).unwrap().dense(),
            Some(ColumnData::Nodes(_))
        ));
        let column = |slot| (0..4).map(|r| g.value(slot, r)).collect::<Vec<_>>();
        assert_eq!(
            column(0),
            [Value::Node(2), Value::Node(3), Value::Null, Value::Node(1)]
        );
        assert!(matches!(
            g.column(1).unwrap().dense(),
            Some(ColumnData::Values(_))
        ));
        assert_eq!(
            column(1),
            [
                Value::Relationship(6),
                Value::Int(7),
                Value::Null,
                Value::Relationship(5)
            ]
        );
        assert!(g.column(2).is_none());
        assert_eq!(
            a.column(1).unwrap().value_ref(0).as_ref(),
            &Value::Relationship(5)
        );
    }

    #[test]
    fn gather_slots_leaves_the_other_slots_unset() {
        let mut a = Chunk::new(3, 2);
        a.set_column(0, Column::new(ColumnData::Nodes(vec![1, 2])));
        a.set_column(
            2,
            Column::new(ColumnData::Values(vec![Value::Int(8), Value::Int(9)])),
        );
        let g = Chunk::gather_slots(&[(&a, 1), (&a, 0)], Some(&[2, 7]));
        assert_eq!((g.len(), g.width()), (2, 3));
        assert!(g.column(0).is_none());
        assert_eq!(
            [g.value(2, 0), g.value(2, 1)],
            [Value::Int(9), Value::Int(8)]
        );
    }

    #[test]
    fn row_builder_and_concat() {
        let mut b = RowBuilder::new(3);
        b.push_row([Value::Int(1), Value::Null]);
        b.push_row([Value::Int(2), Value::String("x".into()), Value::Bool(true)]);
        let c = b.finish();
        assert_eq!(c.len(), 2);
        assert_eq!(c.value(1, 1), Value::String("x".into()));
        assert_eq!(c.value(2, 0), Value::Null);
        let both = Chunk::concat(&[c.clone(), c], 3);
        assert_eq!(both.len(), 4);
        assert_eq!(both.value(0, 3), Value::Int(2));
    }
}
