//! A statement's result kept as columns, built while the statement runs.
//!
//! [`ColumnReceiver`] is the [`RowReceiver`] every statement run from
//! Python streams its rows to: each worker appends the values of the blocks
//! it produces to typed buffers of its own (integers, floats, booleans,
//! strings, with a validity bitmap that exists only once a null arrived),
//! so no row is kept as `Value`s. A column whose values are of another
//! type (nodes, lists, temporal values, ...) or of mixed types keeps its
//! `Value`s instead (the generic path). When the statement ends,
//! [`ColumnReceiver::finish`] puts the workers' runs of rows in the
//! result's order (block position, as the engine's collected rows are) and
//! makes one Arrow array per typed column: `Result.arrow()` then hands
//! those arrays to pyarrow without copying them, and `fetch*` reads rows
//! out of them.

use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, LargeStringArray, NullArray, PrimitiveArray, StringArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, NullBufferBuilder, OffsetBuffer};
use rhizome_common::{Result, Value};
use rhizome_engine::{RowBlock, RowReceiver};
use rhizome_exec::scheduler::WorkerPool;
use std::sync::{Arc, Mutex};

/// One column of a finished result.
pub(crate) enum Column {
    /// Values Arrow holds natively: `int64`, `double`, `bool`, `utf8` /
    /// `large_utf8`, or `null` for a column of nulls only.
    Arrow(ArrayRef),
    /// Values of other or mixed types.
    Values(Vec<Value>),
}

/// The columns of a finished result, all of `len` rows.
pub(crate) struct Columns {
    /// One per result column, in order.
    pub columns: Vec<Column>,
    /// Number of rows.
    pub len: usize,
}

impl Columns {
    /// `width` columns without rows.
    pub fn empty(width: usize) -> Columns {
        Columns {
            columns: (0..width)
                .map(|_| Column::Arrow(Arc::new(NullArray::new(0))))
                .collect(),
            len: 0,
        }
    }
}

/// The values of one column a worker received so far.
enum Part {
    /// Nulls only.
    Null,
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
    /// UTF-8 bytes and the end of each value in them (after a leading 0).
    Str(Vec<u8>, Vec<usize>),
    /// Values of any type (nulls included: `nulls` is not kept).
    Values(Vec<Value>),
}

/// The kind of a [`Part`], to decide a column's kind across workers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Null,
    Int,
    Float,
    Bool,
    Str,
    Values,
}

/// One column of one worker: its values and which of them are null.
struct PartBuilder {
    part: Part,
    /// Validity of typed parts (materialised at the first null).
    nulls: NullBufferBuilder,
    len: usize,
}

impl PartBuilder {
    fn new() -> PartBuilder {
        PartBuilder {
            part: Part::Null,
            nulls: NullBufferBuilder::new(0),
            len: 0,
        }
    }

    fn kind(&self) -> Kind {
        match self.part {
            Part::Null => Kind::Null,
            Part::Int(_) => Kind::Int,
            Part::Float(_) => Kind::Float,
            Part::Bool(_) => Kind::Bool,
            Part::Str(..) => Kind::Str,
            Part::Values(_) => Kind::Values,
        }
    }

    fn is_values(&self) -> bool {
        matches!(self.part, Part::Values(_))
    }

    /// True if value `i` is null (typed parts).
    fn is_null(&self, i: usize) -> bool {
        !self.nulls.is_valid(i)
    }

    /// Appends `value` (cloned if the part keeps `Value`s).
    #[inline]
    fn push(&mut self, value: &Value) {
        let fits = match (&mut self.part, value) {
            (Part::Values(values), _) => {
                values.push(value.clone());
                self.len += 1;
                return;
            }
            (part, Value::Null) => {
                match part {
                    Part::Int(v) => v.push(0),
                    Part::Float(v) => v.push(0.0),
                    Part::Bool(v) => v.push(false),
                    Part::Str(bytes, ends) => ends.push(bytes.len()),
                    Part::Null | Part::Values(_) => {}
                }
                self.nulls.append_null();
                self.len += 1;
                return;
            }
            (Part::Int(v), Value::Int(i)) => {
                v.push(*i);
                true
            }
            (Part::Float(v), Value::Float(x)) => {
                v.push(*x);
                true
            }
            (Part::Bool(v), Value::Bool(b)) => {
                v.push(*b);
                true
            }
            (Part::Str(bytes, ends), Value::String(s)) => {
                bytes.extend_from_slice(s.as_bytes());
                ends.push(bytes.len());
                true
            }
            (Part::Null, first) => {
                self.part = self.start(first);
                return self.push(value);
            }
            _ => false,
        };
        if fits {
            self.nulls.append_non_null();
            self.len += 1;
        } else {
            self.part = Part::Values(self.take_values());
            self.push(value);
        }
    }

    /// Appends `value`, moving it out (leaving a null) if the part keeps
    /// `Value`s.
    #[inline]
    fn push_owned(&mut self, value: &mut Value) {
        match &mut self.part {
            Part::Values(values) => {
                values.push(std::mem::take(value));
                self.len += 1;
            }
            _ => self.push(value),
        }
    }

    /// The typed part for a first non-null value (after `len` nulls).
    fn start(&mut self, first: &Value) -> Part {
        let len = self.len;
        match first {
            Value::Int(_) => Part::Int(vec![0; len]),
            Value::Float(_) => Part::Float(vec![0.0; len]),
            Value::Bool(_) => Part::Bool(vec![false; len]),
            Value::String(_) => Part::Str(Vec::new(), vec![0; len + 1]),
            _ => Part::Values(vec![Value::Null; len]),
        }
    }

    /// The part's values as `Value`s, leaving it empty.
    fn take_values(&mut self) -> Vec<Value> {
        let len = self.len;
        let part = std::mem::replace(&mut self.part, Part::Null);
        let nulls = std::mem::replace(&mut self.nulls, NullBufferBuilder::new(0));
        let valid = |i: usize| nulls.is_valid(i);
        match part {
            Part::Values(values) => values,
            Part::Null => vec![Value::Null; len],
            Part::Int(v) => typed_values(v.into_iter(), valid, Value::Int),
            Part::Float(v) => typed_values(v.into_iter(), valid, Value::Float),
            Part::Bool(v) => typed_values(v.into_iter(), valid, Value::Bool),
            Part::Str(bytes, ends) => {
                let texts = ends.windows(2).map(|w| {
                    // the bytes of whole strings appended in order
                    String::from_utf8_lossy(&bytes[w[0]..w[1]]).into_owned()
                });
                typed_values(texts, valid, Value::String)
            }
        }
    }
}

/// Typed values as `Value`s, nulls where `valid` says so.
fn typed_values<T>(
    values: impl Iterator<Item = T>,
    valid: impl Fn(usize) -> bool,
    make: impl Fn(T) -> Value,
) -> Vec<Value> {
    values
        .enumerate()
        .map(|(i, v)| if valid(i) { make(v) } else { Value::Null })
        .collect()
}

/// Rows `start..start + len` of one worker's buffers are the result's rows
/// at block `position`.
#[derive(Clone, Copy)]
struct Run {
    position: usize,
    worker: usize,
    start: usize,
    len: usize,
}

/// What one worker slot received.
#[derive(Default)]
struct WorkerColumns {
    parts: Vec<PartBuilder>,
    runs: Vec<Run>,
    len: usize,
}

/// The [`RowReceiver`] that builds a result's columns per worker (see the
/// module documentation). Its rows count against the query's memory limit.
pub(crate) struct ColumnReceiver {
    workers: Vec<Mutex<WorkerColumns>>,
}

impl ColumnReceiver {
    /// A receiver with a slot for each worker of the process-wide pool.
    pub fn new() -> ColumnReceiver {
        let slots = WorkerPool::global().threads() + 1;
        ColumnReceiver {
            workers: (0..slots).map(|_| Mutex::default()).collect(),
        }
    }

    /// The result's `width` columns, rows in block position order (blocks
    /// of one position worker by worker, each in arrival order); the
    /// receiver is left empty.
    pub fn finish(&self, width: usize) -> Columns {
        let mut workers: Vec<WorkerColumns> = self
            .workers
            .iter()
            .map(|w| std::mem::take(&mut *w.lock().unwrap_or_else(|e| e.into_inner())))
            .collect();
        let mut runs: Vec<Run> = workers.iter().flat_map(|w| w.runs.clone()).collect();
        runs.sort_by_key(|r| r.position);
        let len = runs.iter().map(|r| r.len).sum();
        if len == 0 {
            return Columns::empty(width);
        }
        let columns = (0..width)
            .map(|c| {
                let mut parts: Vec<PartBuilder> = workers
                    .iter_mut()
                    .map(|w| match w.parts.get_mut(c) {
                        Some(part) => std::mem::replace(part, PartBuilder::new()),
                        None => PartBuilder::new(),
                    })
                    .collect();
                gather(&mut parts, &runs, len)
            })
            .collect();
        Columns { columns, len }
    }
}

impl RowReceiver for ColumnReceiver {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        if block.is_empty() {
            return Ok(());
        }
        let slot = block.worker() % self.workers.len();
        let mut worker = self.workers[slot].lock().unwrap_or_else(|e| e.into_inner());
        let worker = &mut *worker;
        let width = block.width();
        if worker.parts.len() != width {
            worker.parts = (0..width).map(|_| PartBuilder::new()).collect();
        }
        let rows = block.len();
        match worker.runs.last_mut() {
            Some(run) if run.position == block.position() => run.len += rows,
            _ => worker.runs.push(Run {
                position: block.position(),
                worker: slot,
                start: worker.len,
                len: rows,
            }),
        }
        worker.len += rows;
        // A column keeping `Value`s takes them out of the block (which
        // then allocates anew), the others read them in place.
        if worker.parts.iter().any(PartBuilder::is_values) {
            let mut values = block.take_values();
            for row in values.chunks_exact_mut(width) {
                for (part, value) in worker.parts.iter_mut().zip(row) {
                    part.push_owned(value);
                }
            }
        } else {
            for row in block.rows() {
                for (part, value) in worker.parts.iter_mut().zip(row) {
                    part.push(value);
                }
            }
        }
        Ok(())
    }

    fn keeps_rows(&self) -> bool {
        true
    }
}

/// The worker whose buffers hold the whole result in order, if one does
/// (then they are moved rather than copied).
fn single_source(runs: &[Run], parts: &[PartBuilder], len: usize) -> Option<usize> {
    let worker = runs.first()?.worker;
    let mut next = 0;
    for run in runs {
        if run.worker != worker || run.start != next {
            return None;
        }
        next += run.len;
    }
    (parts[worker].len == len).then_some(worker)
}

/// One column from the workers' parts, rows in the order of `runs`.
fn gather(parts: &mut [PartBuilder], runs: &[Run], len: usize) -> Column {
    let kind = parts
        .iter()
        .map(PartBuilder::kind)
        .fold(Kind::Null, |a, b| match (a, b) {
            (a, Kind::Null) => a,
            (Kind::Null, b) => b,
            (a, b) if a == b => a,
            _ => Kind::Values,
        });
    let array: ArrayRef = match kind {
        Kind::Null => Arc::new(NullArray::new(len)),
        Kind::Values => {
            let mut sources: Vec<Vec<Value>> =
                parts.iter_mut().map(PartBuilder::take_values).collect();
            if let Some(worker) = single_source(runs, parts, len) {
                return Column::Values(std::mem::take(&mut sources[worker]));
            }
            let mut out = Vec::with_capacity(len);
            for run in runs {
                let values = &mut sources[run.worker][run.start..run.start + run.len];
                out.extend(values.iter_mut().map(std::mem::take));
            }
            return Column::Values(out);
        }
        Kind::Int => {
            let nulls = gather_nulls(parts, runs, len);
            let values = gather_fixed(parts, runs, len, |p| match &mut p.part {
                Part::Int(v) => Some(v),
                _ => None,
            });
            Arc::new(PrimitiveArray::<Int64Type>::new(values.into(), nulls))
        }
        Kind::Float => {
            let nulls = gather_nulls(parts, runs, len);
            let values = gather_fixed(parts, runs, len, |p| match &mut p.part {
                Part::Float(v) => Some(v),
                _ => None,
            });
            Arc::new(PrimitiveArray::<Float64Type>::new(values.into(), nulls))
        }
        Kind::Bool => {
            let nulls = gather_nulls(parts, runs, len);
            let values = gather_fixed(parts, runs, len, |p| match &mut p.part {
                Part::Bool(v) => Some(v),
                _ => None,
            });
            Arc::new(BooleanArray::new(BooleanBuffer::from(values), nulls))
        }
        Kind::Str => {
            let nulls = gather_nulls(parts, runs, len);
            let bytes: usize = runs
                .iter()
                .map(|run| match &parts[run.worker].part {
                    Part::Str(_, ends) => ends[run.start + run.len] - ends[run.start],
                    _ => 0,
                })
                .sum();
            if bytes <= i32::MAX as usize {
                gather_strings::<i32>(parts, runs, len, bytes, nulls)
            } else {
                gather_strings::<i64>(parts, runs, len, bytes, nulls)
            }
        }
    };
    Column::Arrow(array)
}

/// The values of a fixed-width column in the order of `runs` (defaults
/// for the rows of workers that had only nulls).
fn gather_fixed<T: Copy + Default>(
    parts: &mut [PartBuilder],
    runs: &[Run],
    len: usize,
    typed: impl Fn(&mut PartBuilder) -> Option<&mut Vec<T>>,
) -> Vec<T> {
    if let Some(worker) = single_source(runs, parts, len) {
        if let Some(values) = typed(&mut parts[worker]) {
            return std::mem::take(values);
        }
    }
    let mut out = Vec::with_capacity(len);
    for run in runs {
        match typed(&mut parts[run.worker]) {
            Some(values) => out.extend_from_slice(&values[run.start..run.start + run.len]),
            None => out.resize(out.len() + run.len, T::default()),
        }
    }
    out
}

/// The validity of a typed column in the order of `runs`; `None` if no
/// value is null.
fn gather_nulls(parts: &mut [PartBuilder], runs: &[Run], len: usize) -> Option<NullBuffer> {
    let has_nulls = |p: &PartBuilder| p.len > 0 && p.nulls.as_slice().is_some();
    if !parts.iter().any(has_nulls) {
        return None;
    }
    if let Some(worker) = single_source(runs, parts, len) {
        return parts[worker].nulls.finish();
    }
    let mut out = NullBufferBuilder::new(len);
    for run in runs {
        let part = &parts[run.worker];
        if has_nulls(part) {
            for i in run.start..run.start + run.len {
                out.append(!part.is_null(i));
            }
        } else {
            out.append_n_non_nulls(run.len);
        }
    }
    out.finish()
}

/// A string column in the order of `runs`, with offsets of type `O`
/// (`bytes` in all).
fn gather_strings<O: arrow_array::OffsetSizeTrait>(
    parts: &[PartBuilder],
    runs: &[Run],
    len: usize,
    bytes: usize,
    nulls: Option<NullBuffer>,
) -> ArrayRef {
    let mut data: Vec<u8> = Vec::with_capacity(bytes);
    let mut offsets: Vec<O> = Vec::with_capacity(len + 1);
    offsets.push(O::usize_as(0));
    for run in runs {
        match &parts[run.worker].part {
            Part::Str(from, ends) => {
                let ends = &ends[run.start..=run.start + run.len];
                let base = ends[0];
                let at = data.len();
                data.extend_from_slice(&from[base..ends[ends.len() - 1]]);
                offsets.extend(ends[1..].iter().map(|&end| O::usize_as(end - base + at)));
            }
            _ => {
                let at = O::usize_as(data.len());
                offsets.resize(offsets.len() + run.len, at);
            }
        }
    }
    // SAFETY: the offsets ascend from 0 to `data.len()`, and each range
    // between two of them holds one whole UTF-8 string (copied from a
    // Rust `String`, or empty for a null).
    Arc::new(unsafe {
        arrow_array::GenericStringArray::<O>::new_unchecked(
            OffsetBuffer::new_unchecked(offsets.into()),
            data.into(),
            nulls,
        )
    })
}

/// Reads a finished column row by row, typed once per fetch rather than
/// per value.
pub(crate) enum ColumnView<'a> {
    Null,
    Int(&'a PrimitiveArray<Int64Type>),
    Float(&'a PrimitiveArray<Float64Type>),
    Bool(&'a BooleanArray),
    Str(&'a StringArray),
    LargeStr(&'a LargeStringArray),
    Values(&'a [Value]),
}

impl<'a> ColumnView<'a> {
    /// The view of `column`.
    pub fn of(column: &'a Column) -> ColumnView<'a> {
        let array = match column {
            Column::Values(values) => return ColumnView::Values(values),
            Column::Arrow(array) => array.as_any(),
        };
        if let Some(a) = array.downcast_ref() {
            ColumnView::Int(a)
        } else if let Some(a) = array.downcast_ref() {
            ColumnView::Float(a)
        } else if let Some(a) = array.downcast_ref() {
            ColumnView::Bool(a)
        } else if let Some(a) = array.downcast_ref() {
            ColumnView::Str(a)
        } else if let Some(a) = array.downcast_ref() {
            ColumnView::LargeStr(a)
        } else {
            ColumnView::Null
        }
    }
}
