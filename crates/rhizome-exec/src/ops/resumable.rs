//! Row-at-a-time evaluation whose expression subqueries pause at the
//! task's quantum ([`Suspension`]): what `Filter` and `Project` share
//! when their task can hand its work back.

use crate::chunk::Chunk;
use crate::compile::CExpr;
use crate::expr::{Evaluator, Row, SuspendedRow, Suspension};
use crate::operator::TaskCtx;
use rhizome_common::{Result, Value};

/// Evaluates `expr` over the rows of `input` from `from` on, the first of
/// them from `first` (a row resumed, or a new one), and gives each row's
/// value to `take`. Returns the row to go on at, with its state, if the
/// task's quantum was spent first: at a paused subquery, or between rows
/// after one ran (at least one row is evaluated per call, so a resumed
/// evaluation always progresses).
pub(crate) fn eval_rows(
    ctx: &TaskCtx<'_>,
    expr: &CExpr,
    input: &Chunk,
    (from, first): (usize, SuspendedRow),
    take: &mut dyn FnMut(usize, Value) -> Result<()>,
) -> Result<Option<(usize, SuspendedRow)>> {
    let pause = || ctx.quantum_spent();
    let stopped = || ctx.cancelled();
    let suspension = Suspension::new(&pause, &stopped, ctx.scope_stats());
    let eval = Evaluator::with_suspension(ctx.q, &suspension);
    let mut state = first;
    for row in from..input.len() {
        if row > from && suspension.ran_subquery() && ctx.quantum_spent() {
            return Ok(Some((row, SuspendedRow::default())));
        }
        suspension.begin_row(std::mem::take(&mut state));
        match eval.eval(expr, &Row::new(input, row)) {
            Ok(value) => take(row, value)?,
            Err(e) => {
                return match suspension.take_suspended() {
                    Some(suspended) => Ok(Some((row, suspended))),
                    None => Err(e),
                }
            }
        }
    }
    Ok(None)
}
