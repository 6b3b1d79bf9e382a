//! The read interface: [`GraphRead`], and [`Snapshot`], its native implementation.
//!
//! A snapshot is one consistent state of a graph, an immutable handle that
//! every worker of a parallel query reads at once (`Send + Sync + Clone`,
//! cloning is a reference-count increment). Data comes in batches: node id
//! ranges for scans, whole adjacency slices for expansion, and
//! [`GraphRead::neighbours_batch`] for the neighbours of many nodes in one
//! call — the shape a remote source (PostgreSQL, Redis) answers in one round
//! trip. Later layers plug in behind the same trait: a delta layer of
//! committed writes overlays a base snapshot, external sources implement it
//! over their own fetchers (see `docs/architecture.md`).

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::ColumnView;
use crate::csr::Csr;
use crate::database::{RelView, Store};
use crate::index::PropertyIndex;
use crate::stats::Statistics;
use rhizome_common::{NodeId, RelId, Value};
use std::ops::{Bound, Range};
use std::sync::Arc;

/// Direction of a relationship relative to the node it is expanded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the node to its neighbour (`(n)-[r]->(m)`).
    Outgoing,
    /// From the neighbour to the node (`(n)<-[r]-(m)`).
    Incoming,
}

impl Direction {
    /// The opposite direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::Outgoing => Direction::Incoming,
            Direction::Incoming => Direction::Outgoing,
        }
    }
}

/// The relationships of one node of one type in one direction.
#[derive(Debug, Clone, Copy)]
pub struct Adjacency<'a> {
    /// Neighbour node ids, sorted.
    pub neighbours: &'a [NodeId],
    ids: RelIds<'a>,
}

/// How relationship ids of an [`Adjacency`] are found.
#[derive(Debug, Clone, Copy)]
enum RelIds<'a> {
    /// Outgoing: ids are `first..first + len`, and property rows `row..row + len`.
    Contiguous { first: RelId, row: usize },
    /// Incoming: outgoing positions through the permutation.
    Permuted { base: RelId, perm: &'a [u64] },
}

impl<'a> Adjacency<'a> {
    /// No relationships.
    pub const EMPTY: Adjacency<'static> = Adjacency {
        neighbours: &[],
        ids: RelIds::Contiguous { first: 0, row: 0 },
    };

    /// Number of relationships.
    #[inline]
    pub fn len(&self) -> usize {
        self.neighbours.len()
    }

    /// True if there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.neighbours.is_empty()
    }

    /// Id of the `i`-th relationship.
    #[inline]
    pub fn rel_id(&self, i: usize) -> RelId {
        match self.ids {
            RelIds::Contiguous { first, .. } => first + i as u64,
            RelIds::Permuted { base, perm } => base + perm[i],
        }
    }

    /// Row of the `i`-th relationship in its type's property columns.
    #[inline]
    pub fn property_row(&self, i: usize) -> u64 {
        match self.ids {
            RelIds::Contiguous { row, .. } => (row + i) as u64,
            RelIds::Permuted { perm, .. } => perm[i],
        }
    }

    /// For outgoing adjacency: the first property row, since rows are
    /// contiguous (`row..row + len`); `None` for incoming adjacency.
    #[inline]
    pub fn contiguous_rows(&self) -> Option<Range<usize>> {
        match self.ids {
            RelIds::Contiguous { row, .. } => Some(row..row + self.neighbours.len()),
            RelIds::Permuted { .. } => None,
        }
    }
}

/// A relationship's type and endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelInfo {
    /// Type.
    pub rel_type: RelTypeId,
    /// Start (source) node.
    pub start: NodeId,
    /// End (target) node.
    pub end: NodeId,
}

/// Neighbours of a batch of nodes, flattened: the relationships of
/// `nodes[i]` are entries `offsets[i]..offsets[i + 1]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NeighbourBatch {
    /// `nodes.len() + 1` offsets.
    pub offsets: Vec<usize>,
    /// Neighbour ids.
    pub neighbours: Vec<NodeId>,
    /// Relationship ids, parallel to `neighbours`.
    pub rels: Vec<RelId>,
}

impl NeighbourBatch {
    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        self.offsets.clear();
        self.neighbours.clear();
        self.rels.clear();
    }
}

/// Read access to one consistent state of a property graph.
///
/// Implementations are immutable views: every method may be called from any
/// number of threads at once and returns the same answer for the same
/// arguments for the lifetime of the value. Unknown ids (nodes, labels, keys)
/// read as absent, never as errors or panics.
pub trait GraphRead: Send + Sync {
    /// Names of labels, types and keys.
    fn catalog(&self) -> &Catalog;
    /// Statistics for the planner.
    fn statistics(&self) -> &Statistics;
    /// Every node id is below this bound.
    fn node_bound(&self) -> NodeId;
    /// True if `node` exists.
    fn node_exists(&self, node: NodeId) -> bool;
    /// Id ranges of the nodes carrying `label`, sorted and disjoint.
    fn label_ranges(&self, label: LabelId) -> Vec<Range<NodeId>>;
    /// Sorted label ids of `node`.
    fn node_labels(&self, node: NodeId) -> &[LabelId];
    /// True if `node` carries `label`.
    fn has_label(&self, node: NodeId, label: LabelId) -> bool;
    /// A property of a node, `Value::Null` if absent.
    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value;
    /// All properties of a node, in key id order, appended to `out`.
    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>);
    /// Relationships of `node` of type `rel_type` in direction `dir`.
    fn neighbours_batch(
        &self,
        nodes: &[NodeId],
        rel_type: RelTypeId,
        dir: Direction,
        out: &mut NeighbourBatch,
    );
    /// Type and endpoints of a relationship, `None` if it does not exist.
    fn relationship(&self, rel: RelId) -> Option<RelInfo>;
    /// A property of a relationship, `Value::Null` if absent.
    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value;
    /// All properties of a relationship, in key id order, appended to `out`.
    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>);
    /// Nodes with `label` whose `key` equals `value`, if an index covers (label, key).
    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>>;
}

/// The native snapshot over memory-mapped segments.
#[derive(Clone)]
pub struct Snapshot {
    store: Arc<Store>,
}

impl Snapshot {
    pub(crate) fn new(store: Arc<Store>) -> Snapshot {
        Snapshot { store }
    }

    fn rel_view(&self, rel_type: RelTypeId) -> Option<&RelView> {
        self.store
            .rels
            .get(rel_type as usize)
            .and_then(|r| r.as_ref())
    }

    fn group_of(&self, node: NodeId) -> Option<&crate::database::GroupView> {
        let groups = &self.store.groups;
        let i = groups.partition_point(|g| g.start <= node);
        let g = groups.get(i.checked_sub(1)?)?;
        (node < g.start + g.count).then_some(g)
    }

    /// The adjacency of one node, without copying (the hot path of expand).
    #[inline]
    pub fn adjacency(&self, node: NodeId, rel_type: RelTypeId, dir: Direction) -> Adjacency<'_> {
        let Some(view) = self.rel_view(rel_type) else {
            return Adjacency::EMPTY;
        };
        match dir {
            Direction::Outgoing => {
                let positions = view.outgoing.positions(node);
                Adjacency {
                    neighbours: &view.outgoing.all_neighbours()[positions.clone()],
                    ids: RelIds::Contiguous {
                        first: view.base + positions.start as u64,
                        row: positions.start,
                    },
                }
            }
            Direction::Incoming => {
                let positions = view.incoming.positions(node);
                let perm = view.incoming.perm().unwrap_or(&[]);
                Adjacency {
                    neighbours: &view.incoming.all_neighbours()[positions.clone()],
                    ids: RelIds::Permuted {
                        base: view.base,
                        perm: perm.get(positions).unwrap_or(&[]),
                    },
                }
            }
        }
    }

    /// Degree of `node` for one type and direction, without touching the neighbours.
    #[inline]
    pub fn degree(&self, node: NodeId, rel_type: RelTypeId, dir: Direction) -> u64 {
        self.csr(rel_type, dir).map_or(0, |c| c.degree(node))
    }

    /// The raw CSR of a type and direction (for reference loops and bulk operators).
    pub fn csr(&self, rel_type: RelTypeId, dir: Direction) -> Option<Csr<'_>> {
        self.rel_view(rel_type).map(|v| match dir {
            Direction::Outgoing => v.outgoing,
            Direction::Incoming => v.incoming,
        })
    }

    /// The property column of a relationship type, rows in outgoing order
    /// (row = [`Adjacency::property_row`]).
    pub fn rel_column(&self, rel_type: RelTypeId, key: PropertyKeyId) -> Option<&ColumnView<'_>> {
        self.rel_view(rel_type)?.columns.get(key as usize)?.as_ref()
    }

    /// The property column covering `node` and its row in it.
    pub fn node_column(&self, node: NodeId, key: PropertyKeyId) -> Option<(&ColumnView<'_>, u64)> {
        let g = self.group_of(node)?;
        let column = g.columns.get(key as usize)?.as_ref()?;
        Some((column, node - g.start))
    }

    /// The index on (`label`, `key`), if one exists.
    pub fn index(&self, label: LabelId, key: PropertyKeyId) -> Option<PropertyIndex<'_>> {
        self.store
            .indexes
            .iter()
            .find(|i| i.label == label && i.key == key)
            .copied()
    }

    /// All indexes.
    pub fn indexes(&self) -> &[PropertyIndex<'_>] {
        &self.store.indexes
    }

    /// Nodes with `label` whose `key` lies within the bounds, if indexed, in value order.
    pub fn index_range(
        &self,
        label: LabelId,
        key: PropertyKeyId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Option<&[NodeId]> {
        let index = self.index(label, key)?;
        Some(index.range(lower, upper, &|n| self.node_property(n, key)))
    }

    /// Label ranges without allocating.
    pub fn label_range_slice(&self, label: LabelId) -> &[Range<NodeId>] {
        self.store.labels.ranges(label)
    }

    /// Relationship types with relationships, as (type, first id, count).
    pub fn rel_type_ranges(&self) -> impl Iterator<Item = (RelTypeId, RelId, u64)> + '_ {
        self.store
            .rels
            .iter()
            .flatten()
            .map(|r| (r.rel_type, r.base, r.count))
    }
}

impl GraphRead for Snapshot {
    fn catalog(&self) -> &Catalog {
        &self.store.manifest.catalog
    }

    fn statistics(&self) -> &Statistics {
        &self.store.manifest.statistics
    }

    fn node_bound(&self) -> NodeId {
        self.store.manifest.node_bound
    }

    fn node_exists(&self, node: NodeId) -> bool {
        node < self.node_bound()
    }

    fn label_ranges(&self, label: LabelId) -> Vec<Range<NodeId>> {
        self.store.labels.ranges(label).to_vec()
    }

    fn node_labels(&self, node: NodeId) -> &[LabelId] {
        self.store.labels.labels_of(node)
    }

    fn has_label(&self, node: NodeId, label: LabelId) -> bool {
        self.store.labels.has_label(node, label)
    }

    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value {
        self.node_column(node, key)
            .map_or(Value::Null, |(c, row)| c.get(row))
    }

    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>) {
        if let Some(g) = self.group_of(node) {
            for (key, column) in g.columns.iter().enumerate() {
                if let Some(column) = column {
                    let v = column.get(node - g.start);
                    if !v.is_null() {
                        out.push((key as PropertyKeyId, v));
                    }
                }
            }
        }
    }

    fn neighbours_batch(
        &self,
        nodes: &[NodeId],
        rel_type: RelTypeId,
        dir: Direction,
        out: &mut NeighbourBatch,
    ) {
        out.clear();
        out.offsets.push(0);
        for &node in nodes {
            let adj = self.adjacency(node, rel_type, dir);
            out.neighbours.extend_from_slice(adj.neighbours);
            out.rels.extend((0..adj.len()).map(|i| adj.rel_id(i)));
            out.offsets.push(out.neighbours.len());
        }
    }

    fn relationship(&self, rel: RelId) -> Option<RelInfo> {
        let view = self
            .store
            .rels
            .iter()
            .flatten()
            .find(|r| rel >= r.base && rel < r.base + r.count)?;
        let p = (rel - view.base) as usize;
        Some(RelInfo {
            rel_type: view.rel_type,
            start: view.outgoing.owner_of(p)?,
            end: *view.outgoing.all_neighbours().get(p)?,
        })
    }

    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value {
        let Some(view) = self
            .store
            .rels
            .iter()
            .flatten()
            .find(|r| rel >= r.base && rel < r.base + r.count)
        else {
            return Value::Null;
        };
        match view.columns.get(key as usize) {
            Some(Some(column)) => column.get(rel - view.base),
            _ => Value::Null,
        }
    }

    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>) {
        let Some(view) = self
            .store
            .rels
            .iter()
            .flatten()
            .find(|r| rel >= r.base && rel < r.base + r.count)
        else {
            return;
        };
        for (key, column) in view.columns.iter().enumerate() {
            if let Some(column) = column {
                let v = column.get(rel - view.base);
                if !v.is_null() {
                    out.push((key as PropertyKeyId, v));
                }
            }
        }
    }

    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>> {
        let index = self.index(label, key)?;
        let mut nodes = index.seek(value, &|n| self.node_property(n, key)).to_vec();
        nodes.sort_unstable();
        Some(nodes)
    }
}
