//! Helpers shared by the operators that walk the CSR adjacency (expand,
//! expand-into, expand-count, variable-length expand, shortest path).

use crate::chunk::{Chunk, NULL_ID};
use crate::compile::{directions, Types};
use crate::operator::TaskCtx;
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_plan::{ExpandDirection, Slot};
use rhizome_storage::{Direction, GraphRead, LabelId, RelTypeId, Snapshot};

/// Reads the relationships a row's expansion must not use (single
/// relationships or lists of them) into `out`.
pub(crate) fn excluded_rels(input: &Chunk, row: usize, slots: &[Slot], out: &mut Vec<RelId>) {
    out.clear();
    for &slot in slots {
        let Some(column) = input.column(slot) else {
            continue;
        };
        match column.rel(row) {
            Some(NULL_ID) => {}
            Some(r) => out.push(r),
            None => {
                if let Value::List(items) = column.value(row) {
                    out.extend(items.iter().filter_map(|v| match v {
                        Value::Relationship(r) => Some(*r),
                        _ => None,
                    }));
                }
            }
        }
    }
}

/// True if `node` carries every label (a missing label matches nothing).
#[inline]
pub(crate) fn has_labels(snap: &Snapshot, node: NodeId, labels: &[Option<LabelId>]) -> bool {
    labels
        .iter()
        .all(|l| l.is_some_and(|l| snap.has_label(node, l)))
}

/// The (type, direction) pairs an expansion walks, and whether incoming
/// self-loops must be skipped (undirected expansions see them once).
pub(crate) fn walks(
    snap: &Snapshot,
    types: &Types,
    direction: ExpandDirection,
) -> Vec<(RelTypeId, Direction)> {
    let all = snap.catalog().rel_types.len();
    let mut out = Vec::new();
    for t in types.ids(all) {
        for &d in directions(direction) {
            out.push((t, d));
        }
    }
    out
}

/// Over a graph source: fetches the adjacency the first `n` rows of
/// `column` are about to walk, one round trip per (type, direction); on
/// native storage it does nothing (one branch per chunk).
pub(crate) fn prefetch_walks(
    snap: &Snapshot,
    column: Option<&crate::chunk::Column>,
    n: usize,
    walks: &[(RelTypeId, Direction)],
) {
    if snap.external().is_none() {
        return;
    }
    let Some(column) = column else { return };
    let nodes: Vec<NodeId> = (0..n)
        .filter_map(|i| column.node(i))
        .filter(|&x| x != NULL_ID)
        .collect();
    if nodes.is_empty() {
        return;
    }
    for &(t, d) in walks {
        snap.prefetch_adjacency(&nodes, t, d);
    }
}

/// For `Both`, an incoming entry that is a self-loop was already seen outgoing.
#[inline]
pub(crate) fn skip_entry(
    direction: ExpandDirection,
    d: Direction,
    from: NodeId,
    neighbour: NodeId,
) -> bool {
    direction == ExpandDirection::Both && d == Direction::Incoming && neighbour == from
}

/// Hands the second half of `input[next..]` to another worker if that helps
/// and at least `min` rows remain; returns the new end of the rows this
/// task keeps.
pub(crate) fn maybe_split(
    input: &Chunk,
    next: usize,
    end: usize,
    min: usize,
    ctx: &mut TaskCtx<'_>,
) -> Result<usize> {
    ctx.split_off(next, end, min, |rest| {
        let rest = input.select((rest.start as u32..rest.end as u32).collect());
        move |ctx: &mut TaskCtx<'_>| ctx.push_here(rest).map(drop)
    })
}
