//! Row-wise operators: filter, projection, unwind, skip, distinct, procedure calls.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE};
use crate::compile::{CExpr, CNode};
use crate::context::QueryContext;
use crate::expr::{Evaluator, Row};
use crate::pipeline::{Operator, TaskCtx};
use crate::vector;
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_functions::ops::{GroupKey, KeySet};
use rhizome_plan::{OpKind, Slot};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let predicate = &self.node.c.exprs[0];
        let keep = match vector::select(ctx.q, predicate, &input) {
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
            return Ok(());
        }
        let out = input.select(keep);
        ctx.emit(out)
    }
}

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
    fn execute(&self, mut input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
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
    ) -> Result<()> {
        self.rows.push(row as u32);
        self.values.push(value);
        if self.rows.len() >= CHUNK_SIZE {
            self.flush(input, out, ctx)?;
        }
        Ok(())
    }

    fn flush(&mut self, input: &Chunk, out: Slot, ctx: &mut TaskCtx<'_>) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
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
) -> Result<()> {
    let OpKind::Unwind { out, .. } = &node.kind else {
        unreachable!("Unwind built for an Unwind node");
    };
    let (mut next, mut end) = (range.start, range.end);
    while next < end {
        if ctx.cancelled() {
            return Ok(());
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
                unwind_long(&node, shared.as_ref(), list, (&one, 0), part, ctx)
            }
        })?;
        let stop = (next + CHUNK_SIZE).min(end);
        let mut chunk = input.select(vec![row as u32; stop - next]);
        chunk.set_column(
            *out,
            Column::new(ColumnData::Values(list[next..stop].to_vec())),
        );
        ctx.emit(chunk)?;
        next = stop;
    }
    Ok(())
}

impl Operator for Unwind {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
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
                return Ok(());
            }
            if let Some(list) = in_place {
                if list.len() > CHUNK_SIZE {
                    unwound.flush(&input, *out, ctx)?;
                    unwind_long(&self.node, None, list, (&input, row), 0..list.len(), ctx)?;
                } else {
                    for item in list {
                        unwound.push(&input, *out, row, item.clone(), ctx)?;
                    }
                }
                continue;
            }
            match eval.eval(expr, &Row::new(&input, row))? {
                Value::Null => {}
                Value::List(items) if items.len() > CHUNK_SIZE => {
                    unwound.flush(&input, *out, ctx)?;
                    let items = Arc::new(items);
                    let range = 0..items.len();
                    unwind_long(&self.node, Some(&items), &items, (&input, row), range, ctx)?;
                }
                Value::List(items) => {
                    for item in items {
                        unwound.push(&input, *out, row, item, ctx)?;
                    }
                }
                other => unwound.push(&input, *out, row, other, ctx)?,
            }
        }
        unwound.flush(&input, *out, ctx)
    }
}

/// Evaluates a constant count (SKIP / LIMIT / Top) expression. A value that
/// is not a non-negative integer is a `SyntaxError` even at run time (as the
/// openCypher TCK classifies it), with the detail code saying why.
pub fn constant_count(q: &QueryContext, expr: &crate::compile::CExpr, what: &str) -> Result<u64> {
    let empty = Chunk::new(0, 1);
    let value = Evaluator::new(q).eval(expr, &Row::new(&empty, 0))?;
    match value {
        Value::Int(n) if n >= 0 => Ok(n as u64),
        Value::Int(n) => Err(Error::new(
            ErrorKind::SyntaxError,
            format!("{what} must be a non-negative integer, got {n}"),
        )
        .with_code("NegativeIntegerArgument")),
        other => Err(Error::new(
            ErrorKind::SyntaxError,
            format!("{what} must be a non-negative integer, got {other}"),
        )
        .with_code("InvalidArgumentType")),
    }
}

/// Drops the first rows.
pub struct Skip {
    remaining: AtomicU64,
}

impl Skip {
    /// The operator for a `Skip` node (its count is evaluated now).
    pub fn new(node: Arc<CNode>, q: &QueryContext) -> Result<Skip> {
        Ok(Skip {
            remaining: AtomicU64::new(constant_count(q, &node.c.exprs[0], "SKIP")?),
        })
    }
}

impl Operator for Skip {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let n = input.len() as u64;
        let mut skipped = 0;
        let _ = self
            .remaining
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                skipped = r.min(n);
                Some(r - skipped)
            });
        if skipped == 0 {
            return ctx.emit(input);
        }
        if skipped == n {
            return Ok(());
        }
        let out = input.select((skipped as u32..n as u32).collect());
        ctx.emit(out)
    }
}

const SHARDS: usize = 16;

/// Drops rows whose values in the given slots were seen before (streaming,
/// with a sharded set shared by all workers).
pub struct Distinct {
    slots: Vec<Slot>,
    seen: Vec<Mutex<KeySet<Vec<GroupKey>>>>,
}

impl Distinct {
    /// A distinct over `slots`.
    pub fn new(slots: Vec<Slot>) -> Distinct {
        Distinct {
            slots,
            seen: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Operator for Distinct {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let mut keep = Vec::new();
        for row in 0..input.len() {
            let key: Vec<GroupKey> = self
                .slots
                .iter()
                .map(|&s| GroupKey(input.value(s, row)))
                .collect();
            let mut h = DefaultHasher::new();
            key.hash(&mut h);
            let shard = (h.finish() as usize) % SHARDS;
            if self.seen[shard]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key)
            {
                keep.push(row as u32);
            }
        }
        ctx.q.memory.charge(keep.len() * self.slots.len() * 48)?;
        if keep.is_empty() {
            return Ok(());
        }
        let out = if keep.len() == input.len() {
            input
        } else {
            input.select(keep)
        };
        ctx.emit(out)
    }
}

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
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
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
            return Ok(());
        }
        let mut chunk = input.select(rows);
        for ((_, slot), values) in yields.iter().zip(columns) {
            chunk.set_column(*slot, Column::new(ColumnData::Values(values)));
        }
        ctx.emit(chunk)
    }
}
