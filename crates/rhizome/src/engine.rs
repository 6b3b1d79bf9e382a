//! The seam between the command line and query execution.
//!
//! Every front end of the `rhizome` command (`query`, `shell`, `demo`) runs a
//! statement through [`execute`] and formats the [`QueryResult`] it returns;
//! none of them knows how a query is parsed, planned or run. Behind
//! [`execute`] is [`rhizome_engine::Engine`]: the Cypher front end (errors
//! with positions), the planner and the parallel runtime.

use rhizome_common::{Result, Value};
use rhizome_storage::Database;
use std::collections::BTreeMap;
use std::time::Duration;

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
    /// For `EXPLAIN`, the plan; for `PROFILE`, the plan annotated with
    /// per-operator counters.
    pub plan: Option<String>,
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
    let engine = rhizome_engine::Engine::new(db.clone());
    let engine_options = rhizome_engine::QueryOptions {
        threads: Some(options.threads),
        timeout: options.timeout,
        ..rhizome_engine::QueryOptions::default()
    };
    let result = engine.execute(query, params.clone(), &engine_options)?;
    Ok(QueryResult {
        columns: result.columns,
        rows: result.rows,
        // Statements that write are not supported by the engine yet, so
        // there are no side effects to count.
        stats: QueryStats::default(),
        elapsed: result.elapsed,
        plan: result.plan.or(result.profile.map(|p| p.text)),
    })
}
