//! Running updating plans against one write transaction.
//!
//! An updating plan (`Plan::updating`) runs on the calling thread, one
//! operator group after another, against one [`WriteTxn`]. The plan is cut at
//! its *materialization points* — [`OpKind::Eager`] barriers and the write
//! operators themselves:
//!
//! - a write operator first computes all of its input rows, then applies its
//!   writes row by row, in order ([`apply`]);
//! - a read segment (the operators between materialization points) runs on
//!   the ordinary pipeline runtime, inline on this thread, over a snapshot
//!   taken from the transaction *after* everything below it was written; the
//!   materialization points it reaches are sources of their computed rows
//!   (`QueryContext::materialized`).
//!
//! So reads before a write never see its effects and reads after it see all
//! of them. The plan is compiled again for every segment, against the
//! transaction's current catalog, so labels, types and keys created by
//! earlier clauses resolve. Expressions of write operators are evaluated
//! against a snapshot refreshed whenever the transaction changed, so every
//! row sees the writes of the rows before it (`MERGE` finds what an earlier
//! row created).

mod apply;
mod delete;

use crate::chunk::{Chunk, RowBuilder};
use crate::compile::{CNode, Compiler};
use crate::context::InlineLimit;
use crate::context::{MemoryBudget, Profile, QueryContext};
use crate::expr::{Evaluator, Row};
use crate::memo::SubqueryMemo;
use crate::pipeline::drive::{run_inline, InlineRunner};
use crate::query::{profile_report, QueryOptions, QueryResult, StatementSettings};
use crate::rows::Rows;
use crate::scheduler::{QueryScope, ScopeOptions, WorkerPool};
use rhizome_common::{Error, ErrorKind, NodeId, Result, Value};
use rhizome_plan::{Expr, OpKind, Plan};
use rhizome_storage::{Snapshot, WriteTxn};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// Runs an updating plan in `txn` and returns its rows. Writes stay in
/// `txn`; the caller commits or rolls back.
pub fn execute_update(
    plan: &Plan,
    txn: &mut WriteTxn,
    params: BTreeMap<String, Value>,
    options: &QueryOptions,
    settings: &StatementSettings,
) -> Result<QueryResult> {
    let start = Instant::now();
    let pool = options
        .pool
        .clone()
        .unwrap_or_else(|| WorkerPool::global().clone());
    let scope = pool.open_scope(ScopeOptions {
        max_parallel: 1,
        deadline: options.timeout.map(|t| start + t),
        parent: options.cancel.clone(),
        tenant: options.tenant.clone(),
        session: options.session.clone(),
        ..ScopeOptions::default()
    });
    let closer = pool.close_on_drop(&scope);
    let operator_count = if settings.profile {
        let snapshot = txn.view();
        let mut compiler = Compiler::new(&snapshot);
        compiler.node(&plan.root);
        compiler.operator_count()
    } else {
        0
    };
    let mut run = UpdateRun {
        plan,
        txn,
        params: Arc::new(params),
        profile: settings
            .profile
            .then(|| Arc::new(Profile::new(operator_count))),
        settings,
        scope: scope.clone(),
        statement_time: crate::context::now_utc(),
        memory: Arc::new(MemoryBudget::for_query(options)),
        current: None,
        pending_deletes: Vec::new(),
        argument: None,
        nested_ids: Vec::new(),
    };
    let outcome = run
        .root_rows()
        .and_then(|rows| run.finish_deletes().map(|_| rows));
    drop(closer);
    let profile = run.profile.take();
    let mut rows = outcome?;
    if plan.columns.is_empty() {
        // A statement without RETURN produces no rows.
        rows.clear();
    }
    let mut result_rows = Rows::new(plan.columns.len());
    result_rows.extend(rows.iter().map(|r| {
        plan.columns
            .iter()
            .map(|(_, s)| r.get(*s).cloned().unwrap_or(Value::Null))
            .collect()
    }));
    Ok(QueryResult {
        columns: plan.columns.iter().map(|(n, _)| n.clone()).collect(),
        rows: result_rows,
        elapsed: start.elapsed(),
        plan: None,
        profile: profile.map(|p| {
            // Everything ran on this thread: worker time is wall time.
            let wall = start.elapsed();
            profile_report(plan, &p, wall, wall)
        }),
        counters: Default::default(),
    })
}

/// One row as values per slot.
pub(crate) type Values = Vec<Value>;

/// The state of one updating run.
pub(crate) struct UpdateRun<'a> {
    plan: &'a Plan,
    pub(crate) txn: &'a mut WriteTxn,
    params: Arc<BTreeMap<String, Value>>,
    /// PROFILE counters shared by every context of the run.
    profile: Option<Arc<Profile>>,
    settings: &'a StatementSettings,
    scope: Arc<QueryScope>,
    statement_time: (i64, u32),
    /// The statement's memory, shared by all its contexts.
    memory: Arc<MemoryBudget>,
    /// Query context over the transaction's state as of the last write
    /// (`None` after a write: rebuilt on the next read).
    current: Option<Arc<QueryContext>>,
    /// Nodes deleted without `DETACH` that still had relationships: retried
    /// when the statement ends.
    pub(crate) pending_deletes: Vec<NodeId>,
    /// The row `Argument` yields (the outer row inside an updating
    /// `CALL { }`); `None` at the top: one empty row.
    argument: Option<Values>,
    /// Under PROFILE, while an updating operator applies: each of its
    /// expressions (by address) with the id its nested plans start at
    /// ([`crate::compile::COp::expr_ids`]).
    nested_ids: Vec<(*const Expr, usize)>,
}

/// The worker index PROFILE shows for work run on the calling thread.
const INLINE_WORKER: usize = 0;

/// Nanoseconds recorded so far by all operators.
fn total_nanos(profile: &Profile) -> u64 {
    profile
        .operators
        .iter()
        .map(|o| o.nanos.load(std::sync::atomic::Ordering::Relaxed))
        .sum()
}

/// The compiled node with operator id `id` in `root`'s tree.
fn find(root: &Arc<CNode>, id: usize) -> Option<Arc<CNode>> {
    if root.id == id {
        return Some(root.clone());
    }
    root.inputs.iter().find_map(|i| find(i, id))
}

/// Whether `node` or an operator below it writes.
fn writes(node: &CNode) -> bool {
    node.kind.is_update() || node.inputs.iter().any(|i| writes(i))
}

/// Whether `node` is a `CALL { }` whose body writes.
fn updating_apply(node: &CNode) -> bool {
    matches!(node.kind, OpKind::Apply { .. }) && node.inputs.get(1).is_some_and(|b| writes(b))
}

/// Whether rows of `node` are computed by the updating run, not the pipelines.
fn materialization_point(node: &CNode) -> bool {
    matches!(node.kind, OpKind::Eager) || node.kind.is_update() || updating_apply(node)
}

/// Materialization points reachable from `node` through inputs without crossing another.
fn frontier(node: &CNode, out: &mut Vec<usize>) {
    for input in &node.inputs {
        if materialization_point(input) {
            out.push(input.id);
        } else {
            frontier(input, out);
        }
    }
}

impl UpdateRun<'_> {
    /// Marks the transaction changed: the next read takes a new snapshot.
    pub(crate) fn wrote(&mut self) {
        self.current = None;
    }

    /// The transaction, for a write. Drops the current read context first,
    /// so the pages the write changes are not shared with it and are
    /// changed in place instead of copied.
    pub(crate) fn writer(&mut self) -> &mut WriteTxn {
        self.current = None;
        self.txn
    }

    /// A query context over the transaction's current state.
    pub(crate) fn context(&mut self) -> Result<Arc<QueryContext>> {
        self.scope_ok()?;
        if let Some(q) = &self.current {
            return Ok(q.clone());
        }
        let q = Arc::new(QueryContext {
            snapshot: self.txn.view(),
            params: self.params.clone(),
            scope: self.scope.clone(),
            procedures: self.settings.procedures.clone(),
            profile: self.profile.clone(),
            memory: self.memory.clone(),
            worker_slots: 1,
            statement_time: self.statement_time,
            materialized: Default::default(),
            runner: Arc::new(InlineRunner),
            memo: SubqueryMemo::default(),
        });
        self.current = Some(q.clone());
        Ok(q)
    }

    fn scope_ok(&self) -> Result<()> {
        if self.scope.is_cancelled() {
            return Err(self.scope.take_error().unwrap_or_else(|| {
                Error::new(ErrorKind::QueryAborted, "the query was cancelled")
            }));
        }
        Ok(())
    }

    /// The plan compiled against `snapshot`.
    fn compiled(&self, snapshot: &Snapshot) -> Arc<CNode> {
        Compiler::new(snapshot).node(&self.plan.root)
    }

    /// The compiled operator `id` over the current state.
    pub(crate) fn node(&mut self, id: usize) -> Result<(Arc<CNode>, Arc<QueryContext>)> {
        let q = self.context()?;
        let root = self.compiled(&q.snapshot);
        let node = find(&root, id).ok_or_else(|| {
            Error::new(ErrorKind::Internal, format!("no operator {id} in the plan"))
        })?;
        Ok((node, q))
    }

    /// Evaluates `e` on `row` over the current state.
    pub(crate) fn eval(&mut self, e: &Expr, row: &[Value]) -> Result<Value> {
        let q = self.context()?;
        let compiled = match &self.profile {
            // Plans nested in `e` count into their own counters (an
            // expression not found counts into none).
            Some(profile) => {
                let first = self
                    .nested_ids
                    .iter()
                    .find(|(expr, _)| std::ptr::eq(*expr, e))
                    .map_or(profile.operators.len(), |(_, id)| *id);
                Compiler::numbering_from(&q.snapshot, first).expr(e)
            }
            None => Compiler::new(&q.snapshot).expr(e),
        };
        let chunk = Chunk::single_row(row);
        Evaluator::new(&q).eval(&compiled, &Row::new(&chunk, 0))
    }

    fn root_rows(&mut self) -> Result<Vec<Values>> {
        self.rows(0)
    }

    /// All rows of operator `id` (and everything below it done).
    pub(crate) fn rows(&mut self, id: usize) -> Result<Vec<Values>> {
        let (node, _) = self.node(id)?;
        if matches!(node.kind, OpKind::Eager) {
            let rows = self.rows(node.inputs[0].id)?;
            self.record(id, rows.len(), 0);
            return Ok(rows);
        }
        if node.kind.is_update() {
            let input = self.rows(node.inputs[0].id)?;
            return self.apply_profiled(&node, input);
        }
        if updating_apply(&node) {
            let outer = self.rows(node.inputs[0].id)?;
            let out = self.call_subquery(&node, outer)?;
            self.record(id, out.len(), 0);
            return Ok(out);
        }
        let mut points = Vec::new();
        frontier(&node, &mut points);
        let mut computed = HashMap::new();
        for p in points {
            let rows = self.rows(p)?;
            computed.insert(p, vec![self.chunk(&rows)]);
        }
        let (node, q) = self.node(id)?;
        *q.materialized.lock().unwrap_or_else(|p| p.into_inner()) = computed;
        let argument = match &self.argument {
            Some(row) => Chunk::single_row(row),
            None => Chunk::new(self.plan.width, 1),
        };
        let chunks = run_inline(&node, argument, &q, InlineLimit::All)?;
        Ok(self.values(&chunks))
    }

    /// An updating `CALL { }`: runs the body once per outer row, in order
    /// (each run sees the writes of the runs before it). A unit body (no
    /// `RETURN`; the planner puts an `Eager` on top of it) passes the outer
    /// row through once;
    /// otherwise each body row is the outer row overlaid with the body's
    /// values.
    fn call_subquery(&mut self, node: &CNode, outer: Vec<Values>) -> Result<Vec<Values>> {
        let body = &node.inputs[1];
        let unit = matches!(body.kind, OpKind::Eager);
        let mut out = Vec::with_capacity(outer.len());
        for row in outer {
            let saved = self.argument.replace(row.clone());
            let inner = self.rows(body.id);
            self.argument = saved;
            let inner = inner?;
            if unit {
                out.push(row);
                continue;
            }
            for mut r in inner {
                for (slot, v) in r.iter_mut().enumerate() {
                    if v.is_null() {
                        if let Some(outer_value) = row.get(slot) {
                            *v = outer_value.clone();
                        }
                    }
                }
                out.push(r);
            }
        }
        Ok(out)
    }

    /// Rows of the read-only plan `id` started from `row` (the inner side of a `Merge`).
    pub(crate) fn inner_rows(&mut self, id: usize, row: &[Value]) -> Result<Vec<Values>> {
        let (node, q) = self.node(id)?;
        let chunks = run_inline(&node, Chunk::single_row(row), &q, InlineLimit::All)?;
        Ok(self.values(&chunks))
    }

    /// Rows of a write chain `id` (a `Foreach` body) started from `row`.
    pub(crate) fn chain_rows(&mut self, id: usize, row: &[Value]) -> Result<Vec<Values>> {
        let (node, _) = self.node(id)?;
        match &node.kind {
            OpKind::Argument => Ok(vec![row.to_vec()]),
            OpKind::Eager => self.chain_rows(node.inputs[0].id, row),
            kind if kind.is_update() => {
                let input = self.chain_rows(node.inputs[0].id, row)?;
                self.apply_profiled(&node, input)
            }
            _ => Err(Error::new(
                ErrorKind::Internal,
                format!("{:?} inside a FOREACH body", node.kind),
            )),
        }
    }

    /// [`UpdateRun::apply`], recording the operator's rows and exclusive
    /// time (minus what operators it ran inside recorded) when profiling.
    fn apply_profiled(&mut self, node: &CNode, input: Vec<Values>) -> Result<Vec<Values>> {
        let Some(profile) = self.profile.clone() else {
            return self.apply(node, input);
        };
        let inner_before = total_nanos(&profile);
        let start = Instant::now();
        let ids = node.kind.exprs().into_iter().map(|e| e as *const Expr);
        let ids = ids.zip(node.c.expr_ids.iter().copied()).collect();
        let outer_ids = std::mem::replace(&mut self.nested_ids, ids);
        let out = self.apply(node, input);
        self.nested_ids = outer_ids;
        let out = out?;
        let inner = total_nanos(&profile).saturating_sub(inner_before);
        let own = (start.elapsed().as_nanos() as u64).saturating_sub(inner);
        self.record(node.id, out.len(), own);
        Ok(out)
    }

    /// Adds `rows` and `nanos` to operator `id`'s PROFILE counters.
    fn record(&self, id: usize, rows: usize, nanos: u64) {
        if let Some(p) = &self.profile {
            p.record(id, INLINE_WORKER, rows as u64, nanos);
        }
    }

    fn chunk(&self, rows: &[Values]) -> Chunk {
        let mut b = RowBuilder::new(self.plan.width);
        for r in rows {
            b.push_row(r.iter().cloned());
        }
        b.finish()
    }

    fn values(&self, chunks: &[Chunk]) -> Vec<Values> {
        let width = self.plan.width;
        let mut out = Vec::new();
        for c in chunks {
            for r in 0..c.len() {
                out.push((0..width).map(|s| c.value(s, r)).collect());
            }
        }
        out
    }
}
