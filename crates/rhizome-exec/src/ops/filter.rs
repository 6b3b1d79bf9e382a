//! `Filter`: keeps the rows whose predicate is true.
//!
//! A predicate's expression subqueries (`EXISTS { }` or `COUNT { }` inside
//! an expression, such as `all(x IN … WHERE EXISTS { … })`) run as
//! branch-scope instances when the task can hand its work back: an
//! instance still open when the task's quantum is spent pauses, and the
//! row with its paused instance and the rows after it go to a new task,
//! which resumes it ([`crate::expr::Suspension`]). So one row's long
//! subquery no longer holds a worker to its end. In an ordered pipeline
//! (one ending in a `LIMIT`, or after a sort) the new task runs before
//! anything after it, so the rows keep their order
//! ([`TaskCtx::defer_hand_backs`]). Inline (inside another subquery run
//! with its scope off) the subqueries run inline to their end, as before.

use super::resumable;
use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::expr::{truth, Evaluator, Row, SuspendedRow};
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
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

    /// The row-at-a-time filter whose expression subqueries may pause
    /// ([`crate::expr::Suspension`]); `first` is the state of the first row's
    /// evaluation (a row resumed, or a new one). Once the task's quantum
    /// is spent — at a paused subquery, or between rows after one ran —
    /// the rows not done go to a new task at this stage.
    fn execute_resumable(
        &self,
        input: Chunk,
        ctx: &mut TaskCtx<'_>,
        first: SuspendedRow,
    ) -> Result<OperatorResult> {
        let predicate = &self.node.c.exprs[0];
        let mut keep = Vec::new();
        let rest = resumable::eval_rows(ctx, predicate, &input, (0, first), &mut |row, value| {
            if truth(value)? {
                keep.push(row as u32);
            }
            Ok(())
        })?;
        if ctx.cancelled() {
            return NEED_MORE;
        }
        match rest {
            None if keep.len() == input.len() => return ctx.emit(input),
            None if keep.is_empty() => return NEED_MORE,
            _ => {}
        }
        if !keep.is_empty() {
            return_if_finished!(ctx.emit(input.select(keep)));
        }
        if let Some((row, suspended)) = rest {
            let rest = input.select((row as u32..input.len() as u32).collect());
            let node = self.node.clone();
            ctx.spawn(move |ctx| {
                Filter { node }
                    .execute_resumable(rest, ctx, suspended)
                    .map(drop)
            })?;
        }
        NEED_MORE
    }
}

impl Operator for Filter {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let predicate = &self.node.c.exprs[0];
        let in_slot =
            super::in_list_filter::select_in_slot(&Evaluator::new(ctx.q), predicate, &input)?;
        let keep = match in_slot.or_else(|| vector::select(ctx.q, predicate, &input)) {
            Some(keep) => keep,
            None if ctx.can_hand_back_in_order() => {
                return self.execute_resumable(input, ctx, SuspendedRow::default());
            }
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
