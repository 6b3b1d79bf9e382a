//! `DistinctEndpointsSink`: the set of nodes a walk of a few hops reaches
//! from a set of start nodes, computed one frontier per hop instead of one
//! row per path (the planner's `distinct_endpoints` rule puts it under
//! aggregates that ignore duplicates).
//!
//! Every frontier is a bitset over node ids. Relationship uniqueness
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// No walk reached the node.
const NO_WITNESS: RelId = RelId::MAX;
/// Walks reached the node over two or more relationships.
const MANY_WITNESSES: RelId = RelId::MAX - 1;

/// A set of node ids below a bound.
#[derive(Debug, Default, Clone)]
struct NodeSet {
    words: Vec<u64>,
}

impl NodeSet {
    fn with_bound(bound: NodeId) -> NodeSet {
        NodeSet {
            words: vec![0; (bound as usize).div_ceil(64)],
        }
    }

    #[inline]
    fn insert(&mut self, n: NodeId) {
        self.words[(n / 64) as usize] |= 1 << (n % 64);
    }

    fn union_with(&mut self, other: &NodeSet) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// The members, ascending.
    fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let bit = w.trailing_zeros() as u64;
                    w &= w - 1;
                    i as u64 * 64 + bit
                })
            })
        })
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
    hop: &Hop<'_>,
    frontier: &NodeSet,
    witness_in: Option<&[RelId]>,
    mut witness_out: Option<&mut Vec<RelId>>,
) -> NodeSet {
    let bound = snap.node_bound();
    let mut next = NodeSet::with_bound(bound);
    let walks = walks(snap, hop.types, hop.direction);
    for x in frontier.iter() {
        let arrived = witness_in.map_or(MANY_WITNESSES, |w| w[x as usize]);
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
                    let slot = &mut w[y as usize];
                    *slot = match *slot {
                        NO_WITNESS => r,
                        seen if seen == r => r,
                        _ => MANY_WITNESSES,
                    };
                }
            }
        }
    }
    next
}

impl Sink for DistinctEndpointsSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let (from, _) = self.slots();
        self.width.store(chunk.width(), Ordering::Relaxed);
        let Some(column) = chunk.column(from) else {
            return NEED_MORE;
        };
        if let Some(graph) = ctx.q.snapshot.external() {
            // The frontiers are dense bitmaps over node ids, which a
            // source's sparse key-based ids would make enormous.
            return Err(rhizome_common::Error::new(
                rhizome_common::ErrorKind::SemanticError,
                format!(
                    "{}: counting distinct nodes reached from a label scan is not supported \
                     over a graph source yet; start from nodes looked up by key",
                    graph.describe()
                ),
            ));
        }
        let bound = ctx.q.snapshot.node_bound();
        let mut starts = self.starts.lock(ctx.worker);
        if starts.words.is_empty() {
            ctx.q.memory.charge((bound as usize).div_ceil(8))?;
            *starts = NodeSet::with_bound(bound);
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
        if frontier.words.is_empty() {
            return Ok(Vec::new());
        }
        let snap = &q.snapshot;
        let bound = snap.node_bound();
        let compiled = &self.node.c.hops;
        let mut witness: Option<Vec<RelId>> = None;
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
                q.memory.charge(bound as usize * 8)?;
                Some(vec![NO_WITNESS; bound as usize])
            };
            frontier = step(
                snap,
                &hop,
                &frontier,
                witness.as_deref(),
                out_witness.as_mut(),
            );
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
    }
}
