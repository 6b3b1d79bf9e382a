//! What one round trip asks a backend for, and what comes back.
//!
//! A [`Round`] lists node keys whose rows are wanted (per node space) and
//! node keys whose adjacency lists are wanted (per relationship type and
//! direction); a backend answers all of it in one round trip (pipelined
//! statements or commands). Lookahead asks for the depth-k neighbourhood
//! of some nodes, also in one round trip.

use crate::cache::AdjacencyList;
use rhizome_common::{Error, ErrorKind, Value};

/// One relationship type in one direction, by index into the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListRef {
    /// Index of the relationship type.
    pub rel: u16,
    /// Outgoing (true) or incoming (false).
    pub outgoing: bool,
}

/// The requests of one round trip.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Round {
    /// Node rows wanted: (node space index, keys).
    pub nodes: Vec<(u16, Vec<i64>)>,
    /// Adjacency lists wanted: (list, keys).
    pub adjacency: Vec<(ListRef, Vec<i64>)>,
}

impl Round {
    /// Number of requests (statements or command groups) the round holds.
    pub fn requests(&self) -> u64 {
        (self.nodes.len() + self.adjacency.len()) as u64
    }
}

/// The answers of a round: every requested key appears, absent nodes as
/// `None` and nodes without relationships as empty lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fetched {
    /// (node space, key, properties in the mapping's order).
    pub nodes: Vec<(u16, i64, Option<Vec<Value>>)>,
    /// (list, key, adjacency).
    pub adjacency: Vec<(ListRef, i64, AdjacencyList)>,
    /// Rows received.
    pub rows: u64,
    /// Bytes of the values received.
    pub bytes: u64,
}

/// Decoded size of a value, for the byte counters.
pub fn value_bytes(value: &Value) -> u64 {
    match value {
        Value::String(s) => s.len() as u64,
        Value::Null => 1,
        _ => 8,
    }
}

/// The error for a backend that failed or went away.
pub fn unavailable(source: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::TransientError,
        format!("graph source `{source}`: {what}"),
    )
    .with_code("SourceUnavailable")
}

/// The error for data the backend returned that the mapping does not allow.
pub fn bad_data(source: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InputError,
        format!("graph source `{source}`: {what}"),
    )
    .with_code("SourceDataError")
}
