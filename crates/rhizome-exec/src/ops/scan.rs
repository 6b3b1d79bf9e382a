//! Node sources: all-nodes and label scans, index seeks, seeks by id.
//!
//! A scan extends each input row with every matching node. When the work is
//! large and the run is parallel, the node ranges are cut into morsels that
//! run as separate tasks.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::pipeline::{Operator, TaskCtx};
use rhizome_common::{NodeId, Result, Value};
use rhizome_plan::{IndexLookup, OpKind, Slot};
use rhizome_storage::GraphRead;
use std::ops::{Bound, Range};
use std::sync::Arc;

/// Most nodes per morsel when a scan is split over workers.
pub const MORSEL_NODES: u64 = 16 * 1024;

/// Morsels a scan aims to give each worker it may use, so that the last
/// morsels to finish leave little imbalance.
const MORSELS_PER_WORKER: u64 = 16;

/// Nodes per morsel for a scan of `total` nodes on up to `workers` workers:
/// [`MORSEL_NODES`], or fewer when that would give each worker fewer than
/// [`MORSELS_PER_WORKER`] morsels, but never under a chunk's worth.
fn morsel_nodes(total: u64, workers: usize) -> u64 {
    (total / (workers as u64 * MORSELS_PER_WORKER).max(1)).clamp(CHUNK_SIZE as u64, MORSEL_NODES)
}

/// Scans and seeks.
pub struct Scan {
    node: Arc<CNode>,
}

impl Scan {
    /// The operator for a scan or seek node.
    pub fn new(node: Arc<CNode>) -> Scan {
        Scan { node }
    }

    fn out(&self) -> Slot {
        match &self.node.kind {
            OpKind::AllNodesScan { out }
            | OpKind::LabelScan { out, .. }
            | OpKind::IndexSeek { out, .. }
            | OpKind::NodeByIdSeek { out, .. } => *out,
            _ => unreachable!("scan operator built for a scan node"),
        }
    }

    /// The matching nodes for one input row: id ranges, or an explicit list.
    fn targets(&self, input: &Chunk, row: usize, ctx: &TaskCtx<'_>) -> Result<Targets> {
        let snap = &ctx.q.snapshot;
        let c = &self.node.c;
        Ok(match &self.node.kind {
            // Live nodes only: deleted ones leave holes in the id space.
            OpKind::AllNodesScan { .. } => Targets::Ranges(snap.node_ranges().into_owned()),
            OpKind::LabelScan { .. } => match c.label {
                Some(label) => Targets::Ranges(snap.label_range_slice(label).to_vec()),
                None => Targets::List(Vec::new()),
            },
            OpKind::IndexSeek { lookup, .. } => {
                let (Some(label), Some(key)) = (c.label, c.key) else {
                    return Ok(Targets::List(Vec::new()));
                };
                let eval = Evaluator::new(ctx.q);
                let r = Row::new(input, row);
                let mut nodes = Vec::new();
                let seek = |value: &Value| -> Vec<NodeId> {
                    snap.index_seek(label, key, value).unwrap_or_else(|| {
                        snap.label_range_slice(label)
                            .iter()
                            .flat_map(|r| r.clone())
                            .filter(|&n| {
                                rhizome_functions::ops::equals(&snap.node_property(n, key), value)
                                    == Some(true)
                            })
                            .collect()
                    })
                };
                match lookup {
                    IndexLookup::Equal(_) => nodes = seek(&eval.eval(&c.exprs[0], &r)?),
                    IndexLookup::AnyOf(_) => {
                        if let Value::List(values) = eval.eval(&c.exprs[0], &r)? {
                            for v in &values {
                                nodes.extend(seek(v));
                            }
                            nodes.sort_unstable();
                            nodes.dedup();
                        }
                    }
                    IndexLookup::Range(lo, hi) => {
                        let lo_v = eval.eval(&c.exprs[0], &r)?;
                        let hi_v = eval.eval(&c.exprs[1], &r)?;
                        let bound =
                            |b: &rhizome_plan::SeekBound, v: &Value| -> Option<Bound<Value>> {
                                match b {
                                    rhizome_plan::SeekBound::Unbounded => Some(Bound::Unbounded),
                                    _ if v.is_null() => None,
                                    rhizome_plan::SeekBound::Inclusive(_) => {
                                        Some(Bound::Included(v.clone()))
                                    }
                                    rhizome_plan::SeekBound::Exclusive(_) => {
                                        Some(Bound::Excluded(v.clone()))
                                    }
                                }
                            };
                        if let (Some(lower), Some(upper)) = (bound(lo, &lo_v), bound(hi, &hi_v)) {
                            nodes = range_seek(ctx, label, key, lower, upper);
                        }
                    }
                }
                Targets::List(nodes)
            }
            OpKind::NodeByIdSeek { .. } => {
                let eval = Evaluator::new(ctx.q);
                let ids = eval.eval(&c.exprs[0], &Row::new(input, row))?;
                let ids = match ids {
                    Value::List(items) => items,
                    other => vec![other],
                };
                let mut nodes: Vec<NodeId> = ids
                    .iter()
                    .filter_map(|v| match v {
                        Value::Int(i) if *i >= 0 && snap.node_exists(*i as u64) => Some(*i as u64),
                        _ => None,
                    })
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                Targets::List(nodes)
            }
            _ => unreachable!("scan operator built for a scan node"),
        })
    }
}

fn range_seek(
    ctx: &TaskCtx<'_>,
    label: u32,
    key: u32,
    lower: Bound<Value>,
    upper: Bound<Value>,
) -> Vec<NodeId> {
    let snap = &ctx.q.snapshot;
    let as_ref = |b: &Bound<Value>| match b {
        Bound::Included(v) => Bound::Included(v.clone()),
        Bound::Excluded(v) => Bound::Excluded(v.clone()),
        Bound::Unbounded => Bound::Unbounded,
    };
    let (lo, hi) = (as_ref(&lower), as_ref(&upper));
    let comparable = |v: &Value| {
        let ok_lo = match &lo {
            Bound::Included(b) => rhizome_functions::ops::greater_equal(v, b) == Some(true),
            Bound::Excluded(b) => rhizome_functions::ops::greater_than(v, b) == Some(true),
            Bound::Unbounded => !v.is_null(),
        };
        let ok_hi = match &hi {
            Bound::Included(b) => rhizome_functions::ops::less_equal(v, b) == Some(true),
            Bound::Excluded(b) => rhizome_functions::ops::less_than(v, b) == Some(true),
            Bound::Unbounded => !v.is_null(),
        };
        ok_lo && ok_hi
    };
    let mut nodes: Vec<NodeId> = match snap.index_range(label, key, lower.as_ref(), upper.as_ref())
    {
        // The index orders numbers with numbers and strings with strings;
        // the comparability check drops values of other types in the range.
        Some(found) => found
            .iter()
            .copied()
            .filter(|&n| comparable(&snap.node_property(n, key)))
            .collect(),
        None => snap
            .label_range_slice(label)
            .iter()
            .flat_map(|r| r.clone())
            .filter(|&n| comparable(&snap.node_property(n, key)))
            .collect(),
    };
    nodes.sort_unstable();
    nodes
}

enum Targets {
    Ranges(Vec<Range<NodeId>>),
    List(Vec<NodeId>),
}

/// Emits `input` row `row` extended with each node of `nodes`, chunk by
/// chunk (the chunks of the first chunk's size share one selection of the
/// input row).
fn emit_nodes(
    ctx: &mut TaskCtx<'_>,
    input: &Chunk,
    row: usize,
    out: Slot,
    nodes: Range<NodeId>,
) -> Result<()> {
    let full = (nodes.end.saturating_sub(nodes.start)).min(CHUNK_SIZE as NodeId) as usize;
    let repeated: Arc<[u32]> = vec![row as u32; full].into();
    let mut start = nodes.start;
    while start < nodes.end {
        if ctx.cancelled() {
            return Ok(());
        }
        let end = nodes.end.min(start + CHUNK_SIZE as NodeId);
        let ids: Vec<NodeId> = (start..end).collect();
        let mut chunk = if ids.len() == full {
            input.select_shared(&repeated)
        } else {
            input.select(vec![row as u32; ids.len()])
        };
        chunk.set_column(out, Column::new(ColumnData::Nodes(ids)));
        ctx.emit(chunk)?;
        start = end;
    }
    Ok(())
}

impl Operator for Scan {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let out = self.out();
        // Seek results of many input rows share output chunks.
        let (mut rows, mut nodes): (Vec<u32>, Vec<NodeId>) = (Vec::new(), Vec::new());
        let flush =
            |rows: &mut Vec<u32>, nodes: &mut Vec<NodeId>, ctx: &mut TaskCtx<'_>| -> Result<()> {
                if rows.is_empty() {
                    return Ok(());
                }
                let mut chunk = input.select(std::mem::take(rows));
                chunk.set_column(out, Column::new(ColumnData::Nodes(std::mem::take(nodes))));
                ctx.emit(chunk)
            };
        // Equality seeks read the index slice directly: no list per row.
        let equality_seek = match (&self.node.kind, self.node.c.label, self.node.c.key) {
            (
                OpKind::IndexSeek {
                    lookup: IndexLookup::Equal(_),
                    ..
                },
                Some(label),
                Some(key),
            ) => Some((label, key, Evaluator::new(ctx.q))),
            _ => None,
        };
        for row in 0..input.len() {
            if ctx.cancelled() {
                return Ok(());
            }
            if let Some((label, key, eval)) = &equality_seek {
                let value = eval.eval(&self.node.c.exprs[0], &Row::new(&input, row))?;
                let snap = &ctx.q.snapshot;
                let found = if value.is_null() {
                    Some(std::borrow::Cow::Borrowed(&[][..]))
                } else {
                    snap.index_range(
                        *label,
                        *key,
                        Bound::Included(&value),
                        Bound::Included(&value),
                    )
                };
                if let Some(mut found) = found {
                    if !found.is_sorted() {
                        found.to_mut().sort_unstable();
                    }
                    for &node in found.iter() {
                        rows.push(row as u32);
                        nodes.push(node);
                        if rows.len() == CHUNK_SIZE {
                            flush(&mut rows, &mut nodes, ctx)?;
                        }
                    }
                    continue;
                }
            }
            match self.targets(&input, row, ctx)? {
                Targets::List(found) => {
                    for node in found {
                        rows.push(row as u32);
                        nodes.push(node);
                        if rows.len() == CHUNK_SIZE {
                            flush(&mut rows, &mut nodes, ctx)?;
                        }
                    }
                }
                Targets::Ranges(ranges) => {
                    flush(&mut rows, &mut nodes, ctx)?;
                    // Cut the ranges into morsels; all but the first become tasks.
                    let mut morsels: Vec<Range<NodeId>> = Vec::new();
                    let total = ranges.iter().map(|r| r.end - r.start).sum();
                    let size = morsel_nodes(total, ctx.q.scope.max_parallel());
                    for r in ranges {
                        let mut start = r.start;
                        while start < r.end {
                            let end = (start + size).min(r.end);
                            morsels.push(start..end);
                            start = end;
                        }
                    }
                    if ctx.is_parallel() && morsels.len() > 1 {
                        let single = input.select(vec![row as u32]);
                        for m in morsels.drain(1..) {
                            let single = single.clone();
                            ctx.spawn(move |ctx| emit_nodes(ctx, &single, 0, out, m))?;
                        }
                    }
                    for m in morsels {
                        emit_nodes(ctx, &input, row, out, m)?;
                    }
                }
            }
        }
        flush(&mut rows, &mut nodes, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morsels_shrink_for_small_scans_but_not_below_a_chunk() {
        // A million nodes on two workers: full-size morsels.
        assert_eq!(morsel_nodes(1_000_000, 2), MORSEL_NODES);
        // 100k nodes on two workers: 32 morsels, not 7.
        assert_eq!(morsel_nodes(100_000, 2), 3125);
        // Tiny scans: a chunk per morsel.
        assert_eq!(morsel_nodes(10, 2), CHUNK_SIZE as u64);
        assert_eq!(morsel_nodes(100_000, 0), MORSEL_NODES);
    }
}
