//! `Project`: writes computed values into slots.
//!
//! Items are computed one after the other, each over the whole chunk (a
//! later item sees the columns of the earlier ones). An item's expression
//! subqueries (`RETURN … EXISTS { … }`, a sort key or a `WITH` item that
//! holds one) run as branch-scope instances that pause at the task's
//! quantum when the task can hand its work back, as a `Filter`'s do: the
//! chunk — with the items done, the values of the item being computed so
//! far and the row's paused instance — goes to a new task at this stage,
//! which resumes it ([`crate::expr::Suspension`]). Inline (inside a
//! subquery run with its scope off) they run to their end.

use super::resumable;
use crate::chunk::{Chunk, Column, ColumnData};
use crate::compile::{CExpr, CNode};
use crate::expr::{Evaluator, Row, SuspendedRow};
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use crate::vector;
use rhizome_common::{Result, Value};
use rhizome_plan::{OpKind, Slot};
use std::sync::Arc;

/// Writes computed values into slots.
pub struct Project {
    node: Arc<CNode>,
}

/// Where a resumed projection goes on: the item being computed, its
/// values for the rows before the row being evaluated, and that row's
/// state.
struct Resume {
    item: usize,
    values: Vec<Value>,
    row: SuspendedRow,
}

impl Project {
    /// The operator for a `Project` node.
    pub fn new(node: Arc<CNode>) -> Project {
        Project { node }
    }

    /// The items as (slot, compiled expression).
    fn items(&self) -> impl Iterator<Item = (Slot, &CExpr)> {
        let OpKind::Project { items } = &self.node.kind else {
            unreachable!("Project built for a Project node");
        };
        items.iter().map(|(slot, _)| *slot).zip(&self.node.c.exprs)
    }

    /// Computes the items from `resume` on, row at a time where an item
    /// may pause; once the task's quantum is spent (at a paused subquery,
    /// or between rows after one ran) the chunk goes to a new task here.
    fn execute_resumable(
        &self,
        mut input: Chunk,
        ctx: &mut TaskCtx<'_>,
        resume: Resume,
    ) -> Result<OperatorResult> {
        let Resume {
            item: first_item,
            values: first_values,
            row: first_row,
        } = resume;
        let mut paused = None;
        let mut carried = Some((first_values, first_row));
        for (item, (slot, expr)) in self.items().enumerate().skip(first_item) {
            let (mut values, state) = carried.take().unwrap_or_default();
            if state.is_new() && values.is_empty() {
                if let Some(column) = plain_column(ctx, expr, &input) {
                    set_column(&mut input, slot, column);
                    continue;
                }
            }
            values.reserve(input.len() - values.len());
            let from = (values.len(), state);
            let stop = resumable::eval_rows(ctx, expr, &input, from, &mut |_, value| {
                values.push(value);
                Ok(())
            })?;
            if let Some((_, row)) = stop {
                paused = Some(Resume { item, values, row });
                break;
            }
            input.set_column(slot, Column::new(ColumnData::Values(values)));
        }
        if ctx.cancelled() {
            return NEED_MORE;
        }
        let Some(resume) = paused else {
            return ctx.emit(input);
        };
        let node = self.node.clone();
        ctx.spawn(move |ctx| {
            Project { node }
                .execute_resumable(input, ctx, resume)
                .map(drop)
        })?;
        NEED_MORE
    }
}

/// The column of an item computed without row-at-a-time evaluation (a
/// slot copy or a vectorised expression), if it can be.
fn plain_column(ctx: &TaskCtx<'_>, expr: &CExpr, input: &Chunk) -> Option<Option<Column>> {
    if let CExpr::Slot(source) = expr {
        return Some(input.column(*source).cloned());
    }
    vector::column(ctx.q, expr, input)
        .map(|v| Some(Column::new(ColumnData::Values(v.into_values(input.len())))))
}

/// Writes `column` into `slot` (none: the slot is cleared).
fn set_column(input: &mut Chunk, slot: Slot, column: Option<Column>) {
    match column {
        Some(c) => input.set_column(slot, c),
        None => input.clear_column(slot),
    }
}

impl Operator for Project {
    fn execute(&self, mut input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        if self.node.c.has_subquery && ctx.can_hand_back_in_order() {
            let start = Resume {
                item: 0,
                values: Vec::new(),
                row: SuspendedRow::default(),
            };
            return self.execute_resumable(input, ctx, start);
        }
        let eval = Evaluator::new(ctx.q);
        for (slot, expr) in self.items() {
            if let Some(column) = plain_column(ctx, expr, &input) {
                set_column(&mut input, slot, column);
                continue;
            }
            let mut values = Vec::with_capacity(input.len());
            for row in 0..input.len() {
                values.push(eval.eval(expr, &Row::new(&input, row))?);
            }
            input.set_column(slot, Column::new(ColumnData::Values(values)));
        }
        ctx.emit(input)
    }
}
