//! Rhizome's query API: Cypher text in, rows out.
//!
//! [`Engine::execute`] runs one statement: the front end parses and checks
//! it (errors carry line and column), the planner plans it against the
//! snapshot's statistics, and the runtime runs it on the process-wide worker
//! pool. `EXPLAIN` returns the plan without running it; `PROFILE` runs it and
//! returns per-operator counters. The command line, the servers and the
//! Python bindings all go through this one function.
//!
//! Plans are cached by statement text and parameter names (never values)
//! and used again for as long as the planner's questions about the data get
//! the same answers (see `plan_cache`): a repeated statement skips parsing,
//! analysis and planning, and a new index is used at once.

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_cypher::semantic::{ProcedureSignature, Type};
use rhizome_cypher::AnalyzeOptions;
use rhizome_exec::procedures::{Procedure, Procedures};
use rhizome_exec::StatementSettings;
use rhizome_planner::{Dir, PlannerContext, ProcedureInfo};
use rhizome_storage::{Database, Snapshot, WriteTxn};

pub use rhizome_storage::WriteCounters;

mod plan_cache;
mod schema;
mod transaction;
pub use plan_cache::PlanCacheStats;
use plan_cache::{PlanCache, Recording};
use schema::SchemaCommand;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
pub use transaction::Transaction;

pub use rhizome_exec::procedures;
pub use rhizome_exec::{MemoryPool, QueryOptions, QueryResult, RowBlock, RowReceiver, Rows};
pub use rhizome_plan::PlanDescription;

/// What a statement returns, known before it runs (see [`Engine::describe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementInfo {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// True if the statement writes (data or schema): its rows are handed
    /// over only once its writes are done.
    pub updating: bool,
    /// True if the result's order is significant (`ORDER BY`): a streamed
    /// result must then be put in block position order (see [`RowReceiver`]).
    pub ordered: bool,
}

/// A database opened for queries, with its procedures.
#[derive(Clone)]
pub struct Engine {
    db: Database,
    /// Procedures of statements that do not hold the writer lock.
    procedures: Arc<Procedures>,
    /// The same for statements that do (explicit transactions, updating
    /// statements): `db.checkpoint()` fails at once there instead of
    /// waiting for the lock its own transaction holds.
    procedures_holding_writer: Arc<Procedures>,
    /// Plans of statements run before (for these procedures).
    plans: Arc<PlanCache>,
}

/// A statement ready to run.
enum Prepared {
    /// A schema command (not planned).
    Schema(rhizome_cypher::ast::Statement, SchemaCommand),
    /// A planned statement, possibly from the plan cache.
    Plan(Arc<rhizome_planner::PlannedStatement>),
}

/// `db.checkpoint()`: saves the delta layer (a delta file, or a new segment when it is large).
fn checkpoint_procedure(db: Option<Database>) -> Procedure {
    Procedure {
        name: "db.checkpoint".into(),
        inputs: vec![],
        outputs: vec![
            ("success".into(), "BOOLEAN".into()),
            ("message".into(), "STRING".into()),
        ],
        defaults: vec![],
        body: Arc::new(move |_, _| {
            let Some(db) = &db else {
                return Err(Error::new(
                    ErrorKind::ProcedureError,
                    "db.checkpoint() cannot run inside a write transaction: \
                     commit or roll back first",
                )
                .with_code("ProcedureCallFailed"));
            };
            let message = if db.checkpoint()? {
                "checkpoint completed"
            } else {
                "nothing to checkpoint: no changes since the last checkpoint"
            };
            Ok(vec![vec![Value::Bool(true), Value::String(message.into())]])
        }),
    }
}

/// The result of `EXPLAIN`: the plan text and the columns, no rows.
/// The outcome of a plan the runtime executed, timed from `start`.
fn executed(mut result: QueryResult, start: Instant, counters: WriteCounters) -> QueryResult {
    result.elapsed = start.elapsed();
    result.counters = counters;
    result
}

/// Hands the rows of a finished statement to `receiver`, if there is one
/// (the result then keeps no rows).
fn hand_over(
    result: Result<QueryResult>,
    receiver: Option<Arc<dyn RowReceiver>>,
) -> Result<QueryResult> {
    let mut result = result?;
    if let Some(receiver) = receiver {
        let rows = std::mem::replace(&mut result.rows, Rows::new(result.columns.len()));
        rhizome_exec::stream::deliver(rows, receiver.as_ref())?;
    }
    Ok(result)
}

fn explained(planned: &rhizome_planner::PlannedStatement, start: Instant) -> QueryResult {
    QueryResult {
        columns: planned
            .plan
            .columns
            .iter()
            .map(|(n, _)| n.clone())
            .collect(),
        rows: Rows::new(planned.plan.columns.len()),
        elapsed: start.elapsed(),
        plan: Some(rhizome_planner::explain(planned)),
        profile: None,
        counters: WriteCounters::default(),
    }
}

/// Maps a procedure type name such as `INTEGER?` to the analyser's type.
fn type_of(name: &str) -> Type {
    match name.trim_end_matches('?').to_ascii_uppercase().as_str() {
        "INTEGER" => Type::Integer,
        "FLOAT" => Type::Float,
        "STRING" => Type::String,
        "BOOLEAN" => Type::Boolean,
        "MAP" => Type::Map,
        "NODE" => Type::Node,
        "RELATIONSHIP" => Type::Relationship,
        "PATH" => Type::Path,
        _ => Type::Any,
    }
}

/// The planner's view: statistics from the snapshot, signatures from the procedures.
struct Context<'a> {
    snapshot: &'a Snapshot,
    procedures: &'a Procedures,
}

impl PlannerContext for Context<'_> {
    fn label_count(&self, label: &str) -> Option<u64> {
        PlannerContext::label_count(self.snapshot, label)
    }
    fn node_count(&self) -> u64 {
        PlannerContext::node_count(self.snapshot)
    }
    fn rel_count(&self, rel_type: Option<&str>) -> u64 {
        PlannerContext::rel_count(self.snapshot, rel_type)
    }
    fn triple_count(&self, src: Option<&str>, t: Option<&str>, dst: Option<&str>) -> u64 {
        PlannerContext::triple_count(self.snapshot, src, t, dst)
    }
    fn avg_degree(&self, label: Option<&str>, rel_type: Option<&str>, dir: Dir) -> f64 {
        PlannerContext::avg_degree(self.snapshot, label, rel_type, dir)
    }
    fn has_index(&self, label: &str, key: &str) -> bool {
        PlannerContext::has_index(self.snapshot, label, key)
    }
    fn distinct_values(&self, label: &str, key: &str) -> Option<u64> {
        PlannerContext::distinct_values(self.snapshot, label, key)
    }
    fn label_implied(&self, rel_type: &str, dir: Dir, label: &str) -> bool {
        PlannerContext::label_implied(self.snapshot, rel_type, dir, label)
    }
    fn procedure(&self, name: &str) -> Option<ProcedureInfo> {
        self.procedures.get(name).map(|p| ProcedureInfo {
            inputs: p.inputs.iter().map(|(n, _)| n.clone()).collect(),
            outputs: p.outputs.iter().map(|(n, _)| n.clone()).collect(),
        })
    }
}

impl Engine {
    /// Opens the database in `dir`.
    pub fn open(dir: &Path) -> Result<Engine> {
        Ok(Engine::new(Database::open(dir)?))
    }

    /// An engine over an open database with the built-in procedures
    /// (`db.*` and the route procedures of `rhizome-routes`).
    pub fn new(db: Database) -> Engine {
        let with = |checkpoint: Procedure| {
            let mut procedures = Procedures::builtin();
            procedures.register(checkpoint);
            // Route finding (apoc.algo.dijkstra, aStar, ...): rhizome-routes.
            for route in rhizome_routes::procedures() {
                procedures.register(route);
            }
            Arc::new(procedures)
        };
        Engine {
            procedures: with(checkpoint_procedure(Some(db.clone()))),
            procedures_holding_writer: with(checkpoint_procedure(None)),
            db,
            plans: Arc::default(),
        }
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Adds a procedure callable from queries run after this call. Plans
    /// made before are not used by this engine any more (they were checked
    /// against the old procedures).
    pub fn register_procedure(&mut self, procedure: Procedure) {
        Arc::make_mut(&mut self.procedures).register(procedure.clone());
        Arc::make_mut(&mut self.procedures_holding_writer).register(procedure);
        self.plans = Arc::default();
    }

    /// Counters of the plan cache (shared by this engine's clones).
    pub fn plan_cache_stats(&self) -> PlanCacheStats {
        self.plans.stats()
    }

    /// Parses, checks and plans `query` without running it; returns the plan text.
    pub fn explain(&self, query: &str, params: &BTreeMap<String, Value>) -> Result<String> {
        match self.prepare(query, params, &self.db.snapshot())? {
            Prepared::Plan(planned) => Ok(rhizome_planner::explain(&planned)),
            Prepared::Schema(..) => Err(Error::new(
                ErrorKind::SemanticError,
                "a schema command has no query plan",
            )),
        }
    }

    /// The structured plan of an `EXPLAIN` or `PROFILE` statement (`None`
    /// for any other): the plan it runs (planned now and cached, so running
    /// it next uses this plan), with the operators numbered as its PROFILE
    /// counters are. Servers send it to clients as the summary's plan.
    pub fn plan_description(
        &self,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<Option<PlanDescription>> {
        self.plan_description_on(&self.db.snapshot(), query, params)
    }

    /// [`Engine::plan_description`] planned over `snapshot` (a graph
    /// source's snapshot, whose catalog and statistics are the source's).
    pub fn plan_description_on(
        &self,
        snapshot: &Snapshot,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<Option<PlanDescription>> {
        Ok(match self.prepare(query, params, snapshot)? {
            Prepared::Plan(planned) if planned.explain || planned.profile => {
                Some(rhizome_plan::describe_plan(&planned.plan))
            }
            _ => None,
        })
    }

    /// The cached plan of `query` if it still holds for `snapshot`, else
    /// the statement parsed and (unless it is a schema command) planned and
    /// cached.
    fn prepare(
        &self,
        query: &str,
        params: &BTreeMap<String, Value>,
        snapshot: &Snapshot,
    ) -> Result<Prepared> {
        let context = Context {
            snapshot,
            procedures: &self.procedures,
        };
        if let Some(planned) = self.plans.get(query, params, &context) {
            return Ok(Prepared::Plan(planned));
        }
        // `CYPHER scheduling=… max_si=…` (docs/scheduling.md): the hint,
        // and the text with the prefix blanked (positions kept).
        let (hint, text) = rhizome_planner::scopes::split_hint(query)?;
        let statement = rhizome_cypher::parse(&text)?;
        if let Some(command) = schema::classify(&statement)? {
            return Ok(Prepared::Schema(statement, command));
        }
        let recording = Recording::new(&context);
        let planned = Arc::new(self.plan(&statement, &text, params, &recording, hint.as_ref())?);
        self.plans.insert(query, params, recording, planned.clone());
        Ok(Prepared::Plan(planned))
    }

    /// Analyses and plans a parsed statement, asking `context` about the data.
    fn plan(
        &self,
        statement: &rhizome_cypher::ast::Statement,
        query: &str,
        params: &BTreeMap<String, Value>,
        context: &dyn PlannerContext,
        hint: Option<&rhizome_planner::scopes::SchedulingHint>,
    ) -> Result<rhizome_planner::PlannedStatement> {
        let options = AnalyzeOptions {
            procedures: Some(
                self.procedures
                    .all()
                    .map(|p| ProcedureSignature {
                        name: p.name.clone(),
                        inputs: p
                            .inputs
                            .iter()
                            .map(|(n, t)| (n.clone(), type_of(t)))
                            .collect(),
                        optional: p.defaults.len(),
                        outputs: p
                            .outputs
                            .iter()
                            .map(|(n, t)| (n.clone(), type_of(t)))
                            .collect(),
                    })
                    .collect(),
            ),
            parameters: Some(params.keys().cloned().collect()),
        };
        let analyzed = rhizome_cypher::analyze_with(statement, query, &options)?;
        rhizome_planner::plan_statement_hinted(&analyzed, context, hint)
    }

    /// What `query` returns, known before it runs: its column names and
    /// whether it writes. Parses and plans it (the plan is cached, so running
    /// it next costs no second planning); a statement that does not compile
    /// fails here with the error running it would give. Servers use this to
    /// announce the columns before the first row exists, and read-only clients
    /// (Python's `read_only=True`) to refuse a write before it takes the writer lock.
    pub fn describe(&self, query: &str, params: &BTreeMap<String, Value>) -> Result<StatementInfo> {
        self.describe_on(&self.db.snapshot(), query, params)
    }

    /// [`Engine::describe`] planned over `snapshot` (a graph source's
    /// snapshot, whose catalog and statistics are the source's).
    pub fn describe_on(
        &self,
        snapshot: &Snapshot,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<StatementInfo> {
        Ok(self.prepare_described(query, params, snapshot)?.1)
    }

    /// [`Engine::prepare`], and what the prepared statement returns.
    fn prepare_described(
        &self,
        query: &str,
        params: &BTreeMap<String, Value>,
        snapshot: &Snapshot,
    ) -> Result<(Prepared, StatementInfo)> {
        let prepared = self.prepare(query, params, snapshot)?;
        let info = statement_info(&prepared, snapshot);
        Ok((prepared, info))
    }

    /// Starts a statement that only reads, over `snapshot`, and returns at
    /// once with what it returns: its rows go to `receiver` and `done` gets
    /// how it ended, from the pool worker that finished it
    /// ([`rhizome_exec::start_streaming`]; no thread waits for it). Before
    /// it starts, `admit` sees its [`StatementInfo`] (to shape the receiver,
    /// or to refuse it). A statement that writes, or one `admit` refuses,
    /// is not started (`done` is dropped): the caller runs it another way,
    /// since a write waits for the writer lock, which a pool worker must
    /// not. A statement that does not compile fails here. Called on a pool
    /// worker (a job of [`rhizome_exec::scheduler::WorkerPool::submit`]),
    /// the planning and the query's first task run on that worker too.
    /// `holding_writer` says the caller holds the writer lock (a read in an
    /// explicit write transaction, over [`Transaction::snapshot`]): the
    /// statement's procedures then must not wait for it.
    #[allow(clippy::too_many_arguments)]
    pub fn start_streaming_on(
        &self,
        snapshot: Snapshot,
        holding_writer: bool,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Arc<dyn RowReceiver>,
        admit: impl FnOnce(&StatementInfo) -> bool,
        done: rhizome_exec::OnEnd,
    ) -> Result<(StatementInfo, bool)> {
        let start = Instant::now();
        let (prepared, info) = self.prepare_described(query, &params, &snapshot)?;
        if info.updating || !admit(&info) {
            return Ok((info, false));
        }
        if let Some(answer) = answered_at_once(&prepared, &snapshot, start) {
            done(hand_over(Ok(answer), Some(receiver)));
        } else if let Prepared::Plan(planned) = prepared {
            let settings = self.settings(planned.profile, holding_writer);
            rhizome_exec::start_streaming(
                &planned.plan,
                snapshot,
                params,
                options,
                &settings,
                receiver,
                Box::new(move |outcome| {
                    done(outcome.map(|r| executed(r, start, WriteCounters::default())))
                }),
            );
        }
        Ok((info, true))
    }

    /// Runs one statement with `params`.
    ///
    /// Errors are `rhizome_common::Error`s classified as the openCypher TCK
    /// expects; compile-time errors carry the position in `query`.
    pub fn execute(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
    ) -> Result<QueryResult> {
        self.run_statement(query, params, options, None, None, &mut None)
    }

    /// Runs one statement like [`Engine::execute`] and also returns the
    /// state it ran on: the snapshot a read took, or the state a write
    /// committed (its own writes included). Node and relationship ids in the
    /// rows are ids of that state; render them from it, since a checkpoint
    /// of another process may renumber ids in later states.
    pub fn execute_with_state(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
    ) -> Result<(QueryResult, Snapshot)> {
        let mut state = None;
        let result = self.run_statement(query, params, options, None, None, &mut state)?;
        let state = state.unwrap_or_else(|| self.db.snapshot());
        Ok((result, state))
    }

    /// Runs one statement like [`Engine::execute`] but hands its rows to
    /// `receiver` as they are produced, so a result of any size needs only
    /// one block of rows per worker (see [`RowReceiver`] for their order).
    /// The result returned has the columns and counters but no rows. The
    /// rows of a statement that writes are handed over once it committed.
    pub fn execute_streaming(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Arc<dyn RowReceiver>,
    ) -> Result<QueryResult> {
        self.run_statement(query, params, options, None, Some(receiver), &mut None)
    }

    /// Runs one statement like [`Engine::execute_streaming`], reading
    /// `snapshot` (from [`Database::snapshot`]) if it only reads. A server
    /// that renders entities while their rows stream takes the snapshot
    /// first and renders from it, so what it renders is what the statement
    /// saw. A statement that writes runs on the newest state as always
    /// (take its state from [`Engine::execute_with_state`] instead).
    pub fn execute_streaming_on(
        &self,
        snapshot: Snapshot,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Arc<dyn RowReceiver>,
    ) -> Result<QueryResult> {
        let mut state = Some(snapshot);
        self.run_statement(query, params, options, None, Some(receiver), &mut state)
    }

    /// Runs one statement over `snapshot` that must only read (a graph
    /// source's snapshot, which cannot be written): a statement that
    /// writes or changes the schema fails before it starts, with an error
    /// naming `what` it would have written to. Rows go to `receiver` if
    /// given, else into the result.
    pub fn execute_read_only_on(
        &self,
        snapshot: Snapshot,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Option<Arc<dyn RowReceiver>>,
        what: &str,
    ) -> Result<QueryResult> {
        let refuse = || {
            Err(Error::new(
                ErrorKind::SemanticError,
                format!(
                    "{what} is read-only: statements that create, change or delete data or \
                     schema cannot run on it"
                ),
            )
            .with_code("ReadOnlySource"))
        };
        match self.prepare(query, &params, &snapshot)? {
            Prepared::Schema(_, SchemaCommand::Change) => return refuse(),
            Prepared::Plan(planned) if planned.plan.updating => return refuse(),
            _ => {}
        }
        let mut state = Some(snapshot);
        self.run_statement(query, params, options, None, receiver, &mut state)
    }

    /// Runs one statement: in `txn` if given (an explicit transaction; the
    /// statement reads its writes), else read-only on a fresh snapshot or,
    /// if it writes, in a transaction of its own. A read outside a
    /// transaction reads the snapshot `state` holds when called, if any.
    /// Leaves in `state` the state the statement ran on (see
    /// [`Engine::execute_with_state`]).
    fn run_statement(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        txn: Option<&mut WriteTxn>,
        receiver: Option<Arc<dyn RowReceiver>>,
        state: &mut Option<Snapshot>,
    ) -> Result<QueryResult> {
        let start = Instant::now();
        // A statement outside a transaction is prepared on the state this
        // handle knows; only one that reads looks at the files for other
        // processes' commits (a write catches up when it takes the writer
        // lock), so a small write costs no `stat` calls here.
        let (mut snapshot, known) = match (&txn, state.take()) {
            (Some(txn), _) => (txn.snapshot(), false),
            (None, Some(given)) => (given, false),
            (None, None) => (self.db.known_snapshot(), true),
        };
        let mut prepared = self.prepare(query, &params, &snapshot)?;
        let writes = match &prepared {
            Prepared::Plan(planned) => planned.plan.updating && !planned.explain,
            Prepared::Schema(_, command) => matches!(command, SchemaCommand::Change),
        };
        if known && !writes {
            let fresh = self.db.snapshot();
            if !fresh.same_state(&snapshot) {
                prepared = self.prepare(query, &params, &fresh)?;
            }
            snapshot = fresh;
        }
        *state = Some(snapshot.clone());
        if let Some(answer) = answered_at_once(&prepared, &snapshot, start) {
            return hand_over(Ok(answer), receiver);
        }
        let planned = match prepared {
            Prepared::Plan(planned) => planned,
            Prepared::Schema(statement, _) => {
                let result = self.write(txn, |txn| {
                    let result = change_schema(&statement, txn, start);
                    *state = Some(txn.snapshot());
                    result
                });
                return hand_over(result, receiver);
            }
        };
        if planned.plan.updating {
            let result = self.write(txn, |txn| {
                let result = self.run_update(&planned, txn, params, options, start);
                *state = Some(txn.snapshot());
                result
            });
            return hand_over(result, receiver);
        }
        let holding_writer = txn.is_some();
        let settings = self.settings(planned.profile, holding_writer);
        let result = match receiver {
            None => rhizome_exec::execute(&planned.plan, snapshot, params, options, &settings)?,
            Some(receiver) => rhizome_exec::execute_streaming(
                &planned.plan,
                snapshot,
                params,
                options,
                &settings,
                receiver,
            )?,
        };
        Ok(executed(result, start, WriteCounters::default()))
    }

    /// Runs `work` in `txn`, or in an autocommit transaction if there is none.
    fn write(
        &self,
        txn: Option<&mut WriteTxn>,
        work: impl FnOnce(&mut WriteTxn) -> Result<QueryResult>,
    ) -> Result<QueryResult> {
        match txn {
            Some(txn) => work(txn),
            None => self.autocommit(work),
        }
    }

    /// Runs `work` in a write transaction of its own: committed if it
    /// succeeds, rolled back if it fails.
    fn autocommit(
        &self,
        work: impl FnOnce(&mut WriteTxn) -> Result<QueryResult>,
    ) -> Result<QueryResult> {
        let mut txn = self.db.begin_write()?;
        match work(&mut txn) {
            Ok(result) => {
                txn.commit()?;
                Ok(result)
            }
            Err(e) => {
                txn.rollback();
                Err(e)
            }
        }
    }

    /// What the engine adds to the caller's options for one statement.
    fn settings(&self, profile: bool, holding_writer: bool) -> StatementSettings {
        StatementSettings {
            procedures: if holding_writer {
                self.procedures_holding_writer.clone()
            } else {
                self.procedures.clone()
            },
            profile,
        }
    }

    /// Runs an updating plan in `txn`; the counters are the statement's own.
    fn run_update(
        &self,
        planned: &rhizome_planner::PlannedStatement,
        txn: &mut WriteTxn,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        start: Instant,
    ) -> Result<QueryResult> {
        let before = txn.counters();
        let settings = self.settings(planned.profile, true);
        let result =
            rhizome_exec::write::execute_update(&planned.plan, txn, params, options, &settings)?;
        Ok(executed(
            result,
            start,
            counters_since(before, txn.counters()),
        ))
    }

    /// Starts an explicit transaction: its statements see each other's
    /// writes; nothing is visible to others until [`Transaction::commit`].
    /// Waits for the single writer lock (`TransientError` on timeout).
    pub fn begin(&self) -> Result<Transaction> {
        Ok(Transaction::new(self.clone(), self.db.begin_write()?))
    }
}

/// The answer of a prepared statement that needs no query run: a `SHOW`
/// schema command or an `EXPLAIN` (`None` for every other statement).
fn answered_at_once(
    prepared: &Prepared,
    snapshot: &Snapshot,
    start: Instant,
) -> Option<QueryResult> {
    match prepared {
        Prepared::Schema(statement, SchemaCommand::Show) => {
            Some(show_schema(statement, snapshot, start))
        }
        Prepared::Plan(planned) if planned.explain => Some(explained(planned, start)),
        Prepared::Schema(_, SchemaCommand::Change) | Prepared::Plan(_) => None,
    }
}

/// What a prepared statement returns ([`Engine::describe`]).
fn statement_info(prepared: &Prepared, snapshot: &Snapshot) -> StatementInfo {
    match prepared {
        Prepared::Plan(planned) => StatementInfo {
            columns: planned
                .plan
                .columns
                .iter()
                .map(|(n, _)| n.clone())
                .collect(),
            updating: planned.plan.updating && !planned.explain,
            ordered: planned.plan.ordered,
        },
        Prepared::Schema(statement, SchemaCommand::Show) => StatementInfo {
            columns: schema::show(&statement.kind, snapshot).0,
            updating: false,
            ordered: false,
        },
        Prepared::Schema(_, SchemaCommand::Change) => StatementInfo {
            columns: Vec::new(),
            updating: true,
            ordered: false,
        },
    }
}

/// Runs a changing schema command in `txn`; the counters say what changed.
fn change_schema(
    statement: &rhizome_cypher::ast::Statement,
    txn: &mut WriteTxn,
    start: Instant,
) -> Result<QueryResult> {
    let before = txn.counters();
    schema::change(&statement.kind, txn)?;
    Ok(QueryResult {
        columns: Vec::new(),
        rows: Rows::new(0),
        elapsed: start.elapsed(),
        plan: None,
        profile: None,
        counters: counters_since(before, txn.counters()),
    })
}

/// The result of `SHOW INDEXES` / `SHOW CONSTRAINTS` on `snapshot`.
fn show_schema(
    statement: &rhizome_cypher::ast::Statement,
    snapshot: &Snapshot,
    start: Instant,
) -> QueryResult {
    let (columns, values) = schema::show(&statement.kind, snapshot);
    let mut rows = Rows::new(columns.len());
    rows.extend(values);
    QueryResult {
        columns,
        rows,
        elapsed: start.elapsed(),
        plan: None,
        profile: None,
        counters: WriteCounters::default(),
    }
}

/// The counters of `after` minus those of `before`.
fn counters_since(before: WriteCounters, after: WriteCounters) -> WriteCounters {
    WriteCounters {
        nodes_created: after.nodes_created - before.nodes_created,
        nodes_deleted: after.nodes_deleted - before.nodes_deleted,
        relationships_created: after.relationships_created - before.relationships_created,
        relationships_deleted: after.relationships_deleted - before.relationships_deleted,
        properties_set: after.properties_set - before.properties_set,
        labels_added: after.labels_added - before.labels_added,
        labels_removed: after.labels_removed - before.labels_removed,
        indexes_added: after.indexes_added - before.indexes_added,
        indexes_removed: after.indexes_removed - before.indexes_removed,
        constraints_added: after.constraints_added - before.constraints_added,
        constraints_removed: after.constraints_removed - before.constraints_removed,
    }
}
