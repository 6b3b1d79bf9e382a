//! Result columns as Arrow arrays, handed to pyarrow through the Arrow C
//! stream interface (the `__arrow_c_stream__` PyCapsule protocol).
//!
//! Each column's type is inferred from its values: integers become `int64`,
//! numbers with a float among them `double`, strings `utf8` (`large_utf8`
//! past 2 GiB), booleans `bool`, dates `date32`, local times `time64[ns]`,
//! date-times `timestamp[ns]` (with the zone or offset they share, else
//! UTC), durations `month_day_nano_interval`, and a column of nulls `null`.
//! These are built in Rust with the GIL released: no Python object per
//! value. Any other column (entities, lists, maps, mixed types, values out
//! of an Arrow type's range) is converted through Python objects (entities
//! as dicts: `_id`, `_labels` / `_type`, `_start`, `_end`, properties) and
//! `pyarrow.array`.

use arrow_array::builder::{BooleanBuilder, GenericStringBuilder};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Float64Type, Int64Type, IntervalMonthDayNanoType,
    Time64NanosecondType, TimestampNanosecondType,
};
use arrow_array::{
    ArrayRef, NullArray, PrimitiveArray, RecordBatch, RecordBatchIterator, RecordBatchOptions,
};
use arrow_buffer::{IntervalMonthDayNano, NullBufferBuilder};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rhizome_common::Value;
use std::ffi::CStr;
use std::sync::{Arc, Mutex};

const NANOS: i64 = 1_000_000_000;

/// The Arrow type a column's values fit, or `Python` for none.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Only nulls (or no rows).
    Null,
    Int,
    Float,
    Bool,
    String {
        bytes: usize,
    },
    Date,
    LocalTime,
    LocalDateTime,
    /// Zoned date-times with the time zone for the column.
    DateTime {
        zone: Zone,
    },
    Duration,
    Python,
}

/// The time zone of a date-time column.
#[derive(Debug, Clone, PartialEq)]
enum Zone {
    Named(Arc<str>),
    Offset(i32),
    Utc,
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

/// The kind of column `column` of `rows`.
fn infer<'r>(rows: impl Iterator<Item = &'r [Value]>, column: usize) -> Kind {
    let mut kind = Kind::Null;
    for row in rows {
        let value = &row[column];
        let next = match (&kind, value) {
            (_, Value::Null) => continue,
            (Kind::Null | Kind::Int, Value::Int(_)) => Kind::Int,
            (Kind::Float, Value::Int(_)) => Kind::Float,
            (Kind::Null | Kind::Int | Kind::Float, Value::Float(_)) => Kind::Float,
            (Kind::Null | Kind::Bool, Value::Bool(_)) => Kind::Bool,
            (Kind::Null, Value::String(s)) => Kind::String { bytes: s.len() },
            (Kind::String { bytes }, Value::String(s)) => Kind::String {
                bytes: bytes + s.len(),
            },
            (Kind::Null | Kind::Date, Value::Date(d)) if i32::try_from(d.days).is_ok() => {
                Kind::Date
            }
            (Kind::Null | Kind::LocalTime, Value::LocalTime(_)) => Kind::LocalTime,
            (Kind::Null | Kind::LocalDateTime, Value::LocalDateTime(t))
                if nanos_of(t.seconds, t.nanos).is_some() =>
            {
                Kind::LocalDateTime
            }
            (Kind::Null, Value::DateTime(t)) if nanos_of(t.seconds, t.nanos).is_some() => {
                Kind::DateTime {
                    zone: match &t.zone {
                        Some(name) => Zone::Named(name.clone()),
                        None => Zone::Offset(t.offset_seconds),
                    },
                }
            }
            (Kind::DateTime { zone }, Value::DateTime(t))
                if nanos_of(t.seconds, t.nanos).is_some() =>
            {
                let same = match (zone, &t.zone) {
                    (Zone::Named(a), Some(b)) => a == b,
                    (Zone::Offset(a), None) => *a == t.offset_seconds,
                    _ => false,
                };
                Kind::DateTime {
                    zone: if same { zone.clone() } else { Zone::Utc },
                }
            }
            (Kind::Null | Kind::Duration, Value::Duration(d)) if interval_of(d).is_some() => {
                Kind::Duration
            }
            _ => return Kind::Python,
        };
        kind = next;
    }
    kind
}

/// A primitive array of `rows`' column `column`, `native` giving each
/// non-null value (inference guarantees it gives one).
fn primitive<'r, T: ArrowPrimitiveType>(
    rows: impl ExactSizeIterator<Item = &'r [Value]>,
    column: usize,
    native: impl Fn(&Value) -> Option<T::Native>,
) -> PrimitiveArray<T> {
    let mut values = Vec::with_capacity(rows.len());
    let mut nulls = NullBufferBuilder::new(rows.len());
    for row in rows {
        match native(&row[column]) {
            Some(v) => {
                values.push(v);
                nulls.append_non_null();
            }
            None => {
                values.push(T::Native::default());
                nulls.append_null();
            }
        }
    }
    PrimitiveArray::new(values.into(), nulls.finish())
}

fn strings<'r, O: arrow_array::OffsetSizeTrait>(
    rows: impl ExactSizeIterator<Item = &'r [Value]>,
    column: usize,
    bytes: usize,
) -> ArrayRef {
    let mut builder = GenericStringBuilder::<O>::with_capacity(rows.len(), bytes);
    for row in rows {
        match &row[column] {
            Value::String(s) => builder.append_value(s),
            _ => builder.append_null(),
        }
    }
    Arc::new(builder.finish())
}

fn zone_name(zone: &Zone) -> Arc<str> {
    match zone {
        Zone::Named(name) => name.clone(),
        Zone::Offset(seconds) => {
            let sign = if *seconds < 0 { '-' } else { '+' };
            let s = seconds.unsigned_abs();
            format!("{sign}{:02}:{:02}", s / 3600, s / 60 % 60).into()
        }
        Zone::Utc => "UTC".into(),
    }
}

/// Column `column` as an Arrow array, or `None` if it needs Python objects.
fn native_column<'r, I>(rows: impl Fn() -> I, column: usize) -> Option<(DataType, ArrayRef)>
where
    I: ExactSizeIterator<Item = &'r [Value]>,
{
    let array: ArrayRef = match infer(rows(), column) {
        Kind::Python => return None,
        Kind::Null => Arc::new(NullArray::new(rows().len())),
        Kind::Int => Arc::new(primitive::<Int64Type>(rows(), column, |v| match v {
            Value::Int(i) => Some(*i),
            _ => None,
        })),
        Kind::Float => Arc::new(primitive::<Float64Type>(rows(), column, |v| match v {
            Value::Int(i) => Some(*i as f64),
            Value::Float(x) => Some(*x),
            _ => None,
        })),
        Kind::Bool => {
            let mut builder = BooleanBuilder::with_capacity(rows().len());
            for row in rows() {
                match &row[column] {
                    Value::Bool(b) => builder.append_value(*b),
                    _ => builder.append_null(),
                }
            }
            Arc::new(builder.finish())
        }
        Kind::String { bytes } if bytes <= i32::MAX as usize => {
            strings::<i32>(rows(), column, bytes)
        }
        Kind::String { bytes } => strings::<i64>(rows(), column, bytes),
        Kind::Date => Arc::new(primitive::<Date32Type>(rows(), column, |v| match v {
            Value::Date(d) => i32::try_from(d.days).ok(),
            _ => None,
        })),
        Kind::LocalTime => Arc::new(primitive::<Time64NanosecondType>(
            rows(),
            column,
            |v| match v {
                Value::LocalTime(t) => Some(t.nanos),
                _ => None,
            },
        )),
        Kind::LocalDateTime => Arc::new(primitive::<TimestampNanosecondType>(
            rows(),
            column,
            |v| match v {
                Value::LocalDateTime(t) => nanos_of(t.seconds, t.nanos),
                _ => None,
            },
        )),
        Kind::DateTime { zone } => Arc::new(
            primitive::<TimestampNanosecondType>(rows(), column, |v| match v {
                Value::DateTime(t) => nanos_of(t.seconds, t.nanos),
                _ => None,
            })
            .with_timezone(zone_name(&zone)),
        ),
        Kind::Duration => Arc::new(primitive::<IntervalMonthDayNanoType>(
            rows(),
            column,
            |v| match v {
                Value::Duration(d) => interval_of(d),
                _ => None,
            },
        )),
    };
    Some((array.data_type().clone(), array))
}

/// The columns of a result that Arrow types hold, as one record batch, and
/// the indexes of the columns left for Python.
pub(crate) struct NativeColumns {
    /// The batch (columns in result order, the Python ones left out).
    pub batch: RecordBatch,
    /// Indexes of the columns not in `batch`.
    pub python: Vec<usize>,
}

/// Builds the native columns of `rows` (call without the GIL).
pub(crate) fn native_columns<'r, I>(
    names: &[String],
    rows: impl Fn() -> I,
) -> Result<NativeColumns, ArrowError>
where
    I: ExactSizeIterator<Item = &'r [Value]>,
{
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    let mut python = Vec::new();
    for (column, name) in names.iter().enumerate() {
        match native_column(&rows, column) {
            Some((data_type, array)) => {
                fields.push(Field::new(name, data_type, true));
                arrays.push(array);
            }
            None => python.push(column),
        }
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows().len()));
    let batch = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)?;
    Ok(NativeColumns { batch, python })
}

/// A record batch offered to pyarrow as an Arrow C stream (once).
#[pyclass(module = "rhizome._rhizome")]
pub(crate) struct ArrowStream {
    stream: Mutex<Option<FFI_ArrowArrayStream>>,
}

impl ArrowStream {
    /// A stream of `batch`.
    pub fn new(batch: RecordBatch) -> ArrowStream {
        let schema = batch.schema();
        let reader = RecordBatchIterator::new([Ok(batch)], schema);
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
