//! Correlated inner plans: `Optional` (OPTIONAL MATCH), `Apply` (CALL { })
//! and `SemiApply` (EXISTS-style filters). Each input row starts an inline
//! run of the inner plan — its own scope instance, cancelled on its own when
//! a semi-apply has seen its first row. A task hands the rows it has not
//! started back to the queue once its quantum is spent; inside one long
//! instance, the inline run's yield points
//! ([`crate::scheduler::QueryScope::yield_now`]) bound a waiting query's
//! wait instead.

use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::context::InlineLimit;
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::Result;
use rhizome_plan::OpKind;
use std::sync::Arc;

/// An inner row is the argument row overlaid with what the inner plan wrote:
/// an inner plan that aggregates keeps only its own slots, but the outer
/// variables stay bound after the subquery.
fn overlay(argument: &Chunk, inner: Chunk) -> Chunk {
    let mut out = argument.select(vec![0; inner.len()]);
    for slot in 0..inner.width() {
        if let Some(column) = inner.column(slot) {
            out.set_column(slot, column.clone());
        }
    }
    out
}

/// The apply family.
pub struct Apply {
    node: Arc<CNode>,
}

impl Apply {
    /// The operator for an `Optional`, `Apply` or `SemiApply` node.
    pub fn new(node: Arc<CNode>) -> Apply {
        Apply { node }
    }
}

impl Operator for Apply {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let inner = &self.node.inputs[1];
        let mut keep = Vec::new();
        for row in 0..input.len() {
            if ctx.cancelled() {
                return NEED_MORE;
            }
            if row > 0 && ctx.quantum_spent() {
                // Between instances: hand the rows not started yet back to
                // the queue as a new task, so the worker chooses again.
                let rest = input.select((row as u32..input.len() as u32).collect());
                ctx.spawn(move |ctx| ctx.push_here(rest).map(|_| ()))?;
                return self.emit_kept(input, keep, ctx);
            }
            let argument = input.select(vec![row as u32]);
            match &self.node.kind {
                OpKind::SemiApply { anti } => {
                    let found = ctx
                        .q
                        .run_inline(inner, argument, InlineLimit::FirstRow)?
                        .iter()
                        .any(|c| !c.is_empty());
                    if found != *anti {
                        keep.push(row as u32);
                    }
                }
                OpKind::Optional { nullable } => {
                    let chunks = ctx
                        .q
                        .run_inline(inner, argument.clone(), InlineLimit::All)?;
                    if chunks.iter().all(|c| c.is_empty()) {
                        let mut row_chunk = argument;
                        for &slot in nullable {
                            row_chunk.clear_column(slot);
                        }
                        return_if_finished!(ctx.emit(row_chunk));
                    } else {
                        for c in chunks {
                            return_if_finished!(ctx.emit(overlay(&argument, c)));
                        }
                    }
                }
                _ => {
                    for c in ctx
                        .q
                        .run_inline(inner, argument.clone(), InlineLimit::All)?
                    {
                        return_if_finished!(ctx.emit(overlay(&argument, c)));
                    }
                }
            }
        }
        self.emit_kept(input, keep, ctx)
    }
}

impl Apply {
    /// A semi-apply's rows kept so far (`keep`, of `input`), emitted.
    fn emit_kept(
        &self,
        input: Chunk,
        keep: Vec<u32>,
        ctx: &mut TaskCtx<'_>,
    ) -> Result<OperatorResult> {
        if matches!(self.node.kind, OpKind::SemiApply { .. }) && !keep.is_empty() {
            let out = if keep.len() == input.len() {
                input
            } else {
                input.select(keep)
            };
            return_if_finished!(ctx.emit(out));
        }
        NEED_MORE
    }
}
