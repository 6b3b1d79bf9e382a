//! Node sources: all-nodes and label scans, index seeks, seeks by id.
//!
//! A scan extends each input row with every matching node. On the pool a
//! scan's nodes are morsels that one task per worker claims from a shared
//! cursor, each task until the morsels run out or its quantum is spent.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
use crossbeam_utils::CachePadded;
use rhizome_common::{NodeId, Result, Value};
use rhizome_plan::{IndexLookup, OpKind, Slot};
use rhizome_storage::GraphRead;
use std::ops::{Bound, Range};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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

/// Most nodes per morsel of a scan.
const MORSEL_NODES: usize = 16 * 1024;

/// Morsels a scan aims to give each worker it may use, so that the last
/// morsels to finish leave little imbalance.
const MORSELS_PER_WORKER: usize = 16;

/// Nodes per morsel for a scan of `total` nodes on up to `workers` workers:
/// [`MORSEL_NODES`], or fewer when that would give each worker fewer than
/// [`MORSELS_PER_WORKER`] morsels, but never under a chunk's worth.
fn morsel_nodes(total: usize, workers: usize) -> usize {
    (total / (workers * MORSELS_PER_WORKER).max(1)).clamp(CHUNK_SIZE, MORSEL_NODES)
}

/// The nodes a scan visits: its id ranges seen as one sequence of
/// positions `0..len`, so any slice of positions can become a task however
/// the ranges fall.
struct ScanNodes {
    ranges: Vec<Range<NodeId>>,
    /// Position of each range's first node.
    starts: Vec<usize>,
    len: usize,
}

impl ScanNodes {
    fn new(ranges: Vec<Range<NodeId>>) -> ScanNodes {
        let ranges: Vec<_> = ranges.into_iter().filter(|r| r.start < r.end).collect();
        let mut starts = Vec::with_capacity(ranges.len());
        let mut len = 0;
        for r in &ranges {
            starts.push(len);
            len += (r.end - r.start) as usize;
        }
        ScanNodes {
            ranges,
            starts,
            len,
        }
    }

    /// The ids at `positions` (within `0..len`), in order.
    fn ids(&self, positions: Range<usize>) -> Vec<NodeId> {
        let mut ids = Vec::with_capacity(positions.len());
        if positions.is_empty() {
            return ids;
        }
        let mut at = self.starts.partition_point(|&s| s <= positions.start) - 1;
        let mut next = positions.start;
        while next < positions.end {
            let (range, first) = (&self.ranges[at], self.starts[at]);
            let stop = positions
                .end
                .min(first + (range.end - range.start) as usize);
            let offset = range.start + (next - first) as NodeId;
            ids.extend(offset..offset + (stop - next) as NodeId);
            next = stop;
            at += 1;
        }
        ids
    }
}

/// A scan's nodes cut into morsels, and the cursor its tasks claim them
/// from in order: one atomic add per morsel is all the workers share.
struct Morsels {
    nodes: ScanNodes,
    size: usize,
    /// Position of the next morsel's first node.
    next: CachePadded<AtomicUsize>,
}

impl Morsels {
    /// The next morsel's positions, if any are left.
    fn claim(&self) -> Option<Range<usize>> {
        let start = self.next.fetch_add(self.size, Ordering::Relaxed);
        (start < self.nodes.len).then(|| start..self.nodes.len.min(start + self.size))
    }
}

/// Emits `input` row `row` extended with the nodes of the morsels it
/// claims, chunk by chunk (full chunks share one selection of the input
/// row), until none are left. On the pool, once its quantum is spent, it
/// leaves the morsels still to claim to a new task and returns, so a task
/// lasts at most a quantum and a morsel.
///
/// A task claims morsel after morsel rather than each morsel being a task:
/// a task's hand-off (queue push and steal, the query's counters) moves a
/// dozen cache lines between the cores, and when the host places the two
/// vCPUs on cores that share no cache, SQ1's sixty morsel tasks made its
/// 2-worker run 15% slower. A worker that stalls holds one morsel, not half
/// the scan: the others keep claiming.
fn emit_nodes(
    ctx: &mut TaskCtx<'_>,
    input: &Chunk,
    row: usize,
    out: Slot,
    morsels: &Arc<Morsels>,
) -> Result<OperatorResult> {
    let repeated: Arc<[u32]> = vec![row as u32; morsels.size.min(CHUNK_SIZE)].into();
    let mut claimed = false;
    loop {
        if claimed && ctx.quantum_spent() {
            let (single, morsels) = (input.select(vec![row as u32]), morsels.clone());
            ctx.spawn(move |ctx| emit_nodes(ctx, &single, 0, out, &morsels).map(drop))?;
            return NEED_MORE;
        }
        let Some(morsel) = morsels.claim() else {
            return NEED_MORE;
        };
        claimed = true;
        let mut next = morsel.start;
        while next < morsel.end {
            if ctx.cancelled() {
                return NEED_MORE;
            }
            let stop = morsel.end.min(next + CHUNK_SIZE);
            return_if_finished!(emit_chunk(
                ctx,
                input,
                &repeated,
                row,
                out,
                &morsels.nodes,
                next..stop
            ));
            next = stop;
        }
    }
}

/// Emits one chunk: input row `row` with each node at `positions`.
fn emit_chunk(
    ctx: &mut TaskCtx<'_>,
    input: &Chunk,
    repeated: &Arc<[u32]>,
    row: usize,
    out: Slot,
    nodes: &ScanNodes,
    positions: Range<usize>,
) -> Result<OperatorResult> {
    let mut chunk = if positions.len() == repeated.len() {
        input.select_shared(repeated)
    } else {
        input.select(vec![row as u32; positions.len()])
    };
    chunk.set_column(out, Column::new(ColumnData::Nodes(nodes.ids(positions))));
    ctx.emit(chunk)
}

impl Operator for Scan {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let out = self.out();
        // Seek results of many input rows share output chunks.
        let (mut rows, mut nodes): (Vec<u32>, Vec<NodeId>) = (Vec::new(), Vec::new());
        let flush = |rows: &mut Vec<u32>,
                     nodes: &mut Vec<NodeId>,
                     ctx: &mut TaskCtx<'_>|
         -> Result<OperatorResult> {
            if rows.is_empty() {
                return NEED_MORE;
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
                return NEED_MORE;
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
                            return_if_finished!(flush(&mut rows, &mut nodes, ctx));
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
                            return_if_finished!(flush(&mut rows, &mut nodes, ctx));
                        }
                    }
                }
                Targets::Ranges(ranges) => {
                    return_if_finished!(flush(&mut rows, &mut nodes, ctx));
                    let nodes = ScanNodes::new(ranges);
                    let workers = ctx.q.scope.max_parallel();
                    let morsels = Arc::new(Morsels {
                        size: morsel_nodes(nodes.len, workers),
                        nodes,
                        next: CachePadded::new(AtomicUsize::new(0)),
                    });
                    // One claiming task per worker the query may use; this
                    // one is the first.
                    let helpers = morsels.nodes.len.div_ceil(morsels.size).min(workers);
                    if ctx.is_parallel() && helpers > 1 {
                        let single = input.select(vec![row as u32]);
                        for _ in 1..helpers {
                            let (single, morsels) = (single.clone(), morsels.clone());
                            ctx.spawn(move |ctx| {
                                emit_nodes(ctx, &single, 0, out, &morsels).map(drop)
                            })?;
                        }
                    }
                    return_if_finished!(emit_nodes(ctx, &input, row, out, &morsels));
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
        assert_eq!(morsel_nodes(10, 2), CHUNK_SIZE);
        assert_eq!(morsel_nodes(100_000, 0), MORSEL_NODES);
    }

    #[test]
    fn the_cursor_hands_out_each_morsel_once_in_order() {
        let morsels = Morsels {
            nodes: ScanNodes::new(vec![0..5000, 9000..10_000]),
            size: 2048,
            next: CachePadded::new(AtomicUsize::new(0)),
        };
        let claimed: Vec<_> = std::iter::from_fn(|| morsels.claim()).collect();
        assert_eq!(claimed, [0..2048, 2048..4096, 4096..6000]);
        assert_eq!(morsels.claim(), None);
    }

    #[test]
    fn positions_map_to_ids_across_ranges() {
        // Holes in the id space (deleted nodes) and an empty range.
        let nodes = ScanNodes::new(vec![10..13, 20..20, 30..32, 40..45]);
        assert_eq!(nodes.len, 10);
        assert_eq!(nodes.ids(0..10), [10, 11, 12, 30, 31, 40, 41, 42, 43, 44]);
        // Slices that start and end inside ranges, or at their edges.
        assert_eq!(nodes.ids(2..6), [12, 30, 31, 40]);
        assert_eq!(nodes.ids(3..5), [30, 31]);
        assert_eq!(nodes.ids(9..10), [44]);
        assert!(nodes.ids(4..4).is_empty());
        assert_eq!(ScanNodes::new(Vec::new()).len, 0);
    }
}
