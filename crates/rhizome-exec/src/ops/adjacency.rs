//! Helpers shared by the operators that walk the CSR adjacency (expand,
//! expand-into, expand-count, variable-length expand, shortest path).

use crate::chunk::{Chunk, NULL_ID};
use crate::compile::{directions, Types};
use crate::operator::TaskCtx;
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_plan::{ExpandDirection, Slot};
use rhizome_storage::{Direction, GraphRead, LabelId, RelTypeId, Snapshot};
use std::collections::HashSet;

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

/// The relationship-list value of a walked path (`[r1, r2, …]`, first hop
/// first), as a variable-length relationship variable holds it.
pub(crate) fn rel_list(path: &[RelId]) -> Value {
    Value::List(path.iter().map(|&r| Value::Relationship(r)).collect())
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

/// Most nodes a level-by-level prefetch ([`prefetch_levels`],
/// [`prefetch_reachable`]) gathers for one chunk; past it, deeper reads
/// fetch as they go.
const PREFETCH_NODES: usize = 1 << 20;

/// One hop of a walk a prefetch follows: its (type, direction) pairs and
/// the labels the nodes it reaches must carry.
pub(crate) type LevelHop<'a> = (&'a [(RelTypeId, Direction)], &'a [Option<LabelId>]);

/// The nodes of `level` that are not [`NULL_ID`], sorted and deduplicated.
fn level_of(mut level: Vec<NodeId>) -> Vec<NodeId> {
    level.retain(|&x| x != NULL_ID);
    level.sort_unstable();
    level.dedup();
    level
}

/// Over a graph source: fetches the adjacency a walk of `hops` from
/// `starts` reads, a level at a time: the lists of every node of level
/// `i` over hop `i`'s (type, direction) pairs in one round trip per pair,
/// then level `i + 1` = their neighbours that carry hop `i`'s labels. The
/// walk itself then reads pinned lists. Relationship predicates and
/// uniqueness are not applied, so a level may hold a few nodes the walk
/// skips. On native storage it does nothing.
pub(crate) fn prefetch_levels(snap: &Snapshot, starts: Vec<NodeId>, hops: &[LevelHop<'_>]) {
    if snap.external().is_none() {
        return;
    }
    let mut level = level_of(starts);
    let mut gathered = level.len();
    for (i, &(walks, labels)) in hops.iter().enumerate() {
        if level.is_empty() || gathered > PREFETCH_NODES {
            return;
        }
        for &(t, d) in walks {
            snap.prefetch_adjacency(&level, t, d);
        }
        if i + 1 == hops.len() {
            return;
        }
        let mut next = Vec::new();
        for &x in &level {
            for &(t, d) in walks {
                let adj = snap.adjacency(x, t, d);
                next.extend(
                    adj.neighbours()
                        .iter()
                        .filter(|&y| labels.is_empty() || has_labels(snap, y, labels)),
                );
            }
        }
        level = level_of(next);
        gathered += level.len();
    }
}

/// Over a graph source: fetches the adjacency a variable-length walk of at
/// most `depth` relationships over `walks` from `starts` reads, breadth
/// first: the lists of every node first reached at distance `d < depth`
/// come in one round trip per (type, direction) for the whole level. On
/// native storage it does nothing.
pub(crate) fn prefetch_reachable(
    snap: &Snapshot,
    starts: Vec<NodeId>,
    walks: &[(RelTypeId, Direction)],
    depth: u64,
) {
    if snap.external().is_none() || depth == 0 {
        return;
    }
    let mut level = level_of(starts);
    let mut seen: HashSet<NodeId> = level.iter().copied().collect();
    let mut distance = 0u64;
    while !level.is_empty() && seen.len() <= PREFETCH_NODES {
        for &(t, d) in walks {
            snap.prefetch_adjacency(&level, t, d);
        }
        distance += 1;
        if distance >= depth {
            return;
        }
        let mut next = Vec::new();
        for &x in &level {
            for &(t, d) in walks {
                let adj = snap.adjacency(x, t, d);
                next.extend(adj.neighbours().iter().filter(|&y| seen.insert(y)));
            }
        }
        next.sort_unstable();
        level = next;
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
