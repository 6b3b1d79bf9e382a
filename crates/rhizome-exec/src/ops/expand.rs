//! `Expand`: single-hop expansion over the CSR adjacency (`ExpandInto`
//! is in [`super::expand_into`], the factorized count in
//! [`super::expand_count`]).
//!
//! Expand walks each input row's adjacency slices and emits chunk by chunk;
//! while workers are idle it hands the second half of its remaining input
//! rows to a new task at its own stage, so a single start node fans out.

use super::adjacency::{excluded_rels, has_labels, maybe_split, prefetch_walks, skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::CNode;
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
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
}

impl Output {
    /// An empty output.
    pub(super) fn new() -> Output {
        Output {
            rows: Vec::with_capacity(CHUNK_SIZE),
            rels: Vec::with_capacity(CHUNK_SIZE),
            nodes: Vec::with_capacity(CHUNK_SIZE),
            flushes: 0,
        }
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
        let mut out = Output::new();
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
                        if out.rows.len() == CHUNK_SIZE {
                            match out.flush(&input, *rel, *to, ctx) {
                                Ok(pushed) if !pushed.is_finished() => {}
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
                if out.rows.len() == CHUNK_SIZE {
                    return_if_finished!(out.flush(&input, *rel, *to, ctx));
                }
            }
            row += 1;
        }
        out.flush(&input, *rel, *to, ctx)
    }
}
