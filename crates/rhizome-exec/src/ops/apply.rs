//! Correlated inner plans: `Optional` (OPTIONAL MATCH), `Apply` (CALL { })
//! and `SemiApply` (EXISTS-style filters). Each input row's run of the
//! inner plan is an instance of the operator's branch scope, cancelled on
//! its own when a semi-apply has seen its first row. With the scope on
//! (a policy other than `off`), up to MAX_SI instances are open at once,
//! each with its own queue, interleaved by the policy
//! ([`crate::pipeline::instances`]), and rows go out as instances end
//! (a semi-apply's in batches that grow from one row to a chunk), so a
//! `LIMIT` above ends the scope early; with the scope off, each row's
//! instance runs inline to its end, in input order. A task hands the rows
//! it has not started back to the queue once its quantum is spent; inside
//! one long instance, yield points
//! ([`crate::scheduler::QueryScope::yield_now`]) bound a waiting query's
//! wait instead.

use crate::chunk::Chunk;
use crate::compile::{CMemo, CNode};
use crate::context::{InlineLimit, PausedScope, ScopeConsumer, ScopeEnd, ScopeRun};
use crate::expr::Row;
use crate::operator::{
    next_batch, return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE,
};
use rhizome_common::{Result, Value};
use rhizome_plan::{LoopScope, OpKind, ScopePolicy};
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
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let scope = match &self.node.kind {
            OpKind::SemiApply { scope, .. }
            | OpKind::Optional { scope, .. }
            | OpKind::Apply { scope } => *scope,
            _ => LoopScope::default(),
        };
        if scope.policy != ScopePolicy::Off {
            return self.execute_scoped(input, ctx, scope, None, 1);
        }
        let inner = &self.node.inputs[1];
        let mut keep = Vec::new();
        for row in 0..input.len() {
            if ctx.cancelled() {
                return NEED_MORE;
            }
            if row > 0 && ctx.quantum_spent() {
                // Between instances: hand the rows not started yet back to
                // the queue as a new task, so the worker chooses again.
                let rest = input.select((row as u32..input.len() as u32).collect());
                ctx.spawn(move |ctx| ctx.push_here(rest).map(|_| ()))?;
                return self.emit_kept(input, keep, ctx);
            }
            let argument = input.select(vec![row as u32]);
            match &self.node.kind {
                OpKind::SemiApply { anti, .. } => {
                    let found = ctx
                        .q
                        .run_inline(inner, argument, InlineLimit::FirstRow)?
                        .iter()
                        .any(|c| !c.is_empty());
                    if found != *anti {
                        keep.push(row as u32);
                    }
                }
                OpKind::Optional { nullable, .. } => {
                    let chunks = ctx
                        .q
                        .run_inline(inner, argument.clone(), InlineLimit::All)?;
                    if chunks.iter().all(|c| c.is_empty()) {
                        let mut row_chunk = argument;
                        for &slot in nullable {
                            row_chunk.clear_column(slot);
                        }
                        return_if_finished!(ctx.emit(row_chunk));
                    } else {
                        for c in chunks {
                            return_if_finished!(ctx.emit(overlay(&argument, c)));
                        }
                    }
                }
                _ => {
                    for c in ctx
                        .q
                        .run_inline(inner, argument.clone(), InlineLimit::All)?
                    {
                        return_if_finished!(ctx.emit(overlay(&argument, c)));
                    }
                }
            }
        }
        self.emit_kept(input, keep, ctx)
    }
}

/// The branch scope's consumer: what the operator does with each
/// instance's output ([`Apply::execute_scoped`]).
struct Ended<'c, 't> {
    node: &'c CNode,
    ctx: &'c mut TaskCtx<'t>,
    input: &'c Chunk,
    /// A semi-apply's rows kept and not yet emitted.
    keep: Vec<u32>,
    /// Kept rows that make the next batch.
    batch: usize,
    /// Downstream wants no more rows.
    finished: bool,
}

impl Ended<'_, '_> {
    /// The values of `memo`'s key slots in input row `row`.
    fn key(&self, memo: &CMemo, row: usize) -> Vec<Value> {
        let r = Row::new(self.input, row);
        memo.slots.iter().map(|&s| r.get(s)).collect()
    }

    /// Emits `chunk`; false (and `finished`) once downstream wants no more.
    fn emit(&mut self, chunk: Chunk) -> Result<bool> {
        if self.ctx.emit(chunk)?.is_finished() {
            self.finished = true;
            return Ok(false);
        }
        Ok(true)
    }
}

impl ScopeConsumer for Ended<'_, '_> {
    fn may_start(&mut self, first: bool) -> bool {
        first || !self.ctx.quantum_spent()
    }

    fn stopped(&self) -> bool {
        self.ctx.cancelled()
    }

    fn pausable(&self) -> bool {
        self.ctx.can_hand_back()
    }

    fn pause(&self) -> bool {
        self.ctx.quantum_spent()
    }

    fn known(&mut self, row: usize) -> Option<Vec<Chunk>> {
        let memo = self.node.c.memo.as_ref()?;
        let q = self.ctx.q;
        if !q.memo.has_room() {
            return None;
        }
        let found = q.memo.get(memo.id, self.key(memo, row)).ok()?;
        Some(if found == Value::Bool(true) {
            vec![self.input.select(vec![row as u32])]
        } else {
            Vec::new()
        })
    }

    fn ended(&mut self, row: usize, output: Vec<Chunk>) -> Result<bool> {
        let argument = || self.input.select(vec![row as u32]);
        match &self.node.kind {
            OpKind::SemiApply { anti, .. } => {
                let found = output.iter().any(|c| !c.is_empty());
                if let Some(memo) = &self.node.c.memo {
                    let q = self.ctx.q;
                    if q.memo.has_room() {
                        q.memo
                            .insert(memo.id, self.key(memo, row), &Value::Bool(found));
                    }
                }
                if found != *anti {
                    self.keep.push(row as u32);
                    if self.keep.len() >= self.batch {
                        self.batch = next_batch(self.batch);
                        let rows = std::mem::take(&mut self.keep);
                        return self.emit(self.input.select(rows));
                    }
                }
                Ok(true)
            }
            OpKind::Optional { nullable, .. } if output.iter().all(|c| c.is_empty()) => {
                let mut row_chunk = argument();
                for &slot in nullable {
                    row_chunk.clear_column(slot);
                }
                self.emit(row_chunk)
            }
            _ => {
                let argument = argument();
                for c in output {
                    if !self.emit(overlay(&argument, c))? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }
}

impl Apply {
    /// The branch scope on: the input's rows are instances run by
    /// [`crate::context::QueryContext::run_scope`], their rows emitted as
    /// they end (in input order if the input has an order the query
    /// implies). Once the task's quantum is spent with instances open, the
    /// scope's state goes to a new task at this stage, which resumes it
    /// (`paused`; `batch`: the size of a semi-apply's next batch of rows),
    /// so no instance holds a worker for longer than a quantum.
    fn execute_scoped(
        &self,
        input: Chunk,
        ctx: &mut TaskCtx<'_>,
        scope: LoopScope,
        paused: Option<PausedScope>,
        batch: usize,
    ) -> Result<OperatorResult> {
        let q = ctx.q;
        let semi = matches!(self.node.kind, OpKind::SemiApply { .. });
        let stats = q
            .profile
            .as_ref()
            .and_then(|p| p.operators.get(self.node.id))
            .map(|s| &s.scope);
        let in_order = ctx.keeps_order();
        let mut ended = Ended {
            node: &self.node,
            ctx,
            input: &input,
            keep: Vec::new(),
            batch,
            finished: false,
        };
        let run = ScopeRun {
            plan: &self.node.inputs[1],
            input: &input,
            rows: 0..input.len(),
            limit: if semi {
                InlineLimit::FirstRow
            } else {
                InlineLimit::All
            },
            scope,
            in_order,
            stats,
        };
        let end = q.run_scope(run, &mut ended, paused)?;
        let (keep, finished, batch) =
            (std::mem::take(&mut ended.keep), ended.finished, ended.batch);
        if finished {
            return Ok(OperatorResult::Finished);
        }
        if ctx.cancelled() {
            return NEED_MORE;
        }
        if !keep.is_empty() {
            return_if_finished!(ctx.emit(input.select(keep)));
        }
        match end {
            ScopeEnd::Rows(end) if end < input.len() => {
                // The quantum is spent: the rows not started go back to
                // the queue as a new task.
                let rest = input.select((end as u32..input.len() as u32).collect());
                ctx.spawn(move |ctx| ctx.push_here(rest).map(|_| ()))?;
            }
            ScopeEnd::Rows(_) => {}
            ScopeEnd::Paused(paused) => {
                // Instances are open: the scope goes on in a new task.
                let node = self.node.clone();
                ctx.spawn(move |ctx| {
                    Apply { node }
                        .execute_scoped(input, ctx, scope, Some(paused), batch)
                        .map(drop)
                })?;
            }
        }
        NEED_MORE
    }

    /// A semi-apply's rows kept so far (`keep`, of `input`), emitted.
    fn emit_kept(
        &self,
        input: Chunk,
        keep: Vec<u32>,
        ctx: &mut TaskCtx<'_>,
    ) -> Result<OperatorResult> {
        if matches!(self.node.kind, OpKind::SemiApply { .. }) && !keep.is_empty() {
            let out = if keep.len() == input.len() {
                input
            } else {
                input.select(keep)
            };
            return_if_finished!(ctx.emit(out));
        }
        NEED_MORE
    }
}
