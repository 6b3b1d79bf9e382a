//! Property columns: one column per (node group or relationship type, key).
//!
//! A column is built in memory with a [`ColumnBuilder`] (typed vectors and a
//! validity bitmap; it widens to an "any" column if values of different types
//! arrive) and written into a segment; reading goes through a [`ColumnView`]
//! over memory-mapped arrays.
//!
//! Physical layout, chosen per column when it is written:
//! - **fixed-width scalars** (integer, float, boolean, all temporal types) are
//!   stored as one to four `i64` *lanes* (see [`ScalarType::lanes`]); lane 0 of
//!   an integer column is a plain `&[i64]`, of a float column a `&[f64]`;
//! - **strings** as `u64` offsets plus a byte heap;
//! - **homogeneous lists** as `u64` offsets plus a child column of the element type;
//! - **mixed types** (any value, maps included) as offsets plus values encoded
//!   by [`crate::codec`];
//! - a column whose values are present on less than 1/[`SPARSE_DIVISOR`] of its
//!   rows is **sparse**: sorted row positions plus a dense child of the values.

mod builder;
pub mod view;

pub use builder::{ColumnBuilder, ColumnData, ColumnValues};
pub use view::{ColumnMeta, ColumnView};

use serde::{Deserialize, Serialize};

/// A column with fewer than `rows / SPARSE_DIVISOR` present values is stored sparse.
pub const SPARSE_DIVISOR: u64 = 8;

/// The type of a scalar property value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    /// 64-bit integer.
    Int,
    /// 64-bit float.
    Float,
    /// Boolean.
    Bool,
    /// UTF-8 string.
    String,
    /// Date.
    Date,
    /// Local time.
    LocalTime,
    /// Time with offset.
    Time,
    /// Local date-time.
    LocalDateTime,
    /// Date-time with offset (named zones are kept in "any" columns).
    DateTime,
    /// Duration.
    Duration,
}

impl ScalarType {
    /// Number of `i64` lanes a fixed-width value occupies; 0 for strings.
    pub fn lanes(self) -> usize {
        match self {
            ScalarType::String => 0,
            ScalarType::Int
            | ScalarType::Float
            | ScalarType::Bool
            | ScalarType::Date
            | ScalarType::LocalTime => 1,
            ScalarType::Time | ScalarType::LocalDateTime => 2,
            ScalarType::DateTime => 3,
            ScalarType::Duration => 4,
        }
    }

    /// The Cypher name of the type, as used in import headers (`int`, `date`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Int => "int",
            ScalarType::Float => "float",
            ScalarType::Bool => "boolean",
            ScalarType::String => "string",
            ScalarType::Date => "date",
            ScalarType::LocalTime => "localtime",
            ScalarType::Time => "time",
            ScalarType::LocalDateTime => "localdatetime",
            ScalarType::DateTime => "datetime",
            ScalarType::Duration => "duration",
        }
    }
}

/// The logical type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ColumnType {
    /// Every present value is a scalar of this type.
    Scalar(ScalarType),
    /// Every present value is a list whose elements all have this type.
    List(ScalarType),
    /// Values of mixed types.
    Any,
}
