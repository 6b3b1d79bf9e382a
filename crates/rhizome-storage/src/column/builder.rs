//! In-memory column construction.

use super::{ColumnType, ScalarType, SPARSE_DIVISOR};
use crate::codec;
use rhizome_common::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time, Value};

/// The values of a column in memory, without nulls' bookkeeping (that is the
/// builder's validity bitmap). Rows that are null hold a default value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ColumnValues {
    /// No row has a value.
    #[default]
    Empty,
    /// Fixed-width scalars: `lanes[lane][row]`.
    Fixed {
        /// The scalar type.
        ty: ScalarType,
        /// One vector per lane, each with one entry per row.
        lanes: Vec<Vec<i64>>,
    },
    /// Strings: row `i` is `bytes[offsets[i]..offsets[i + 1]]`.
    Str {
        /// `rows + 1` offsets into `bytes`.
        offsets: Vec<u64>,
        /// Concatenated UTF-8 bytes.
        bytes: Vec<u8>,
    },
    /// Homogeneous lists: row `i` is `items[offsets[i]..offsets[i + 1]]`.
    List {
        /// Element type.
        elem: ScalarType,
        /// `rows + 1` offsets into `items`.
        offsets: Vec<u64>,
        /// The elements of all lists, never null.
        items: Box<ColumnValues>,
    },
    /// Values of mixed types, encoded by [`crate::codec`].
    Any {
        /// `rows + 1` offsets into `bytes`.
        offsets: Vec<u64>,
        /// Concatenated encoded values.
        bytes: Vec<u8>,
    },
}

/// Encodes a fixed-width scalar into its lanes; `None` for strings and
/// non-scalars (and date-times with a named zone, which go to "any" columns).
pub(crate) fn scalar_lanes(value: &Value) -> Option<(ScalarType, [i64; 4])> {
    Some(match value {
        Value::Int(i) => (ScalarType::Int, [*i, 0, 0, 0]),
        Value::Float(x) => (ScalarType::Float, [x.to_bits() as i64, 0, 0, 0]),
        Value::Bool(b) => (ScalarType::Bool, [*b as i64, 0, 0, 0]),
        Value::Date(d) => (ScalarType::Date, [d.days, 0, 0, 0]),
        Value::LocalTime(t) => (ScalarType::LocalTime, [t.nanos, 0, 0, 0]),
        Value::Time(t) => (ScalarType::Time, [t.nanos, t.offset_seconds as i64, 0, 0]),
        Value::LocalDateTime(t) => (ScalarType::LocalDateTime, [t.seconds, t.nanos as i64, 0, 0]),
        Value::DateTime(t) if t.zone.is_none() => (
            ScalarType::DateTime,
            [t.seconds, t.nanos as i64, t.offset_seconds as i64, 0],
        ),
        Value::Duration(d) => (
            ScalarType::Duration,
            [d.months, d.days, d.seconds, d.nanos as i64],
        ),
        _ => return None,
    })
}

/// Decodes lanes written by [`scalar_lanes`].
pub(crate) fn lanes_value(ty: ScalarType, lane: impl Fn(usize) -> i64) -> Value {
    match ty {
        ScalarType::Int => Value::Int(lane(0)),
        ScalarType::Float => Value::Float(f64::from_bits(lane(0) as u64)),
        ScalarType::Bool => Value::Bool(lane(0) != 0),
        ScalarType::Date => Value::Date(Date { days: lane(0) }),
        ScalarType::LocalTime => Value::LocalTime(LocalTime { nanos: lane(0) }),
        ScalarType::Time => Value::Time(Time {
            nanos: lane(0),
            offset_seconds: lane(1) as i32,
        }),
        ScalarType::LocalDateTime => Value::LocalDateTime(LocalDateTime {
            seconds: lane(0),
            nanos: lane(1) as u32,
        }),
        ScalarType::DateTime => Value::DateTime(DateTime {
            seconds: lane(0),
            nanos: lane(1) as u32,
            offset_seconds: lane(2) as i32,
            zone: None,
        }),
        ScalarType::Duration => Value::Duration(Duration {
            months: lane(0),
            days: lane(1),
            seconds: lane(2),
            nanos: lane(3) as i32,
        }),
        ScalarType::String => Value::Null,
    }
}

fn scalar_type_of(value: &Value) -> Option<ScalarType> {
    match value {
        Value::String(_) => Some(ScalarType::String),
        other => scalar_lanes(other).map(|(ty, _)| ty),
    }
}

impl ColumnValues {
    fn empty_like(ty: ColumnType) -> ColumnValues {
        match ty {
            ColumnType::Scalar(ScalarType::String) => ColumnValues::Str {
                offsets: vec![0],
                bytes: Vec::new(),
            },
            ColumnType::Scalar(ty) => ColumnValues::Fixed {
                ty,
                lanes: vec![Vec::new(); ty.lanes()],
            },
            ColumnType::List(elem) => ColumnValues::List {
                elem,
                offsets: vec![0],
                items: Box::new(ColumnValues::empty_like(ColumnType::Scalar(elem))),
            },
            ColumnType::Any => ColumnValues::Any {
                offsets: vec![0],
                bytes: Vec::new(),
            },
        }
    }

    /// The column type these values have, `None` when empty.
    pub fn column_type(&self) -> Option<ColumnType> {
        match self {
            ColumnValues::Empty => None,
            ColumnValues::Fixed { ty, .. } => Some(ColumnType::Scalar(*ty)),
            ColumnValues::Str { .. } => Some(ColumnType::Scalar(ScalarType::String)),
            ColumnValues::List { elem, .. } => Some(ColumnType::List(*elem)),
            ColumnValues::Any { .. } => Some(ColumnType::Any),
        }
    }

    /// Number of rows held.
    pub fn len(&self) -> usize {
        match self {
            ColumnValues::Empty => 0,
            ColumnValues::Fixed { lanes, .. } => lanes[0].len(),
            ColumnValues::Str { offsets, .. }
            | ColumnValues::List { offsets, .. }
            | ColumnValues::Any { offsets, .. } => offsets.len() - 1,
        }
    }

    /// True when no rows are held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `row` (which must be `< len()`).
    pub fn get(&self, row: usize) -> Value {
        match self {
            ColumnValues::Empty => Value::Null,
            ColumnValues::Fixed { ty, lanes } => lanes_value(*ty, |l| lanes[l][row]),
            ColumnValues::Str { offsets, bytes } => {
                let (a, b) = (offsets[row] as usize, offsets[row + 1] as usize);
                Value::String(String::from_utf8_lossy(&bytes[a..b]).into_owned())
            }
            ColumnValues::List { offsets, items, .. } => Value::List(
                (offsets[row] as usize..offsets[row + 1] as usize)
                    .map(|i| items.get(i))
                    .collect(),
            ),
            ColumnValues::Any { offsets, bytes } => {
                let (a, b) = (offsets[row] as usize, offsets[row + 1] as usize);
                codec::decode(&bytes[a..b]).unwrap_or(Value::Null)
            }
        }
    }

    /// Appends `value`, which must fit these values' type (checked by the caller).
    fn push_fitting(&mut self, value: &Value) {
        match self {
            ColumnValues::Empty => unreachable!("typed before push"),
            ColumnValues::Fixed { lanes, .. } => {
                let (_, encoded) = scalar_lanes(value).unwrap_or((ScalarType::Int, [0; 4]));
                for (lane, v) in lanes.iter_mut().zip(encoded) {
                    lane.push(v);
                }
            }
            ColumnValues::Str { offsets, bytes } => {
                if let Value::String(s) = value {
                    bytes.extend_from_slice(s.as_bytes());
                }
                offsets.push(bytes.len() as u64);
            }
            ColumnValues::List { offsets, items, .. } => {
                if let Value::List(list) = value {
                    for item in list {
                        items.push_fitting(item);
                    }
                }
                offsets.push(items.len() as u64);
            }
            ColumnValues::Any { offsets, bytes } => {
                codec::encode(value, bytes);
                offsets.push(bytes.len() as u64);
            }
        }
    }

    fn push_default(&mut self) {
        match self {
            ColumnValues::Empty => {}
            ColumnValues::Fixed { lanes, .. } => lanes.iter_mut().for_each(|l| l.push(0)),
            ColumnValues::Str { offsets, .. } | ColumnValues::List { offsets, .. } => {
                offsets.push(*offsets.last().unwrap_or(&0))
            }
            ColumnValues::Any { offsets, bytes } => {
                codec::encode(&Value::Null, bytes);
                offsets.push(bytes.len() as u64);
            }
        }
    }

    fn fits(&self, value: &Value) -> bool {
        match (self, value) {
            (ColumnValues::Any { .. }, _) => true,
            (ColumnValues::Str { .. }, Value::String(_)) => true,
            (ColumnValues::List { elem, .. }, Value::List(items)) => {
                items.iter().all(|v| scalar_type_of(v) == Some(*elem))
            }
            (ColumnValues::Fixed { ty, .. }, v) => scalar_lanes(v).map(|(t, _)| t) == Some(*ty),
            _ => false,
        }
    }
}

/// The type a column should take for its first value.
fn column_type_for(value: &Value) -> ColumnType {
    match value {
        Value::List(items) if !items.is_empty() => {
            let first = scalar_type_of(&items[0]);
            match first {
                Some(t) if items.iter().all(|v| scalar_type_of(v) == Some(t)) => {
                    ColumnType::List(t)
                }
                _ => ColumnType::Any,
            }
        }
        // An empty list has no element type; keep it in an "any" column.
        Value::List(_) => ColumnType::Any,
        v => scalar_type_of(v).map_or(ColumnType::Any, ColumnType::Scalar),
    }
}

/// A finished column, ready to be written to a segment.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// One entry per row; `validity` bit `i` set means row `i` has a value
    /// (`None` means every row has one).
    Dense {
        /// Number of rows.
        rows: u64,
        /// Validity bitmap, 64 rows per word, or `None` when all rows are present.
        validity: Option<Vec<u64>>,
        /// The values (default values on null rows).
        values: ColumnValues,
    },
    /// Only present rows are stored: `values.get(i)` is the value of row `positions[i]`.
    Sparse {
        /// Number of rows.
        rows: u64,
        /// Sorted row numbers that have a value.
        positions: Vec<u64>,
        /// The present values, in position order, never null.
        values: ColumnValues,
    },
}

impl ColumnData {
    /// Number of rows the column covers.
    pub fn rows(&self) -> u64 {
        match self {
            ColumnData::Dense { rows, .. } | ColumnData::Sparse { rows, .. } => *rows,
        }
    }

    /// The value at `row`, `Value::Null` when absent.
    pub fn get(&self, row: u64) -> Value {
        match self {
            ColumnData::Dense {
                validity, values, ..
            } => {
                let present = validity
                    .as_ref()
                    .is_none_or(|v| v[(row / 64) as usize] >> (row % 64) & 1 == 1);
                if present && !values.is_empty() {
                    values.get(row as usize)
                } else {
                    Value::Null
                }
            }
            ColumnData::Sparse {
                positions, values, ..
            } => match positions.binary_search(&row) {
                Ok(i) => values.get(i),
                Err(_) => Value::Null,
            },
        }
    }

    /// Reorders rows: row `i` of the result is row `order[i]` of `self`.
    pub fn permuted(&self, order: &[u64]) -> ColumnData {
        let mut builder = ColumnBuilder::new();
        for &row in order {
            builder.push(&self.get(row));
        }
        builder.finish()
    }
}

/// Builds a column row by row. Pushing a value of another type than the
/// column's turns it into an "any" column; nothing is ever rejected except
/// values that are not storable (maps, entities), which the caller must check
/// with [`Value::is_storable`] before pushing (they are stored as null here).
#[derive(Debug, Clone, Default)]
pub struct ColumnBuilder {
    rows: u64,
    present: u64,
    validity: Vec<u64>,
    values: ColumnValues,
}

impl ColumnBuilder {
    /// An empty builder.
    pub fn new() -> ColumnBuilder {
        ColumnBuilder::default()
    }

    /// Number of rows pushed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn set_valid(&mut self, valid: bool) {
        let word = (self.rows / 64) as usize;
        if word >= self.validity.len() {
            self.validity.push(0);
        }
        if valid {
            self.validity[word] |= 1 << (self.rows % 64);
            self.present += 1;
        }
        self.rows += 1;
    }

    /// Appends an absent value.
    pub fn push_null(&mut self) {
        self.values.push_default();
        self.set_valid(false);
    }

    /// Appends `value` (null appends an absent value).
    pub fn push(&mut self, value: &Value) {
        if value.is_null() || !value.is_storable() {
            return self.push_null();
        }
        if matches!(self.values, ColumnValues::Empty) {
            let mut values = ColumnValues::empty_like(column_type_for(value));
            for _ in 0..self.rows {
                values.push_default();
            }
            self.values = values;
        } else if !self.values.fits(value) {
            self.widen_to_any();
        }
        self.values.push_fitting(value);
        self.set_valid(true);
    }

    /// Appends an integer (fast path of [`ColumnBuilder::push`]).
    pub fn push_i64(&mut self, value: i64) {
        match &mut self.values {
            ColumnValues::Fixed {
                ty: ScalarType::Int,
                lanes,
            } => {
                lanes[0].push(value);
                self.set_valid(true);
            }
            _ => self.push(&Value::Int(value)),
        }
    }

    /// Appends a float (fast path of [`ColumnBuilder::push`]).
    pub fn push_f64(&mut self, value: f64) {
        match &mut self.values {
            ColumnValues::Fixed {
                ty: ScalarType::Float,
                lanes,
            } => {
                lanes[0].push(value.to_bits() as i64);
                self.set_valid(true);
            }
            _ => self.push(&Value::Float(value)),
        }
    }

    /// Appends a string (fast path of [`ColumnBuilder::push`]).
    pub fn push_str(&mut self, value: &str) {
        match &mut self.values {
            ColumnValues::Str { offsets, bytes } => {
                bytes.extend_from_slice(value.as_bytes());
                offsets.push(bytes.len() as u64);
                self.set_valid(true);
            }
            _ => self.push(&Value::String(value.to_string())),
        }
    }

    fn widen_to_any(&mut self) {
        let old = std::mem::take(&mut self.values);
        let mut offsets = vec![0u64];
        let mut bytes = Vec::new();
        for row in 0..old.len() {
            let valid = self.validity[row / 64] >> (row % 64) & 1 == 1;
            let v = if valid { old.get(row) } else { Value::Null };
            codec::encode(&v, &mut bytes);
            offsets.push(bytes.len() as u64);
        }
        self.values = ColumnValues::Any { offsets, bytes };
    }

    /// Appends all rows of `other` after the rows of `self`.
    pub fn append(&mut self, other: &ColumnData) {
        for row in 0..other.rows() {
            self.push(&other.get(row));
        }
    }

    /// Number of rows that have a value.
    pub fn present(&self) -> u64 {
        self.present
    }

    /// Finishes the column, choosing the dense or sparse layout.
    pub fn finish(self) -> ColumnData {
        let rows = self.rows;
        if self.present == rows {
            return ColumnData::Dense {
                rows,
                validity: None,
                values: self.values,
            };
        }
        if self.present * SPARSE_DIVISOR < rows {
            let mut positions = Vec::with_capacity(self.present as usize);
            let mut values = match self.values.column_type() {
                Some(ty) => ColumnValues::empty_like(ty),
                None => ColumnValues::Empty,
            };
            for row in 0..rows {
                if self.validity[(row / 64) as usize] >> (row % 64) & 1 == 1 {
                    positions.push(row);
                    values.push_fitting(&self.values.get(row as usize));
                }
            }
            return ColumnData::Sparse {
                rows,
                positions,
                values,
            };
        }
        ColumnData::Dense {
            rows,
            validity: Some(self.validity),
            values: self.values,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(values: &[Value]) -> ColumnData {
        let mut b = ColumnBuilder::new();
        for v in values {
            b.push(v);
        }
        let data = b.finish();
        for (i, v) in values.iter().enumerate() {
            assert_eq!(&data.get(i as u64), v, "row {i}");
        }
        data
    }

    #[test]
    fn typed_columns_keep_their_type() {
        let data = roundtrip(&[Value::Int(1), Value::Null, Value::Int(-3)]);
        match data {
            ColumnData::Dense {
                values, validity, ..
            } => {
                assert_eq!(
                    values.column_type(),
                    Some(ColumnType::Scalar(ScalarType::Int))
                );
                assert!(validity.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_storable_type_roundtrips() {
        roundtrip(&[
            Value::Float(1.5),
            Value::Null,
            Value::Float(f64::NAN.min(2.0)),
        ]);
        roundtrip(&[Value::Bool(true), Value::Bool(false)]);
        roundtrip(&[
            Value::String("ä".into()),
            Value::Null,
            Value::String(String::new()),
        ]);
        roundtrip(&[
            Value::Date(Date { days: -5 }),
            Value::Date(Date { days: 19_000 }),
        ]);
        roundtrip(&[Value::Time(Time {
            nanos: 5,
            offset_seconds: -3600,
        })]);
        roundtrip(&[Value::LocalTime(LocalTime { nanos: 7 })]);
        roundtrip(&[Value::LocalDateTime(LocalDateTime {
            seconds: -7,
            nanos: 9,
        })]);
        roundtrip(&[Value::DateTime(
            DateTime::parse_iso("2020-01-01T10:00+02:00").unwrap(),
        )]);
        roundtrip(&[Value::Duration(Duration {
            months: 1,
            days: -2,
            seconds: 3,
            nanos: -4,
        })]);
        roundtrip(&[
            Value::List(vec![Value::Int(1), Value::Int(2)]),
            Value::Null,
            Value::List(vec![]),
        ]);
        roundtrip(&[
            Value::List(vec![Value::String("a".into())]),
            Value::List(vec![]),
        ]);
    }

    #[test]
    fn mixed_types_widen_to_any() {
        let data = roundtrip(&[
            Value::Int(1),
            Value::Null,
            Value::String("x".into()),
            Value::List(vec![Value::Int(1), Value::Float(2.0)]),
        ]);
        match data {
            ColumnData::Dense { values, .. } => {
                assert_eq!(values.column_type(), Some(ColumnType::Any))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rare_keys_are_sparse() {
        let mut values = vec![Value::Null; 100];
        values[3] = Value::Int(3);
        values[97] = Value::Int(97);
        match roundtrip(&values) {
            ColumnData::Sparse { positions, .. } => assert_eq!(positions, vec![3, 97]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn all_null_column() {
        let data = roundtrip(&[Value::Null, Value::Null]);
        assert_eq!(data.rows(), 2);
    }
}
