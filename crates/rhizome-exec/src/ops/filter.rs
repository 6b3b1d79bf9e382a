//! `Filter`: keeps the rows whose predicate is true.

use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use crate::vector;
use rhizome_common::Result;
use std::sync::Arc;

/// Keeps rows whose predicate is true.
pub struct Filter {
    node: Arc<CNode>,
}

impl Filter {
    /// The operator for a `Filter` node.
    pub fn new(node: Arc<CNode>) -> Filter {
        Filter { node }
    }
}

impl Operator for Filter {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let predicate = &self.node.c.exprs[0];
        let in_slot =
            super::in_list_filter::select_in_slot(&Evaluator::new(ctx.q), predicate, &input)?;
        let keep = match in_slot.or_else(|| vector::select(ctx.q, predicate, &input)) {
            Some(keep) => keep,
            None => {
                let eval = Evaluator::new(ctx.q);
                let mut keep = Vec::with_capacity(input.len());
                for row in 0..input.len() {
                    if eval.predicate(predicate, &Row::new(&input, row))? {
                        keep.push(row as u32);
                    }
                }
                keep
            }
        };
        if keep.len() == input.len() {
            return ctx.emit(input);
        }
        if keep.is_empty() {
            return NEED_MORE;
        }
        let out = input.select(keep);
        ctx.emit(out)
    }
}
