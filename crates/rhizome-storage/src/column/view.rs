//! Writing columns into segments and reading them back from the mapping.
//!
//! Reads never panic on damaged data: an out-of-range offset reads as null.
//! [`ColumnView::validate`] checks a column fully (used by `rhizome check`).

use super::builder::{lanes_value, ColumnData, ColumnValues};
use super::{ColumnType, ScalarType};
use crate::codec;
use crate::segment::{ArrayRef, Segment, SegmentWriter};
use rhizome_common::{Error, ErrorKind, Result, Value};
use serde::{Deserialize, Serialize};

/// Where a column's values lie in the segment (see [`ColumnValues`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ValuesMeta {
    /// No values.
    Empty,
    /// Fixed-width lanes of `i64`.
    Fixed {
        /// Scalar type.
        ty: ScalarType,
        /// One array per lane.
        lanes: Vec<ArrayRef>,
    },
    /// Strings: `u64` offsets and bytes.
    Str {
        /// Offsets (`u64`).
        offsets: ArrayRef,
        /// Bytes.
        bytes: ArrayRef,
    },
    /// Lists: `u64` offsets into the items.
    List {
        /// Element type.
        elem: ScalarType,
        /// Offsets (`u64`).
        offsets: ArrayRef,
        /// The items.
        items: Box<ValuesMeta>,
    },
    /// Encoded values: `u64` offsets and bytes.
    Any {
        /// Offsets (`u64`).
        offsets: ArrayRef,
        /// Bytes.
        bytes: ArrayRef,
    },
}

/// Where a column lies in the segment (see [`ColumnData`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ColumnMeta {
    /// One entry per row.
    Dense {
        /// Rows.
        rows: u64,
        /// Validity bitmap words (`u64`), absent when every row is present.
        validity: Option<ArrayRef>,
        /// Values.
        values: ValuesMeta,
    },
    /// Only present rows.
    Sparse {
        /// Rows.
        rows: u64,
        /// Sorted positions (`u64`).
        positions: ArrayRef,
        /// Values of the present rows.
        values: ValuesMeta,
    },
}

fn write_values(w: &mut SegmentWriter, values: &ColumnValues) -> Result<ValuesMeta> {
    Ok(match values {
        ColumnValues::Empty => ValuesMeta::Empty,
        ColumnValues::Fixed { ty, lanes } => ValuesMeta::Fixed {
            ty: *ty,
            lanes: lanes.iter().map(|l| w.write(l)).collect::<Result<_>>()?,
        },
        ColumnValues::Str { offsets, bytes } => ValuesMeta::Str {
            offsets: w.write(offsets)?,
            bytes: w.write(bytes)?,
        },
        ColumnValues::List {
            elem,
            offsets,
            items,
        } => ValuesMeta::List {
            elem: *elem,
            offsets: w.write(offsets)?,
            items: Box::new(write_values(w, items)?),
        },
        ColumnValues::Any { offsets, bytes } => ValuesMeta::Any {
            offsets: w.write(offsets)?,
            bytes: w.write(bytes)?,
        },
    })
}

/// Writes `column` into the segment and returns its metadata for the manifest.
pub fn write_column(w: &mut SegmentWriter, column: &ColumnData) -> Result<ColumnMeta> {
    Ok(match column {
        ColumnData::Dense {
            rows,
            validity,
            values,
        } => ColumnMeta::Dense {
            rows: *rows,
            validity: validity.as_ref().map(|v| w.write(v)).transpose()?,
            values: write_values(w, values)?,
        },
        ColumnData::Sparse {
            rows,
            positions,
            values,
        } => ColumnMeta::Sparse {
            rows: *rows,
            positions: w.write(positions)?,
            values: write_values(w, values)?,
        },
    })
}

/// Values of a column, mapped.
#[derive(Debug, Clone)]
enum ValuesView<'a> {
    Empty,
    Fixed {
        ty: ScalarType,
        lanes: Vec<&'a [i64]>,
    },
    Str {
        offsets: &'a [u64],
        bytes: &'a [u8],
    },
    List {
        offsets: &'a [u64],
        items: Box<ValuesView<'a>>,
    },
    Any {
        offsets: &'a [u64],
        bytes: &'a [u8],
    },
}

/// Resolves slices of a segment; `'a` is the lifetime the views get.
pub(crate) trait SliceSource<'a> {
    /// The array as a slice of `T`.
    fn get<T: bytemuck::Pod>(&self, r: ArrayRef) -> Result<&'a [T]>;
}

impl<'a> SliceSource<'a> for &'a Segment {
    fn get<T: bytemuck::Pod>(&self, r: ArrayRef) -> Result<&'a [T]> {
        self.slice(r)
    }
}

fn byte_range(offsets: &[u64], row: usize) -> Option<(usize, usize)> {
    let a = *offsets.get(row)? as usize;
    let b = *offsets.get(row + 1)? as usize;
    (a <= b).then_some((a, b))
}

impl<'a> ValuesView<'a> {
    fn resolve(src: &impl SliceSource<'a>, meta: &ValuesMeta) -> Result<ValuesView<'a>> {
        Ok(match meta {
            ValuesMeta::Empty => ValuesView::Empty,
            ValuesMeta::Fixed { ty, lanes } => {
                if lanes.len() != ty.lanes() {
                    return Err(Error::new(
                        ErrorKind::CorruptDatabase,
                        "column lane count mismatch",
                    ));
                }
                ValuesView::Fixed {
                    ty: *ty,
                    lanes: lanes.iter().map(|l| src.get(*l)).collect::<Result<_>>()?,
                }
            }
            ValuesMeta::Str { offsets, bytes } => ValuesView::Str {
                offsets: src.get(*offsets)?,
                bytes: src.get(*bytes)?,
            },
            ValuesMeta::List { offsets, items, .. } => ValuesView::List {
                offsets: src.get(*offsets)?,
                items: Box::new(ValuesView::resolve(src, items)?),
            },
            ValuesMeta::Any { offsets, bytes } => ValuesView::Any {
                offsets: src.get(*offsets)?,
                bytes: src.get(*bytes)?,
            },
        })
    }

    fn len(&self) -> usize {
        match self {
            ValuesView::Empty => 0,
            ValuesView::Fixed { lanes, .. } => lanes[0].len(),
            ValuesView::Str { offsets, .. }
            | ValuesView::List { offsets, .. }
            | ValuesView::Any { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    fn get(&self, row: usize) -> Value {
        match self {
            ValuesView::Empty => Value::Null,
            ValuesView::Fixed { ty, lanes } => {
                if row >= lanes[0].len() {
                    return Value::Null;
                }
                lanes_value(*ty, |l| lanes[l][row])
            }
            ValuesView::Str { .. } => self
                .str_at(row)
                .map_or(Value::Null, |s| Value::String(s.to_string())),
            ValuesView::List { offsets, items } => match byte_range(offsets, row) {
                Some((a, b)) if b <= items.len() => {
                    Value::List((a..b).map(|i| items.get(i)).collect())
                }
                _ => Value::Null,
            },
            ValuesView::Any { offsets, bytes } => byte_range(offsets, row)
                .and_then(|(a, b)| bytes.get(a..b))
                .and_then(|raw| codec::decode(raw).ok())
                .unwrap_or(Value::Null),
        }
    }

    fn str_at(&self, row: usize) -> Option<&'a str> {
        match self {
            ValuesView::Str { offsets, bytes } => {
                let (a, b) = byte_range(offsets, row)?;
                std::str::from_utf8(bytes.get(a..b)?).ok()
            }
            _ => None,
        }
    }

    fn validate(&self, rows: usize) -> Result<(), String> {
        if self.len() != rows && !matches!(self, ValuesView::Empty) {
            return Err(format!("holds {} values for {rows} rows", self.len()));
        }
        let check_offsets = |offsets: &[u64], limit: usize| -> Result<(), String> {
            if offsets.windows(2).any(|w| w[0] > w[1])
                || offsets.last().is_some_and(|&o| o as usize > limit)
            {
                return Err("offsets are not monotonic or exceed their data".into());
            }
            Ok(())
        };
        match self {
            ValuesView::Empty => Ok(()),
            ValuesView::Fixed { lanes, .. } => {
                if lanes.iter().any(|l| l.len() != rows) {
                    return Err("lanes differ in length".into());
                }
                Ok(())
            }
            ValuesView::Str { offsets, bytes } => {
                check_offsets(offsets, bytes.len())?;
                std::str::from_utf8(bytes)
                    .map(|_| ())
                    .map_err(|_| "string heap is not UTF-8".into())
            }
            ValuesView::List { offsets, items } => {
                check_offsets(offsets, items.len())?;
                items.validate(items.len())
            }
            ValuesView::Any { offsets, bytes } => {
                check_offsets(offsets, bytes.len())?;
                for row in 0..rows {
                    let (a, b) = byte_range(offsets, row).ok_or("bad offsets")?;
                    codec::decode(&bytes[a..b]).map_err(|e| format!("row {row}: {e}"))?;
                }
                Ok(())
            }
        }
    }
}

/// A property column read from a segment. Row numbers are offsets inside the
/// node group (or the relationship type's outgoing order) the column belongs to.
#[derive(Debug, Clone)]
pub struct ColumnView<'a> {
    rows: u64,
    ty: Option<ColumnType>,
    validity: Option<&'a [u64]>,
    positions: Option<&'a [u64]>,
    values: ValuesView<'a>,
}

impl<'a> ColumnView<'a> {
    /// Maps the column described by `meta`; checks that every array lies in the segment.
    pub(crate) fn resolve(src: &impl SliceSource<'a>, meta: &ColumnMeta) -> Result<ColumnView<'a>> {
        let (rows, validity, positions, values) = match meta {
            ColumnMeta::Dense {
                rows,
                validity,
                values,
            } => (
                *rows,
                validity.map(|v| src.get(v)).transpose()?,
                None,
                values,
            ),
            ColumnMeta::Sparse {
                rows,
                positions,
                values,
            } => (*rows, None, Some(src.get(*positions)?), values),
        };
        let values = ValuesView::resolve(src, values)?;
        let ty = match &values {
            ValuesView::Empty => None,
            ValuesView::Fixed { ty, .. } => Some(ColumnType::Scalar(*ty)),
            ValuesView::Str { .. } => Some(ColumnType::Scalar(ScalarType::String)),
            ValuesView::List { .. } => match values_meta_elem(meta) {
                Some(elem) => Some(ColumnType::List(elem)),
                None => Some(ColumnType::Any),
            },
            ValuesView::Any { .. } => Some(ColumnType::Any),
        };
        Ok(ColumnView {
            rows,
            ty,
            validity,
            positions,
            values,
        })
    }

    /// Number of rows the column covers.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The column's type, `None` if it holds no value at all.
    pub fn column_type(&self) -> Option<ColumnType> {
        self.ty
    }

    /// Index into the values for `row`, or `None` if the row has no value.
    #[inline]
    fn slot(&self, row: u64) -> Option<usize> {
        if row >= self.rows {
            return None;
        }
        if let Some(positions) = self.positions {
            return positions.binary_search(&row).ok();
        }
        if let Some(validity) = self.validity {
            let word = *validity.get((row / 64) as usize)?;
            if word >> (row % 64) & 1 == 0 {
                return None;
            }
        }
        Some(row as usize)
    }

    /// True if `row` has a value.
    pub fn is_present(&self, row: u64) -> bool {
        self.slot(row).is_some()
    }

    /// The value of `row`, `Value::Null` if absent or out of range.
    pub fn get(&self, row: u64) -> Value {
        match self.slot(row) {
            Some(slot) => self.values.get(slot),
            None => Value::Null,
        }
    }

    /// The string at `row` without copying, if this is a string column and the row has one.
    pub fn get_str(&self, row: u64) -> Option<&'a str> {
        self.slot(row).and_then(|slot| self.values.str_at(slot))
    }

    /// The integer at `row`, if this is an integer column and the row has one.
    #[inline]
    pub fn get_i64(&self, row: u64) -> Option<i64> {
        match &self.values {
            ValuesView::Fixed {
                ty: ScalarType::Int,
                lanes,
            } => self.slot(row).and_then(|s| lanes[0].get(s).copied()),
            _ => None,
        }
    }

    /// The integer at `row`: `Some(None)` if the row has no value, `None`
    /// if its value is not an integer (read it with [`ColumnView::get`]).
    #[inline]
    pub fn int_at(&self, row: u64) -> Option<Option<i64>> {
        let Some(slot) = self.slot(row) else {
            return Some(None);
        };
        match &self.values {
            ValuesView::Fixed {
                ty: ScalarType::Int,
                lanes,
            } => lanes[0].get(slot).copied().map(Some),
            _ => None,
        }
    }

    /// The float at `row`: `Some(None)` if the row has no value, `None` if
    /// its value is not a float (read it with [`ColumnView::get`]).
    #[inline]
    pub fn float_at(&self, row: u64) -> Option<Option<f64>> {
        let Some(slot) = self.slot(row) else {
            return Some(None);
        };
        match &self.values {
            ValuesView::Fixed {
                ty: ScalarType::Float,
                lanes,
            } => lanes[0]
                .get(slot)
                .map(|&bits| Some(f64::from_bits(bits as u64))),
            _ => None,
        }
    }

    /// The string at `row`, borrowed from the column's bytes: `Some(None)`
    /// if the row has no value, `None` if the column holds no strings (read
    /// it with [`ColumnView::get`]). A damaged offset reads as no value,
    /// as [`ColumnView::get`] reads it as null.
    #[inline]
    pub fn str_view_at(&self, row: u64) -> Option<Option<&'a str>> {
        match &self.values {
            ValuesView::Str { .. } => Some(self.slot(row).and_then(|s| self.values.str_at(s))),
            _ => None,
        }
    }

    /// For a dense, fully present integer column: all values as a slice.
    pub fn dense_i64(&self) -> Option<&'a [i64]> {
        match (&self.values, self.validity, self.positions) {
            (
                ValuesView::Fixed {
                    ty: ScalarType::Int,
                    lanes,
                },
                None,
                None,
            ) => Some(lanes[0]),
            _ => None,
        }
    }

    /// For a dense, fully present float column: all values as a slice.
    pub fn dense_f64(&self) -> Option<&'a [f64]> {
        match (&self.values, self.validity, self.positions) {
            (
                ValuesView::Fixed {
                    ty: ScalarType::Float,
                    lanes,
                },
                None,
                None,
            ) => Some(bytemuck::cast_slice(lanes[0])),
            _ => None,
        }
    }

    /// Checks the whole column for consistency; returns a description of the first problem.
    pub fn validate(&self) -> Result<(), String> {
        match self.positions {
            Some(positions) => {
                if positions.windows(2).any(|w| w[0] >= w[1])
                    || positions.last().is_some_and(|&p| p >= self.rows)
                {
                    return Err("sparse positions are not sorted or exceed the rows".into());
                }
                self.values.validate(positions.len())
            }
            None => {
                if let Some(v) = self.validity {
                    if (v.len() as u64) < self.rows.div_ceil(64) {
                        return Err("validity bitmap too short".into());
                    }
                }
                self.values.validate(self.rows as usize)
            }
        }
    }
}

fn values_meta_elem(meta: &ColumnMeta) -> Option<ScalarType> {
    let values = match meta {
        ColumnMeta::Dense { values, .. } | ColumnMeta::Sparse { values, .. } => values,
    };
    match values {
        ValuesMeta::List { elem, .. } => Some(*elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::ColumnBuilder;
    use super::*;

    fn write_read(values: &[Value]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.seg");
        let mut b = ColumnBuilder::new();
        values.iter().for_each(|v| b.push(v));
        let data = b.finish();
        let mut w = SegmentWriter::create(&path).unwrap();
        let meta = write_column(&mut w, &data).unwrap();
        let len = w.finish().unwrap();
        let seg = Segment::open(&path, len).unwrap();
        let view = ColumnView::resolve(&&seg, &meta).unwrap();
        view.validate().unwrap();
        for (i, v) in values.iter().enumerate() {
            assert_eq!(&view.get(i as u64), v);
        }
        assert_eq!(view.get(values.len() as u64), Value::Null);
    }

    #[test]
    fn columns_survive_the_segment() {
        write_read(&[Value::Int(5), Value::Null, Value::Int(7)]);
        write_read(&[Value::String("a".into()), Value::String("bc".into())]);
        write_read(&[Value::List(vec![Value::Float(1.0)]), Value::Null]);
        write_read(&[Value::Int(1), Value::String("mixed".into())]);
        let mut sparse = vec![Value::Null; 50];
        sparse[10] = Value::String("rare".into());
        write_read(&sparse);
        write_read(&[Value::Null, Value::Null]);
    }

    #[test]
    fn typed_fast_paths() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.seg");
        let mut b = ColumnBuilder::new();
        (0..10).for_each(|i| b.push_i64(i));
        let mut w = SegmentWriter::create(&path).unwrap();
        let meta = write_column(&mut w, &b.finish()).unwrap();
        let len = w.finish().unwrap();
        let seg = Segment::open(&path, len).unwrap();
        let view = ColumnView::resolve(&&seg, &meta).unwrap();
        assert_eq!(view.dense_i64().unwrap()[9], 9);
        assert_eq!(view.get_i64(3), Some(3));
        assert_eq!(view.dense_f64(), None);
    }
}
