//! Running a read query: the options, the result, and the entry points
//! [`execute`] and [`execute_streaming`] (updating queries run through
//! [`crate::write`], which builds on these).

use crate::chunk::Chunk;
use crate::compile::Compiler;
use crate::context::{now_utc, MemoryBudget, MemoryPool, Procedures, Profile, QueryContext};
use crate::memo::SubqueryMemo;
use crate::ops::result::RowsSink;
use crate::pipeline::build::build_with_sink;
use crate::pipeline::drive::{run_parallel, run_parallel_then, InlineRunner};
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
    /// The tenant whose share of the pool the query uses (a server's user
    /// or group, [`crate::scheduler::Tenant`]); default: the pool's default
    /// tenant.
    pub tenant: Option<Arc<crate::scheduler::Tenant>>,
    /// The client session (a server connection) whose statement this is:
    /// within the tenant, the sessions that have used less CPU go first
    /// ([`crate::scheduler::ClientSession`]); default: none.
    pub session: Option<Arc<crate::scheduler::ClientSession>>,
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

/// Receives how a query started with [`start_streaming`] ended.
pub type OnEnd = Box<dyn FnOnce(Result<QueryResult>) + Send>;

/// Starts `plan` like [`execute_streaming`] and returns at once: no thread
/// waits for the query. Its tasks run on the pool's workers (the first one
/// here if this is a worker between tasks, a job of
/// [`WorkerPool::submit`]); the thread that ends its last task finishes it
/// and calls `done` with the result (without rows: they went to
/// `receiver`). A server submits a job that plans a statement and calls
/// this, so that neither a connection's task nor a thread of its own waits
/// for the query.
pub fn start_streaming(
    plan: &Plan,
    snapshot: Snapshot,
    params: BTreeMap<String, Value>,
    options: &QueryOptions,
    settings: &StatementSettings,
    receiver: Arc<dyn RowReceiver>,
    done: OnEnd,
) {
    let run = Run::open(plan, snapshot, params, options, settings, Some(receiver));
    let argument = Chunk::new(plan.width, 1);
    let profiled = run.q.profile.is_some().then(|| plan.clone());
    let columns = result_columns(plan);
    let pipelines = match run.build() {
        Ok(pipelines) => pipelines,
        Err(e) => {
            run.close();
            return done(Err(e));
        }
    };
    let q = run.q.clone();
    run_parallel_then(
        pipelines,
        argument,
        &q,
        Box::new(move |outcome| {
            run.close();
            done(outcome.map(|_| run.result(columns, profiled.as_ref())))
        }),
    );
}

/// The column names of `plan`'s result.
fn result_columns(plan: &Plan) -> Vec<String> {
    plan.columns.iter().map(|(n, _)| n.clone()).collect()
}

/// One query's run: its scope, context and result sink.
struct Run {
    start: Instant,
    pool: WorkerPool,
    scope: Arc<crate::scheduler::QueryScope>,
    q: Arc<QueryContext>,
    root: Arc<crate::compile::CNode>,
    rows_sink: Arc<RowsSink>,
}

impl Run {
    fn open(
        plan: &Plan,
        snapshot: Snapshot,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        settings: &StatementSettings,
        receiver: Option<Arc<dyn RowReceiver>>,
    ) -> Run {
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
            tenant: options.tenant.clone(),
            session: options.session.clone(),
            // A source's tasks wait for its backend: they neither yield
            // nor run nested in another query's task.
            nestable: snapshot.external().is_none(),
            ..ScopeOptions::default()
        });
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
        Run {
            start,
            pool,
            scope,
            q,
            root,
            rows_sink,
        }
    }

    /// The run's pipelines; the sink's time is charged to the plan's root
    /// operator.
    fn build(&self) -> Result<Vec<crate::pipeline::Pipeline>> {
        build_with_sink(
            &self.root,
            &self.q,
            &self.scope.cancel,
            (Some(self.root.id), self.rows_sink.clone()),
        )
    }

    /// Removes the query from the scheduler.
    fn close(&self) {
        self.pool.close_scope(&self.scope);
    }

    /// The result of the finished run; `plan` only if it was profiled.
    fn result(&self, columns: Vec<String>, plan: Option<&Plan>) -> QueryResult {
        let rows = self.rows_sink.take_rows();
        let elapsed = self.start.elapsed();
        let profile = self
            .q
            .profile
            .as_ref()
            .zip(plan)
            .map(|(p, plan)| profile_report(plan, p, elapsed, self.scope.busy_time()));
        QueryResult {
            columns,
            rows,
            elapsed,
            plan: None,
            profile,
            counters: WriteCounters::default(),
        }
    }
}

fn run(
    plan: &Plan,
    snapshot: Snapshot,
    params: BTreeMap<String, Value>,
    options: &QueryOptions,
    settings: &StatementSettings,
    receiver: Option<Arc<dyn RowReceiver>>,
) -> Result<QueryResult> {
    let run = Run::open(plan, snapshot, params, options, settings, receiver);
    let closer = run.pool.close_on_drop(&run.scope);
    let outcome = run
        .build()
        .and_then(|pipelines| run_parallel(pipelines, Chunk::new(plan.width, 1), &run.q));
    drop(closer);
    outcome?;
    Ok(run.result(result_columns(plan), Some(plan)))
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
            let scope = profile.operators[id].scope.annotation();
            profile_annotation(o.rows, o.time, o.morsels, o.workers) + &scope
        })
    });
    ProfileReport {
        operators,
        wall,
        busy,
        text,
    }
}
