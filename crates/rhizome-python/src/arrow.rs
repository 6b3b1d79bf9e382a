//! Result columns as Arrow arrays, handed to pyarrow through the Arrow C
//! stream interface (the `__arrow_c_stream__` PyCapsule protocol).
//!
//! Integer, float, boolean and string columns are Arrow arrays already
//! (built while the statement ran, see `columns`). The columns kept as
//! `Value`s are built here in one pass; their type comes from their
//! values: integers become `int64`,
//! numbers with a float among them `double`, strings `utf8` (`large_utf8`
//! past 2 GiB), booleans `bool`, dates `date32`, local times `time64[ns]`,
//! date-times `timestamp[ns]` (with the zone or offset they share, else
//! UTC), durations `month_day_nano_interval`, and a column of nulls `null`.
//! These are built in Rust with the GIL released: no Python object per
//! value. Any other column (entities, lists, maps, mixed types, values out
//! of an Arrow type's range) is converted through Python objects (entities
//! as dicts: `_id`, `_labels` / `_type`, `_start`, `_end`, properties) and
//! `pyarrow.array`.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Float64Type, Int64Type, IntervalMonthDayNanoType,
    Time64NanosecondType, TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, LargeStringArray, NullArray, PrimitiveArray, RecordBatch,
    RecordBatchIterator, RecordBatchOptions, StringArray,
};
use arrow_buffer::{BooleanBuffer, IntervalMonthDayNano, NullBufferBuilder, OffsetBuffer};
use arrow_schema::{ArrowError, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rhizome_common::Value;
use std::ffi::CStr;
use std::sync::{Arc, Mutex};

const NANOS: i64 = 1_000_000_000;

/// The time zone of a date-time column: the one all its values share, else UTC.
#[derive(Debug, Clone, PartialEq)]
enum Zone {
    Named(Arc<str>),
    Offset(i32),
    Utc,
}

impl Zone {
    fn of(t: &rhizome_common::temporal::DateTime) -> Zone {
        match &t.zone {
            Some(name) => Zone::Named(name.clone()),
            None => Zone::Offset(t.offset_seconds),
        }
    }

    fn name(&self) -> Arc<str> {
        match self {
            Zone::Named(name) => name.clone(),
            Zone::Offset(seconds) => {
                let sign = if *seconds < 0 { '-' } else { '+' };
                let s = seconds.unsigned_abs();
                format!("{sign}{:02}:{:02}", s / 3600, s / 60 % 60).into()
            }
            Zone::Utc => "UTC".into(),
        }
    }
}

fn nanos_of(seconds: i64, nanos: u32) -> Option<i64> {
    seconds.checked_mul(NANOS)?.checked_add(nanos as i64)
}

fn interval_of(d: &rhizome_common::temporal::Duration) -> Option<IntervalMonthDayNano> {
    Some(IntervalMonthDayNano::new(
        i32::try_from(d.months).ok()?,
        i32::try_from(d.days).ok()?,
        d.seconds.checked_mul(NANOS)?.checked_add(d.nanos as i64)?,
    ))
}

/// The values of one column so far, typed by the first non-null value and
/// widened or given up on as later values demand.
enum Values {
    /// Only nulls so far.
    Null,
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
    /// UTF-8 bytes and the end offset of each value.
    Str(Vec<u8>, Vec<i64>),
    Date(Vec<i32>),
    LocalTime(Vec<i64>),
    LocalDateTime(Vec<i64>),
    DateTime(Vec<i64>, Zone),
    Duration(Vec<IntervalMonthDayNano>),
    /// No Arrow type holds the column: it goes through Python objects.
    Python,
}

/// Builds one column's Arrow array in a single pass over its values.
struct ColumnBuilder {
    values: Values,
    nulls: NullBufferBuilder,
    /// Rows pushed so far.
    len: usize,
    /// Rows the column will have (for capacities).
    capacity: usize,
}

/// A vector of `len` defaults (the nulls before the first value) with room
/// for `capacity`.
fn filled<T: Default + Clone>(len: usize, capacity: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(capacity);
    v.resize(len, T::default());
    v
}

impl ColumnBuilder {
    fn new(capacity: usize) -> ColumnBuilder {
        ColumnBuilder {
            values: Values::Null,
            nulls: NullBufferBuilder::new(capacity),
            len: 0,
            capacity,
        }
    }

    fn is_python(&self) -> bool {
        matches!(self.values, Values::Python)
    }

    /// Starts typed values for the first non-null value.
    fn start(&self, value: &Value) -> Values {
        let (len, cap) = (self.len, self.capacity);
        match value {
            Value::Int(_) => Values::Int(filled(len, cap)),
            Value::Float(_) => Values::Float(filled(len, cap)),
            Value::Bool(_) => Values::Bool(filled(len, cap)),
            Value::String(_) => {
                let mut offsets = Vec::with_capacity(cap + 1);
                offsets.resize(len + 1, 0);
                Values::Str(Vec::new(), offsets)
            }
            Value::Date(_) => Values::Date(filled(len, cap)),
            Value::LocalTime(_) => Values::LocalTime(filled(len, cap)),
            Value::LocalDateTime(_) => Values::LocalDateTime(filled(len, cap)),
            Value::DateTime(t) => Values::DateTime(filled(len, cap), Zone::of(t)),
            Value::Duration(_) => Values::Duration(filled(len, cap)),
            _ => Values::Python,
        }
    }

    /// Appends `value`; a value that does not fit the column's type turns
    /// it into a Python column (integers widen to floats).
    #[inline]
    fn push(&mut self, value: &Value) {
        if value.is_null() {
            self.nulls.append_null();
            match &mut self.values {
                Values::Null | Values::Python => {}
                Values::Int(v) => v.push(0),
                Values::Float(v) => v.push(0.0),
                Values::Bool(v) => v.push(false),
                Values::Str(bytes, offsets) => offsets.push(bytes.len() as i64),
                Values::Date(v) => v.push(0),
                Values::LocalTime(v) | Values::LocalDateTime(v) | Values::DateTime(v, _) => {
                    v.push(0)
                }
                Values::Duration(v) => v.push(IntervalMonthDayNano::default()),
            }
            self.len += 1;
            return;
        }
        if matches!(self.values, Values::Null) {
            self.values = self.start(value);
        }
        let fits = match (&mut self.values, value) {
            (Values::Int(v), Value::Int(i)) => {
                v.push(*i);
                true
            }
            (Values::Int(ints), Value::Float(x)) => {
                let mut floats: Vec<f64> = Vec::with_capacity(self.capacity);
                floats.extend(ints.iter().map(|&i| i as f64));
                floats.push(*x);
                self.values = Values::Float(floats);
                true
            }
            (Values::Float(v), Value::Float(x)) => {
                v.push(*x);
                true
            }
            (Values::Float(v), Value::Int(i)) => {
                v.push(*i as f64);
                true
            }
            (Values::Bool(v), Value::Bool(b)) => {
                v.push(*b);
                true
            }
            (Values::Str(bytes, offsets), Value::String(s)) => {
                bytes.extend_from_slice(s.as_bytes());
                offsets.push(bytes.len() as i64);
                true
            }
            (Values::Date(v), Value::Date(d)) => match i32::try_from(d.days) {
                Ok(days) => {
                    v.push(days);
                    true
                }
                Err(_) => false,
            },
            (Values::LocalTime(v), Value::LocalTime(t)) => {
                v.push(t.nanos);
                true
            }
            (Values::LocalDateTime(v), Value::LocalDateTime(t)) => {
                match nanos_of(t.seconds, t.nanos) {
                    Some(n) => {
                        v.push(n);
                        true
                    }
                    None => false,
                }
            }
            (Values::DateTime(v, zone), Value::DateTime(t)) => match nanos_of(t.seconds, t.nanos) {
                Some(n) => {
                    v.push(n);
                    if *zone != Zone::Utc && *zone != Zone::of(t) {
                        *zone = Zone::Utc;
                    }
                    true
                }
                None => false,
            },
            (Values::Duration(v), Value::Duration(d)) => match interval_of(d) {
                Some(i) => {
                    v.push(i);
                    true
                }
                None => false,
            },
            _ => false,
        };
        if fits {
            self.nulls.append_non_null();
        } else {
            self.values = Values::Python;
        }
        self.len += 1;
    }

    /// The finished array, or `None` for a Python column.
    fn finish(mut self) -> Option<ArrayRef> {
        let nulls = self.nulls.finish();
        fn primitive<T: ArrowPrimitiveType>(
            v: Vec<T::Native>,
            nulls: Option<arrow_buffer::NullBuffer>,
        ) -> PrimitiveArray<T> {
            PrimitiveArray::new(v.into(), nulls)
        }
        Some(match std::mem::replace(&mut self.values, Values::Python) {
            Values::Python => return None,
            Values::Null => Arc::new(NullArray::new(self.len)),
            Values::Int(v) => Arc::new(primitive::<Int64Type>(v, nulls)),
            Values::Float(v) => Arc::new(primitive::<Float64Type>(v, nulls)),
            Values::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls)),
            Values::Str(bytes, offsets) => {
                if bytes.len() <= i32::MAX as usize {
                    let small: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
                    // SAFETY: the offsets are ascending ends of whole UTF-8
                    // strings appended to `bytes`.
                    Arc::new(unsafe {
                        StringArray::new_unchecked(
                            OffsetBuffer::new_unchecked(small.into()),
                            bytes.into(),
                            nulls,
                        )
                    })
                } else {
                    // SAFETY: as above.
                    Arc::new(unsafe {
                        LargeStringArray::new_unchecked(
                            OffsetBuffer::new_unchecked(offsets.into()),
                            bytes.into(),
                            nulls,
                        )
                    })
                }
            }
            Values::Date(v) => Arc::new(primitive::<Date32Type>(v, nulls)),
            Values::LocalTime(v) => Arc::new(primitive::<Time64NanosecondType>(v, nulls)),
            Values::LocalDateTime(v) => Arc::new(primitive::<TimestampNanosecondType>(v, nulls)),
            Values::DateTime(v, zone) => {
                Arc::new(primitive::<TimestampNanosecondType>(v, nulls).with_timezone(zone.name()))
            }
            Values::Duration(v) => Arc::new(primitive::<IntervalMonthDayNanoType>(v, nulls)),
        })
    }
}

/// The Arrow array of a column kept as `Value`s (built with the GIL
/// released), or `None` if no Arrow type holds it and it has to go
/// through Python objects.
pub(crate) fn values_array(values: &[Value]) -> Option<ArrayRef> {
    let mut builder = ColumnBuilder::new(values.len());
    for value in values {
        builder.push(value);
        if builder.is_python() {
            return None;
        }
    }
    builder.finish()
}

/// A record batch of `rows` rows from named arrays.
pub(crate) fn record_batch(
    columns: Vec<(&str, ArrayRef)>,
    rows: usize,
) -> Result<RecordBatch, ArrowError> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, array)| array).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)
}

/// A record batch offered to pyarrow as an Arrow C stream (once).
#[pyclass(module = "rhizome._rhizome")]
pub(crate) struct ArrowStream {
    stream: Mutex<Option<FFI_ArrowArrayStream>>,
}

impl ArrowStream {
    /// A stream of `batches` (at least one; all of one schema).
    pub fn new(batches: Vec<RecordBatch>) -> ArrowStream {
        let schema = batches
            .first()
            .map_or_else(|| Arc::new(Schema::empty()), |b| b.schema());
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        ArrowStream {
            stream: Mutex::new(Some(FFI_ArrowArrayStream::new(Box::new(reader)))),
        }
    }
}

const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

#[pymethods]
impl ArrowStream {
    /// The PyCapsule protocol: a capsule owning the C stream. pyarrow moves
    /// the stream out; a capsule dropped unused releases it.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = self
            .stream
            .lock()
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("arrow stream poisoned"))?
            .take()
            .ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err("the Arrow stream was already consumed")
            })?;
        PyCapsule::new_with_value(py, stream, STREAM_CAPSULE)
    }
}
