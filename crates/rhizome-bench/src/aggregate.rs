//! `rhizome bench aggregate`: the aggregation shapes of issue 21 on the
//! chain graph (1,000,000 nodes), timed like the query suite (one worker
//! and all workers, alternating, medians), each printed beside the figure
//! Kuzu 0.11 gave on one thread in the measurement where it gave
//! one.

use crate::BenchRow;
use crate::{chain_engine, machine, run_selected, QueryBenchOptions, Spec, Tally};
use rhizome_common::{Result, Value};
use std::collections::BTreeMap;
use std::io::Write;

/// One aggregation query of the suite.
#[derive(Debug, Clone, Copy)]
pub struct AggregateQuery {
    /// Short name (`--only` selects by it).
    pub name: &'static str,
    /// The Cypher text.
    pub query: &'static str,
    /// Kuzu 0.11's one-thread time in ms from issue 21, if it gave one.
    pub kuzu_ms: Option<f64>,
}

/// The suite: a count over all nodes, the SQ2 filter counted, a filtered
/// sum/avg/max over a label, and a GROUP BY of a property with count/min.
pub const AGGREGATE_QUERIES: [AggregateQuery; 4] = [
    AggregateQuery {
        name: "COUNT",
        query: "MATCH (n) RETURN count(n)",
        kuzu_ms: Some(0.5),
    },
    AggregateQuery {
        name: "SQ2C",
        query: "MATCH (n) WHERE (n.id % 7) / (n.id % 5 + 1) > n.id % 3 RETURN count(n)",
        kuzu_ms: Some(12.0),
    },
    AggregateQuery {
        name: "FSUM",
        query: "MATCH (n:LBL_ALL) WHERE n.idMod7 < 3 RETURN sum(n.id) AS s, avg(n.id) AS a, max(n.id) AS m",
        kuzu_ms: None,
    },
    AggregateQuery {
        name: "GROUP",
        query: "MATCH (n) RETURN n.idMod7 AS k, count(*) AS c, min(n.id) AS m",
        kuzu_ms: None,
    },
];

/// Runs the queries `options` selects (by name; all if none is named) on
/// the chain graph, printing each result line and the Kuzu reference.
pub fn run_aggregate_bench(
    options: &QueryBenchOptions,
    out: &mut dyn Write,
) -> Result<Vec<BenchRow>> {
    let workers = rhizome_exec::scheduler::WorkerPool::global().threads();
    let _ = writeln!(
        out,
        "query  1 worker      {workers} workers    speedup  throughput                    PROFILE share  machine / hand-off speedup, line"
    );
    let engine = chain_engine(options)?;
    let probe = machine::MachineProbe::new();
    let rows = |tally: &Tally, _: &BTreeMap<String, Value>| tally.rows as f64;
    let mut results = Vec::new();
    for q in AGGREGATE_QUERIES {
        let spec = Spec {
            name: q.name,
            query: q.query.into(),
            params: BTreeMap::new(),
            unit: "rows",
            units: rows,
            reference: None,
        };
        let Some(row) = run_selected(&engine, &[spec], &probe, options, out)?.pop() else {
            continue;
        };
        let _ = match q.kuzu_ms {
            Some(kuzu) => writeln!(
                out,
                "      {}: Kuzu 0.11 1 thread (issue 21) {kuzu:.2} ms; Rhizome 1 worker {:.2} ms = {:.2}x Kuzu",
                q.query,
                row.one.as_secs_f64() * 1e3,
                row.one.as_secs_f64() * 1e3 / kuzu
            ),
            None => writeln!(out, "      {}: no Kuzu figure in issue 21", q.query),
        };
        results.push(row);
    }
    Ok(results)
}
