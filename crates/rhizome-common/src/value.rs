//! The dynamic value of a Cypher expression or property.
//!
//! Property values (stored) are: null, booleans, integers, floats, strings,
//! temporal values and lists of these. Query values add maps, nodes,
//! relationships and paths; entities are referred to by id so that a value
//! never owns graph data.

use crate::ids::{NodeId, RelId};
use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use std::collections::BTreeMap;
use std::fmt;

/// A path: `nodes.len() == rels.len() + 1`; `rels[i]` joins `nodes[i]` and `nodes[i + 1]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PathValue {
    /// The nodes in path order.
    pub nodes: Vec<NodeId>,
    /// The relationships in path order.
    pub rels: Vec<RelId>,
}

/// A Cypher value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// The absent value.
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A 64-bit signed integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A UTF-8 string.
    String(String),
    /// A list of values (any mix of types in queries; stored lists are homogeneous).
    List(Vec<Value>),
    /// A map from keys to values, ordered by key.
    Map(BTreeMap<String, Value>),
    /// A node, by id.
    Node(NodeId),
    /// A relationship, by id.
    Relationship(RelId),
    /// A path.
    Path(PathValue),
    /// A date.
    Date(Date),
    /// A time without zone.
    LocalTime(LocalTime),
    /// A time with offset.
    Time(Time),
    /// A date-time without zone.
    LocalDateTime(LocalDateTime),
    /// A date-time with offset or zone.
    DateTime(DateTime),
    /// A duration.
    Duration(Duration),
}

impl Value {
    /// The Cypher type name of the value, as used in error messages
    /// (`INTEGER`, `STRING`, `LIST<ANY>`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Bool(_) => "BOOLEAN",
            Value::Int(_) => "INTEGER",
            Value::Float(_) => "FLOAT",
            Value::String(_) => "STRING",
            Value::List(_) => "LIST<ANY>",
            Value::Map(_) => "MAP",
            Value::Node(_) => "NODE",
            Value::Relationship(_) => "RELATIONSHIP",
            Value::Path(_) => "PATH",
            Value::Date(_) => "DATE",
            Value::LocalTime(_) => "LOCAL TIME",
            Value::Time(_) => "ZONED TIME",
            Value::LocalDateTime(_) => "LOCAL DATETIME",
            Value::DateTime(_) => "ZONED DATETIME",
            Value::Duration(_) => "DURATION",
        }
    }

    /// True for [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// True if the value may be stored as a property: a scalar, a temporal
    /// value, or a list whose elements are all such scalars (nulls excluded).
    pub fn is_storable(&self) -> bool {
        match self {
            Value::Null
            | Value::Map(_)
            | Value::Node(_)
            | Value::Relationship(_)
            | Value::Path(_) => false,
            Value::List(items) => items
                .iter()
                .all(|v| !matches!(v, Value::List(_)) && v.is_storable()),
            _ => true,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

fn write_string_literal(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("'")?;
    for ch in s.chars() {
        match ch {
            '\'' => f.write_str("\\'")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("'")
}

/// Formats a float the way Cypher prints it: always with a decimal point or
/// exponent, so `1.0` never reads as the integer `1`.
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else if x == x.trunc() && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        let s = format!("{x}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

impl fmt::Display for Value {
    /// Cypher literal syntax (strings quoted), as the TCK writes expected values;
    /// entities print as `Node(id)` / `Relationship(id)` since a bare value has
    /// no access to their labels and properties.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&format_float(*x)),
            Value::String(s) => write_string_literal(f, s),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Map(map) => {
                f.write_str("{")?;
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Node(id) => write!(f, "Node({id})"),
            Value::Relationship(id) => write!(f, "Relationship({id})"),
            Value::Path(p) => write!(f, "Path(nodes={:?}, rels={:?})", p.nodes, p.rels),
            Value::Date(d) => write!(f, "'{d}'"),
            Value::LocalTime(t) => write!(f, "'{t}'"),
            Value::Time(t) => write!(f, "'{t}'"),
            Value::LocalDateTime(t) => write!(f, "'{t}'"),
            Value::DateTime(t) => write!(f, "'{t}'"),
            Value::Duration(d) => write!(f, "'{d}'"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_their_point() {
        assert_eq!(format_float(1.0), "1.0");
        assert_eq!(format_float(-0.5), "-0.5");
        assert_eq!(format_float(1e20), "100000000000000000000.0");
    }

    #[test]
    fn literal_display() {
        let v = Value::List(vec![
            Value::Int(1),
            Value::String("it's".into()),
            Value::Null,
        ]);
        assert_eq!(v.to_string(), "[1, 'it\\'s', null]");
    }

    #[test]
    fn storable_values() {
        assert!(Value::List(vec![Value::Int(1), Value::Int(2)]).is_storable());
        assert!(!Value::List(vec![Value::List(vec![])]).is_storable());
        assert!(!Value::Map(BTreeMap::new()).is_storable());
    }
}
