//! What every task of one query shares: the snapshot, the parameters, the
//! scheduler scope, procedures, the memory budget, PROFILE counters and the
//! handle through which expressions and applies run inner plans.

use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::memo::SubqueryMemo;
use crate::scheduler::QueryScope;
use rhizome_common::memory::format_size;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_functions::EntityAccess;
use rhizome_storage::{GraphRead, Snapshot};
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Per-operator counters collected when a query runs under PROFILE.
#[derive(Debug, Default)]
pub struct OperatorStats {
    /// Rows the operator produced.
    pub rows: AtomicU64,
    /// Time spent in the operator itself (excluding operators it pushed to), in nanoseconds.
    pub nanos: AtomicU64,
    /// Chunks (morsels or splits) the operator processed.
    pub morsels: AtomicU64,
    /// Bit `w` set if worker `w` ran the operator (inline runs use the last bit).
    pub workers: AtomicU64,
    /// The operator's loop scope, if it runs one.
    pub scope: ScopeStats,
}

/// PROFILE counters of a loop or branch scope (docs/scheduling.md, "PROFILE").
#[derive(Debug, Default)]
pub struct ScopeStats {
    /// Instances (input rows) started.
    pub started: AtomicU64,
    /// Instances that ran to their end.
    pub finished: AtomicU64,
    /// Instances still active when the consumer stopped the operator
    /// (a LIMIT reached, an EXISTS matched, the query cancelled).
    pub cancelled: AtomicU64,
    /// Pending work items taken and run: path prefixes expanded (a loop
    /// scope), steps of instances (a branch scope).
    pub taken: AtomicU64,
    /// Pending work items dropped by those cancellations, never run.
    pub dropped: AtomicU64,
    /// Path prefixes a loop scope that prunes ends did not expand: every
    /// end they could reach was already produced.
    pub pruned: AtomicU64,
    /// A branch scope's time in its instances (ns, other queries' work
    /// nested at yield points left out); 0 for a loop scope, whose time
    /// is its operator's.
    pub nanos: AtomicU64,
    /// The counters are a branch scope's.
    pub branch: std::sync::atomic::AtomicBool,
}

impl ScopeStats {
    /// Adds one run's counts.
    pub fn add(&self, started: u64, finished: u64, cancelled: u64, taken: u64, dropped: u64) {
        for (counter, v) in [
            (&self.started, started),
            (&self.finished, finished),
            (&self.cancelled, cancelled),
            (&self.taken, taken),
            (&self.dropped, dropped),
        ] {
            counter.fetch_add(v, Ordering::Relaxed);
        }
    }

    /// Adds one run's pruned prefixes.
    pub fn add_pruned(&self, pruned: u64) {
        self.pruned.fetch_add(pruned, Ordering::Relaxed);
    }

    /// The PROFILE text, or nothing if no instance started.
    pub fn annotation(&self) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        if get(&self.started) == 0 {
            return String::new();
        }
        if self.branch.load(Ordering::Relaxed) {
            return format!(
                " scope: instances started={} finished={} cancelled={} steps={} dropped={} \
                 time={:.3}ms",
                get(&self.started),
                get(&self.finished),
                get(&self.cancelled),
                get(&self.taken),
                get(&self.dropped),
                get(&self.nanos) as f64 / 1e6
            );
        }
        let pruned = get(&self.pruned);
        format!(
            " scope: instances started={} finished={} cancelled={} expanded={} dropped={}{}",
            get(&self.started),
            get(&self.finished),
            get(&self.cancelled),
            get(&self.taken),
            get(&self.dropped),
            if pruned > 0 {
                format!(" pruned={pruned}")
            } else {
                String::new()
            }
        )
    }
}

/// PROFILE counters, indexed by operator id (depth-first order of the plan).
#[derive(Debug)]
pub struct Profile {
    /// One entry per operator.
    pub operators: Vec<OperatorStats>,
}

impl Profile {
    /// Counters for `n` operators.
    pub fn new(n: usize) -> Profile {
        Profile {
            operators: (0..n).map(|_| OperatorStats::default()).collect(),
        }
    }

    /// Adds `nanos` to operator `id`'s time without counting an invocation.
    pub fn add_time(&self, id: usize, nanos: u64) {
        if let Some(s) = self.operators.get(id) {
            s.nanos.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Adds `rows` to operator `id`'s rows without counting an invocation
    /// (a breaker's output, handed on when its sink finishes).
    pub fn add_rows(&self, id: usize, rows: u64) {
        if let Some(s) = self.operators.get(id) {
            s.rows.fetch_add(rows, Ordering::Relaxed);
        }
    }

    /// Records one invocation of operator `id` on `worker` producing `rows` in `nanos`.
    pub fn record(&self, id: usize, worker: usize, rows: u64, nanos: u64) {
        if let Some(s) = self.operators.get(id) {
            s.rows.fetch_add(rows, Ordering::Relaxed);
            s.nanos.fetch_add(nanos, Ordering::Relaxed);
            s.morsels.fetch_add(1, Ordering::Relaxed);
            s.workers.fetch_or(1 << worker.min(63), Ordering::Relaxed);
        }
    }
}

/// Memory shared by every query of a process (a server's global limit):
/// each query's [`MemoryBudget`] charges it too and gives back what it
/// charged when the query ends, so one query over its share fails while
/// the others carry on.
#[derive(Debug)]
pub struct MemoryPool {
    used: AtomicUsize,
    peak: AtomicUsize,
    limit: usize,
}

impl MemoryPool {
    /// A pool of `limit` bytes for all queries together.
    pub fn new(limit: usize) -> Arc<MemoryPool> {
        Arc::new(MemoryPool {
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            limit,
        })
    }

    /// Bytes the running queries hold now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes the queries held at once since the pool was made.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Adds `bytes`; false if the total is now over the limit (the bytes
    /// stay charged until [`MemoryPool::release`]).
    fn take(&self, bytes: usize) -> bool {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(used, Ordering::Relaxed);
        used <= self.limit
    }

    fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// The `code` of the error a query over its memory gets (servers map it to
/// `Neo.TransientError.General.MemoryPoolOutOfMemoryError`).
pub const OUT_OF_MEMORY: &str = "MemoryPoolOutOfMemoryError";

/// A cap on the memory a query's breakers (aggregation, sort, materialized
/// results, unwound lists) may hold; exceeding it, or the process-wide
/// [`MemoryPool`] it draws from, fails the query with `QueryAborted`
/// (code [`OUT_OF_MEMORY`]) instead of exhausting the process. Charges
/// are estimates ([`VALUE_BYTES`] a value) and are held until the query
/// ends, when the pool gets them back.
#[derive(Debug)]
pub struct MemoryBudget {
    used: AtomicUsize,
    limit: usize,
    pool: Option<Arc<MemoryPool>>,
}

impl MemoryBudget {
    /// A budget of `limit` bytes (`usize::MAX` for none).
    pub fn new(limit: usize) -> MemoryBudget {
        MemoryBudget {
            used: AtomicUsize::new(0),
            limit,
            pool: None,
        }
    }

    /// The budget `options` ask for: their per-query limit, drawing from
    /// their pool if they name one.
    pub fn for_query(options: &crate::QueryOptions) -> MemoryBudget {
        MemoryBudget {
            used: AtomicUsize::new(0),
            limit: options.memory_limit.unwrap_or(usize::MAX),
            pool: options.memory_pool.clone(),
        }
    }

    /// Charges `bytes`; fails once the query's total exceeds its limit or
    /// all queries' total exceeds the pool's.
    pub fn charge(&self, bytes: usize) -> Result<()> {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let pool_ok = self.pool.as_ref().is_none_or(|pool| pool.take(bytes));
        if used > self.limit {
            return Err(Error::new(
                ErrorKind::QueryAborted,
                format!(
                    "the query needs more than its memory limit of {} and was stopped \
                     (raise it with --memory-limit or `memory_limit`)",
                    format_size(self.limit)
                ),
            )
            .with_code(OUT_OF_MEMORY));
        }
        if !pool_ok {
            let limit = self.pool.as_ref().map_or(0, |p| p.limit());
            return Err(Error::new(
                ErrorKind::QueryAborted,
                format!(
                    "the queries running together need more than the memory limit of all \
                     queries ({}); this query holds {} and was stopped",
                    format_size(limit),
                    format_size(used)
                ),
            )
            .with_code(OUT_OF_MEMORY));
        }
        Ok(())
    }

    /// Fails as [`MemoryBudget::charge`] would if `bytes` more were held
    /// now, but keeps nothing charged: for a value about to be built that
    /// lives only while one row is computed (`range(1, 1e8)` in an
    /// expression), so a list too large fails before it is allocated while
    /// many small ones over many rows do not add up.
    pub fn check_room(&self, bytes: usize) -> Result<()> {
        let outcome = self.charge(bytes);
        self.release(bytes);
        outcome
    }

    /// Gives back `bytes` charged earlier ([`MemoryBudget::charge`]) by
    /// something the query no longer holds.
    pub fn release(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        if let Some(pool) = &self.pool {
            pool.release(bytes);
        }
    }

    /// Bytes charged so far.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

impl Drop for MemoryBudget {
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            pool.release(*self.used.get_mut());
        }
    }
}

/// Approximate bytes one materialized value takes (for the memory budget).
pub const VALUE_BYTES: usize = 48;

/// How much of an inline run's output is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlineLimit {
    /// Every row.
    All,
    /// Stop at the first row (existence checks).
    FirstRow,
}

/// Runs a compiled inner plan on the current thread, from an argument row,
/// and returns its output chunks: how expression subqueries (`EXISTS { }`,
/// `COUNT { }`, `COLLECT { }`), applies and updates reach the pipeline
/// driver without depending on it. Each call is its own scope instance with
/// its own cancellation token, so stopping at the first row stops only
/// that run. Implemented by `crate::pipeline::drive::InlineRunner`.
pub trait SubqueryRunner: Send + Sync {
    /// Runs `plan` from `argument` (a one-row chunk) within `q`.
    fn run(
        &self,
        plan: &Arc<CNode>,
        argument: Chunk,
        q: &QueryContext,
        limit: InlineLimit,
    ) -> Result<Vec<Chunk>>;

    /// Runs a branch scope: the inner plan once per row of `run.rows`, each
    /// an instance with its own queue of pending work and its own
    /// cancellation, up to MAX_SI at once, interleaved by the policy;
    /// reports each instance's output to `consumer`. `resume`: the state
    /// a previous call of the same scope paused with (the same `run`).
    fn run_scope(
        &self,
        run: ScopeRun<'_>,
        q: &QueryContext,
        consumer: &mut dyn ScopeConsumer,
        resume: Option<PausedScope>,
    ) -> Result<ScopeEnd>;
}

/// A branch scope's state when its operator's task handed its work back
/// with instances open ([`ScopeEnd::Paused`]): the open instances with
/// their pending work, the rows not started, the outputs not reported.
/// The task that goes on passes it back to
/// [`SubqueryRunner::run_scope`].
pub struct PausedScope(pub Box<dyn std::any::Any + Send>);

/// How a call of a branch scope ended.
pub enum ScopeEnd {
    /// Every instance started has ended and been reported; the rows from
    /// this one on were not started (the task's quantum was spent, or the
    /// consumer stopped the scope).
    Rows(usize),
    /// The task's quantum was spent with instances open
    /// ([`ScopeConsumer::pause`]): their state, for a new task to resume.
    Paused(PausedScope),
}

/// What a branch scope's instances report to the operator that runs them
/// ([`SubqueryRunner::run_scope`]).
pub trait ScopeConsumer {
    /// Whether another instance may start now; `first`: none has started
    /// in this call yet. False once the operator's task should hand its
    /// rows not started back to the queue (its quantum is spent).
    fn may_start(&mut self, first: bool) -> bool;
    /// True if the operator was stopped (its pipeline or query cancelled):
    /// the scope ends at once, its open instances cancelled.
    fn stopped(&self) -> bool;
    /// True if the operator's task can hand its work back to a new task
    /// (on the pool, or in a branch scope's instance): the scope then cuts
    /// even a lone instance's steps into slices, so it can pause.
    fn pausable(&self) -> bool;
    /// True once the operator's task should hand its work back (its
    /// quantum is spent): the scope pauses with its open instances
    /// ([`ScopeEnd::Paused`]).
    fn pause(&self) -> bool;
    /// The instance of input row `row` ended with `output`, its inner
    /// run's rows; false: nothing more is wanted (a `LIMIT` above has its
    /// rows), and the scope cancels its open instances.
    fn ended(&mut self, row: usize, output: Vec<Chunk>) -> Result<bool>;
    /// Row `row`'s output if it is known without running an instance (a
    /// memoized answer); the scope then reports it as it would an ended
    /// instance's.
    fn known(&mut self, _row: usize) -> Option<Vec<Chunk>> {
        None
    }
}

/// One call of a branch scope over rows of an input chunk
/// ([`SubqueryRunner::run_scope`]).
pub struct ScopeRun<'a> {
    /// The inner plan, run once per row (an instance).
    pub plan: &'a Arc<CNode>,
    /// The input chunk; each instance's argument is one of its rows.
    pub input: &'a Chunk,
    /// The rows to run, in order.
    pub rows: std::ops::Range<usize>,
    /// How much of each instance's output is wanted.
    pub limit: InlineLimit,
    /// The scope's policy (not `Off`) and MAX_SI.
    pub scope: rhizome_plan::LoopScope,
    /// Report ended instances in row order (the operator's input has an
    /// order the query implies); otherwise as they end.
    pub in_order: bool,
    /// PROFILE counters of the operator, if profiling.
    pub stats: Option<&'a ScopeStats>,
}

/// The body of a procedure: arguments in, rows of output fields out.
pub type ProcedureFn =
    Arc<dyn Fn(&QueryContext, &[Value]) -> Result<Vec<Vec<Value>>> + Send + Sync>;

/// A procedure's declared interface.
#[derive(Clone)]
pub struct Procedure {
    /// Qualified name, e.g. `db.labels`.
    pub name: String,
    /// Input parameter names and Cypher type names (`INTEGER?`, `STRING?`, ...).
    pub inputs: Vec<(String, String)>,
    /// Output field names and type names, in order.
    pub outputs: Vec<(String, String)>,
    /// Default values of the last `defaults.len()` inputs, which a call may
    /// leave out (as APOC's `defaultWeight = NaN`); empty when every input
    /// is required. Never longer than `inputs`.
    pub defaults: Vec<Value>,
    /// The implementation.
    pub body: ProcedureFn,
}

impl Procedure {
    /// How many inputs a call must give: the inputs without a default.
    pub fn required_inputs(&self) -> usize {
        self.inputs.len().saturating_sub(self.defaults.len())
    }
}

/// All procedures known to a query (the built-ins are in
/// [`crate::procedures`]). Declared here because a procedure's body takes
/// the query context, which holds the registry.
#[derive(Clone, Default)]
pub struct Procedures {
    by_name: HashMap<String, Procedure>,
}

impl Procedures {
    /// Adds or replaces a procedure.
    pub fn register(&mut self, procedure: Procedure) {
        self.by_name.insert(procedure.name.clone(), procedure);
    }

    /// The procedure named `name`.
    pub fn get(&self, name: &str) -> Option<&Procedure> {
        self.by_name.get(name)
    }

    /// All procedures.
    pub fn all(&self) -> impl Iterator<Item = &Procedure> {
        self.by_name.values()
    }

    /// Calls `name` with `args`, checking the argument count; inputs left
    /// out take their defaults, so the body always receives every input.
    pub fn call(&self, q: &QueryContext, name: &str, args: &[Value]) -> Result<Vec<Vec<Value>>> {
        let procedure = self.get(name).ok_or_else(|| {
            Error::new(
                ErrorKind::ProcedureError,
                format!("there is no procedure named `{name}`"),
            )
            .with_code("ProcedureNotFound")
        })?;
        let (required, all) = (procedure.required_inputs(), procedure.inputs.len());
        if args.len() < required || args.len() > all {
            let expected = if required == all {
                all.to_string()
            } else {
                format!("{required} to {all}")
            };
            return Err(Error::new(
                ErrorKind::SemanticError,
                format!(
                    "procedure `{name}` takes {expected} argument(s), got {}",
                    args.len()
                ),
            )
            .with_code("InvalidNumberOfArguments"));
        }
        if args.len() == all {
            return (procedure.body)(q, args);
        }
        let mut full = args.to_vec();
        full.extend_from_slice(&procedure.defaults[args.len() - required..]);
        (procedure.body)(q, &full)
    }
}

/// Everything the tasks of one query share.
pub struct QueryContext {
    /// The snapshot every worker reads.
    pub snapshot: Snapshot,
    /// Query parameters (shared: an updating run builds many contexts).
    pub params: Arc<BTreeMap<String, Value>>,
    /// The query's scheduler scope (spawning, cancellation, deadline).
    pub scope: Arc<QueryScope>,
    /// Callable procedures.
    pub procedures: Arc<Procedures>,
    /// PROFILE counters, when profiling (shared by the contexts of an updating run).
    pub profile: Option<Arc<Profile>>,
    /// Memory budget of breakers (shared by the contexts of an updating run).
    pub memory: Arc<MemoryBudget>,
    /// Number of per-worker state slots sinks need (pool workers + one for inline runs).
    pub worker_slots: usize,
    /// When the statement started (UTC seconds, nanoseconds): the one
    /// "current time" every temporal function of the statement sees.
    pub statement_time: (i64, u32),
    /// Rows of barriers and write operators already computed by an updating
    /// run (see [`crate::write`]), by operator id: a pipeline reaching one
    /// of them takes its rows from here instead of running it.
    pub materialized: Mutex<HashMap<usize, Vec<Chunk>>>,
    /// Runs inner plans (subqueries, applies) inline.
    pub runner: Arc<dyn SubqueryRunner>,
    /// Values of memoizable subqueries computed so far over this snapshot.
    pub memo: SubqueryMemo,
}

impl QueryContext {
    /// Runs the inner plan `plan` from `argument` inline ([`SubqueryRunner`]).
    pub fn run_inline(
        &self,
        plan: &Arc<CNode>,
        argument: Chunk,
        limit: InlineLimit,
    ) -> Result<Vec<Chunk>> {
        self.runner.run(plan, argument, self, limit)
    }

    /// Runs (or resumes) a branch scope's instances
    /// ([`SubqueryRunner::run_scope`]).
    pub fn run_scope(
        &self,
        run: ScopeRun<'_>,
        consumer: &mut dyn ScopeConsumer,
        resume: Option<PausedScope>,
    ) -> Result<ScopeEnd> {
        self.runner.run_scope(run, self, consumer, resume)
    }

    /// Entity access (and the statement clock) for the function library.
    pub fn graph(&self) -> StatementGraph<'_> {
        StatementGraph {
            graph: GraphAccess(&self.snapshot),
            time: self.statement_time,
        }
    }

    /// Fails with the query's recorded error (or a cancellation error) if it was stopped.
    pub fn check_cancelled(&self) -> Result<()> {
        if self.scope.is_cancelled() {
            return Err(Error::new(
                ErrorKind::QueryAborted,
                "the query was cancelled",
            ));
        }
        Ok(())
    }
}

/// [`EntityAccess`] over a snapshot.
pub struct GraphAccess<'a>(pub &'a Snapshot);

/// [`GraphAccess`] plus the statement's clock.
pub struct StatementGraph<'a> {
    graph: GraphAccess<'a>,
    time: (i64, u32),
}

impl EntityAccess for StatementGraph<'_> {
    fn node_labels(&self, node: NodeId) -> Result<Vec<String>> {
        self.graph.node_labels(node)
    }
    fn node_properties(&self, node: NodeId) -> Result<BTreeMap<String, Value>> {
        self.graph.node_properties(node)
    }
    fn rel_type(&self, rel: RelId) -> Result<String> {
        self.graph.rel_type(rel)
    }
    fn rel_endpoints(&self, rel: RelId) -> Result<(NodeId, NodeId)> {
        self.graph.rel_endpoints(rel)
    }
    fn rel_properties(&self, rel: RelId) -> Result<BTreeMap<String, Value>> {
        self.graph.rel_properties(rel)
    }
    fn statement_time(&self) -> Option<(i64, u32)> {
        Some(self.time)
    }
}

/// The current time as (UTC seconds, nanoseconds).
pub fn now_utc() -> (i64, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_nanos())
}

fn missing(what: &str, id: u64) -> Error {
    Error::new(
        ErrorKind::EntityNotFound,
        format!("{what} {id} does not exist (it was deleted)"),
    )
    .with_code("DeletedEntityAccess")
}

/// The error for reading a property of an entity deleted by the statement.
pub fn deleted_entity(entity: &Value) -> Error {
    match entity {
        Value::Relationship(id) => missing("relationship", *id),
        Value::Node(id) => missing("node", *id),
        _ => missing("entity", 0),
    }
}

impl EntityAccess for GraphAccess<'_> {
    fn node_labels(&self, node: NodeId) -> Result<Vec<String>> {
        if !self.0.node_exists(node) {
            return Err(missing("node", node));
        }
        let catalog = self.0.catalog();
        Ok(self
            .0
            .node_labels(node)
            .iter()
            .map(|&l| catalog.label_name(l).to_string())
            .collect())
    }

    fn node_properties(&self, node: NodeId) -> Result<BTreeMap<String, Value>> {
        if !self.0.node_exists(node) {
            return Err(missing("node", node));
        }
        let mut props = Vec::new();
        self.0.node_properties(node, &mut props);
        let catalog = self.0.catalog();
        Ok(props
            .into_iter()
            .map(|(k, v)| (catalog.property_key_name(k).to_string(), v))
            .collect())
    }

    fn rel_type(&self, rel: RelId) -> Result<String> {
        // A relationship deleted by the statement keeps its type.
        let t = match self.0.relationship(rel) {
            Some(info) => info.rel_type,
            None => self
                .0
                .deleted_rel_type(rel)
                .ok_or_else(|| missing("relationship", rel))?,
        };
        Ok(self.0.catalog().rel_type_name(t).to_string())
    }

    fn rel_endpoints(&self, rel: RelId) -> Result<(NodeId, NodeId)> {
        let info = self
            .0
            .relationship(rel)
            .ok_or_else(|| missing("relationship", rel))?;
        Ok((info.start, info.end))
    }

    fn rel_properties(&self, rel: RelId) -> Result<BTreeMap<String, Value>> {
        if self.0.relationship(rel).is_none() {
            return Err(missing("relationship", rel));
        }
        let mut props = Vec::new();
        self.0.rel_properties(rel, &mut props);
        let catalog = self.0.catalog();
        Ok(props
            .into_iter()
            .map(|(k, v)| (catalog.property_key_name(k).to_string(), v))
            .collect())
    }
}
