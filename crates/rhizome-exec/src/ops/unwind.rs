//! `Unwind`: one row per list element.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE};
use crate::compile::{CExpr, CNode};
use crate::context::{QueryContext, VALUE_BYTES};
use crate::expr::{Evaluator, Row};
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::{Error, Result, Value};
use rhizome_plan::{OpKind, Slot};
use std::ops::Range;
use std::sync::Arc;

/// One row per list element.
///
/// Lists of up to a chunk's worth of elements are gathered across input rows
/// into full chunks. A longer list is emitted chunk by chunk, and while
/// workers are idle the second half of the elements still to do goes to a
/// new task at this stage ([`TaskCtx::split_off`]), so `UNWIND $ids` at the
/// start of a query feeds every worker. A list held by a parameter or a
/// literal is read where it is, never copied as a whole; `range(a, b[, s])`
/// is never made at all (each element comes from its position, so
/// `UNWIND range(1, 10000000)` streams in constant memory); another
/// computed list is shared with the tasks that take parts of it and
/// charged to the query's memory budget while it is unwound.
pub struct Unwind {
    node: Arc<CNode>,
}

impl Unwind {
    /// The operator for an `Unwind` node.
    pub fn new(node: Arc<CNode>) -> Unwind {
        Unwind { node }
    }
}

/// The list `expr` stands for without evaluating it: a parameter or a
/// literal holding a list.
fn list_in_place<'q>(expr: &'q CExpr, q: &'q QueryContext) -> Option<&'q [Value]> {
    match expr {
        CExpr::Parameter(name) => match q.params.get(&**name)? {
            Value::List(items) => Some(items),
            _ => None,
        },
        CExpr::Literal(Value::List(items)) => Some(items),
        _ => None,
    }
}

/// Output rows of an unwind: input row and element, flushed as a chunk.
struct Unwound {
    rows: Vec<u32>,
    values: Vec<Value>,
}

impl Unwound {
    fn push(
        &mut self,
        input: &Chunk,
        out: Slot,
        row: usize,
        value: Value,
        ctx: &mut TaskCtx<'_>,
    ) -> Result<OperatorResult> {
        self.rows.push(row as u32);
        self.values.push(value);
        if self.rows.len() >= CHUNK_SIZE {
            return_if_finished!(self.flush(input, out, ctx));
        }
        NEED_MORE
    }

    fn flush(&mut self, input: &Chunk, out: Slot, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        if self.rows.is_empty() {
            return NEED_MORE;
        }
        let mut chunk = input.select(std::mem::take(&mut self.rows));
        let values = std::mem::take(&mut self.values);
        chunk.set_column(out, Column::new(ColumnData::Values(values)));
        ctx.emit(chunk)
    }
}

/// A long list an unwind reads by position, a chunk at a time, without
/// copying it whole.
#[derive(Clone)]
enum Elements {
    /// Computed; shared with the tasks that take parts of it.
    Shared(Arc<Vec<Value>>),
    /// A parameter or literal, read where it is ([`list_in_place`]).
    InPlace,
    /// `range(start, end, step)`: each element made from its position, so
    /// `UNWIND range(1, 10000000)` never holds the list.
    Range {
        /// The first element.
        start: i64,
        /// The difference between neighbours.
        step: i64,
    },
}

impl Elements {
    /// The elements at positions `range`.
    fn values(&self, node: &CNode, range: Range<usize>, q: &QueryContext) -> Result<Vec<Value>> {
        Ok(match self {
            Elements::Shared(list) => list[range].to_vec(),
            Elements::InPlace => list_in_place(&node.c.exprs[0], q)
                .ok_or_else(|| Error::internal("an unwound parameter changed"))?[range]
                .to_vec(),
            Elements::Range { start, step } => range
                .map(|k| Value::Int((*start as i128 + k as i128 * *step as i128) as i64))
                .collect(),
        })
    }
}

/// `UNWIND range(a, b[, step])` with integer bounds: the first element,
/// the step and the number of elements, without making the list (`None`
/// if it is not such a call; `Some(None)` if an argument is null: no rows).
/// Anything else `range()` would refuse (a zero step, a non-integer) is
/// left to the function, which says so.
fn lazy_range(
    expr: &CExpr,
    eval: &Evaluator<'_>,
    row: &Row<'_>,
) -> Result<Option<Option<(i64, i64, usize)>>> {
    let CExpr::Function(name, args) = expr else {
        return Ok(None);
    };
    if !name.eq_ignore_ascii_case("range") || !(2..=3).contains(&args.len()) {
        return Ok(None);
    }
    let mut ints = [0i64, 0, 1];
    for (slot, arg) in ints.iter_mut().zip(args) {
        match eval.eval(arg, row)? {
            Value::Int(i) => *slot = i,
            Value::Null => return Ok(Some(None)),
            _ => return Ok(None),
        }
    }
    let [start, end, step] = ints;
    if step == 0 {
        return Ok(None);
    }
    let span = end as i128 - start as i128;
    let count = if span != 0 && (span < 0) != (step < 0) {
        0
    } else {
        span / step as i128 + 1
    };
    match usize::try_from(count) {
        Ok(count) => Ok(Some(Some((start, step, count)))),
        Err(_) => Ok(None),
    }
}

/// Emits `elements[range]` as rows of input row `row`, a chunk at a time,
/// handing halves of what is left to idle workers.
fn unwind_long(
    node: &Arc<CNode>,
    elements: &Elements,
    (input, row): (&Chunk, usize),
    range: Range<usize>,
    ctx: &mut TaskCtx<'_>,
) -> Result<OperatorResult> {
    let OpKind::Unwind { out, .. } = &node.kind else {
        unreachable!("Unwind built for an Unwind node");
    };
    let (mut next, mut end) = (range.start, range.end);
    while next < end {
        if ctx.cancelled() {
            return NEED_MORE;
        }
        end = ctx.split_off(next, end, CHUNK_SIZE, |part| {
            let (node, elements) = (node.clone(), elements.clone());
            let one = input.select(vec![row as u32]);
            move |ctx: &mut TaskCtx<'_>| {
                unwind_long(&node, &elements, (&one, 0), part, ctx).map(drop)
            }
        })?;
        let stop = (next + CHUNK_SIZE).min(end);
        let values = elements.values(node, next..stop, ctx.q)?;
        let mut chunk = input.select(vec![row as u32; stop - next]);
        chunk.set_column(*out, Column::new(ColumnData::Values(values)));
        return_if_finished!(ctx.emit(chunk));
        next = stop;
    }
    NEED_MORE
}

impl Operator for Unwind {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::Unwind { out, .. } = &self.node.kind else {
            unreachable!("Unwind built for an Unwind node");
        };
        let q = ctx.q;
        let expr = &self.node.c.exprs[0];
        let eval = Evaluator::new(q);
        let mut unwound = Unwound {
            rows: Vec::new(),
            values: Vec::new(),
        };
        // The same list for every row, if it is in place.
        let in_place = list_in_place(expr, q);
        for row in 0..input.len() {
            if row % 64 == 0 && ctx.cancelled() {
                return NEED_MORE;
            }
            if let Some(list) = in_place {
                if list.len() > CHUNK_SIZE {
                    return_if_finished!(unwound.flush(&input, *out, ctx));
                    return_if_finished!(unwind_long(
                        &self.node,
                        &Elements::InPlace,
                        (&input, row),
                        0..list.len(),
                        ctx
                    ));
                } else {
                    for item in list {
                        return_if_finished!(unwound.push(&input, *out, row, item.clone(), ctx));
                    }
                }
                continue;
            }
            match lazy_range(expr, &eval, &Row::new(&input, row))? {
                Some(None) => continue,
                Some(Some((start, step, count))) if count > CHUNK_SIZE => {
                    return_if_finished!(unwound.flush(&input, *out, ctx));
                    return_if_finished!(unwind_long(
                        &self.node,
                        &Elements::Range { start, step },
                        (&input, row),
                        0..count,
                        ctx
                    ));
                    continue;
                }
                Some(Some((start, step, count))) => {
                    for k in 0..count as i64 {
                        let item = Value::Int(start + k * step);
                        return_if_finished!(unwound.push(&input, *out, row, item, ctx));
                    }
                    continue;
                }
                None => {}
            }
            match eval.eval(expr, &Row::new(&input, row))? {
                Value::Null => {}
                Value::List(items) if items.len() > CHUNK_SIZE => {
                    return_if_finished!(unwound.flush(&input, *out, ctx));
                    // Held while its rows are made: charged to the query.
                    q.memory.charge(items.len() * VALUE_BYTES)?;
                    let range = 0..items.len();
                    return_if_finished!(unwind_long(
                        &self.node,
                        &Elements::Shared(Arc::new(items)),
                        (&input, row),
                        range,
                        ctx
                    ));
                }
                Value::List(items) => {
                    for item in items {
                        return_if_finished!(unwound.push(&input, *out, row, item, ctx));
                    }
                }
                other => return_if_finished!(unwound.push(&input, *out, row, other, ctx)),
            }
        }
        unwound.flush(&input, *out, ctx)
    }
}
