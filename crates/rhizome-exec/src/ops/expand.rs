//! Single-hop expansion over the CSR adjacency: `Expand` and `ExpandInto`
//! (the factorized count is `super::expand_count`).
//!
//! Expand walks each input row's adjacency slices and emits chunk by chunk;
//! while workers are idle it hands the second half of its remaining input
//! rows to a new task at its own stage, so a single start node fans out.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::{directions, CNode, Types};
use crate::pipeline::{Operator, TaskCtx};
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_plan::{ExpandDirection, OpKind, Slot};
use rhizome_storage::{Direction, GraphRead, LabelId, RelTypeId, Snapshot};
use std::sync::Arc;

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

/// `(from)-[rel]->(to)` for each input row.
pub struct Expand {
    node: Arc<CNode>,
}

impl Expand {
    /// The operator for an `Expand` node.
    pub fn new(node: Arc<CNode>) -> Expand {
        Expand { node }
    }
}

struct Output {
    rows: Vec<u32>,
    rels: Vec<RelId>,
    nodes: Vec<NodeId>,
    /// Chunks emitted so far.
    flushes: usize,
}

impl Output {
    fn new() -> Output {
        Output {
            rows: Vec::with_capacity(CHUNK_SIZE),
            rels: Vec::with_capacity(CHUNK_SIZE),
            nodes: Vec::with_capacity(CHUNK_SIZE),
            flushes: 0,
        }
    }

    fn flush(&mut self, input: &Chunk, rel: Slot, to: Slot, ctx: &mut TaskCtx<'_>) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        self.flushes += 1;
        let mut chunk = input.select(std::mem::replace(
            &mut self.rows,
            Vec::with_capacity(CHUNK_SIZE),
        ));
        chunk.set_column(
            rel,
            Column::new(ColumnData::Rels(std::mem::replace(
                &mut self.rels,
                Vec::with_capacity(CHUNK_SIZE),
            ))),
        );
        chunk.set_column(
            to,
            Column::new(ColumnData::Nodes(std::mem::replace(
                &mut self.nodes,
                Vec::with_capacity(CHUNK_SIZE),
            ))),
        );
        ctx.emit(chunk)
    }
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
        move |ctx: &mut TaskCtx<'_>| ctx.push_here(rest)
    })
}

impl Operator for Expand {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let OpKind::Expand {
            from,
            rel,
            to,
            direction,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("Expand built for an Expand node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let labels = &self.node.c.to_labels;
        let walks = walks(snap, types, *direction);
        let mut out = Output::new();
        let mut excluded = Vec::new();
        let from_column = input.column(*from).cloned();
        let mut end = input.len();
        let mut row = 0;
        // Rows are checked for cancellation and splitting every 64, and
        // after each chunk emitted (its rows' work downstream can be long).
        let mut checked_flushes = 0;
        while row < end {
            if row % 64 == 0 || out.flushes != checked_flushes {
                checked_flushes = out.flushes;
                if ctx.cancelled() {
                    return Ok(());
                }
                end = maybe_split(&input, row + 1, end, 2, ctx)?;
            }
            let source = from_column
                .as_ref()
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut found = false;
            if source != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                for &(t, d) in &walks {
                    let adj = snap.adjacency(source, t, d);
                    for i in 0..adj.len() {
                        let neighbour = adj.neighbours[i];
                        if skip_entry(*direction, d, source, neighbour) {
                            continue;
                        }
                        if !labels.is_empty() && !has_labels(snap, neighbour, labels) {
                            continue;
                        }
                        let r = adj.rel_id(i);
                        if !excluded.is_empty() && excluded.contains(&r) {
                            continue;
                        }
                        found = true;
                        out.rows.push(row as u32);
                        out.rels.push(r);
                        out.nodes.push(neighbour);
                        if out.rows.len() == CHUNK_SIZE {
                            out.flush(&input, *rel, *to, ctx)?;
                        }
                    }
                }
            }
            if *optional && !found {
                out.rows.push(row as u32);
                out.rels.push(NULL_ID);
                out.nodes.push(NULL_ID);
                if out.rows.len() == CHUNK_SIZE {
                    out.flush(&input, *rel, *to, ctx)?;
                }
            }
            row += 1;
        }
        out.flush(&input, *rel, *to, ctx)
    }
}

/// The positions of `target` in a sorted neighbour slice.
#[inline]
fn equal_range(neighbours: &[NodeId], target: NodeId) -> std::ops::Range<usize> {
    let lo = neighbours.partition_point(|&n| n < target);
    let hi = lo + neighbours[lo..].partition_point(|&n| n == target);
    lo..hi
}

/// Relationships between two bound nodes.
pub struct ExpandInto {
    node: Arc<CNode>,
}

impl ExpandInto {
    /// The operator for an `ExpandInto` node.
    pub fn new(node: Arc<CNode>) -> ExpandInto {
        ExpandInto { node }
    }
}

impl Operator for ExpandInto {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let OpKind::ExpandInto {
            from,
            rel,
            to,
            direction,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("ExpandInto built for an ExpandInto node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let walks = walks(snap, types, *direction);
        let mut out = Output::new();
        let mut excluded = Vec::new();
        for row in 0..input.len() {
            let a = input
                .column(*from)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let b = input
                .column(*to)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut found = false;
            if a != NULL_ID && b != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                for &(t, d) in &walks {
                    // Look from whichever end has the shorter list.
                    let (adj, flipped) = if snap.degree(a, t, d) <= snap.degree(b, t, d.reverse()) {
                        (snap.adjacency(a, t, d), false)
                    } else {
                        (snap.adjacency(b, t, d.reverse()), true)
                    };
                    let target = if flipped { a } else { b };
                    for i in equal_range(adj.neighbours, target) {
                        if skip_entry(*direction, d, a, b) {
                            continue;
                        }
                        let r = adj.rel_id(i);
                        if excluded.contains(&r) {
                            continue;
                        }
                        found = true;
                        out.rows.push(row as u32);
                        out.rels.push(r);
                        out.nodes.push(b);
                        if out.rows.len() == CHUNK_SIZE {
                            out.flush(&input, *rel, *to, ctx)?;
                        }
                    }
                }
            }
            if *optional && !found {
                out.rows.push(row as u32);
                out.rels.push(NULL_ID);
                out.nodes.push(b);
            }
        }
        out.flush(&input, *rel, *to, ctx)
    }
}
