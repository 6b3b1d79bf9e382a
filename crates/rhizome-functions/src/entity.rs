//! Access to graph entities for entity functions and value printing.

use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use std::collections::BTreeMap;

/// Read access to the graph that node and relationship values refer to.
///
/// Implementations answer for the snapshot the query reads; an id that does
/// not exist (any more) should yield an `EntityNotFound` error. All methods
/// may be called concurrently from many workers (`Sync` is not required by
/// the trait, but a runtime sharing one instance needs it).
pub trait EntityAccess {
    /// The labels of `node`, in a stable order (the TCK prints them in this
    /// order).
    fn node_labels(&self, node: NodeId) -> Result<Vec<String>>;
    /// All properties of `node`.
    fn node_properties(&self, node: NodeId) -> Result<BTreeMap<String, Value>>;
    /// The type of `rel`.
    fn rel_type(&self, rel: RelId) -> Result<String>;
    /// The (start, end) nodes of `rel`, in its stored direction.
    fn rel_endpoints(&self, rel: RelId) -> Result<(NodeId, NodeId)>;
    /// All properties of `rel`.
    fn rel_properties(&self, rel: RelId) -> Result<BTreeMap<String, Value>>;

    /// The instant the current statement started, as UTC seconds and
    /// nanoseconds since the epoch: the clock of `date()`, `datetime()`,
    /// `*.statement()` and `*.transaction()`, so that every call in one
    /// statement sees the same time. `None` (the default) reads the system
    /// clock at each call; `*.realtime()` always does.
    fn statement_time(&self) -> Option<(i64, u32)> {
        None
    }
}

/// An [`EntityAccess`] for evaluation without a graph: every method fails
/// with `EntityNotFound`. Use it for constant folding and value-only tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGraph;

fn no_graph(what: &str) -> Error {
    Error::new(
        ErrorKind::EntityNotFound,
        format!("no graph is available to read {what}"),
    )
}

impl EntityAccess for NoGraph {
    fn node_labels(&self, node: NodeId) -> Result<Vec<String>> {
        Err(no_graph(&format!("the labels of node {node}")))
    }
    fn node_properties(&self, node: NodeId) -> Result<BTreeMap<String, Value>> {
        Err(no_graph(&format!("the properties of node {node}")))
    }
    fn rel_type(&self, rel: RelId) -> Result<String> {
        Err(no_graph(&format!("the type of relationship {rel}")))
    }
    fn rel_endpoints(&self, rel: RelId) -> Result<(NodeId, NodeId)> {
        Err(no_graph(&format!("the endpoints of relationship {rel}")))
    }
    fn rel_properties(&self, rel: RelId) -> Result<BTreeMap<String, Value>> {
        Err(no_graph(&format!("the properties of relationship {rel}")))
    }
}
