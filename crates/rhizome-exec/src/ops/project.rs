//! `Project`: writes computed values into slots.

use crate::chunk::{Chunk, Column, ColumnData};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{Operator, OperatorResult, TaskCtx};
use crate::vector;
use rhizome_common::Result;
use rhizome_plan::OpKind;
use std::sync::Arc;

/// Writes computed values into slots.
pub struct Project {
    node: Arc<CNode>,
}

impl Project {
    /// The operator for a `Project` node.
    pub fn new(node: Arc<CNode>) -> Project {
        Project { node }
    }
}

impl Operator for Project {
    fn execute(&self, mut input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::Project { items } = &self.node.kind else {
            unreachable!("Project built for a Project node");
        };
        let eval = Evaluator::new(ctx.q);
        for ((slot, _), expr) in items.iter().zip(&self.node.c.exprs) {
            // A plain slot copy shares the column.
            if let crate::compile::CExpr::Slot(source) = expr {
                match input.column(*source).cloned() {
                    Some(c) => input.set_column(*slot, c),
                    None => input.clear_column(*slot),
                }
                continue;
            }
            let values = match vector::column(ctx.q, expr, &input) {
                Some(v) => v.into_values(input.len()),
                None => {
                    let mut values = Vec::with_capacity(input.len());
                    for row in 0..input.len() {
                        values.push(eval.eval(expr, &Row::new(&input, row))?);
                    }
                    values
                }
            };
            input.set_column(*slot, Column::new(ColumnData::Values(values)));
        }
        ctx.emit(input)
    }
}
