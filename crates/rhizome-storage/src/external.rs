//! The seam through which a graph that lives elsewhere (a PostgreSQL or
//! Redis *graph source*, crate `rhizome-sources`) is read by the same
//! planner and runtime as a native database.
//!
//! An external graph is wrapped in a [`Snapshot`](crate::Snapshot) by
//! [`Snapshot::over_external`](crate::Snapshot::over_external): the
//! snapshot's base is empty and its delta layer is marked changed, so every
//! read takes the snapshot's slow (delta) path, where it is answered by the
//! [`ExternalGraph`]. The native base-only path is untouched: no extra branch
//! and no dynamic call per row. Operators tell the snapshot which nodes a
//! chunk is about to read ([`Snapshot::prefetch_nodes`](crate::Snapshot::prefetch_nodes),
//! [`Snapshot::prefetch_adjacency`](crate::Snapshot::prefetch_adjacency)),
//! a no-op on native storage and one round trip per chunk on a source.
//!
//! The read methods are infallible like the rest of the read interface: an
//! external graph whose backend fails records the error, answers as if the
//! data were absent, and the query that read it fails with that error when
//! it ends (see `rhizome_sources::QueryGraph`).

use crate::catalog::{LabelId, PropertyKeyId, RelTypeId};
use crate::snapshot::{Direction, RelInfo};
use crate::stats::Statistics;
use rhizome_common::{NodeId, RelId, Value};
use std::ops::Range;

/// A read-only graph answered by something other than native storage, as
/// one query sees it. Ids, labels, types and keys are those of the catalog
/// given to [`Snapshot::over_external`](crate::Snapshot::over_external).
/// Every method may be called from many worker threads at once.
pub trait ExternalGraph: Send + Sync {
    /// What the graph is, for `EXPLAIN` and errors (e.g. "graph source
    /// `luxembourg-postgres` (PostgreSQL)").
    fn describe(&self) -> String;
    /// Statistics for the planner (estimates: sources have no exact counts).
    fn statistics(&self) -> &Statistics;
    /// True if `node` exists.
    fn node_exists(&self, node: NodeId) -> bool;
    /// Id ranges of the nodes carrying `label` (a label scan), sorted and
    /// disjoint.
    fn label_ranges(&self, label: LabelId) -> &[Range<NodeId>];
    /// Sorted labels of `node`.
    fn node_labels(&self, node: NodeId) -> &[LabelId];
    /// A property of a node, `Value::Null` if absent.
    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value;
    /// All properties of a node in key id order, appended to `out`.
    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>);
    /// Neighbours of `node` (sorted) and the parallel relationship ids.
    fn adjacency(&self, node: NodeId, rel_type: RelTypeId, dir: Direction)
        -> (&[NodeId], &[RelId]);
    /// Type and endpoints of a relationship this query has seen.
    fn relationship(&self, rel: RelId) -> Option<RelInfo>;
    /// A property of a relationship, `Value::Null` if absent.
    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value;
    /// All properties of a relationship in key id order, appended to `out`.
    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>);
    /// Nodes with `label` whose `key` equals `value`, if (label, key) is
    /// one of the graph's indexes (a node space's key).
    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>>;
    /// The nodes a chunk is about to read properties or labels of: fetch
    /// the missing ones in one round trip.
    fn prefetch_nodes(&self, nodes: &[NodeId]);
    /// The nodes a chunk is about to expand: fetch their missing adjacency
    /// lists of (`rel_type`, `dir`) in one round trip.
    fn prefetch_adjacency(&self, nodes: &[NodeId], rel_type: RelTypeId, dir: Direction);
    /// The graph as `Any`, so that procedures of the graph's own crate
    /// can reach its type (a source's statement options); `None` by
    /// default.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}
