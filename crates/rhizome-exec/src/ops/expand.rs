//! `Expand`: single-hop expansion over the CSR adjacency (`ExpandInto`
//! is in [`super::expand_into`], the factorized count in
//! [`super::expand_count`]).
//!
//! Expand walks each input row's adjacency slices and emits chunk by chunk;
//! while workers are idle it hands the second half of its remaining input
//! rows to a new task at its own stage, so a single start node fans out.

use super::adjacency::{excluded_rels, has_labels, maybe_split, prefetch_walks, skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, NULL_ID};
use crate::compile::CNode;
use crate::operator::{
    next_batch, return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE,
};
use rhizome_common::{NodeId, RelId, Result};
use rhizome_plan::{OpKind, Slot};
use std::ops::ControlFlow;
use std::sync::Arc;

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

/// The rows an expansion produces, flushed a chunk at a time.
pub(super) struct Output {
    pub(super) rows: Vec<u32>,
    pub(super) rels: Vec<RelId>,
    pub(super) nodes: Vec<NodeId>,
    /// Chunks emitted so far.
    flushes: usize,
    /// Rows that make the next chunk ([`TaskCtx::first_batch`]).
    pub(super) batch: usize,
}

impl Output {
    /// An empty output whose first chunk has `batch` rows.
    pub(super) fn new(batch: usize) -> Output {
        Output {
            rows: Vec::with_capacity(batch),
            rels: Vec::with_capacity(batch),
            nodes: Vec::with_capacity(batch),
            flushes: 0,
            batch,
        }
    }

    /// Whether the rows gathered make a chunk.
    #[inline]
    pub(super) fn full(&self) -> bool {
        self.rows.len() >= self.batch
    }

    /// Emits the rows gathered so far as a chunk.
    pub(super) fn flush(
        &mut self,
        input: &Chunk,
        rel: Slot,
        to: Slot,
        ctx: &mut TaskCtx<'_>,
    ) -> Result<OperatorResult> {
        if self.rows.is_empty() {
            return NEED_MORE;
        }
        self.flushes += 1;
        self.batch = next_batch(self.batch);
        let batch = self.batch;
        let mut chunk = input.select(std::mem::replace(&mut self.rows, Vec::with_capacity(batch)));
        chunk.set_column(
            rel,
            Column::new(ColumnData::Rels(std::mem::replace(
                &mut self.rels,
                Vec::with_capacity(batch),
            ))),
        );
        chunk.set_column(
            to,
            Column::new(ColumnData::Nodes(std::mem::replace(
                &mut self.nodes,
                Vec::with_capacity(batch),
            ))),
        );
        ctx.emit(chunk)
    }
}

impl Operator for Expand {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
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
        let mut out = Output::new(ctx.first_batch(input.len()));
        let mut excluded = Vec::new();
        let from_column = input.column(*from).cloned();
        prefetch_walks(snap, from_column.as_ref(), input.len(), &walks);
        ctx.restart_quantum();
        let mut end = input.len();
        let mut row = 0;
        // Rows are checked for cancellation and splitting every 64, and
        // after each chunk emitted (its rows' work downstream can be long).
        let mut checked_flushes = 0;
        while row < end {
            if row % 64 == 0 || out.flushes != checked_flushes {
                checked_flushes = out.flushes;
                if ctx.cancelled() {
                    return NEED_MORE;
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
                    let flow = adj.try_for_each(|_, neighbour, r| {
                        if skip_entry(*direction, d, source, neighbour)
                            || (!labels.is_empty() && !has_labels(snap, neighbour, labels))
                            || (!excluded.is_empty() && excluded.contains(&r))
                        {
                            return ControlFlow::Continue(());
                        }
                        found = true;
                        out.rows.push(row as u32);
                        out.rels.push(r);
                        out.nodes.push(neighbour);
                        if out.full() {
                            match out.flush(&input, *rel, *to, ctx) {
                                // A run whose sink has its row (an
                                // EXISTS) stops within the adjacency.
                                Ok(pushed) if !pushed.is_finished() => {
                                    if ctx.cancelled() {
                                        return ControlFlow::Break(NEED_MORE);
                                    }
                                }
                                stop => {
                                    return ControlFlow::Break(
                                        stop.map(|_| OperatorResult::Finished),
                                    )
                                }
                            }
                        }
                        ControlFlow::Continue(())
                    });
                    if let ControlFlow::Break(stop) = flow {
                        return stop;
                    }
                }
            }
            if *optional && !found {
                out.rows.push(row as u32);
                out.rels.push(NULL_ID);
                out.nodes.push(NULL_ID);
                if out.full() {
                    return_if_finished!(out.flush(&input, *rel, *to, ctx));
                }
            }
            row += 1;
        }
        out.flush(&input, *rel, *to, ctx)
    }
}
