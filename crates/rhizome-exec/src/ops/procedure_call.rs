//! `ProcedureCall`: `CALL proc(args) YIELD ...` per input row.

use crate::chunk::{Chunk, Column, ColumnData};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_plan::OpKind;
use std::sync::Arc;

/// `CALL proc(args) YIELD ...` per input row.
pub struct ProcedureCall {
    node: Arc<CNode>,
}

impl ProcedureCall {
    /// The operator for a `ProcedureCall` node.
    pub fn new(node: Arc<CNode>) -> ProcedureCall {
        ProcedureCall { node }
    }
}

impl Operator for ProcedureCall {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::ProcedureCall { name, yields, .. } = &self.node.kind else {
            unreachable!("ProcedureCall built for a ProcedureCall node");
        };
        let eval = Evaluator::new(ctx.q);
        let procedure = ctx.q.procedures.get(name).ok_or_else(|| {
            Error::new(
                ErrorKind::ProcedureError,
                format!("there is no procedure named `{name}`"),
            )
            .with_code("ProcedureNotFound")
        })?;
        let outputs: Vec<String> = procedure.outputs.iter().map(|(n, _)| n.clone()).collect();
        if outputs.is_empty() {
            // A void procedure runs once per row and leaves the row as it is.
            for row in 0..input.len() {
                let args: Vec<Value> = self
                    .node
                    .c
                    .exprs
                    .iter()
                    .map(|e| eval.eval(e, &Row::new(&input, row)))
                    .collect::<Result<_>>()?;
                ctx.q.procedures.call(ctx.q, name, &args)?;
            }
            return ctx.emit(input);
        }
        let mut rows = Vec::new();
        let mut columns: Vec<Vec<Value>> = vec![Vec::new(); yields.len()];
        for row in 0..input.len() {
            let args: Vec<Value> = self
                .node
                .c
                .exprs
                .iter()
                .map(|e| eval.eval(e, &Row::new(&input, row)))
                .collect::<Result<_>>()?;
            for record in ctx.q.procedures.call(ctx.q, name, &args)? {
                rows.push(row as u32);
                for (i, (field, _)) in yields.iter().enumerate() {
                    let at = outputs.iter().position(|o| o == field);
                    columns[i].push(
                        at.and_then(|a| record.get(a).cloned())
                            .unwrap_or(Value::Null),
                    );
                }
            }
        }
        if rows.is_empty() {
            return NEED_MORE;
        }
        let mut chunk = input.select(rows);
        for ((_, slot), values) in yields.iter().zip(columns) {
            chunk.set_column(*slot, Column::new(ColumnData::Values(values)));
        }
        ctx.emit(chunk)
    }
}
