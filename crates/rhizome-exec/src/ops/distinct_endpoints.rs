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

use super::adjacency::{has_labels, skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::{CNode, Types};
use crate::context::QueryContext;
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::PerWorker;
use rhizome_common::{NodeId, RelId, Result};
use rhizome_plan::{OpKind, Slot};
use rhizome_storage::{GraphRead, Snapshot};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
    fn for_graph(snap: &Snapshot, q: &QueryContext) -> Result<NodeSet> {
        if snap.external().is_some() {
            return Ok(NodeSet::Sparse(BTreeSet::new()));
        }
        let bound = snap.node_bound();
        q.memory.charge((bound as usize).div_ceil(8))?;
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
}

/// The witness of each node of a frontier: by id below the bound (native),
/// or in a map (a graph source).
enum Witnesses {
    Dense(Vec<RelId>),
    Sparse(HashMap<NodeId, RelId>),
}

impl Witnesses {
    /// Empty witnesses for the nodes of `snap`, charging a dense array's memory.
    fn for_graph(snap: &Snapshot, q: &QueryContext) -> Result<Witnesses> {
        if snap.external().is_some() {
            return Ok(Witnesses::Sparse(HashMap::new()));
        }
        let bound = snap.node_bound();
        q.memory.charge(bound as usize * 8)?;
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
}

/// Collects the walk's start nodes per worker; walks the hops when finished.
pub struct DistinctEndpointsSink {
    node: Arc<CNode>,
    starts: PerWorker<NodeSet>,
    width: AtomicUsize,
}

impl DistinctEndpointsSink {
    /// The sink for a `DistinctEndpoints` node, with `slots` worker slots.
    pub fn new(node: Arc<CNode>, slots: usize) -> DistinctEndpointsSink {
        DistinctEndpointsSink {
            node,
            starts: PerWorker::new(slots, |_| NodeSet::default()),
            width: AtomicUsize::new(0),
        }
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
/// `frontier`, whose witnesses are `witness_in` (none for the start nodes).
fn step(
    snap: &Snapshot,
    q: &QueryContext,
    hop: &Hop<'_>,
    frontier: &NodeSet,
    witness_in: Option<&Witnesses>,
    mut witness_out: Option<&mut Witnesses>,
) -> Result<NodeSet> {
    let bound = snap.node_bound();
    let mut next = NodeSet::for_graph(snap, q)?;
    let walks = walks(snap, hop.types, hop.direction);
    if snap.external().is_some() {
        // A source fetches the whole frontier's lists in one round trip
        // per (type, direction), not one per node.
        let nodes: Vec<NodeId> = frontier.iter().collect();
        for &(t, d) in &walks {
            snap.prefetch_adjacency(&nodes, t, d);
        }
    }
    for x in frontier.iter() {
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
                    *slot = match *slot {
                        NO_WITNESS => r,
                        seen if seen == r => r,
                        _ => MANY_WITNESSES,
                    };
                }
            }
        }
    }
    if let NodeSet::Sparse(_) = next {
        // An ordered set's entry and a witness: about 48 bytes a node.
        q.memory.charge(next.len() * 48)?;
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
        let mut starts = self.starts.lock(ctx.worker);
        if !starts.is_made() {
            *starts = NodeSet::for_graph(&ctx.q.snapshot, ctx.q)?;
        }
        for row in 0..chunk.len() {
            match column.node(row) {
                Some(n) if n != NULL_ID && n < bound => starts.insert(n),
                _ => {}
            }
        }
        NEED_MORE
    }

    fn finish(&self, q: &QueryContext) -> Result<Vec<Chunk>> {
        let (_, to) = self.slots();
        let OpKind::DistinctEndpoints { hops, .. } = &self.node.kind else {
            unreachable!("DistinctEndpointsSink built for a DistinctEndpoints node");
        };
        let mut frontier = NodeSet::default();
        for part in self.starts.take_all() {
            frontier.union_with(&part);
        }
        if !frontier.is_made() {
            return Ok(Vec::new());
        }
        let snap = &q.snapshot;
        let compiled = &self.node.c.hops;
        let mut witness: Option<Witnesses> = None;
        for (i, h) in hops.iter().enumerate() {
            if q.scope.is_cancelled() {
                return Ok(Vec::new());
            }
            let hop = Hop {
                types: &compiled[i].types,
                labels: &compiled[i].to_labels,
                direction: h.direction,
            };
            let last = i + 1 == hops.len();
            let mut out_witness = if last {
                None
            } else {
                Some(Witnesses::for_graph(snap, q)?)
            };
            frontier = step(
                snap,
                q,
                &hop,
                &frontier,
                witness.as_ref(),
                out_witness.as_mut(),
            )?;
            witness = out_witness;
        }
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
