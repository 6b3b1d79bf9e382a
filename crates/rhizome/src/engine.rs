//! The seam between the command line and query execution.
//!
//! Every front end of the `rhizome` command (`query`, `shell`, `demo`) runs a
//! statement through [`execute`] and formats the [`QueryResult`] it returns;
//! none of them knows how a query is planned or run. The query engine plugs in
//! behind [`execute`] without any change to the callers.
//!
//! Today `execute` runs the Cypher front end (parse and semantic analysis) so
//! that syntax and semantic errors are reported with their positions, then
//! stops with [`engine_not_built`]: Rhizome does not fake results.

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_storage::Database;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Detail code of the error returned while the query engine is not built yet.
pub const ENGINE_NOT_BUILT: &str = "EngineNotBuilt";

/// How a statement is run.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOptions {
    /// Worker threads the query may use (at least 1).
    pub threads: usize,
    /// Wall-clock budget; the query is cancelled with `QueryAborted` after it.
    pub timeout: Option<Duration>,
}

impl Default for ExecOptions {
    fn default() -> ExecOptions {
        ExecOptions {
            threads: crate::config::default_threads(),
            timeout: None,
        }
    }
}

/// Side effects of a statement, as Cypher reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryStats {
    /// Nodes created.
    pub nodes_created: u64,
    /// Nodes deleted.
    pub nodes_deleted: u64,
    /// Relationships created.
    pub relationships_created: u64,
    /// Relationships deleted.
    pub relationships_deleted: u64,
    /// Properties set (including set to null, i.e. removed).
    pub properties_set: u64,
    /// Labels added to nodes.
    pub labels_added: u64,
    /// Labels removed from nodes.
    pub labels_removed: u64,
}

impl QueryStats {
    /// The non-zero counters as `(name, count)`, in a fixed order.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        [
            ("nodes created", self.nodes_created),
            ("nodes deleted", self.nodes_deleted),
            ("relationships created", self.relationships_created),
            ("relationships deleted", self.relationships_deleted),
            ("properties set", self.properties_set),
            ("labels added", self.labels_added),
            ("labels removed", self.labels_removed),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }
}

/// The complete result of one statement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryResult {
    /// Column names, in `RETURN` order.
    pub columns: Vec<String>,
    /// Rows; each has one value per column.
    pub rows: Vec<Vec<Value>>,
    /// Side-effect counters.
    pub stats: QueryStats,
    /// Time from receiving the text to the last row.
    pub elapsed: Duration,
}

/// Runs one Cypher statement against `db` with parameters `params`.
///
/// Errors carry their classification and, for errors in the query text, the
/// position in `query`.
pub fn execute(
    db: &Database,
    query: &str,
    params: &BTreeMap<String, Value>,
    options: &ExecOptions,
) -> Result<QueryResult> {
    let started = Instant::now();
    // Parse and analyse: syntax and semantic errors come back positioned.
    let statement = rhizome_cypher::compile(query)?;
    // The query engine (planner + runtime) plugs in here; it receives the
    // analysed statement, the database, the parameters and the options, and
    // fills a QueryResult whose `elapsed` is measured from `started`.
    let _ = (statement, db, params, options, started);
    Err(engine_not_built())
}

/// The error every valid statement ends in until the query engine exists.
pub fn engine_not_built() -> Error {
    Error::new(
        ErrorKind::QueryAborted,
        "Cypher execution arrives with the query engine (not built yet); \
         the statement was parsed and checked but cannot be run",
    )
    .with_code(ENGINE_NOT_BUILT)
}
