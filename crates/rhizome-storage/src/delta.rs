//! The delta layer: every change made since the last checkpoint, as one
//! immutable, structurally shared value.
//!
//! A `Delta` is never modified once published. Committing builds the next
//! version by cloning the previous one (a handful of reference-count
//! increments) and changing only the pages it touches (`PagedMap` copies the
//! path of 64-slot nodes to the entry it writes, `AdjMap` a page of 1024
//! lists, `imbl` sets copy a path). A
//! [`crate::Snapshot`] holds `(Arc<Store>, Arc<Delta>)`, so readers of an old
//! version keep it alive and never see later writes.
//!
//! What is kept, per kind of change:
//! - **nodes** (`NodeDelta`, keyed by node id): created or deleted flags,
//!   the node's complete current label set, and its property changes
//!   (all properties for created nodes; overrides, `Null` = removed, for base
//!   nodes);
//! - **relationships** (`RelDelta`, keyed by id): created or deleted, the
//!   type and endpoints, property changes as for nodes;
//! - **adjacency** (`AdjList`, per type, direction and node): the node's
//!   *complete* current list for that type and direction, copied from the
//!   base the first time the node gains or loses a relationship of the type,
//!   kept sorted by (neighbour, relationship id). A node whose list is in the
//!   delta is read from it alone; every other node reads its base CSR slice.
//!   A read is therefore one two-level array lookup on top of the base path,
//!   and a traversal over a large delta stays within a small factor of the
//!   same traversal after a checkpoint. The price: the first change to a node
//!   copies its base list (O(degree) once per node and commit);
//! - **index entries** (`IndexSet`, per index of the schema): the entries of
//!   every node the delta touched (and all entries of indexes created since
//!   the checkpoint). Base index results skip touched nodes.
//!
//! Derived data (label ranges, statistics) is computed lazily, once per
//! version, and cached inside the version.

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::index::index_order;
use crate::numbers::NumberPages;
use crate::schema::{IndexDef, Schema};
use crate::stats::Statistics;
use rhizome_common::{NodeId, RelId, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

const PAGE_BITS: u32 = 10;
const PAGE: usize = 1 << PAGE_BITS;
const MASK: u64 = PAGE as u64 - 1;

/// Bits of an id consumed per level of a [`PagedMap`].
const FAN_BITS: u32 = 6;
/// Children (or values) per node of a [`PagedMap`].
const FAN: usize = 1 << FAN_BITS;
const FAN_MASK: u64 = FAN as u64 - 1;

/// One node of a [`PagedMap`]: 64 children, or 64 values at the bottom.
#[derive(Debug)]
enum MapNode<T> {
    Inner([Option<Arc<MapNode<T>>>; FAN]),
    Leaf([Option<Arc<T>>; FAN]),
}

impl<T> Clone for MapNode<T> {
    fn clone(&self) -> Self {
        match self {
            MapNode::Inner(c) => MapNode::Inner(c.clone()),
            MapNode::Leaf(v) => MapNode::Leaf(v.clone()),
        }
    }
}

/// A persistent map from dense ids to values: a radix tree of shared
/// nodes of 64 slots, as deep as the largest id needs (4 levels up to 16M
/// ids). A lookup follows one pointer per level; a write copies the nodes
/// on its path that are shared (at most 64 pointers each), so the cost of
/// a small commit does not grow with the number of ids (a flat page
/// directory would be copied whole by every commit).
#[derive(Debug)]
pub(crate) struct PagedMap<T> {
    root: Option<Arc<MapNode<T>>>,
    /// Levels of inner nodes above the leaves.
    height: u32,
    len: usize,
    /// Nodes of the tree (for [`PagedMap::approx_bytes`]).
    nodes: usize,
}

impl<T> Clone for PagedMap<T> {
    fn clone(&self) -> Self {
        PagedMap {
            root: self.root.clone(),
            height: self.height,
            len: self.len,
            nodes: self.nodes,
        }
    }
}

impl<T> Default for PagedMap<T> {
    fn default() -> Self {
        PagedMap {
            root: None,
            height: 0,
            len: 0,
            nodes: 0,
        }
    }
}

impl<T: Clone> PagedMap<T> {
    /// Ids below this fit the tree's current height.
    #[inline]
    fn capacity_bits(height: u32) -> u32 {
        FAN_BITS * (height + 1)
    }

    /// The value at `id`, if any.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<&T> {
        let bits = Self::capacity_bits(self.height);
        if bits < 64 && id >> bits != 0 {
            return None;
        }
        let mut node = self.root.as_deref()?;
        let mut shift = bits - FAN_BITS;
        loop {
            let i = ((id >> shift) & FAN_MASK) as usize;
            match node {
                MapNode::Inner(children) => {
                    node = children[i].as_deref()?;
                    shift -= FAN_BITS;
                }
                MapNode::Leaf(values) => return values[i].as_deref(),
            }
        }
    }

    /// Number of ids with a value.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The value at `id` for writing, created by `init` if absent.
    pub(crate) fn entry(&mut self, id: u64, init: impl FnOnce() -> T) -> &mut T {
        while Self::capacity_bits(self.height) < 64 && id >> Self::capacity_bits(self.height) != 0 {
            if let Some(old) = self.root.take() {
                let mut children: [Option<Arc<MapNode<T>>>; FAN] = std::array::from_fn(|_| None);
                children[0] = Some(old);
                self.root = Some(Arc::new(MapNode::Inner(children)));
                self.nodes += 1;
            }
            self.height += 1;
        }
        let nodes = &mut self.nodes;
        let mut slot = &mut self.root;
        for level in (1..=self.height).rev() {
            let node = Arc::make_mut(slot.get_or_insert_with(|| {
                *nodes += 1;
                Arc::new(MapNode::Inner(std::array::from_fn(|_| None)))
            }));
            let MapNode::Inner(children) = node else {
                unreachable!("inner nodes above the leaves")
            };
            slot = &mut children[((id >> (FAN_BITS * level)) & FAN_MASK) as usize];
        }
        let node = Arc::make_mut(slot.get_or_insert_with(|| {
            *nodes += 1;
            Arc::new(MapNode::Leaf(std::array::from_fn(|_| None)))
        }));
        let MapNode::Leaf(values) = node else {
            unreachable!("leaves at the bottom")
        };
        let value = &mut values[(id & FAN_MASK) as usize];
        if value.is_none() {
            *value = Some(Arc::new(init()));
            self.len += 1;
        }
        Arc::make_mut(value.as_mut().expect("just filled"))
    }

    /// Approximate heap bytes: the tree's nodes and `entry` bytes per
    /// value (its allocation; what it owns beyond that is the caller's to
    /// estimate).
    pub(crate) fn approx_bytes(&self, entry: usize) -> u64 {
        (self.nodes * (FAN * 8 + 16) + self.len * (entry + 16)) as u64
    }

    /// All (id, value) pairs in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &T)> + '_ {
        let bits = Self::capacity_bits(self.height);
        self.root
            .as_deref()
            .into_iter()
            .flat_map(move |root| node_iter(root, 0, bits - FAN_BITS))
    }
}

/// The values under `node`, whose first id is `first` and whose slots are
/// `1 << shift` ids apart, in id order.
fn node_iter<T>(
    node: &MapNode<T>,
    first: u64,
    shift: u32,
) -> Box<dyn Iterator<Item = (u64, &T)> + '_> {
    match node {
        MapNode::Inner(children) => {
            Box::new(children.iter().enumerate().flat_map(move |(i, child)| {
                child.as_deref().into_iter().flat_map(move |c| {
                    node_iter(c, first + ((i as u64) << shift), shift - FAN_BITS)
                })
            }))
        }
        MapNode::Leaf(values) => Box::new(
            values
                .iter()
                .enumerate()
                .filter_map(move |(i, v)| v.as_deref().map(|v| (first + i as u64, v))),
        ),
    }
}

/// Changes to one node.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeDelta {
    /// Created since the checkpoint.
    pub(crate) created: bool,
    /// Deleted.
    pub(crate) deleted: bool,
    /// The complete current label set, sorted (up to four inline).
    pub(crate) labels: NodeLabels,
    /// Sorted by key. Created nodes: all properties; base nodes: overrides,
    /// `Value::Null` meaning removed. One property is kept inline, so a
    /// created node with one label and one property is one allocation.
    pub(crate) props: Props,
}

/// A node's label set in the delta (no allocation for up to four labels).
pub(crate) type NodeLabels = smallvec::SmallVec<[LabelId; 4]>;

/// A node's or relationship's property changes in the delta (no
/// allocation for one).
pub(crate) type Props = smallvec::SmallVec<[(PropertyKeyId, Value); 1]>;

/// Changes to one relationship.
#[derive(Debug, Clone)]
pub(crate) struct RelDelta {
    /// Created since the checkpoint.
    pub(crate) created: bool,
    /// Deleted.
    pub(crate) deleted: bool,
    /// Type.
    pub(crate) rel_type: RelTypeId,
    /// Start node.
    pub(crate) start: NodeId,
    /// End node.
    pub(crate) end: NodeId,
    /// As [`NodeDelta::props`].
    pub(crate) props: Props,
}

/// A node's complete list of one type and direction, sorted by (neighbour, id).
#[derive(Debug, Clone, Default)]
pub(crate) struct AdjList {
    pub(crate) neighbours: Vec<NodeId>,
    pub(crate) rels: Vec<RelId>,
}

impl AdjList {
    /// Inserts an entry, keeping the order.
    pub(crate) fn insert(&mut self, neighbour: NodeId, rel: RelId) {
        let at = self.position(neighbour, rel);
        self.neighbours.insert(at, neighbour);
        self.rels.insert(at, rel);
    }

    /// Removes an entry if present.
    pub(crate) fn remove(&mut self, neighbour: NodeId, rel: RelId) {
        let at = self.position(neighbour, rel);
        if self.neighbours.get(at) == Some(&neighbour) && self.rels.get(at) == Some(&rel) {
            self.neighbours.remove(at);
            self.rels.remove(at);
        }
    }

    fn position(&self, neighbour: NodeId, rel: RelId) -> usize {
        let lo = self.neighbours.partition_point(|&n| n < neighbour);
        let hi = lo + self.neighbours[lo..].partition_point(|&n| n == neighbour);
        lo + self.rels[lo..hi].partition_point(|&r| r < rel)
    }
}

/// Offsets of a packed page carry this bit when the node has a list.
const PRESENT: u32 = 1 << 31;

/// One page (1024 nodes) of per-node adjacency lists, kept inline in the
/// page vector so a lookup costs no extra pointer chase.
///
/// Pages are *packed* when published (one small CSR: offsets plus
/// contiguous neighbour and id arrays, so a traversal over the delta reads
/// memory laid out like the base) and *loose* (one vector per node) while a
/// transaction writes to them; [`AdjMap::pack`] turns the loose pages a
/// transaction touched back into packed ones.
// Large on purpose: a packed page's bitmaps sit inline in the page
// vector, so a lookup reads them without another pointer chase.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Default)]
enum AdjSlot {
    #[default]
    Empty,
    Loose(Arc<Vec<Option<AdjList>>>),
    Packed {
        /// Bit `i` says node `i` has a list: most lookups (nodes without
        /// one) read this inline word and nothing else.
        present: [u64; PAGE / 64],
        /// `PAGE + 1` offsets; bit 31 of `offsets[i]` says node `i` has a list.
        offsets: Arc<[u32]>,
        neighbours: Arc<[NodeId]>,
        rels: Arc<[RelId]>,
        /// Per word of `present`: how many nodes of the words before it
        /// have a list (the rank of a node's list among the page's).
        ranks: [u16; PAGE / 64],
        /// Offsets into `created`, one per list of the page (by rank) and
        /// one at the end; empty if no list of the page holds a
        /// relationship created since the checkpoint.
        created_offsets: Arc<[u32]>,
        /// Per list, the ids of its relationships created since the
        /// checkpoint (ids at or above the base's bound), ascending: a
        /// list that still holds its node's whole base list is read as
        /// that base CSR slice plus these (see [`ChangedList`]).
        created: Arc<[RelId]>,
    },
}

/// A node's list in the delta as [`AdjMap::get_changed`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChangedList<'a> {
    /// Neighbours, sorted (ties by relationship id).
    pub(crate) neighbours: &'a [NodeId],
    /// Relationship ids, entry by entry.
    pub(crate) rels: &'a [RelId],
    /// The ids of its entries created since the checkpoint, ascending;
    /// `None` while a transaction is writing the list's page.
    pub(crate) created: Option<&'a [RelId]>,
}

impl AdjSlot {
    /// The packed form of `loose`; relationship ids at or above
    /// `base_rels` are the ones created since the checkpoint.
    fn packed(loose: &[Option<AdjList>], base_rels: RelId) -> AdjSlot {
        let mut offsets = Vec::with_capacity(PAGE + 1);
        let total: usize = loose.iter().flatten().map(|l| l.neighbours.len()).sum();
        let mut neighbours = Vec::with_capacity(total);
        let mut rels = Vec::with_capacity(total);
        let mut created_offsets = Vec::new();
        let mut created: Vec<RelId> = Vec::new();
        let mut present = [0u64; PAGE / 64];
        let mut ranks = [0u16; PAGE / 64];
        for (i, slot) in loose.iter().enumerate() {
            let start = neighbours.len() as u32;
            if i % 64 == 0 {
                ranks[i / 64] = created_offsets.len() as u16;
            }
            match slot {
                Some(l) => {
                    created_offsets.push(created.len() as u32);
                    present[i / 64] |= 1 << (i % 64);
                    offsets.push(start | PRESENT);
                    neighbours.extend_from_slice(&l.neighbours);
                    rels.extend_from_slice(&l.rels);
                    let from = created.len();
                    created.extend(l.rels.iter().copied().filter(|&r| r >= base_rels));
                    created[from..].sort_unstable();
                }
                None => offsets.push(start),
            }
        }
        offsets.push(neighbours.len() as u32);
        created_offsets.push(created.len() as u32);
        if created.is_empty() {
            created_offsets.clear();
        }
        AdjSlot::Packed {
            present,
            ranks,
            offsets: offsets.into(),
            neighbours: neighbours.into(),
            rels: rels.into(),
            created_offsets: created_offsets.into(),
            created: created.into(),
        }
    }

    fn loosen(&self) -> Vec<Option<AdjList>> {
        match self {
            AdjSlot::Empty => vec![None; PAGE],
            AdjSlot::Loose(v) => (**v).clone(),
            AdjSlot::Packed {
                offsets,
                neighbours,
                rels,
                ..
            } => (0..PAGE)
                .map(|i| {
                    (offsets[i] & PRESENT != 0).then(|| {
                        let a = (offsets[i] & !PRESENT) as usize;
                        let b = (offsets[i + 1] & !PRESENT) as usize;
                        AdjList {
                            neighbours: neighbours[a..b].to_vec(),
                            rels: rels[a..b].to_vec(),
                        }
                    })
                })
                .collect(),
        }
    }
}

/// Per-node adjacency lists of one type and direction, keyed by node id
/// (persistent like [`PagedMap`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct AdjMap {
    pages: Arc<Vec<AdjSlot>>,
    /// Pages made loose by writes since the last [`AdjMap::pack`].
    loose: Vec<usize>,
}

impl AdjMap {
    /// The list of `node` (neighbours, relationship ids), if the delta has one.
    #[inline(always)]
    pub(crate) fn get(&self, node: NodeId) -> Option<(&[NodeId], &[RelId])> {
        let i = (node & MASK) as usize;
        match self.pages.get((node >> PAGE_BITS) as usize)? {
            AdjSlot::Packed {
                present,
                offsets,
                neighbours,
                rels,
                ..
            } => {
                if present[i / 64] & (1 << (i % 64)) == 0 {
                    return None;
                }
                let a = offsets[i];
                let (a, b) = (
                    (a & !PRESENT) as usize,
                    (offsets[i + 1] & !PRESENT) as usize,
                );
                Some((&neighbours[a..b], &rels[a..b]))
            }
            AdjSlot::Loose(v) => v[i]
                .as_ref()
                .map(|l| (l.neighbours.as_slice(), l.rels.as_slice())),
            AdjSlot::Empty => None,
        }
    }

    /// The list of `node` with its entries created since the checkpoint
    /// apart, if the delta has one.
    #[inline(always)]
    pub(crate) fn get_changed(&self, node: NodeId) -> Option<ChangedList<'_>> {
        let i = (node & MASK) as usize;
        match self.pages.get((node >> PAGE_BITS) as usize)? {
            AdjSlot::Packed {
                present,
                offsets,
                neighbours,
                rels,
                ranks,
                created_offsets,
                created,
            } => {
                let word = present[i / 64];
                if word & (1 << (i % 64)) == 0 {
                    return None;
                }
                let (a, b) = (
                    (offsets[i] & !PRESENT) as usize,
                    (offsets[i + 1] & !PRESENT) as usize,
                );
                let k = usize::from(ranks[i / 64])
                    + (word & ((1u64 << (i % 64)) - 1)).count_ones() as usize;
                let (c, d) = match created_offsets.get(k..k + 2) {
                    Some(&[c, d]) => (c as usize, d as usize),
                    _ => (0, 0),
                };
                Some(ChangedList {
                    neighbours: &neighbours[a..b],
                    rels: &rels[a..b],
                    created: Some(&created[c..d]),
                })
            }
            AdjSlot::Loose(v) => v[i].as_ref().map(|l| ChangedList {
                neighbours: &l.neighbours,
                rels: &l.rels,
                created: None,
            }),
            AdjSlot::Empty => None,
        }
    }

    /// The list of `node` for writing, created by `init` if absent.
    pub(crate) fn entry(&mut self, node: NodeId, init: impl FnOnce() -> AdjList) -> &mut AdjList {
        let p = (node >> PAGE_BITS) as usize;
        let pages = Arc::make_mut(&mut self.pages);
        if pages.len() <= p {
            pages.resize(p + 1, AdjSlot::Empty);
        }
        let slot = &mut pages[p];
        if !matches!(slot, AdjSlot::Loose(_)) {
            *slot = AdjSlot::Loose(Arc::new(slot.loosen()));
            self.loose.push(p);
        }
        let AdjSlot::Loose(v) = slot else {
            unreachable!("made loose above")
        };
        Arc::make_mut(v)[(node & MASK) as usize].get_or_insert_with(init)
    }

    /// Packs every loose page; relationship ids at or above `base_rels`
    /// are the ones created since the checkpoint.
    pub(crate) fn pack(&mut self, base_rels: RelId) {
        if self.loose.is_empty() {
            return;
        }
        let pages = Arc::make_mut(&mut self.pages);
        for p in self.loose.drain(..) {
            if let Some(slot) = pages.get_mut(p) {
                if let AdjSlot::Loose(v) = slot {
                    *slot = AdjSlot::packed(v, base_rels);
                }
            }
        }
    }

    /// Approximate heap bytes of the pages.
    fn approx_bytes(&self) -> u64 {
        let slot = std::mem::size_of::<AdjSlot>();
        let mut bytes = self.pages.len() * slot;
        for page in self.pages.iter() {
            bytes += match page {
                AdjSlot::Empty => 0,
                AdjSlot::Loose(v) => v
                    .iter()
                    .map(|l| {
                        std::mem::size_of::<Option<AdjList>>()
                            + l.as_ref().map_or(0, |l| l.neighbours.capacity() * 16)
                    })
                    .sum(),
                AdjSlot::Packed {
                    neighbours,
                    created_offsets,
                    created,
                    ..
                } => {
                    (PAGE + 1) * 4
                        + neighbours.len() * 16
                        + created_offsets.len() * 4
                        + created.len() * 8
                }
            };
        }
        bytes as u64
    }

    /// True if some pages are loose.
    pub(crate) fn has_loose(&self) -> bool {
        !self.loose.is_empty()
    }

    /// Calls `f(node, length)` for every node with a list, in node order,
    /// without a lookup per node ([`AdjMap::for_each_changed`]).
    pub(crate) fn for_each_len(&self, mut f: impl FnMut(NodeId, usize)) {
        self.for_each_changed(|node, list| f(node, list.rels.len()));
    }

    /// Calls `f(node, list)` for every node with a list, in node order,
    /// the list's created entries apart as [`AdjMap::get_changed`] gives
    /// them: a packed page is read front to back (its lists, then their
    /// created ids, each in order), without a lookup per node.
    pub(crate) fn for_each_changed<'s>(&'s self, mut f: impl FnMut(NodeId, ChangedList<'s>)) {
        for (p, slot) in self.pages.iter().enumerate() {
            let first = (p as u64) << PAGE_BITS;
            match slot {
                AdjSlot::Empty => {}
                AdjSlot::Loose(v) => {
                    for (i, l) in v.iter().enumerate() {
                        if let Some(l) = l {
                            let list = ChangedList {
                                neighbours: &l.neighbours,
                                rels: &l.rels,
                                created: None,
                            };
                            f(first + i as u64, list);
                        }
                    }
                }
                AdjSlot::Packed {
                    present,
                    offsets,
                    neighbours,
                    rels,
                    created_offsets,
                    created,
                    ..
                } => {
                    // The rank of the page's next list (its created ids'
                    // offsets are by rank).
                    let mut k = 0;
                    for (w, &word) in present.iter().enumerate() {
                        let mut bits = word;
                        while bits != 0 {
                            let i = w * 64 + bits.trailing_zeros() as usize;
                            bits &= bits - 1;
                            let (a, b) = (
                                (offsets[i] & !PRESENT) as usize,
                                (offsets[i + 1] & !PRESENT) as usize,
                            );
                            let (c, d) = match created_offsets.get(k..k + 2) {
                                Some(&[c, d]) => (c as usize, d as usize),
                                _ => (0, 0),
                            };
                            k += 1;
                            let list = ChangedList {
                                neighbours: &neighbours[a..b],
                                rels: &rels[a..b],
                                created: Some(&created[c..d]),
                            };
                            f(first + i as u64, list);
                        }
                    }
                }
            }
        }
    }

    /// Every node with a list, in node order, with its list.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (NodeId, &[NodeId], &[RelId])> + '_ {
        (0..self.pages.len() as u64).flat_map(move |p| {
            (0..PAGE as u64).filter_map(move |i| {
                let node = (p << PAGE_BITS) + i;
                self.get(node).map(|(n, r)| (node, n, r))
            })
        })
    }
}

/// How the members of one label differ from the base: ranges of nodes that
/// gained it (coalesced, so a bulk of new nodes is one range) and base nodes
/// that lost it. Label scans over a delta cost O(these), not O(delta).
#[derive(Debug, Clone, Default)]
pub(crate) struct LabelChanges {
    /// start -> end of disjoint, non-adjacent id ranges.
    pub(crate) added: imbl::OrdMap<NodeId, NodeId>,
    /// Base members that no longer carry the label.
    pub(crate) removed: imbl::OrdSet<NodeId>,
}

impl LabelChanges {
    fn add(&mut self, n: NodeId) {
        let (mut start, mut end) = (n, n + 1);
        if let Some((&s, &e)) = self.added.range(..=n).next_back() {
            if n < e {
                return;
            }
            if e == n {
                start = s;
                self.added.remove(&s);
            }
        }
        if let Some(e) = self.added.remove(&(n + 1)) {
            end = e;
        }
        self.added.insert(start, end);
    }

    fn remove(&mut self, n: NodeId) {
        if let Some((&s, &e)) = self.added.range(..=n).next_back() {
            if n < e {
                self.added.remove(&s);
                if s < n {
                    self.added.insert(s, n);
                }
                if n + 1 < e {
                    self.added.insert(n + 1, e);
                }
            }
        }
    }
}

/// A property value ordered by [`index_order`].
#[derive(Debug, Clone)]
pub(crate) struct IndexValue(pub(crate) Value);

impl PartialEq for IndexValue {
    fn eq(&self, other: &Self) -> bool {
        index_order(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for IndexValue {}
impl PartialOrd for IndexValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for IndexValue {
    fn cmp(&self, other: &Self) -> Ordering {
        index_order(&self.0, &other.0)
    }
}

/// The delta's entries of one index: (value, node) pairs.
#[derive(Debug, Clone)]
pub(crate) struct IndexSet {
    /// What is indexed.
    pub(crate) def: IndexDef,
    /// True if the base store has this index (its entries for untouched nodes count).
    pub(crate) base: bool,
    /// Entries of touched nodes (all entries when `base` is false).
    pub(crate) entries: imbl::OrdSet<(IndexValue, NodeId)>,
    /// The lowest and highest value ever entered since the checkpoint (a
    /// zone map: removals do not shrink it). A seek of a value outside it
    /// skips the ordered set: with new nodes taking new key values, most
    /// seeks of base nodes never search the delta.
    span: Option<(IndexValue, IndexValue)>,
}

impl IndexSet {
    /// No entries yet.
    pub(crate) fn new(def: IndexDef, base: bool) -> IndexSet {
        IndexSet {
            def,
            base,
            entries: imbl::OrdSet::new(),
            span: None,
        }
    }

    /// Adds the entry (`value`, `node`).
    pub(crate) fn insert(&mut self, value: Value, node: NodeId) {
        let value = IndexValue(value);
        match &mut self.span {
            None => self.span = Some((value.clone(), value.clone())),
            Some((lo, hi)) => {
                if value < *lo {
                    *lo = value.clone();
                } else if value > *hi {
                    *hi = value.clone();
                }
            }
        }
        self.entries.insert((value, node));
    }

    /// Removes the entry (`value`, `node`) if present.
    pub(crate) fn remove(&mut self, value: Value, node: NodeId) {
        self.entries.remove(&(IndexValue(value), node));
    }

    /// An index set as saved in a delta file (see [`crate::deltafile`]).
    pub(crate) fn restore(
        def: IndexDef,
        base: bool,
        entries: imbl::OrdSet<(IndexValue, NodeId)>,
        span: Option<(Value, Value)>,
    ) -> IndexSet {
        IndexSet {
            def,
            base,
            entries,
            span: span.map(|(lo, hi)| (IndexValue(lo), IndexValue(hi))),
        }
    }

    /// The lowest and highest value entered since the checkpoint.
    pub(crate) fn span(&self) -> Option<(&Value, &Value)> {
        self.span.as_ref().map(|(lo, hi)| (&lo.0, &hi.0))
    }

    /// False if no entry can have a value equal to `value`.
    #[inline]
    pub(crate) fn may_hold(&self, value: &Value) -> bool {
        self.span.as_ref().is_some_and(|(lo, hi)| {
            index_order(value, &lo.0).is_ge() && index_order(value, &hi.0).is_le()
        })
    }
}

/// One version of the changes since the last checkpoint (see the module docs).
#[derive(Debug)]
pub(crate) struct Delta {
    /// False until the first change: readers then take the base-only path.
    pub(crate) changed: bool,
    /// The base store's node bound.
    pub(crate) base_nodes: NodeId,
    /// The base store's relationship id bound.
    pub(crate) base_rels: RelId,
    /// Every node id is below this.
    pub(crate) node_bound: NodeId,
    /// Every relationship id is below this.
    pub(crate) rel_bound: RelId,
    /// The catalog, including names added since the checkpoint.
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) nodes: PagedMap<NodeDelta>,
    pub(crate) rels: PagedMap<RelDelta>,
    /// Per relationship type: `[outgoing, incoming]` lists.
    pub(crate) adj: Vec<[AdjMap; 2]>,
    /// Per property key: numeric relationship values written since the
    /// checkpoint (what traversal filters read; see [`crate::numbers`]).
    pub(crate) rel_numbers: Vec<NumberPages>,
    /// Per relationship type: true if any relationship of it changed.
    pub(crate) types_touched: Vec<bool>,
    /// Indexes and constraints.
    pub(crate) schema: Arc<Schema>,
    /// Parallel to `schema.indexes`.
    pub(crate) index_sets: Vec<IndexSet>,
    /// Live node count minus the base's.
    pub(crate) node_diff: i64,
    /// Live relationship count minus the base's.
    pub(crate) rel_diff: i64,
    /// Per label id: node count change.
    pub(crate) label_diff: Vec<i64>,
    /// Per label id: membership changes.
    pub(crate) label_changes: Vec<LabelChanges>,
    /// Per type id: relationship count change.
    pub(crate) type_diff: Vec<i64>,
    /// Lazily computed label ranges, per label id.
    pub(crate) label_cache: OnceLock<Vec<OnceLock<Vec<Range<NodeId>>>>>,
    /// Lazily computed statistics.
    pub(crate) stats_cache: OnceLock<Arc<Statistics>>,
    /// Nodes deleted since the checkpoint.
    pub(crate) deleted_nodes: imbl::OrdSet<NodeId>,
    /// Lazily computed ranges of existing node ids.
    pub(crate) node_ranges_cache: OnceLock<Vec<Range<NodeId>>>,
    /// Lazily computed runs `(type, first id, count)` of relationships
    /// created since the checkpoint.
    pub(crate) rel_runs_cache: OnceLock<Vec<(RelTypeId, RelId, u64)>>,
    /// Relationship count change per (source label, type, target label),
    /// from the endpoints' labels when each relationship was created or
    /// deleted. Exact unless `triples_inexact`.
    pub(crate) triple_diff: Arc<BTreeMap<(LabelId, RelTypeId, LabelId), i64>>,
    /// Set once a node with relationships gained or lost a label: the
    /// triple counts of changed types are then no longer known.
    pub(crate) triples_inexact: bool,
}

impl Clone for Delta {
    fn clone(&self) -> Self {
        Delta {
            changed: self.changed,
            base_nodes: self.base_nodes,
            base_rels: self.base_rels,
            node_bound: self.node_bound,
            rel_bound: self.rel_bound,
            catalog: self.catalog.clone(),
            nodes: self.nodes.clone(),
            rels: self.rels.clone(),
            adj: self.adj.clone(),
            rel_numbers: self.rel_numbers.clone(),
            types_touched: self.types_touched.clone(),
            schema: self.schema.clone(),
            index_sets: self.index_sets.clone(),
            node_diff: self.node_diff,
            rel_diff: self.rel_diff,
            label_diff: self.label_diff.clone(),
            label_changes: self.label_changes.clone(),
            type_diff: self.type_diff.clone(),
            label_cache: OnceLock::new(),
            stats_cache: OnceLock::new(),
            deleted_nodes: self.deleted_nodes.clone(),
            node_ranges_cache: OnceLock::new(),
            rel_runs_cache: OnceLock::new(),
            triple_diff: self.triple_diff.clone(),
            triples_inexact: self.triples_inexact,
        }
    }
}

impl Delta {
    /// The empty delta over a base.
    pub(crate) fn empty(
        catalog: Arc<Catalog>,
        base_nodes: NodeId,
        base_rels: RelId,
        schema: Schema,
        base_indexes: &[IndexDef],
    ) -> Delta {
        let index_sets = schema
            .indexes
            .iter()
            .map(|&def| IndexSet::new(def, base_indexes.contains(&def)))
            .collect();
        Delta {
            changed: false,
            base_nodes,
            base_rels,
            node_bound: base_nodes,
            rel_bound: base_rels,
            catalog,
            nodes: PagedMap::default(),
            rels: PagedMap::default(),
            adj: Vec::new(),
            rel_numbers: Vec::new(),
            types_touched: Vec::new(),
            schema: Arc::new(schema),
            index_sets,
            node_diff: 0,
            rel_diff: 0,
            label_diff: Vec::new(),
            label_changes: Vec::new(),
            type_diff: Vec::new(),
            label_cache: OnceLock::new(),
            stats_cache: OnceLock::new(),
            deleted_nodes: imbl::OrdSet::new(),
            node_ranges_cache: OnceLock::new(),
            rel_runs_cache: OnceLock::new(),
            triple_diff: Arc::default(),
            triples_inexact: false,
        }
    }

    /// Approximately how many bytes of memory this delta holds (shared
    /// with older versions or not): entries of nodes and relationships
    /// (deleted ones included), adjacency lists, index entries, label and
    /// deletion sets, property values. Costs O(pages) (one page per 1024
    /// ids), not O(entries); so the heap of string and list values (beyond
    /// their inline size) and of property lists longer than one is not counted.
    pub(crate) fn approx_bytes(&self) -> u64 {
        // Per element of an `imbl` tree: the element plus its share of the
        // node (chunks of 64 with a header and child pointers).
        fn tree(len: usize, elem: usize) -> u64 {
            (len * (elem + 8)) as u64
        }
        let mut bytes = std::mem::size_of::<Delta>() as u64;
        bytes += self.nodes.approx_bytes(std::mem::size_of::<NodeDelta>());
        bytes += self.rels.approx_bytes(std::mem::size_of::<RelDelta>());
        for maps in &self.adj {
            bytes += maps.iter().map(AdjMap::approx_bytes).sum::<u64>();
        }
        bytes += self
            .rel_numbers
            .iter()
            .map(NumberPages::approx_bytes)
            .sum::<u64>();
        bytes += tree(self.deleted_nodes.len(), 8);
        for set in &self.index_sets {
            bytes += tree(
                set.entries.len(),
                std::mem::size_of::<(IndexValue, NodeId)>(),
            );
        }
        for changes in &self.label_changes {
            bytes += tree(changes.added.len(), 16) + tree(changes.removed.len(), 8);
        }
        bytes
    }

    /// True if nothing changed since the checkpoint.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        !self.changed
    }

    /// Packs the adjacency pages written since the last call (see [`AdjMap`]).
    pub(crate) fn pack(&mut self) {
        for maps in &mut self.adj {
            for map in maps.iter_mut() {
                map.pack(self.base_rels);
            }
        }
    }

    /// Runs `(type, first id, count)` of consecutive relationships of one
    /// type created since the checkpoint (computed once per version).
    pub(crate) fn rel_runs(&self) -> &[(RelTypeId, RelId, u64)] {
        if self.is_empty() {
            return &[];
        }
        self.rel_runs_cache.get_or_init(|| {
            let mut runs: Vec<(RelTypeId, RelId, u64)> = Vec::new();
            for (id, r) in self.rels.iter().filter(|(_, r)| r.created) {
                match runs.last_mut() {
                    Some((t, first, n)) if *t == r.rel_type && *first + *n == id => *n += 1,
                    _ => runs.push((r.rel_type, id, 1)),
                }
            }
            runs
        })
    }

    /// Adds `by` to the triple counts of a relationship of type `t` from a
    /// node labelled `source` to one labelled `target`.
    pub(crate) fn count_triples(
        &mut self,
        source: &[LabelId],
        t: RelTypeId,
        target: &[LabelId],
        by: i64,
    ) {
        if source.is_empty() || target.is_empty() {
            return;
        }
        let map = Arc::make_mut(&mut self.triple_diff);
        for &s in source {
            for &e in target {
                *map.entry((s, t, e)).or_insert(0) += by;
            }
        }
    }

    /// True if [`Delta::pack`] has work to do.
    pub(crate) fn has_loose(&self) -> bool {
        self.adj.iter().flatten().any(AdjMap::has_loose)
    }

    /// The delta list of a node (neighbours, relationship ids), if it has one.
    #[inline]
    pub(crate) fn adj(
        &self,
        rel_type: RelTypeId,
        outgoing: bool,
        node: NodeId,
    ) -> Option<(&[NodeId], &[RelId])> {
        self.adj
            .get(rel_type as usize)?
            .get(usize::from(!outgoing))?
            .get(node)
    }

    /// Records relationship `rel`'s new value of `key` for numeric reads.
    pub(crate) fn note_rel_value(&mut self, rel: RelId, key: PropertyKeyId, value: Option<&Value>) {
        let k = key as usize;
        if self.rel_numbers.len() <= k {
            self.rel_numbers.resize_with(k + 1, NumberPages::default);
        }
        self.rel_numbers[k].set(rel, value);
    }

    /// True if relationships of the type changed.
    #[inline]
    pub(crate) fn type_touched(&self, rel_type: RelTypeId) -> bool {
        self.types_touched
            .get(rel_type as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Marks a type as changed, growing the per-type tables.
    pub(crate) fn touch_type(&mut self, rel_type: RelTypeId) {
        let n = rel_type as usize + 1;
        if self.types_touched.len() < n {
            self.types_touched.resize(n, false);
            self.type_diff.resize(n, 0);
        }
        if self.adj.len() < n {
            self.adj.resize_with(n, Default::default);
        }
        self.types_touched[rel_type as usize] = true;
    }

    /// Records that `node` gained (`by` = 1) or lost (`by` = -1) `label`;
    /// `in_base` says whether the base has the node carrying it.
    pub(crate) fn count_label(&mut self, label: LabelId, node: NodeId, by: i64, in_base: bool) {
        let n = label as usize + 1;
        if self.label_diff.len() < n {
            self.label_diff.resize(n, 0);
        }
        if self.label_changes.len() < n {
            self.label_changes.resize_with(n, Default::default);
        }
        self.label_diff[label as usize] += by;
        let changes = &mut self.label_changes[label as usize];
        match (by > 0, in_base) {
            (true, true) => {
                changes.removed.remove(&node);
            }
            (true, false) => changes.add(node),
            (false, true) => {
                changes.removed.insert(node);
            }
            (false, false) => changes.remove(node),
        }
    }
}

/// Inserts or replaces `key` in a key-sorted property list.
pub(crate) fn set_prop(props: &mut Props, key: PropertyKeyId, value: Value) {
    match props.binary_search_by_key(&key, |p| p.0) {
        Ok(i) => props[i].1 = value,
        Err(i) => props.insert(i, (key, value)),
    }
}

/// The value of `key` in a key-sorted property list.
pub(crate) fn get_prop(props: &[(PropertyKeyId, Value)], key: PropertyKeyId) -> Option<&Value> {
    props
        .binary_search_by_key(&key, |p| p.0)
        .ok()
        .map(|i| &props[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paged_map_is_persistent() {
        let mut a: PagedMap<u32> = PagedMap::default();
        *a.entry(5, || 1) = 10;
        *a.entry(5000, || 2) += 1;
        let b = a.clone();
        *a.entry(5, || 0) = 11;
        assert_eq!(a.get(5), Some(&11));
        assert_eq!(b.get(5), Some(&10));
        assert_eq!(b.get(5000), Some(&3));
        assert_eq!(a.get(6), None);
        assert_eq!(a.get(1 << 40), None);
        assert_eq!(a.iter().map(|(k, _)| k).collect::<Vec<_>>(), vec![5, 5000]);
        assert_eq!(a.len(), 2);
        // Growing the tree keeps every value and every older version.
        let before = a.clone();
        *a.entry(1 << 40, || 7) += 1;
        *a.entry(u64::MAX, || 9) += 1;
        assert_eq!(a.get(1 << 40), Some(&8));
        assert_eq!(a.get(u64::MAX), Some(&10));
        assert_eq!(a.get(5), Some(&11));
        assert_eq!(before.get(1 << 40), None);
        assert_eq!(before.get(5000), Some(&3));
        assert_eq!(
            a.iter().map(|(k, v)| (k, *v)).collect::<Vec<_>>(),
            vec![(5, 11), (5000, 3), (1 << 40, 8), (u64::MAX, 10)]
        );
        assert_eq!(a.len(), 4);
    }

    #[test]
    fn adjacency_lists_stay_sorted() {
        let mut l = AdjList::default();
        l.insert(5, 1);
        l.insert(3, 7);
        l.insert(5, 0);
        l.insert(9, 2);
        assert_eq!(l.neighbours, vec![3, 5, 5, 9]);
        assert_eq!(l.rels, vec![7, 0, 1, 2]);
        l.remove(5, 1);
        l.remove(4, 4);
        assert_eq!(l.neighbours, vec![3, 5, 9]);
        assert_eq!(l.rels, vec![7, 0, 2]);
    }

    #[test]
    fn list_lengths_of_packed_and_loose_pages() {
        let mut m = AdjMap::default();
        for (node, n) in [(3u64, 2usize), (64, 1), (1023, 3), (1024, 1), (5000, 4)] {
            let list = m.entry(node, AdjList::default);
            for k in 0..n {
                list.insert(k as u64, node * 10 + k as u64);
            }
        }
        let lens = |m: &AdjMap| {
            let mut v = Vec::new();
            m.for_each_len(|node, len| v.push((node, len)));
            v
        };
        let expected: Vec<(u64, usize)> = m.iter().map(|(n, _, r)| (n, r.len())).collect();
        assert_eq!(expected.len(), 5);
        assert_eq!(lens(&m), expected);
        m.pack(0);
        assert!(!m.has_loose());
        assert_eq!(lens(&m), expected);
        // One page loose again, the others packed.
        m.entry(1024, AdjList::default).insert(7, 77);
        let expected: Vec<(u64, usize)> = m.iter().map(|(n, _, r)| (n, r.len())).collect();
        assert_eq!(lens(&m), expected);
        assert_eq!(expected[3], (1024, 2));
    }

    #[test]
    fn changed_lists_in_one_pass_are_the_lists_looked_up() {
        let mut m = AdjMap::default();
        // Relationship ids from 40 on are created since the checkpoint; node
        // 64 holds none of them, so its page's created offsets skip a rank.
        for (node, rels) in [
            (3u64, vec![1u64, 41, 42]),
            (64, vec![2]),
            (65, vec![43, 3]),
            (1023, vec![44]),
            (1024, vec![5, 6]),
            (5000, vec![45, 46, 47, 7]),
        ] {
            let list = m.entry(node, AdjList::default);
            for (k, r) in rels.into_iter().enumerate() {
                list.insert(k as u64, r);
            }
        }
        fn pass(m: &AdjMap) -> Vec<(u64, ChangedList<'_>)> {
            let mut v = Vec::new();
            m.for_each_changed(|node, list| v.push((node, list)));
            v
        }
        fn looked_up(m: &AdjMap) -> Vec<(u64, ChangedList<'_>)> {
            m.iter()
                .map(|(node, ..)| (node, m.get_changed(node).unwrap()))
                .collect()
        }
        assert_eq!(pass(&m), looked_up(&m), "loose pages");
        m.pack(40);
        assert_eq!(pass(&m), looked_up(&m), "packed pages");
        let lists = pass(&m);
        assert_eq!(lists.len(), 6);
        assert_eq!(lists[2].1.created, Some(&[43u64][..]));
        assert_eq!(lists[4].1.created, Some(&[][..]));
        assert_eq!(lists[5].1.created, Some(&[45u64, 46, 47][..]));
        // One page loose again, the others packed.
        m.entry(1024, AdjList::default).insert(7, 48);
        assert_eq!(pass(&m), looked_up(&m), "mixed pages");
    }

    #[test]
    fn adjacency_pages_pack_and_loosen() {
        let mut m = AdjMap::default();
        m.entry(3, AdjList::default).insert(9, 1);
        m.entry(3, AdjList::default).insert(2, 0);
        m.entry(2000, AdjList::default).insert(1, 5);
        assert!(m.has_loose());
        let loose = m.clone();
        // Ids from 1 on were created since the checkpoint.
        m.pack(1);
        assert!(!m.has_loose());
        for map in [&m, &loose] {
            assert_eq!(map.get(3), Some((&[2u64, 9][..], &[0u64, 1][..])));
            assert_eq!(map.get(2000), Some((&[1u64][..], &[5u64][..])));
            assert_eq!(map.get(4), None);
            assert_eq!(map.get(1 << 30), None);
        }
        fn created(m: &AdjMap, node: NodeId) -> Option<Option<&[RelId]>> {
            m.get_changed(node).map(|c| c.created)
        }
        assert_eq!(created(&loose, 3), Some(None));
        assert_eq!(created(&m, 3), Some(Some(&[1u64][..])));
        assert_eq!(created(&m, 2000), Some(Some(&[5u64][..])));
        assert_eq!(created(&m, 4), None);
        for node in [3, 2000] {
            let c = m.get_changed(node).unwrap();
            assert_eq!((c.neighbours, c.rels), m.get(node).unwrap());
        }
        let packed = m.clone();
        m.entry(4, AdjList::default).insert(7, 7);
        m.pack(1);
        assert_eq!(m.get(4), Some((&[7u64][..], &[7u64][..])));
        assert_eq!(m.get(3).unwrap().0, &[2, 9]);
        assert_eq!(packed.get(4), None);
        // Created ids come out ascending whatever the neighbour order; a
        // page without created entries has none.
        let mut m = AdjMap::default();
        let list = m.entry(1, AdjList::default);
        for (n, r) in [(1, 40), (2, 3), (3, 30), (4, 10), (5, 31)] {
            list.insert(n, r);
        }
        m.entry(2, AdjList::default).insert(6, 2);
        m.pack(10);
        assert_eq!(created(&m, 1), Some(Some(&[10u64, 30, 31, 40][..])));
        assert_eq!(created(&m, 2), Some(Some(&[][..])));
        let mut m = AdjMap::default();
        m.entry(1, AdjList::default).insert(6, 2);
        m.pack(10);
        assert_eq!(created(&m, 1), Some(Some(&[][..])));
    }

    #[test]
    fn label_changes_keep_coalesced_ranges() {
        let mut c = LabelChanges::default();
        for n in [5, 6, 8, 7, 4, 20] {
            c.add(n);
        }
        let ranges = |c: &LabelChanges| c.added.iter().map(|(&s, &e)| s..e).collect::<Vec<_>>();
        assert_eq!(ranges(&c), vec![4..9, 20..21]);
        c.remove(6);
        c.remove(20);
        c.remove(4);
        c.remove(100);
        assert_eq!(ranges(&c), vec![5..6, 7..9]);
    }
}
