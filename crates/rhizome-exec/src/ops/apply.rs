//! Correlated inner plans: `Optional` (OPTIONAL MATCH), `Apply` (CALL { })
//! and `SemiApply` (EXISTS-style filters). Each input row starts an inline
//! run of the inner plan — its own scope instance, cancelled on its own when
//! a semi-apply has seen its first row.

use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::pipeline::{run_inline, InlineLimit, Operator, TaskCtx};
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
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let inner = &self.node.inputs[1];
        let mut keep = Vec::new();
        for row in 0..input.len() {
            if ctx.cancelled() {
                return Ok(());
            }
            let argument = input.select(vec![row as u32]);
            match &self.node.kind {
                OpKind::SemiApply { anti } => {
                    let found = run_inline(inner, argument, ctx.q, InlineLimit::FirstRow)?
                        .iter()
                        .any(|c| !c.is_empty());
                    if found != *anti {
                        keep.push(row as u32);
                    }
                }
                OpKind::Optional { nullable } => {
                    let chunks = run_inline(inner, argument.clone(), ctx.q, InlineLimit::All)?;
                    if chunks.iter().all(|c| c.is_empty()) {
                        let mut row_chunk = argument;
                        for &slot in nullable {
                            row_chunk.clear_column(slot);
                        }
                        ctx.emit(row_chunk)?;
                    } else {
                        for c in chunks {
                            ctx.emit(overlay(&argument, c))?;
                        }
                    }
                }
                _ => {
                    for c in run_inline(inner, argument.clone(), ctx.q, InlineLimit::All)? {
                        ctx.emit(overlay(&argument, c))?;
                    }
                }
            }
        }
        if matches!(self.node.kind, OpKind::SemiApply { .. }) && !keep.is_empty() {
            let out = if keep.len() == input.len() {
                input
            } else {
                input.select(keep)
            };
            ctx.emit(out)?;
        }
        Ok(())
    }
}
