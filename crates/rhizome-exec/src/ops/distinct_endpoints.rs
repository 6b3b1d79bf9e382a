//! `DistinctEndpointsSink`: the set of nodes a walk of a few hops reaches
//! from a set of start nodes, computed one frontier per hop instead of one
//! row per path (the planner's `distinct_endpoints` rule puts it under
//! aggregates that ignore duplicates).
//!
//! Every frontier is a bitset over node ids (over a graph source, whose
//! ids are keys spread over 2^64, an ordered set, and the adjacency of
//! each frontier is fetched in one round trip per type and direction).
//! Relationship uniqueness
//! between consecutive hops is kept exactly with a *witness* per frontier
//! node: the one relationship every walk reaching it arrived by, or
//! "several". A walk may leave a node over relationship `r` unless `r` is
//! the node's only witness — then every walk to it already used `r` (a
//! self-loop taken twice, or an undirected hop walked back). With two or
//! more witnesses some walk arrived by another relationship, so leaving
//! over `r` is allowed. Hops further apart never share a relationship (the
//! planner only uses this operator when their types are disjoint), so
//! these checks are the whole of the uniqueness condition.
//!
//! The hops run as the sink's finishing waves ([`Sink::finish_parts`]), one
//! wave per hop: a frontier of at least [`PART_NODES`] nodes over a native
//! graph is cut into as many parts (ranges of its bitmap's words) as there
//! are workers, each part expands its nodes into its own next bitmap and
//! witnesses, and between waves the parts' results are merged (bitmaps by
//! `or`, witnesses as above: two different relationships make "several").
//! The result is the same set whatever the number of workers.

use super::adjacency::{has_labels, skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::{CNode, Types};
use crate::context::{MemoryBudget, QueryContext};
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::lock;
use crate::per_worker::PerWorker;
use rhizome_common::{Error, NodeId, RelId, Result};
use rhizome_plan::{OpKind, Slot};
use rhizome_storage::{GraphRead, Snapshot};
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// Frontier nodes per part of a hop's wave, at least: a smaller frontier
/// is expanded by one task.
pub const PART_NODES: usize = 1024;

/// No walk reached the node.
const NO_WITNESS: RelId = RelId::MAX;
/// Walks reached the node over two or more relationships.
const MANY_WITNESSES: RelId = RelId::MAX - 1;

/// A set of node ids: a bitmap below a bound (native ids are dense), or an
/// ordered set (a graph source's sparse ids).
#[derive(Debug, Clone)]
enum NodeSet {
    /// A bitmap; no words: not made yet (no start node arrived).
    Dense(Vec<u64>),
    /// An ordered set.
    Sparse(BTreeSet<NodeId>),
}

impl Default for NodeSet {
    fn default() -> NodeSet {
        NodeSet::Dense(Vec::new())
    }
}

impl NodeSet {
    fn with_bound(bound: NodeId) -> NodeSet {
        NodeSet::Dense(vec![0; (bound as usize).div_ceil(64)])
    }

    /// An empty set for the nodes of `snap`, charging a bitmap's memory.
    fn for_graph(snap: &Snapshot, memory: &MemoryBudget) -> Result<NodeSet> {
        if snap.external().is_some() {
            return Ok(NodeSet::Sparse(BTreeSet::new()));
        }
        let bound = snap.node_bound();
        memory.charge((bound as usize).div_ceil(8))?;
        Ok(NodeSet::with_bound(bound))
    }

    /// False until the set was made (see [`NodeSet::Dense`]).
    fn is_made(&self) -> bool {
        !matches!(self, NodeSet::Dense(words) if words.is_empty())
    }

    fn len(&self) -> usize {
        match self {
            NodeSet::Dense(words) => words.iter().map(|w| w.count_ones() as usize).sum(),
            NodeSet::Sparse(set) => set.len(),
        }
    }

    /// Adds `n` (below the bound of a bitmap).
    #[inline]
    fn insert(&mut self, n: NodeId) {
        match self {
            NodeSet::Dense(words) => words[(n / 64) as usize] |= 1 << (n % 64),
            NodeSet::Sparse(set) => {
                set.insert(n);
            }
        }
    }

    fn union_with(&mut self, other: &NodeSet) {
        match (&mut *self, other) {
            (NodeSet::Dense(a), NodeSet::Dense(b)) => {
                if a.len() < b.len() {
                    a.resize(b.len(), 0);
                }
                for (x, y) in a.iter_mut().zip(b) {
                    *x |= y;
                }
            }
            (NodeSet::Sparse(a), _) => a.extend(other.iter()),
            (NodeSet::Dense(_), NodeSet::Sparse(b)) => {
                let mut set = b.clone();
                set.extend(self.iter());
                *self = NodeSet::Sparse(set);
            }
        }
    }

    /// The members, ascending.
    fn iter(&self) -> Box<dyn Iterator<Item = NodeId> + '_> {
        match self {
            NodeSet::Dense(words) => Box::new(words.iter().enumerate().flat_map(|(i, &w)| {
                let mut w = w;
                std::iter::from_fn(move || {
                    (w != 0).then(|| {
                        let bit = w.trailing_zeros() as u64;
                        w &= w - 1;
                        i as u64 * 64 + bit
                    })
                })
            })),
            NodeSet::Sparse(set) => Box::new(set.iter().copied()),
        }
    }

    /// The members in the bitmap's words `words`, ascending (all members
    /// of an ordered set).
    fn iter_words(&self, words: Range<usize>) -> Box<dyn Iterator<Item = NodeId> + '_> {
        match self {
            NodeSet::Dense(all) => {
                let start = words.start;
                Box::new(all[words].iter().enumerate().flat_map(move |(i, &w)| {
                    let mut w = w;
                    std::iter::from_fn(move || {
                        (w != 0).then(|| {
                            let bit = w.trailing_zeros() as u64;
                            w &= w - 1;
                            (start + i) as u64 * 64 + bit
                        })
                    })
                }))
            }
            NodeSet::Sparse(_) => self.iter(),
        }
    }

    /// The word ranges of up to `parts` parts of about equal numbers of
    /// members, each of at least [`PART_NODES`] (one part for an ordered
    /// set, whose lists a source fetches together).
    fn parts(&self, parts: usize) -> Vec<Range<usize>> {
        let NodeSet::Dense(words) = self else {
            return std::iter::once(0..0).collect();
        };
        let members = self.len();
        let parts = (members / PART_NODES).clamp(1, parts.max(1));
        let per_part = members.div_ceil(parts);
        let mut ranges = Vec::with_capacity(parts);
        let (mut start, mut count) = (0, 0);
        for (i, w) in words.iter().enumerate() {
            count += w.count_ones() as usize;
            if count >= per_part && ranges.len() + 1 < parts {
                ranges.push(start..i + 1);
                (start, count) = (i + 1, 0);
            }
        }
        ranges.push(start..words.len());
        ranges
    }
}

/// The witness of each node of a frontier: by id below the bound (native),
/// or in a map (a graph source).
enum Witnesses {
    Dense(Vec<RelId>),
    Sparse(HashMap<NodeId, RelId>),
}

impl Witnesses {
    /// Empty witnesses for the nodes of `snap`, charging a dense array's memory.
    fn for_graph(snap: &Snapshot, memory: &MemoryBudget) -> Result<Witnesses> {
        if snap.external().is_some() {
            return Ok(Witnesses::Sparse(HashMap::new()));
        }
        let bound = snap.node_bound();
        memory.charge(bound as usize * 8)?;
        Ok(Witnesses::Dense(vec![NO_WITNESS; bound as usize]))
    }

    fn get(&self, n: NodeId) -> RelId {
        match self {
            Witnesses::Dense(w) => w[n as usize],
            Witnesses::Sparse(m) => m.get(&n).copied().unwrap_or(NO_WITNESS),
        }
    }

    fn slot(&mut self, n: NodeId) -> &mut RelId {
        match self {
            Witnesses::Dense(w) => &mut w[n as usize],
            Witnesses::Sparse(m) => m.entry(n).or_insert(NO_WITNESS),
        }
    }

    /// Takes in the witnesses another part of the same frontier saw.
    fn merge(&mut self, other: &Witnesses) {
        match (self, other) {
            (Witnesses::Dense(a), Witnesses::Dense(b)) => {
                for (x, &y) in a.iter_mut().zip(b) {
                    *x = combine(*x, y);
                }
            }
            (this, other) => {
                let seen: Vec<(NodeId, RelId)> = match other {
                    Witnesses::Dense(b) => b
                        .iter()
                        .enumerate()
                        .filter(|(_, &r)| r != NO_WITNESS)
                        .map(|(n, &r)| (n as NodeId, r))
                        .collect(),
                    Witnesses::Sparse(m) => m.iter().map(|(&n, &r)| (n, r)).collect(),
                };
                for (n, r) in seen {
                    let slot = this.slot(n);
                    *slot = combine(*slot, r);
                }
            }
        }
    }
}

/// The witness of a node reached with witness `a` and with witness `b`.
#[inline]
fn combine(a: RelId, b: RelId) -> RelId {
    match (a, b) {
        (NO_WITNESS, b) => b,
        (a, NO_WITNESS) => a,
        (a, b) if a == b => a,
        _ => MANY_WITNESSES,
    }
}

/// The walk between finishing waves.
#[derive(Default)]
struct Walk {
    /// The start nodes were gathered into `frontier`.
    started: bool,
    /// The next hop to take (the number of hops once the walk is done).
    hop: usize,
    /// The nodes the walk reached so far (the start nodes at first).
    frontier: NodeSet,
    /// The frontier's witnesses (none for the start nodes).
    witness: Option<Witnesses>,
    /// The frontier's parts the current wave expands.
    parts: Vec<Range<usize>>,
    /// What failed between waves, returned by `finish`.
    error: Option<Error>,
}

/// A part's next frontier and witnesses.
type PartOutput = (NodeSet, Option<Witnesses>);

/// Collects the walk's start nodes per worker; walks the hops when finished,
/// one wave of parallel parts per hop.
pub struct DistinctEndpointsSink {
    node: Arc<CNode>,
    starts: PerWorker<NodeSet>,
    width: AtomicUsize,
    /// The snapshot and memory budget, kept from the first chunk for the
    /// finishing waves.
    graph: OnceLock<(Snapshot, Arc<MemoryBudget>)>,
    walk: RwLock<Walk>,
    /// Per part of the current wave, its output.
    outputs: Mutex<Vec<Option<PartOutput>>>,
}

impl DistinctEndpointsSink {
    /// The sink for a `DistinctEndpoints` node, with `slots` worker slots.
    pub fn new(node: Arc<CNode>, slots: usize) -> DistinctEndpointsSink {
        DistinctEndpointsSink {
            node,
            starts: PerWorker::new(slots, |_| NodeSet::default()),
            width: AtomicUsize::new(0),
            graph: OnceLock::new(),
            walk: RwLock::default(),
            outputs: Mutex::default(),
        }
    }

    /// The walk's hops, compiled.
    fn hop(&self, i: usize) -> Hop<'_> {
        let OpKind::DistinctEndpoints { hops, .. } = &self.node.kind else {
            unreachable!("DistinctEndpointsSink built for a DistinctEndpoints node");
        };
        Hop {
            types: &self.node.c.hops[i].types,
            labels: &self.node.c.hops[i].to_labels,
            direction: hops[i].direction,
        }
    }

    fn hop_count(&self) -> usize {
        match &self.node.kind {
            OpKind::DistinctEndpoints { hops, .. } => hops.len(),
            _ => 0,
        }
    }

    /// Between waves: gathers the start nodes (first call) or merges the
    /// last wave's parts into the next frontier, and cuts the frontier
    /// into the next wave's parts; returns their number (0: walk done).
    fn next_wave(&self, walk: &mut Walk) -> Result<usize> {
        if !walk.started {
            walk.started = true;
            for part in self.starts.take_all() {
                walk.frontier.union_with(&part);
            }
            if !walk.frontier.is_made() {
                walk.hop = self.hop_count();
            }
        } else {
            let mut next: Option<NodeSet> = None;
            let mut witness: Option<Witnesses> = None;
            for (set, w) in std::mem::take(&mut *lock(&self.outputs))
                .into_iter()
                .flatten()
            {
                match &mut next {
                    Some(n) => n.union_with(&set),
                    None => next = Some(set),
                }
                match (&mut witness, w) {
                    (Some(a), Some(b)) => a.merge(&b),
                    (None, w) => witness = w,
                    _ => {}
                }
            }
            walk.frontier = next.unwrap_or_default();
            walk.witness = witness;
            walk.hop += 1;
        }
        if walk.hop >= self.hop_count() {
            return Ok(0);
        }
        walk.parts = walk.frontier.parts(self.starts.len());
        *lock(&self.outputs) = (0..walk.parts.len()).map(|_| None).collect();
        Ok(walk.parts.len())
    }

    fn slots(&self) -> (Slot, Slot) {
        match &self.node.kind {
            OpKind::DistinctEndpoints { from, to, .. } => (*from, *to),
            _ => unreachable!("DistinctEndpointsSink built for a DistinctEndpoints node"),
        }
    }
}

/// One hop of the walk, compiled.
struct Hop<'a> {
    types: &'a Types,
    labels: &'a [Option<rhizome_storage::LabelId>],
    direction: rhizome_plan::ExpandDirection,
}

/// The next frontier (with witnesses when `witness_out` is given) from
/// the frontier nodes `nodes`, whose witnesses are `witness_in` (none for
/// the start nodes).
fn step(
    snap: &Snapshot,
    memory: &MemoryBudget,
    hop: &Hop<'_>,
    nodes: impl Iterator<Item = NodeId>,
    witness_in: Option<&Witnesses>,
    mut witness_out: Option<&mut Witnesses>,
) -> Result<NodeSet> {
    let bound = snap.node_bound();
    let mut next = NodeSet::for_graph(snap, memory)?;
    let walks = walks(snap, hop.types, hop.direction);
    let nodes: Box<dyn Iterator<Item = NodeId>> = if snap.external().is_some() {
        // A source fetches the whole frontier's lists in one round trip
        // per (type, direction), not one per node.
        let nodes: Vec<NodeId> = nodes.collect();
        for &(t, d) in &walks {
            snap.prefetch_adjacency(&nodes, t, d);
        }
        Box::new(nodes.into_iter())
    } else {
        Box::new(nodes)
    };
    for x in nodes {
        let arrived = witness_in.map_or(MANY_WITNESSES, |w| w.get(x));
        for &(t, d) in &walks {
            let adj = snap.adjacency(x, t, d);
            for i in 0..adj.len() {
                let y = adj.neighbour(i);
                if skip_entry(hop.direction, d, x, y) || y >= bound {
                    continue;
                }
                let r = adj.rel_id(i);
                if r == arrived {
                    continue;
                }
                if !hop.labels.is_empty() && !has_labels(snap, y, hop.labels) {
                    continue;
                }
                next.insert(y);
                if let Some(w) = witness_out.as_deref_mut() {
                    let slot = w.slot(y);
                    *slot = combine(*slot, r);
                }
            }
        }
    }
    if let NodeSet::Sparse(_) = next {
        // An ordered set's entry and a witness: about 48 bytes a node.
        memory.charge(next.len() * 48)?;
    }
    Ok(next)
}

impl Sink for DistinctEndpointsSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let (from, _) = self.slots();
        self.width.store(chunk.width(), Ordering::Relaxed);
        let Some(column) = chunk.column(from) else {
            return NEED_MORE;
        };
        let bound = ctx.q.snapshot.node_bound();
        self.graph
            .get_or_init(|| (ctx.q.snapshot.clone(), ctx.q.memory.clone()));
        let mut starts = self.starts.lock(ctx.worker);
        if !starts.is_made() {
            *starts = NodeSet::for_graph(&ctx.q.snapshot, &ctx.q.memory)?;
        }
        for row in 0..chunk.len() {
            match column.node(row) {
                Some(n) if n != NULL_ID && n < bound => starts.insert(n),
                _ => {}
            }
        }
        NEED_MORE
    }

    /// One wave per hop (see the module documentation).
    fn finish_parts(&self) -> usize {
        let mut walk = self.walk.write().unwrap_or_else(|p| p.into_inner());
        if walk.error.is_some() {
            return 0;
        }
        match self.next_wave(&mut walk) {
            Ok(parts) => parts,
            Err(e) => {
                walk.error = Some(e);
                0
            }
        }
    }

    /// Expands part `part` of the current hop's frontier.
    fn finish_part(&self, part: usize) -> Result<()> {
        let walk = self.walk.read().unwrap_or_else(|p| p.into_inner());
        let Some((snap, memory)) = self.graph.get() else {
            return Ok(());
        };
        let last = walk.hop + 1 == self.hop_count();
        let mut witness = match last {
            true => None,
            false => Some(Witnesses::for_graph(snap, memory)?),
        };
        let next = step(
            snap,
            memory,
            &self.hop(walk.hop),
            walk.frontier.iter_words(walk.parts[part].clone()),
            walk.witness.as_ref(),
            witness.as_mut(),
        )?;
        drop(walk);
        lock(&self.outputs)[part] = Some((next, witness));
        Ok(())
    }

    fn finish(&self, q: &QueryContext) -> Result<Vec<Chunk>> {
        let (_, to) = self.slots();
        let mut walk = self.walk.write().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = walk.error.take() {
            return Err(e);
        }
        // Cancelled between hops, or no start node: no rows.
        if q.scope.is_cancelled() || walk.hop < self.hop_count() || !walk.frontier.is_made() {
            return Ok(Vec::new());
        }
        let frontier = std::mem::take(&mut walk.frontier);
        drop(walk);
        let width = self.width.load(Ordering::Relaxed).max(to + 1);
        let mut chunks = Vec::new();
        let mut nodes: Vec<NodeId> = Vec::with_capacity(CHUNK_SIZE);
        for n in frontier.iter() {
            nodes.push(n);
            if nodes.len() == CHUNK_SIZE {
                chunks.push(endpoint_chunk(width, to, std::mem::take(&mut nodes)));
            }
        }
        if !nodes.is_empty() {
            chunks.push(endpoint_chunk(width, to, nodes));
        }
        Ok(chunks)
    }

    fn reads(&self) -> Option<&[Slot]> {
        match &self.node.kind {
            OpKind::DistinctEndpoints { from, .. } => Some(std::slice::from_ref(from)),
            _ => None,
        }
    }
}

/// A chunk of `width` slots holding `nodes` in `to`.
fn endpoint_chunk(width: usize, to: Slot, nodes: Vec<NodeId>) -> Chunk {
    let mut chunk = Chunk::new(width, nodes.len());
    chunk.set_column(to, Column::new(ColumnData::Nodes(nodes)));
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_sets_iterate_their_members_in_order() {
        let mut a = NodeSet::with_bound(200);
        for n in [0, 63, 64, 130, 199] {
            a.insert(n);
        }
        let mut b = NodeSet::with_bound(70);
        b.insert(5);
        b.insert(63);
        a.union_with(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![0, 5, 63, 64, 130, 199]);
        assert_eq!(NodeSet::default().iter().count(), 0);
        assert!(!NodeSet::default().is_made());
    }

    #[test]
    fn a_frontier_splits_into_parts_holding_every_member_once() {
        let mut set = NodeSet::with_bound(100_000);
        for n in (0..100_000).step_by(7) {
            set.insert(n);
        }
        let all: Vec<_> = set.iter().collect();
        for parts in [1, 2, 3, 8] {
            let ranges = set.parts(parts);
            assert_eq!(ranges.len(), parts, "{} members", all.len());
            let joined: Vec<_> = ranges
                .iter()
                .flat_map(|r| set.iter_words(r.clone()))
                .collect();
            assert_eq!(joined, all, "{parts} parts");
        }
        // Too few members for two parts of PART_NODES: one part.
        let mut small = NodeSet::with_bound(100_000);
        for n in 0..PART_NODES as u64 + 5 {
            small.insert(n * 3);
        }
        assert_eq!(small.parts(4).len(), 1);
        // Witnesses of two parts: two relationships make "several".
        let mut a = Witnesses::Dense(vec![NO_WITNESS, 4, 4, 9]);
        a.merge(&Witnesses::Dense(vec![3, NO_WITNESS, 4, 8]));
        let Witnesses::Dense(merged) = a else {
            unreachable!()
        };
        assert_eq!(merged, vec![3, 4, 4, MANY_WITNESSES]);
    }

    #[test]
    fn sparse_node_sets_hold_ids_far_apart() {
        let far = (3u64 << 48) | 17;
        let mut a = NodeSet::Sparse(BTreeSet::new());
        assert!(a.is_made());
        a.insert(far);
        a.insert(5);
        let mut b = NodeSet::Sparse(BTreeSet::new());
        b.insert(far);
        b.insert(u64::MAX - 2);
        a.union_with(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![5, far, u64::MAX - 2]);
        assert_eq!(a.len(), 3);
        // A worker that saw no start node keeps the empty bitmap.
        let mut none = NodeSet::default();
        none.union_with(&a);
        assert_eq!(none.iter().collect::<Vec<_>>(), vec![5, far, u64::MAX - 2]);
        let mut w = Witnesses::Sparse(HashMap::new());
        assert_eq!(w.get(far), NO_WITNESS);
        *w.slot(far) = 9;
        assert_eq!(w.get(far), 9);
    }
}
