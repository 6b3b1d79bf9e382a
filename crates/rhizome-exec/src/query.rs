//! Running a read query: the options, the result, and the entry points
//! [`execute`] and [`execute_streaming`] (updating queries run through
//! [`crate::write`], which builds on these).

use crate::chunk::Chunk;
use crate::compile::Compiler;
use crate::context::{now_utc, MemoryBudget, MemoryPool, Procedures, Profile, QueryContext};
use crate::memo::SubqueryMemo;
use crate::ops::result::RowsSink;
use crate::pipeline::build::build_with_sink;
use crate::pipeline::drive::{run_parallel, InlineRunner};
use crate::rows::Rows;
use crate::scheduler::{CancelToken, ScopeOptions, WorkerPool};
use crate::stream::RowReceiver;
use rhizome_common::{Result, Value};
use rhizome_plan::{profile_annotation, render_plan, Plan};
use rhizome_storage::{Snapshot, WriteCounters};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a caller wants a statement run: the one options type from the
/// command line and the servers through `rhizome_engine::Engine` down to
/// the runtime (the engine re-exports it).
#[derive(Clone, Default)]
pub struct QueryOptions {
    /// Most workers the query may use at once (default: all).
    pub threads: Option<usize>,
    /// Stop the query after this long.
    pub timeout: Option<Duration>,
    /// Most bytes the query's breakers may hold (default: unlimited).
    pub memory_limit: Option<usize>,
    /// Memory shared with other queries (a server's global limit): the
    /// query also fails when all of them together hold more than it allows.
    pub memory_pool: Option<Arc<MemoryPool>>,
    /// Cancelling this token stops the query (Ctrl-C, API calls).
    pub cancel: Option<Arc<CancelToken>>,
    /// Run on this pool instead of the process-wide one (benchmarks, tests).
    pub pool: Option<WorkerPool>,
    /// The calling thread only waits: every task of the query runs on the
    /// pool's workers (a server, whose thread per running statement must
    /// not compute). False (the default): the caller runs the query's first
    /// task and helps with its queued ones while it waits, which spares a
    /// small query a worker's wake-up (the command line, Python).
    pub caller_waits: bool,
}

/// What the engine adds to a caller's [`QueryOptions`] for one planned
/// statement: the procedures it may call and whether `PROFILE` asked for
/// counters.
#[derive(Clone)]
pub struct StatementSettings {
    /// Procedures callable with `CALL`.
    pub procedures: Arc<Procedures>,
    /// Collect per-operator counters.
    pub profile: bool,
}

impl Default for StatementSettings {
    fn default() -> StatementSettings {
        StatementSettings {
            procedures: Arc::new(Procedures::builtin()),
            profile: false,
        }
    }
}

/// PROFILE counters of one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorProfile {
    /// Operator id (depth-first order).
    pub id: usize,
    /// Rows produced.
    pub rows: u64,
    /// Time spent in the operator itself.
    pub time: Duration,
    /// Chunks processed.
    pub morsels: u64,
    /// Distinct workers that ran it.
    pub workers: u32,
}

/// What PROFILE reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileReport {
    /// Per operator, in depth-first order.
    pub operators: Vec<OperatorProfile>,
    /// Wall-clock time of the query.
    pub wall: Duration,
    /// Worker time spent on the query's tasks.
    pub busy: Duration,
    /// The plan annotated with the counters.
    pub text: String,
}

impl ProfileReport {
    /// Share of worker time attributed to operators (1.0 = all of it).
    pub fn attributed(&self) -> f64 {
        let ops: Duration = self.operators.iter().map(|o| o.time).sum();
        if self.busy.is_zero() {
            1.0
        } else {
            ops.as_secs_f64() / self.busy.as_secs_f64()
        }
    }
}

/// The outcome of one statement: the one result type from the runtime
/// through `rhizome_engine::Engine` to the command line and the servers
/// (the engine re-exports it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryResult {
    /// Column names, in `RETURN` order.
    pub columns: Vec<String>,
    /// Rows, values in column order (none if they were streamed).
    pub rows: Rows,
    /// Wall-clock time (the engine's: from text to last row).
    pub elapsed: Duration,
    /// For `EXPLAIN`: the plan (and no rows).
    pub plan: Option<String>,
    /// For `PROFILE`: the counters.
    pub profile: Option<ProfileReport>,
    /// Side effects of an updating statement (all zero for a read-only one).
    pub counters: WriteCounters,
}

impl QueryResult {
    /// The plan to show: `EXPLAIN`'s, or `PROFILE`'s annotated with counters.
    pub fn plan_text(&self) -> Option<&str> {
        self.plan
            .as_deref()
            .or(self.profile.as_ref().map(|p| p.text.as_str()))
    }
}

/// Runs `plan` over `snapshot` with `params`; blocks until done.
pub fn execute(
    plan: &Plan,
    snapshot: Snapshot,
    params: BTreeMap<String, Value>,
    options: &QueryOptions,
    settings: &StatementSettings,
) -> Result<QueryResult> {
    run(plan, snapshot, params, options, settings, None)
}

/// Runs `plan` like [`execute`] but hands the result rows to `receiver`
/// as the workers produce them (see [`RowReceiver`] for their order); the
/// result returned has no rows. Streamed rows are not charged to the
/// memory limit (the query holds only one block per worker) unless the
/// receiver keeps them ([`RowReceiver::keeps_rows`]).
pub fn execute_streaming(
    plan: &Plan,
    snapshot: Snapshot,
    params: BTreeMap<String, Value>,
    options: &QueryOptions,
    settings: &StatementSettings,
    receiver: Arc<dyn RowReceiver>,
) -> Result<QueryResult> {
    run(plan, snapshot, params, options, settings, Some(receiver))
}

fn run(
    plan: &Plan,
    snapshot: Snapshot,
    params: BTreeMap<String, Value>,
    options: &QueryOptions,
    settings: &StatementSettings,
    receiver: Option<Arc<dyn RowReceiver>>,
) -> Result<QueryResult> {
    let start = Instant::now();
    let pool = options
        .pool
        .clone()
        .unwrap_or_else(|| WorkerPool::global().clone());
    let mut compiler = Compiler::new(&snapshot);
    let root = compiler.node(&plan.root);
    let operator_count = compiler.operator_count();
    let scope = pool.open_scope(ScopeOptions {
        max_parallel: options.threads.unwrap_or(usize::MAX),
        deadline: options.timeout.map(|t| start + t),
        parent: options.cancel.clone(),
        caller_helps: !options.caller_waits,
        ..ScopeOptions::default()
    });
    let closer = pool.close_on_drop(&scope);
    if let Some(receiver) = &receiver {
        receiver.attach(&scope);
    }
    let q = Arc::new(QueryContext {
        snapshot,
        params: Arc::new(params),
        scope: scope.clone(),
        procedures: settings.procedures.clone(),
        profile: settings
            .profile
            .then(|| Arc::new(Profile::new(operator_count))),
        memory: Arc::new(MemoryBudget::for_query(options)),
        worker_slots: pool.threads() + 1,
        statement_time: now_utc(),
        materialized: Default::default(),
        runner: Arc::new(InlineRunner),
        memo: SubqueryMemo::default(),
    });
    // The result rows are built by the workers as the last pipeline runs.
    // A statement without result columns (a standalone call of a void
    // procedure) returns no rows, whatever rows it processed.
    let rows_sink = Arc::new(RowsSink::new(
        q.worker_slots,
        plan.columns.iter().map(|(_, slot)| *slot).collect(),
        receiver,
    ));
    // Its time is charged to the plan's root operator.
    let outcome = build_with_sink(&root, &q, &scope.cancel, (Some(root.id), rows_sink.clone()))
        .and_then(|pipelines| run_parallel(pipelines, Chunk::new(plan.width, 1), &q));
    drop(closer);
    outcome?;
    let rows = rows_sink.take_rows();
    let elapsed = start.elapsed();
    let profile = q
        .profile
        .as_ref()
        .map(|p| profile_report(plan, p, elapsed, scope.busy_time()));
    Ok(QueryResult {
        columns: plan.columns.iter().map(|(n, _)| n.clone()).collect(),
        rows,
        elapsed,
        plan: None,
        profile,
        counters: WriteCounters::default(),
    })
}

/// The PROFILE report of `plan` from its counters.
pub(crate) fn profile_report(
    plan: &Plan,
    profile: &Profile,
    wall: Duration,
    busy: Duration,
) -> ProfileReport {
    let operators: Vec<OperatorProfile> = profile
        .operators
        .iter()
        .enumerate()
        .map(|(id, s)| OperatorProfile {
            id,
            rows: s.rows.load(Ordering::Relaxed),
            time: Duration::from_nanos(s.nanos.load(Ordering::Relaxed)),
            morsels: s.morsels.load(Ordering::Relaxed),
            workers: s.workers.load(Ordering::Relaxed).count_ones(),
        })
        .collect();
    let text = render_plan(plan, &mut |id, _| {
        operators.get(id).map_or(String::new(), |o| {
            profile_annotation(o.rows, o.time, o.morsels, o.workers)
        })
    });
    ProfileReport {
        operators,
        wall,
        busy,
        text,
    }
}
