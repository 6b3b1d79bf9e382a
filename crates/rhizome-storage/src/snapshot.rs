//! The read interface: [`GraphRead`], and [`Snapshot`], its native implementation.
//!
//! A snapshot is one consistent state of a graph, an immutable handle that
//! every worker of a parallel query reads at once (`Send + Sync + Clone`,
//! cloning is a reference-count increment). Data comes in batches: node id
//! ranges for scans, whole adjacency slices for expansion, and
//! [`GraphRead::neighbours_batch`] for the neighbours of many nodes in one
//! call — the shape a remote source (PostgreSQL, Redis) answers in one round
//! trip. Other layers plug in behind the same handle: a delta layer of
//! committed writes overlays a base snapshot, and graph sources answer the
//! reads of a snapshot made by [`Snapshot::over_external`] through
//! [`crate::external::ExternalGraph`] (see `docs/architecture.md`).

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::ColumnView;
use crate::csr::{BackLinks, Csr, Ranks};
use crate::database::{GroupView, RelView, Store};
use crate::delta::{get_prop, Delta, IndexValue};
use crate::external::ExternalGraph;
use crate::index::{index_order, PropertyIndex};
use crate::nodelist::NodeList;
use crate::schema::{IndexDef, Schema};
use crate::stats::Statistics;
use rhizome_common::{NodeId, RelId, Value};
use std::borrow::Cow;
use std::ops::{Bound, ControlFlow, Range};
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
    neighbours: NodeList<'a>,
    ids: RelIds<'a>,
}

/// How relationship ids of an [`Adjacency`] are found.
#[derive(Debug, Clone, Copy)]
enum RelIds<'a> {
    /// Outgoing: ids are `first..first + len`, and property rows `row..row + len`.
    Contiguous { first: RelId, row: usize },
    /// Incoming: outgoing positions from each entry's rank in its source's list.
    Ranked { base: RelId, back: BackLinks<'a> },
    /// A list from the delta layer: explicit ids; base relationships of the
    /// type (ids `base..base + count`) keep their property rows.
    Listed {
        rels: &'a [RelId],
        base: RelId,
        count: u64,
    },
}

impl<'a> Adjacency<'a> {
    /// No relationships.
    pub const EMPTY: Adjacency<'static> = Adjacency {
        neighbours: NodeList::EMPTY,
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

    /// A list from the delta layer: neighbours and relationship ids of
    /// equal length, sorted by (neighbour, id); base relationships of the
    /// type have ids `base..base + count`.
    pub(crate) fn listed(
        neighbours: &'a [NodeId],
        rels: &'a [RelId],
        base: RelId,
        count: u64,
    ) -> Adjacency<'a> {
        Adjacency {
            neighbours: NodeList::Wide(neighbours),
            ids: RelIds::Listed { rels, base, count },
        }
    }

    /// The neighbour node ids, sorted.
    #[inline(always)]
    pub fn neighbours(&self) -> NodeList<'a> {
        self.neighbours
    }

    /// The `i`-th neighbour. Panics if `i >= len()`, like indexing a slice.
    #[inline(always)]
    pub fn neighbour(&self, i: usize) -> NodeId {
        self.neighbours.get(i)
    }

    /// Id of the `i`-th relationship.
    #[inline]
    pub fn rel_id(&self, i: usize) -> RelId {
        match self.ids {
            RelIds::Contiguous { first, .. } => first + i as u64,
            RelIds::Ranked { base, back } => {
                base.wrapping_add(back.position(i, self.neighbours.get(i)))
            }
            RelIds::Listed { rels, .. } => rels[i],
        }
    }

    /// Row of the `i`-th relationship in its type's property columns
    /// ([`Snapshot::rel_column`]). Meaningful only while that column is
    /// available: a relationship created since the last checkpoint has no
    /// row (`u64::MAX`).
    #[inline]
    pub fn property_row(&self, i: usize) -> u64 {
        match self.ids {
            RelIds::Contiguous { row, .. } => (row + i) as u64,
            RelIds::Ranked { back, .. } => back.position(i, self.neighbours.get(i)),
            RelIds::Listed { rels, base, count } => {
                let r = rels[i];
                if r >= base && r < base + count {
                    r - base
                } else {
                    u64::MAX
                }
            }
        }
    }

    /// Calls `f(i, neighbour, relationship id)` for the entries in order
    /// until it breaks, and returns where it broke. One loop is compiled
    /// per way a list is stored (32-bit ids with consecutive relationship
    /// ids, with ranks of each width, or a delta list), so no entry
    /// branches on it; an incoming entry's id reads its source's outgoing
    /// offset, which the loop requests [`Adjacency::PREFETCH_AHEAD`]
    /// entries early.
    #[inline(always)]
    pub fn try_for_each<B>(
        &self,
        mut f: impl FnMut(usize, NodeId, RelId) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        match (self.neighbours, self.ids) {
            (NodeList::Narrow(ids), RelIds::Contiguous { first, .. }) => {
                for (i, &n) in ids.iter().enumerate() {
                    f(i, n as NodeId, first + i as u64)?;
                }
                ControlFlow::Continue(())
            }
            (NodeList::Narrow(ids), RelIds::Ranked { base, back }) => match back.ranks() {
                Ranks::U8(ranks) => ranked_for_each(ids, ranks, base, &back, f),
                Ranks::U16(ranks) => ranked_for_each(ids, ranks, base, &back, f),
                Ranks::U32(ranks) => ranked_for_each(ids, ranks, base, &back, f),
                Ranks::U64(ranks) => ranked_for_each(ids, ranks, base, &back, f),
            },
            (NodeList::Wide(ids), RelIds::Listed { rels, .. }) => {
                for (i, (&n, &r)) in ids.iter().zip(rels).enumerate() {
                    f(i, n, r)?;
                }
                ControlFlow::Continue(())
            }
            _ => {
                for i in 0..self.len() {
                    f(i, self.neighbour(i), self.rel_id(i))?;
                }
                ControlFlow::Continue(())
            }
        }
    }

    /// How many entries ahead [`Adjacency::try_for_each`] requests an
    /// incoming entry's source offset.
    pub const PREFETCH_AHEAD: usize = 8;

    /// For outgoing adjacency: the first property row, since rows are
    /// contiguous (`row..row + len`); `None` for incoming adjacency.
    #[inline]
    pub fn contiguous_rows(&self) -> Option<Range<usize>> {
        match self.ids {
            RelIds::Contiguous { row, .. } => Some(row..row + self.neighbours.len()),
            RelIds::Ranked { .. } | RelIds::Listed { .. } => None,
        }
    }
}

/// [`Adjacency::try_for_each`] over an incoming base list whose ranks are
/// stored as `R`.
#[inline(always)]
fn ranked_for_each<R: Copy + Into<u64>, B>(
    ids: &[u32],
    ranks: &[R],
    base: RelId,
    back: &BackLinks<'_>,
    mut f: impl FnMut(usize, NodeId, RelId) -> ControlFlow<B>,
) -> ControlFlow<B> {
    for (i, (&n, &rank)) in ids.iter().zip(ranks).enumerate() {
        if let Some(&ahead) = ids.get(i + Adjacency::PREFETCH_AHEAD) {
            back.prefetch_source(ahead as NodeId);
        }
        let position = back.source_offset(n as NodeId).saturating_add(rank.into());
        f(i, n as NodeId, base.wrapping_add(position))?;
    }
    ControlFlow::Continue(())
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

/// Base-only reads (the state of the last checkpoint).
impl Store {
    pub(crate) fn rel_view(&self, rel_type: RelTypeId) -> Option<&RelView> {
        self.rels.get(rel_type as usize).and_then(|r| r.as_ref())
    }

    fn rel_view_of(&self, rel: RelId) -> Option<&RelView> {
        self.rels
            .iter()
            .flatten()
            .find(|r| rel >= r.base && rel < r.base + r.count)
    }

    fn group_of(&self, node: NodeId) -> Option<&GroupView> {
        let i = self.groups.partition_point(|g| g.start <= node);
        let g = self.groups.get(i.checked_sub(1)?)?;
        (node < g.start + g.count).then_some(g)
    }

    #[inline]
    pub(crate) fn adjacency(
        &self,
        node: NodeId,
        rel_type: RelTypeId,
        dir: Direction,
    ) -> Adjacency<'_> {
        let Some(view) = self.rel_view(rel_type) else {
            return Adjacency::EMPTY;
        };
        match dir {
            Direction::Outgoing => {
                let positions = view.outgoing.positions(node);
                Adjacency {
                    neighbours: NodeList::Narrow(
                        &view.outgoing.all_neighbours()[positions.clone()],
                    ),
                    ids: RelIds::Contiguous {
                        first: view.base + positions.start as u64,
                        row: positions.start,
                    },
                }
            }
            Direction::Incoming => {
                let positions = view.incoming.positions(node);
                let neighbours =
                    NodeList::Narrow(&view.incoming.all_neighbours()[positions.clone()]);
                match view.incoming.back_links() {
                    Some(back) => Adjacency {
                        neighbours,
                        ids: RelIds::Ranked {
                            base: view.base,
                            back: back.slice(positions),
                        },
                    },
                    None => Adjacency::EMPTY,
                }
            }
        }
    }

    pub(crate) fn relationship(&self, rel: RelId) -> Option<RelInfo> {
        let view = self.rel_view_of(rel)?;
        let p = (rel - view.base) as usize;
        Some(RelInfo {
            rel_type: view.rel_type,
            start: view.outgoing.owner_of(p)?,
            end: *view.outgoing.all_neighbours().get(p)? as NodeId,
        })
    }

    pub(crate) fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value {
        let Some(view) = self.rel_view_of(rel) else {
            return Value::Null;
        };
        match view.columns.get(key as usize) {
            Some(Some(column)) => column.get(rel - view.base),
            _ => Value::Null,
        }
    }

    pub(crate) fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>) {
        let Some(view) = self.rel_view_of(rel) else {
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

    pub(crate) fn node_column(
        &self,
        node: NodeId,
        key: PropertyKeyId,
    ) -> Option<(&ColumnView<'_>, u64)> {
        let g = self.group_of(node)?;
        let column = g.columns.get(key as usize)?.as_ref()?;
        Some((column, node - g.start))
    }

    /// See [`Snapshot::node_property_int`].
    #[inline]
    pub(crate) fn node_int(&self, node: NodeId, key: PropertyKeyId) -> Option<Option<i64>> {
        match self.node_column(node, key) {
            Some((column, row)) => column.int_at(row),
            None => Some(None),
        }
    }

    pub(crate) fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value {
        self.node_column(node, key)
            .map_or(Value::Null, |(c, row)| c.get(row))
    }

    pub(crate) fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>) {
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

    pub(crate) fn index(&self, label: LabelId, key: PropertyKeyId) -> Option<PropertyIndex<'_>> {
        self.indexes
            .iter()
            .find(|i| i.label == label && i.key == key)
            .copied()
    }
}

/// A consistent state of a native database: the immutable base (memory-mapped
/// segment) plus one version of the delta layer (changes since the last
/// checkpoint). Cloning is two reference-count increments; every clone reads
/// the same state forever. When the delta is empty every read takes the
/// base-only path, exactly as fast as a database that was never written to.
#[derive(Clone)]
pub struct Snapshot {
    store: Arc<Store>,
    delta: Arc<Delta>,
    /// Set for a snapshot over a graph source ([`Snapshot::over_external`]):
    /// its delta is then marked changed, so only the slow (delta) paths
    /// look here and the native base-only path never does.
    external: Option<Arc<dyn ExternalGraph>>,
}

impl Snapshot {
    pub(crate) fn new(store: Arc<Store>, delta: Arc<Delta>) -> Snapshot {
        Snapshot {
            store,
            delta,
            external: None,
        }
    }

    /// A snapshot that reads `graph` (a graph source) through the same
    /// interface as native storage, with the names of `catalog` and the
    /// indexes `indexes` (which the source answers by key lookups).
    /// `empty` is a snapshot of an empty native database, which supplies
    /// the (unused) base. Such a snapshot is read-only: writing through it
    /// is refused before it starts (see `rhizome_sources`).
    pub fn over_external(
        empty: &Snapshot,
        catalog: Catalog,
        indexes: Vec<IndexDef>,
        graph: Arc<dyn ExternalGraph>,
    ) -> Snapshot {
        let types = catalog.rel_types.len();
        let schema = Schema {
            indexes,
            ..Schema::default()
        };
        let mut delta = Delta::empty(Arc::new(catalog), 0, 0, schema, &[]);
        // Marked changed so that every read takes the delta path, where the
        // external graph answers; every type counts as changed so that no
        // operator reads the (empty) base CSR or columns.
        delta.changed = true;
        delta.node_bound = NodeId::MAX;
        delta.types_touched = vec![true; types];
        Snapshot {
            store: empty.store.clone(),
            delta: Arc::new(delta),
            external: Some(graph),
        }
    }

    /// The graph source this snapshot reads, if it is not native.
    pub fn external(&self) -> Option<&Arc<dyn ExternalGraph>> {
        self.external.as_ref()
    }

    /// Tells the snapshot that properties or labels of `nodes` are about to
    /// be read: nothing on native storage, one round trip for the missing
    /// ones on a graph source.
    #[inline]
    pub fn prefetch_nodes(&self, nodes: &[NodeId]) {
        if let Some(x) = &self.external {
            x.prefetch_nodes(nodes);
        }
    }

    /// Tells the snapshot that `nodes` are about to be expanded over
    /// (`rel_type`, `dir`): nothing on native storage, one round trip for
    /// the missing adjacency lists on a graph source.
    #[inline]
    pub fn prefetch_adjacency(&self, nodes: &[NodeId], rel_type: RelTypeId, dir: Direction) {
        if let Some(x) = &self.external {
            x.prefetch_adjacency(nodes, rel_type, dir);
        }
    }

    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(crate) fn delta(&self) -> &Arc<Delta> {
        &self.delta
    }

    /// True if `other` views the very same state as this one: the same base
    /// segment and the same changes since it, known by identity (O(1)). A
    /// write transaction begun after a read of `self` whose own snapshot is
    /// the same state missed no commit in between; a commit, a checkpoint
    /// or another process's write in between gives a different state.
    pub fn same_state(&self, other: &Snapshot) -> bool {
        Arc::ptr_eq(&self.store, &other.store)
            && Arc::ptr_eq(&self.delta, &other.delta)
            && self.external.is_none()
            && other.external.is_none()
    }

    /// The delta for writing (copied first if shared).
    pub(crate) fn delta_mut(&mut self) -> &mut Delta {
        Arc::make_mut(&mut self.delta)
    }

    /// True if this state has no changes over its base segment (nothing
    /// written since the last checkpoint).
    #[inline]
    pub fn is_base_only(&self) -> bool {
        self.delta.is_empty()
    }

    /// True if `node` was created, deleted or changed since the last checkpoint.
    #[inline]
    fn touched(&self, node: NodeId) -> bool {
        self.delta.nodes.get(node).is_some()
    }

    /// The adjacency of one node, without copying (the hot path of expand).
    /// Neighbours are sorted; with changes since the last checkpoint the list
    /// comes from the delta layer for the nodes whose relationships changed.
    #[inline]
    pub fn adjacency(&self, node: NodeId, rel_type: RelTypeId, dir: Direction) -> Adjacency<'_> {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                let (neighbours, rels) = x.adjacency(node, rel_type, dir);
                return Adjacency::listed(neighbours, rels, 0, 0);
            }
            if let Some((neighbours, rels)) =
                self.delta.adj(rel_type, dir == Direction::Outgoing, node)
            {
                let (base, count) = self
                    .store
                    .rel_view(rel_type)
                    .map_or((0, 0), |v| (v.base, v.count));
                return Adjacency::listed(neighbours, rels, base, count);
            }
        }
        self.store.adjacency(node, rel_type, dir)
    }

    /// Degree of `node` for one type and direction, without touching the neighbours.
    #[inline]
    pub fn degree(&self, node: NodeId, rel_type: RelTypeId, dir: Direction) -> u64 {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.adjacency(node, rel_type, dir).0.len() as u64;
            }
            if let Some((neighbours, _)) =
                self.delta.adj(rel_type, dir == Direction::Outgoing, node)
            {
                return neighbours.len() as u64;
            }
        }
        self.store.rel_view(rel_type).map_or(0, |v| match dir {
            Direction::Outgoing => v.outgoing.degree(node),
            Direction::Incoming => v.incoming.degree(node),
        })
    }

    /// True if relationships of `rel_type` were created, deleted or changed
    /// since the last checkpoint: then [`Snapshot::csr`] and
    /// [`Snapshot::rel_column`] are `None` for it and readers must go through
    /// [`Snapshot::adjacency`] and [`GraphRead::rel_property`].
    #[inline]
    pub fn rel_type_changed(&self, rel_type: RelTypeId) -> bool {
        !self.delta.is_empty() && self.delta.type_touched(rel_type)
    }

    /// The raw base CSR of a type and direction (for reference loops and bulk
    /// operators); `None` if the type has no base relationships or
    /// [`Snapshot::rel_type_changed`].
    pub fn csr(&self, rel_type: RelTypeId, dir: Direction) -> Option<Csr<'_>> {
        if self.rel_type_changed(rel_type) {
            return None;
        }
        self.store.rel_view(rel_type).map(|v| match dir {
            Direction::Outgoing => v.outgoing,
            Direction::Incoming => v.incoming,
        })
    }

    /// The property column of a relationship type, rows in outgoing order
    /// (row = [`Adjacency::property_row`]); `None` if no base relationship of
    /// the type has the key, or if [`Snapshot::rel_type_changed`] (the column
    /// would not be authoritative: read [`GraphRead::rel_property`] instead).
    pub fn rel_column(&self, rel_type: RelTypeId, key: PropertyKeyId) -> Option<&ColumnView<'_>> {
        if self.rel_type_changed(rel_type) {
            return None;
        }
        self.store
            .rel_view(rel_type)?
            .columns
            .get(key as usize)?
            .as_ref()
    }

    /// The base property column covering `node` and its row in it; `None`
    /// when the node has no base column for `key` or the node changed since
    /// the last checkpoint (read [`GraphRead::node_property`] instead).
    pub fn node_column(&self, node: NodeId, key: PropertyKeyId) -> Option<(&ColumnView<'_>, u64)> {
        if !self.delta.is_empty() && (self.external.is_some() || self.touched(node)) {
            return None;
        }
        self.store.node_column(node, key)
    }

    /// The base (segment) index on (`label`, `key`), if one exists and was
    /// not dropped. It reflects the last checkpoint only (entries of nodes
    /// changed since are stale): read through [`GraphRead::index_seek`] and
    /// [`Snapshot::index_range`], which merge the changes. Indexes created
    /// since the last checkpoint have no base part: use
    /// [`Snapshot::has_index`] to ask whether seeks are indexed.
    pub fn index(&self, label: LabelId, key: PropertyKeyId) -> Option<PropertyIndex<'_>> {
        if !self.delta.is_empty() && !self.delta.schema.has_index(label, key) {
            return None;
        }
        self.store.index(label, key)
    }

    /// True if (`label`, `key`) is indexed in this state (base or created since).
    pub fn has_index(&self, label: LabelId, key: PropertyKeyId) -> bool {
        self.delta.schema.has_index(label, key)
    }

    /// Indexes and uniqueness constraints of this state (for `SHOW INDEXES`
    /// and `SHOW CONSTRAINTS`; names through [`GraphRead::catalog`]).
    pub fn schema(&self) -> &Schema {
        &self.delta.schema
    }

    /// All base (segment) indexes, as of the last checkpoint.
    pub fn indexes(&self) -> &[PropertyIndex<'_>] {
        &self.store.indexes
    }

    /// Nodes with `label` whose `key` lies within the bounds, if indexed, in
    /// value order. Borrowed from the segment when nothing changed since the
    /// last checkpoint, computed otherwise.
    pub fn index_range(
        &self,
        label: LabelId,
        key: PropertyKeyId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Option<Cow<'_, [NodeId]>> {
        if self.delta.is_empty() {
            let index = self.store.index(label, key)?;
            return Some(Cow::Borrowed(
                index.range(lower, upper, &|n| self.store.node_property(n, key)),
            ));
        }
        if let (Bound::Included(a), Bound::Included(b)) = (lower, upper) {
            if let Some(x) = &self.external {
                return (std::ptr::eq(a, b) || a == b)
                    .then(|| x.index_seek(label, key, a).map(Cow::Owned))
                    .flatten();
            }
            if std::ptr::eq(a, b) || a == b {
                return self.delta_index_equal(label, key, a);
            }
        }
        if self.external.is_some() {
            return None;
        }
        self.delta_index_range(label, key, lower, upper)
            .map(|v| Cow::Owned(v.into_iter().map(|(_, n)| n).collect()))
    }

    /// Base entries of untouched nodes and the delta's entries equal to
    /// `value`, in node order: the seek of one value, without reading the
    /// values of the nodes found, and borrowed from the base index when the
    /// delta changes nothing about the value.
    fn delta_index_equal(
        &self,
        label: LabelId,
        key: PropertyKeyId,
        value: &Value,
    ) -> Option<Cow<'_, [NodeId]>> {
        let def = IndexDef { label, key };
        let set = self.delta.index_sets.iter().find(|s| s.def == def)?;
        let found = match self.store.index(label, key).filter(|_| set.base) {
            Some(index) => index.range(Bound::Included(value), Bound::Included(value), &|n| {
                self.store.node_property(n, key)
            }),
            None => &[],
        };
        let in_delta = set.may_hold(value);
        if !in_delta && found.iter().all(|&n| !self.touched(n)) {
            return Some(Cow::Borrowed(found));
        }
        let mut out: Vec<NodeId> = found
            .iter()
            .copied()
            .filter(|&n| !self.touched(n))
            .collect();
        let from_base = out.len();
        if in_delta {
            // Seek by seek (no iterator state to allocate): usually one hit.
            let mut key = (IndexValue(value.clone()), 0);
            while let Some((v, n)) = set.entries.get_next(&key) {
                if *v != key.0 {
                    break;
                }
                out.push(*n);
                let Some(next) = n.checked_add(1) else { break };
                key.1 = next;
            }
        }
        if from_base > 0 && out.len() > from_base {
            out.sort_unstable();
        }
        Some(Cow::Owned(out))
    }

    /// Base entries of untouched nodes merged with the delta's entries, in value order.
    fn delta_index_range(
        &self,
        label: LabelId,
        key: PropertyKeyId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Option<Vec<(Value, NodeId)>> {
        let def = IndexDef { label, key };
        let set = self.delta.index_sets.iter().find(|s| s.def == def)?;
        let mut base: Vec<(Value, NodeId)> = Vec::new();
        if set.base {
            if let Some(index) = self.store.index(label, key) {
                let value_of = |n| self.store.node_property(n, key);
                for &n in index.range(lower, upper, &value_of) {
                    if !self.touched(n) {
                        base.push((value_of(n), n));
                    }
                }
            }
        }
        let lo = match lower {
            Bound::Included(v) => Bound::Included((IndexValue(v.clone()), 0)),
            Bound::Excluded(v) => Bound::Excluded((IndexValue(v.clone()), u64::MAX)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let hi = match upper {
            Bound::Included(v) => Bound::Included((IndexValue(v.clone()), u64::MAX)),
            Bound::Excluded(v) => Bound::Excluded((IndexValue(v.clone()), 0)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let empty_range = match (&lo, &hi) {
            (Bound::Included(a), Bound::Included(b)) => a > b,
            (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b))
            | (Bound::Excluded(a), Bound::Included(b)) => a >= b,
            _ => false,
        };
        let mut out = Vec::with_capacity(base.len());
        if empty_range {
            return Some(base);
        }
        let mut delta = set.entries.range((lo, hi)).peekable();
        let mut base = base.into_iter().peekable();
        loop {
            let take_base = match (base.peek(), delta.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(b), Some(d)) => index_order(&b.0, &d.0 .0).then(b.1.cmp(&d.1)).is_le(),
            };
            if take_base {
                out.extend(base.next());
            } else if let Some((v, n)) = delta.next() {
                out.push((v.0.clone(), *n));
            }
        }
        Some(out)
    }

    /// Label ranges without allocating (computed once per state when nodes changed).
    pub fn label_range_slice(&self, label: LabelId) -> &[Range<NodeId>] {
        if self.delta.is_empty() {
            return self.store.labels.ranges(label);
        }
        if let Some(x) = &self.external {
            return x.label_ranges(label);
        }
        let cache = self.delta.label_cache.get_or_init(|| {
            (0..self.delta.catalog.labels.len())
                .map(|_| std::sync::OnceLock::new())
                .collect()
        });
        match cache.get(label as usize) {
            Some(cell) => cell.get_or_init(|| self.compute_label_ranges(label)),
            None => &[],
        }
    }

    fn compute_label_ranges(&self, label: LabelId) -> Vec<Range<NodeId>> {
        let base = self.store.labels.ranges(label);
        let Some(changes) = self.delta.label_changes.get(label as usize) else {
            return base.to_vec();
        };
        if changes.added.is_empty() && changes.removed.is_empty() {
            return base.to_vec();
        }
        let mut ranges: Vec<Range<NodeId>> = Vec::new();
        let mut removed = changes.removed.iter().copied().peekable();
        for r in base {
            let mut start = r.start;
            while let Some(&x) = removed.peek() {
                if x >= r.end {
                    break;
                }
                removed.next();
                if x >= start {
                    if x > start {
                        ranges.push(start..x);
                    }
                    start = x + 1;
                }
            }
            if start < r.end {
                ranges.push(start..r.end);
            }
        }
        ranges.extend(changes.added.iter().map(|(&s, &e)| s..e));
        ranges.sort_by_key(|r| r.start);
        let mut out: Vec<Range<NodeId>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => out.push(r),
            }
        }
        out
    }

    /// Id ranges of the nodes that exist (all of `0..node_bound` unless nodes
    /// were deleted since the last checkpoint). All-node scans should use
    /// these rather than `0..node_bound`.
    #[allow(clippy::single_range_in_vec_init)]
    pub fn node_ranges(&self) -> Cow<'_, [Range<NodeId>]> {
        let bound = self.delta.node_bound;
        if let Some(x) = &self.external {
            let mut all: Vec<Range<NodeId>> = (0..self.delta.catalog.labels.len() as LabelId)
                .flat_map(|l| x.label_ranges(l).iter().cloned())
                .collect();
            all.sort_by_key(|r| r.start);
            // A node of several labels is in several labels' ranges: once here.
            let mut merged: Vec<Range<NodeId>> = Vec::with_capacity(all.len());
            for r in all {
                match merged.last_mut() {
                    Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                    _ => merged.push(r),
                }
            }
            return Cow::Owned(merged);
        }
        if self.delta.is_empty() || self.delta.deleted_nodes.is_empty() {
            return Cow::Owned(if bound > 0 {
                vec![0..bound]
            } else {
                Vec::new()
            });
        }
        Cow::Borrowed(self.delta.node_ranges_cache.get_or_init(|| {
            let mut out = Vec::new();
            let mut start = 0;
            for &id in &self.delta.deleted_nodes {
                if id > start {
                    out.push(start..id);
                }
                start = id + 1;
            }
            if start < bound {
                out.push(start..bound);
            }
            out
        }))
    }

    /// Relationship id ranges per type, as (type, first id, count). Base
    /// relationships come first, one range per type; relationships created
    /// since the last checkpoint follow as runs of consecutive ids of one
    /// type. Ids inside a range may have been deleted since the last
    /// checkpoint: check [`GraphRead::relationship`] when the delta is not empty.
    pub fn rel_type_ranges(&self) -> impl Iterator<Item = (RelTypeId, RelId, u64)> + '_ {
        let base = self
            .store
            .rels
            .iter()
            .flatten()
            .map(|r| (r.rel_type, r.base, r.count));
        base.chain(self.delta.rel_runs().iter().copied())
    }
}

/// Delta-aware reads for operators that otherwise use the raw base arrays.
impl Snapshot {
    /// `node`'s property `key` if it is an integer, read without building a
    /// [`Value`]: `Some(None)` if the node has no such property (or does not
    /// exist), `None` if the value has another type (read it with
    /// [`GraphRead::node_property`]). Agrees with `node_property` always.
    #[inline]
    pub fn node_property_int(&self, node: NodeId, key: PropertyKeyId) -> Option<Option<i64>> {
        if !self.delta.is_empty()
            && (self.external.is_some() || self.delta.nodes.get(node).is_some())
        {
            return match self.node_property(node, key) {
                Value::Int(x) => Some(Some(x)),
                Value::Null => Some(None),
                _ => None,
            };
        }
        self.store.node_int(node, key)
    }

    /// `node`'s property `key` if it is a float, like
    /// [`Snapshot::node_property_int`]: `Some(None)` if the node has no
    /// such property (or does not exist), `None` if the value has another
    /// type. Agrees with `node_property` always.
    #[inline]
    pub fn node_property_float(&self, node: NodeId, key: PropertyKeyId) -> Option<Option<f64>> {
        if self.external.is_some() {
            return match self.node_property(node, key) {
                Value::Float(x) => Some(Some(x)),
                Value::Null => Some(None),
                _ => None,
            };
        }
        if let Some(v) = self.delta_property(node, key) {
            return match v {
                Some(Value::Float(x)) => Some(Some(*x)),
                None | Some(Value::Null) => Some(None),
                _ => None,
            };
        }
        match self.store.node_column(node, key) {
            Some((column, row)) => column.float_at(row),
            None => Some(None),
        }
    }

    /// `node`'s property `key` if it is a string, borrowed from the base
    /// column's bytes or from the changes since the last checkpoint (no
    /// copy): `Some(None)` if the node has no such property (or does not
    /// exist), `None` if the value has another type or the snapshot reads
    /// a graph source (then read it with `node_property`). Agrees with
    /// `node_property` always.
    #[inline]
    pub fn node_property_str(&self, node: NodeId, key: PropertyKeyId) -> Option<Option<&str>> {
        if self.external.is_some() {
            // A source's strings are not held by this snapshot to borrow
            // from: the general path reads them as values.
            return None;
        }
        if let Some(v) = self.delta_property(node, key) {
            return match v {
                Some(Value::String(x)) => Some(Some(x.as_str())),
                None | Some(Value::Null) => Some(None),
                _ => None,
            };
        }
        match self.store.node_column(node, key) {
            Some((column, row)) => column.str_view_at(row),
            None => Some(None),
        }
    }

    /// For a node changed since the last checkpoint: its value of `key`
    /// as the changes hold it (`Some(None)`: no value); `None` if the node
    /// is unchanged and the base column answers.
    #[inline]
    fn delta_property(&self, node: NodeId, key: PropertyKeyId) -> Option<Option<&Value>> {
        if self.delta.is_empty() {
            return None;
        }
        let d = self.delta.nodes.get(node)?;
        if let Some(v) = get_prop(&d.props, key) {
            return Some(Some(v));
        }
        if d.created || d.deleted {
            return Some(None);
        }
        None
    }

    /// The type of a relationship deleted since the last checkpoint (its
    /// record stays in the delta): Cypher still answers `type(r)` for a
    /// relationship the statement deleted. `None` for any other id.
    pub fn deleted_rel_type(&self, rel: RelId) -> Option<RelTypeId> {
        if self.delta.is_empty() {
            return None;
        }
        self.delta
            .rels
            .get(rel)
            .and_then(|r| r.deleted.then_some(r.rel_type))
    }
}

impl GraphRead for Snapshot {
    fn catalog(&self) -> &Catalog {
        &self.delta.catalog
    }

    fn statistics(&self) -> &Statistics {
        if self.delta.is_empty() {
            return &self.store.manifest.statistics;
        }
        if let Some(x) = &self.external {
            return x.statistics();
        }
        self.delta.stats_cache.get_or_init(|| {
            let mut s = self.store.manifest.statistics.clone();
            let d = &self.delta;
            s.node_count = (s.node_count as i64 + d.node_diff).max(0) as u64;
            s.relationship_count = (s.relationship_count as i64 + d.rel_diff).max(0) as u64;
            s.label_counts.resize(d.catalog.labels.len(), 0);
            for (c, &diff) in s.label_counts.iter_mut().zip(&d.label_diff) {
                *c = (*c as i64 + diff).max(0) as u64;
            }
            s.rel_types
                .resize(d.catalog.rel_types.len(), Default::default());
            for (t, &diff) in s.rel_types.iter_mut().zip(&d.type_diff) {
                t.count = (t.count as i64 + diff).max(0) as u64;
            }
            // Triple counts are only kept where they are still exact (the
            // planner infers labels from them): the relationships created
            // and deleted since the checkpoint are counted with their
            // endpoints' labels; once a node with relationships changed
            // labels, those of changed types are dropped, and so are those of
            // labels some base node lost.
            let lost = |l: LabelId| {
                d.label_changes
                    .get(l as usize)
                    .is_some_and(|c| !c.removed.is_empty())
            };
            if d.triples_inexact {
                s.triples.retain(|x| !d.type_touched(x.rel_type));
            } else {
                for (&(source, rel_type, target), &diff) in d.triple_diff.iter() {
                    match s
                        .triples
                        .iter_mut()
                        .find(|x| (x.source, x.rel_type, x.target) == (source, rel_type, target))
                    {
                        Some(x) => x.count = (x.count as i64 + diff).max(0) as u64,
                        None if diff > 0 => s.triples.push(crate::stats::TripleCount {
                            source,
                            rel_type,
                            target,
                            count: diff as u64,
                        }),
                        None => {}
                    }
                }
                s.triples.retain(|x| x.count > 0);
            }
            s.triples.retain(|x| !lost(x.source) && !lost(x.target));
            Arc::new(s)
        })
    }

    fn node_bound(&self) -> NodeId {
        self.delta.node_bound
    }

    fn node_exists(&self, node: NodeId) -> bool {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.node_exists(node);
            }
        }
        if node >= self.delta.node_bound {
            return false;
        }
        self.delta.deleted_nodes.is_empty() || !self.delta.deleted_nodes.contains(&node)
    }

    fn label_ranges(&self, label: LabelId) -> Vec<Range<NodeId>> {
        self.label_range_slice(label).to_vec()
    }

    fn node_labels(&self, node: NodeId) -> &[LabelId] {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.node_labels(node);
            }
            if let Some(d) = self.delta.nodes.get(node) {
                return &d.labels;
            }
        }
        self.store.labels.labels_of(node)
    }

    fn has_label(&self, node: NodeId, label: LabelId) -> bool {
        self.node_labels(node).binary_search(&label).is_ok()
    }

    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.node_property(node, key);
            }
            if let Some(d) = self.delta.nodes.get(node) {
                if let Some(v) = get_prop(&d.props, key) {
                    return v.clone();
                }
                if d.created || d.deleted {
                    return Value::Null;
                }
            }
        }
        self.store.node_property(node, key)
    }

    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>) {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.node_properties(node, out);
            }
            if let Some(d) = self.delta.nodes.get(node) {
                if d.deleted {
                    return;
                }
                let start = out.len();
                if !d.created {
                    self.store.node_properties(node, out);
                }
                merge_props(out, start, &d.props);
                return;
            }
        }
        self.store.node_properties(node, out)
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
        self.prefetch_adjacency(nodes, rel_type, dir);
        for &node in nodes {
            let adj = self.adjacency(node, rel_type, dir);
            adj.neighbours.extend_into(&mut out.neighbours);
            out.rels.extend((0..adj.len()).map(|i| adj.rel_id(i)));
            out.offsets.push(out.neighbours.len());
        }
    }

    fn relationship(&self, rel: RelId) -> Option<RelInfo> {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.relationship(rel);
            }
            if let Some(r) = self.delta.rels.get(rel) {
                return (!r.deleted).then_some(RelInfo {
                    rel_type: r.rel_type,
                    start: r.start,
                    end: r.end,
                });
            }
        }
        self.store.relationship(rel)
    }

    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.rel_property(rel, key);
            }
            if let Some(r) = self.delta.rels.get(rel) {
                if let Some(v) = get_prop(&r.props, key) {
                    return v.clone();
                }
                if r.created || r.deleted {
                    return Value::Null;
                }
            }
        }
        self.store.rel_property(rel, key)
    }

    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>) {
        if !self.delta.is_empty() {
            if let Some(x) = &self.external {
                return x.rel_properties(rel, out);
            }
            if let Some(r) = self.delta.rels.get(rel) {
                if r.deleted {
                    return;
                }
                let start = out.len();
                if !r.created {
                    self.store.rel_properties(rel, out);
                }
                merge_props(out, start, &r.props);
                return;
            }
        }
        self.store.rel_properties(rel, out)
    }

    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>> {
        if value.is_null() && self.has_index(label, key) {
            return Some(Vec::new());
        }
        if let Some(x) = &self.external {
            return x.index_seek(label, key, value);
        }
        let mut nodes: Vec<NodeId> = if self.delta.is_empty() {
            let index = self.store.index(label, key)?;
            index
                .seek(value, &|n| self.store.node_property(n, key))
                .to_vec()
        } else {
            self.delta_index_equal(label, key, value)?.into_owned()
        };
        nodes.sort_unstable();
        Some(nodes)
    }
}

/// Applies key-sorted overrides (`Null` = removed) to `out[start..]`, keeping key order.
fn merge_props(
    out: &mut Vec<(PropertyKeyId, Value)>,
    start: usize,
    overrides: &[(PropertyKeyId, Value)],
) {
    for (key, value) in overrides {
        let tail = &out[start..];
        match tail.binary_search_by_key(key, |p| p.0) {
            Ok(i) => {
                if value.is_null() {
                    out.remove(start + i);
                } else {
                    out[start + i].1 = value.clone();
                }
            }
            Err(i) => {
                if !value.is_null() {
                    out.insert(start + i, (*key, value.clone()));
                }
            }
        }
    }
}
