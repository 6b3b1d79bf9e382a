//! `Unwind`: one row per list element.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE};
use crate::compile::{CExpr, CNode};
use crate::context::QueryContext;
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
/// literal is read where it is, never copied as a whole; a computed one is
/// shared with the tasks that take parts of it.
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

/// Emits `list[range]` as rows of input row `row`, a chunk at a time,
/// handing halves of what is left to idle workers. `shared` holds the list
/// when it was computed (`None`: it is in place, [`list_in_place`]).
fn unwind_long(
    node: &Arc<CNode>,
    shared: Option<&Arc<Vec<Value>>>,
    list: &[Value],
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
            let (node, shared) = (node.clone(), shared.cloned());
            let one = input.select(vec![row as u32]);
            move |ctx: &mut TaskCtx<'_>| {
                let list = match &shared {
                    Some(list) => &list[..],
                    None => list_in_place(&node.c.exprs[0], ctx.q)
                        .ok_or_else(|| Error::internal("an unwound parameter changed"))?,
                };
                unwind_long(&node, shared.as_ref(), list, (&one, 0), part, ctx).map(drop)
            }
        })?;
        let stop = (next + CHUNK_SIZE).min(end);
        let mut chunk = input.select(vec![row as u32; stop - next]);
        chunk.set_column(
            *out,
            Column::new(ColumnData::Values(list[next..stop].to_vec())),
        );
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
                        None,
                        list,
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
            match eval.eval(expr, &Row::new(&input, row))? {
                Value::Null => {}
                Value::List(items) if items.len() > CHUNK_SIZE => {
                    return_if_finished!(unwound.flush(&input, *out, ctx));
                    let items = Arc::new(items);
                    let range = 0..items.len();
                    return_if_finished!(unwind_long(
                        &self.node,
                        Some(&items),
                        &items,
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
