//! Cypher over a source: [`SourceEngine`] runs read-only statements with
//! the same planner and runtime as a native database, over a
//! [`Snapshot`] whose reads go to the source (see [`crate::query_graph`]).
//!
//! Besides the built-in procedures it has:
//! - `apoc.algo.dijkstra`, `apoc.algo.aStar`, ... searching the source
//!   through [`SourceGraph`] (batched, cached, with the mapping's
//!   prefetcher);
//! - `db.source.clear()`, which empties the source's cache (for cold
//!   measurements) and yields the entries it dropped;
//! - `db.source.counters()`, the source's counters so far.
//!
//! The rows of the nodes a result returns are fetched a block of rows at
//! a time before they are rendered ([`crate::entities`]).
//!
//! `EXPLAIN` and `PROFILE` add a line naming the source the plan reads;
//! `PROFILE` adds what the statement cost the source (round trips, rows,
//! bytes, cache hits and misses, prefetched entries used and wasted, time
//! waiting on the backend).

use crate::counters::CounterSnapshot;
use crate::entities::{prefetch_result, PrefetchingReceiver};
use crate::source::{Source, SourceGraph};
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_engine::procedures::Procedure;
use rhizome_engine::{Engine, QueryOptions, QueryResult, RowReceiver};
use rhizome_exec::context::QueryContext;
use rhizome_routes::{ExpandSpec, Route, RouteGraph, RouteGraphs};
use rhizome_storage::{Database, GraphBuilder, Snapshot};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Runs read-only Cypher over one source. Cheap to share (`Arc` it): every
/// statement gets its own [`QueryGraph`]; the cache is the source's.
pub struct SourceEngine {
    source: Arc<Source>,
    engine: Engine,
    empty: Snapshot,
    _dir: tempfile::TempDir,
}

impl SourceEngine {
    /// An engine over `source`. The planner and runtime need a native base
    /// under the source's snapshots: an empty database in a temporary
    /// directory, removed when the engine is dropped.
    pub fn new(source: Arc<Source>) -> Result<SourceEngine> {
        let dir = tempfile::tempdir()
            .map_err(|e| Error::io("a temporary directory for the source's engine", e))?;
        let path = dir.path().join("empty");
        GraphBuilder::new().write(&path)?;
        let db = Database::open(&path)?;
        let empty = db.snapshot();
        let mut engine = Engine::new(db);
        for p in rhizome_routes::procedures_over(Arc::new(SourceRoutes {
            source: source.clone(),
        })) {
            engine.register_procedure(p);
        }
        engine.register_procedure(clear_procedure(source.clone()));
        engine.register_procedure(counters_procedure(source.clone()));
        Ok(SourceEngine {
            source,
            engine,
            empty,
            _dir: dir,
        })
    }

    /// The source.
    pub fn source(&self) -> &Arc<Source> {
        &self.source
    }

    /// The engine that plans and runs its statements (its native base is
    /// empty: run statements through [`SourceEngine::execute`] or
    /// [`SourceEngine::run_statement`], which read the source).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Adds a procedure (a server adds what drivers call on connect).
    pub fn register_procedure(&mut self, procedure: Procedure) {
        self.engine.register_procedure(procedure);
    }

    /// A fresh snapshot over the source, whose reads go to the source (or
    /// its cache) as they happen; every round trip waits at most until
    /// `deadline`. What the schema procedures and the planner read.
    pub fn snapshot(&self, deadline: Option<Instant>) -> Snapshot {
        self.source.snapshot(&self.empty, deadline).0
    }

    /// The columns of `query` and whether it writes, planned over the
    /// source's catalog and statistics (see [`Engine::describe`]).
    pub fn describe(
        &self,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<rhizome_engine::StatementInfo> {
        let (_, query) = crate::query_options::split(query)?;
        self.engine
            .describe_on(&self.snapshot(None), &query, params)
    }

    /// The structured plan of an `EXPLAIN` / `PROFILE` statement over the
    /// source (see [`Engine::plan_description`]).
    pub fn plan_description(
        &self,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<Option<rhizome_engine::PlanDescription>> {
        let (_, query) = crate::query_options::split(query)?;
        self.engine
            .plan_description_on(&self.snapshot(None), &query, params)
    }

    /// Opens one statement's view of the source: its snapshot exists before
    /// the statement runs, so a server can render the statement's rows
    /// from it while they stream. Run it with [`SourceEngine::run_statement`].
    pub fn statement(&self, options: &QueryOptions) -> SourceStatement {
        let deadline = options.timeout.map(|t| Instant::now() + t);
        let (snapshot, graph) = self.source.snapshot(&self.empty, deadline);
        SourceStatement { snapshot, graph }
    }

    /// Runs one read-only statement in `statement`, handing rows to
    /// `receiver` if given (else they are in the result). A statement that
    /// writes fails before it starts (`ReadOnlySource`); a backend failure
    /// fails it with the backend's error.
    pub fn run_statement(
        &self,
        statement: &SourceStatement,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Option<Arc<dyn RowReceiver>>,
    ) -> Result<QueryResult> {
        let (query, before) = self.prepare_statement(statement, query)?;
        // The rows of the nodes the result holds come in one round trip per
        // block of rows, not one per node as they are rendered.
        let receiver = receiver.map(|r| {
            Arc::new(PrefetchingReceiver::new(r, statement.snapshot.clone()))
                as Arc<dyn RowReceiver>
        });
        let result = self.engine.execute_read_only_on(
            statement.snapshot.clone(),
            &query,
            params,
            options,
            receiver,
            &self.source.describe(),
        );
        if let Ok(result) = &result {
            prefetch_result(&statement.snapshot, &result.rows);
        }
        self.ending(statement, &before)(result)
    }

    /// Starts one read-only statement in `statement` and returns at once,
    /// as [`Engine::start_streaming_on`] does (no thread waits for it; call
    /// it from a job of the engine's worker pool): `admit` sees what it
    /// returns, its rows go to `receiver`, and `done` gets how it ended
    /// (with the backend's error if a read of the source failed, and the
    /// source's lines in its plan or profile, as
    /// [`SourceEngine::run_statement`]). A statement that writes is not
    /// started (its [`rhizome_engine::StatementInfo`] says it writes).
    #[allow(clippy::too_many_arguments)]
    pub fn start_statement(
        &self,
        statement: &SourceStatement,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Arc<dyn RowReceiver>,
        admit: impl FnOnce(&rhizome_engine::StatementInfo) -> bool,
        done: rhizome_exec::OnEnd,
    ) -> Result<(rhizome_engine::StatementInfo, bool)> {
        let (query, before) = self.prepare_statement(statement, query)?;
        let receiver = Arc::new(PrefetchingReceiver::new(
            receiver,
            statement.snapshot.clone(),
        ));
        let ending = self.ending(statement, &before);
        self.engine.start_streaming_on(
            statement.snapshot.clone(),
            false,
            &query,
            params,
            options,
            receiver,
            admit,
            Box::new(move |result| done(ending(result))),
        )
    }

    /// Applies a statement's query options (the text before its Cypher)
    /// to `statement`: its Cypher and the source's counters before it.
    fn prepare_statement(
        &self,
        statement: &SourceStatement,
        query: &str,
    ) -> Result<(String, CounterSnapshot)> {
        let (query_options, query) = crate::query_options::split(query)?;
        if let Some(prefetch) = query_options.prefetch {
            statement.graph.set_prefetch(prefetch);
        }
        Ok((query, self.source.counters()))
    }

    /// What ends a statement begun with counters `before`: a read that
    /// failed answered "absent", so the statement fails with the backend's
    /// error, whatever the runtime made of the gap; else the plan or
    /// profile gets the source's lines.
    fn ending(
        &self,
        statement: &SourceStatement,
        before: &CounterSnapshot,
    ) -> impl FnOnce(Result<QueryResult>) -> Result<QueryResult> + Send + 'static {
        let (graph, source, before) = (statement.graph.clone(), self.source.clone(), *before);
        let reads_line = self.reads_line();
        move |result| {
            graph.finish()?;
            let mut result = result?;
            let spent = source.counters().since(&before);
            if let Some(plan) = &mut result.plan {
                plan.push_str(&reads_line);
            }
            if let Some(profile) = &mut result.profile {
                profile.text.push_str(&reads_line);
                profile.text.push_str(&profile_lines(&source, &spent));
            }
            Ok(result)
        }
    }

    /// Runs one read-only statement; returns its result and the snapshot it
    /// read (render the rows' entities from it). A statement that writes
    /// fails before it starts (`ReadOnlySource`); a backend failure fails
    /// the statement with the backend's error.
    pub fn execute(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
    ) -> Result<(QueryResult, Snapshot)> {
        self.run(query, params, options, None)
    }

    /// Like [`SourceEngine::execute`], handing rows to `receiver` as they
    /// are produced.
    pub fn execute_streaming(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Arc<dyn RowReceiver>,
    ) -> Result<(QueryResult, Snapshot)> {
        self.run(query, params, options, Some(receiver))
    }

    fn run(
        &self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Option<Arc<dyn RowReceiver>>,
    ) -> Result<(QueryResult, Snapshot)> {
        let statement = self.statement(options);
        let result = self.run_statement(&statement, query, params, options, receiver)?;
        Ok((result, statement.snapshot))
    }

    fn reads_line(&self) -> String {
        let columns: String = self
            .source
            .mapping()
            .nodes
            .iter()
            .filter_map(|space| {
                let c = space.label_column.as_ref()?;
                Some(format!(
                    "; labels {} of :{} read from its column `{}`",
                    c.labels.join(", "),
                    space.label,
                    c.column
                ))
            })
            .collect();
        format!(
            "\n{READS_PREFIX}{}: key lookups, node rows and adjacency lists fetched in one round trip per chunk of rows, through its cache{columns}\n",
            self.source.describe()
        )
    }
}

/// One statement's view of a source (see [`SourceEngine::statement`]).
pub struct SourceStatement {
    snapshot: Snapshot,
    graph: Arc<crate::QueryGraph>,
}

impl SourceStatement {
    /// The snapshot the statement reads: render its rows' entities from it.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }
}

/// How the line that names the source a plan reads begins (`EXPLAIN`).
pub const READS_PREFIX: &str = "Reads ";

/// How the PROFILE line of a statement's cost to its source begins.
pub const COUNTERS_PREFIX: &str = "Source `";

/// The lines a [`SourceEngine`] adds to a plan or profile text: where the
/// plan reads the source, and (PROFILE) what the statement cost it.
pub fn source_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|l| l.starts_with(READS_PREFIX) || l.starts_with(COUNTERS_PREFIX))
}

/// The PROFILE lines of what a statement cost `source`.
pub fn profile_lines(source: &Source, spent: &CounterSnapshot) -> String {
    format!(
        "{COUNTERS_PREFIX}{}`: {} round trips, {} rows, {} bytes, cache {} hits / {} misses, \
         prefetched {} used / {} wasted, {:.1} ms waiting on the backend\n",
        source.mapping().name,
        spent.round_trips,
        spent.rows,
        spent.bytes,
        spent.hits,
        spent.misses,
        spent.prefetch_used,
        spent.prefetch_wasted(),
        spent.waiting.as_secs_f64() * 1000.0,
    )
}

fn clear_procedure(source: Arc<Source>) -> Procedure {
    Procedure {
        name: "db.source.clear".into(),
        inputs: Vec::new(),
        outputs: vec![("cleared".into(), "INTEGER?".into())],
        defaults: vec![],
        body: Arc::new(move |_: &QueryContext, _: &[Value]| {
            let n = source.cached_entries();
            source.clear_cache();
            Ok(vec![vec![Value::Int(n as i64)]])
        }),
    }
}

fn counters_procedure(source: Arc<Source>) -> Procedure {
    let field = |name: &str| (name.to_string(), "INTEGER?".to_string());
    Procedure {
        name: "db.source.counters".into(),
        inputs: Vec::new(),
        outputs: vec![
            ("source".into(), "STRING?".into()),
            field("roundTrips"),
            field("rows"),
            field("bytes"),
            field("hits"),
            field("misses"),
            field("prefetched"),
            field("prefetchUsed"),
            field("evicted"),
            ("waitingMs".into(), "FLOAT?".into()),
            field("cachedEntries"),
        ],
        defaults: vec![],
        body: Arc::new(move |_: &QueryContext, _: &[Value]| {
            let c = source.counters();
            let int = |x: u64| Value::Int(x.min(i64::MAX as u64) as i64);
            Ok(vec![vec![
                Value::String(source.mapping().name.clone()),
                int(c.round_trips),
                int(c.rows),
                int(c.bytes),
                int(c.hits),
                int(c.misses),
                int(c.prefetched),
                int(c.prefetch_used),
                int(c.evicted),
                Value::Float(c.waiting.as_secs_f64() * 1000.0),
                int(source.cached_entries() as u64),
            ]])
        }),
    }
}

/// The route procedures' graph over a source: [`SourceGraph`] with the
/// mapping's prefetcher and the query's deadline. The relationships of a
/// path found are then read through the query's snapshot, so the path
/// renders like any other.
struct SourceRoutes {
    source: Arc<Source>,
}

impl RouteGraphs for SourceRoutes {
    fn search(
        &self,
        q: &QueryContext,
        specs: &[ExpandSpec],
        weight: &str,
        coordinates: Option<(&str, &str)>,
        cancelled: &dyn Fn() -> Result<()>,
        search: &mut dyn FnMut(&dyn RouteGraph) -> Result<Vec<Route>>,
    ) -> Result<Vec<Route>> {
        if q.snapshot.external().is_none() {
            return Err(Error::new(
                ErrorKind::Internal,
                "a source's route procedure ran over a native snapshot",
            ));
        }
        if let Some((lat, lon)) = coordinates {
            let mapping = self.source.mapping();
            let named = mapping.nodes.iter().any(|n| {
                n.coordinates
                    .as_ref()
                    .is_some_and(|(a, b)| a == lat && b == lon)
            });
            if !named {
                return Err(Error::new(
                    ErrorKind::ArgumentError,
                    format!(
                        "graph source `{}` maps no node coordinates `{lat}`, `{lon}`: \
                         A* over a source reads the mapping's `coordinates`",
                        mapping.name
                    ),
                ));
            }
        }
        let mut graph = SourceGraph::new(&self.source, specs, weight)?
            .with_deadline(q.scope.deadline())
            .with_cancel(cancelled);
        // The statement's prefetcher (`CYPHER prefetch=...`), if it chose one.
        let chosen = q
            .snapshot
            .external()
            .and_then(|x| x.as_any())
            .and_then(|a| a.downcast_ref::<crate::QueryGraph>())
            .and_then(|g| g.prefetch());
        if let Some(prefetch) = chosen {
            graph = graph.with_prefetch(prefetch);
        }
        let routes = search(&graph)?;
        // Pin the paths' relationships in the query's graph.
        let catalog = rhizome_storage::GraphRead::catalog(&q.snapshot);
        for route in &routes {
            for t in 0..catalog.rel_types.len() as u32 {
                for dir in [
                    rhizome_storage::Direction::Outgoing,
                    rhizome_storage::Direction::Incoming,
                ] {
                    if specs
                        .iter()
                        .any(|s| covers(s, catalog.rel_type_name(t), dir))
                    {
                        q.snapshot.prefetch_adjacency(&route.nodes, t, dir);
                    }
                }
            }
        }
        Ok(routes)
    }
}

fn covers(spec: &ExpandSpec, rel_type: &str, dir: rhizome_storage::Direction) -> bool {
    use rhizome_routes::TypeDirection as T;
    spec.rel_type.as_deref().is_none_or(|t| t == rel_type)
        && matches!(
            (spec.direction, dir),
            (T::Both, _)
                | (T::Outgoing, rhizome_storage::Direction::Outgoing)
                | (T::Incoming, rhizome_storage::Direction::Incoming)
        )
}
