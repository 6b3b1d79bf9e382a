//! `rhizome bench aggregate`: the aggregation shapes of issue 21 on the
//! chain graph (1,000,000 nodes), and the column-wise predicates and
//! aggregates over string, float and nullable columns on a property graph
//! of as many nodes ([`PROPS_QUERIES`]), timed like the query suite (one
//! worker and all workers, alternating, medians), each printed beside the
//! figure Kuzu 0.11 gave on one thread in the measurement where it
//! gave one.

use crate::BenchRow;
use crate::{chain_engine, machine, run_selected, QueryBenchOptions, Spec, Tally};
use rhizome_common::{Result, Value};
use rhizome_engine::Engine;
use rhizome_import::{IdType, ImportOptions, InputGroup};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// One aggregation query of the suite.
#[derive(Debug, Clone, Copy)]
pub struct AggregateQuery {
    /// Short name (`--only` selects by it).
    pub name: &'static str,
    /// The Cypher text.
    pub query: &'static str,
    /// Kuzu 0.11's one-thread time in ms from issue 21, if it gave one.
    pub kuzu_ms: Option<f64>,
    /// Kuzu 0.11's peak memory in MB from issue 21, if it gave one: the
    /// suite then also prints the process's peak resident set over the
    /// query's runs.
    pub kuzu_peak_mb: Option<f64>,
}

/// The suite: a count over all nodes, the SQ2 filter counted, a filtered
/// sum/avg/max over a label, and a GROUP BY of a property with count/min.
pub const AGGREGATE_QUERIES: [AggregateQuery; 4] = [
    AggregateQuery {
        name: "COUNT",
        query: "MATCH (n) RETURN count(n)",
        kuzu_ms: Some(0.5),
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SQ2C",
        query: "MATCH (n) WHERE (n.id % 7) / (n.id % 5 + 1) > n.id % 3 RETURN count(n)",
        kuzu_ms: Some(12.0),
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "FSUM",
        query: "MATCH (n:LBL_ALL) WHERE n.idMod7 < 3 RETURN sum(n.id) AS s, avg(n.id) AS a, max(n.id) AS m",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "GROUP",
        query: "MATCH (n) RETURN n.idMod7 AS k, count(*) AS c, min(n.id) AS m",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
];

/// `collect(b.id)` per node over `(a)--(b)`, the largest list: issue 21's
/// row (Kuzu 0.11 6.8 s and 3.5 GB on the 1M-node chain). It collects 100
/// million ids at the default size, so the suite runs it only when named
/// (`--only COLLECT`); time and peak memory of a smaller chain are in
/// docs/benchmarks.md.
pub const COLLECT_QUERY: AggregateQuery = AggregateQuery {
    name: "COLLECT",
    query: "MATCH (a)--(b) WITH a, collect(b.id) AS ids \
            RETURN a.id, size(ids) ORDER BY size(ids) DESC LIMIT 1",
    kuzu_ms: Some(6800.0),
    kuzu_peak_mb: Some(3500.0),
};

/// Null tests, `IN` over constant lists, string predicates over string
/// columns and float aggregates, on the property graph
/// ([`generate_props`]): `(:P {id, grp: id % 100, name: 'n' + id, score:
/// id / 7.0, opt: 'o' + id or null for every third, tag: 't' + id % 100})`,
/// string ordering comparisons, grouping by a string column and by a
/// string and an integer (`SGROUP2`, 300 groups). Issue 21
/// gives no Kuzu figure for these.
pub const PROPS_QUERIES: [AggregateQuery; 11] = [
    AggregateQuery {
        name: "SNULL",
        query: "MATCH (n:P) WHERE n.opt IS NULL RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SIN",
        query: "MATCH (n:P) WHERE n.grp IN [3, 14, 15, 92, 65] RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SINS",
        query: "MATCH (n:P) WHERE n.name IN ['n1', 'n22', 'n333', 'n4444', 'n55555'] RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SSTART",
        query: "MATCH (n:P) WHERE n.name STARTS WITH 'n12' RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SCONT",
        query: "MATCH (n:P) WHERE n.name CONTAINS '777' RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SEQ",
        query: "MATCH (n:P) WHERE n.name = 'n424242' RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SLT",
        query: "MATCH (n:P) WHERE n.name < 'n5' RETURN count(n)",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SGROUP",
        query: "MATCH (n:P) RETURN n.tag AS t, count(*) AS c, min(n.name) AS m",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "SGROUP2",
        query: "MATCH (n:P) RETURN n.tag AS t, n.id % 3 AS r, count(*) AS c, min(n.name) AS m",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "FAGG",
        query: "MATCH (n:P) RETURN sum(n.score) AS s, avg(n.score) AS a, min(n.score) AS lo, max(n.score) AS hi",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "GCOLL",
        query: "MATCH (n:P) RETURN n.grp AS g, size(collect(n.id)) AS c",
        kuzu_ms: None,
        kuzu_peak_mb: None,
    },
];

/// Writes the property graph of [`PROPS_QUERIES`] (`nodes` nodes) as CSV
/// into `out` and returns its import options.
pub fn generate_props(out: &Path, nodes: u64) -> Result<ImportOptions> {
    let path = out.join("props.csv");
    let file =
        std::fs::File::create(&path).map_err(|e| rhizome_common::Error::io(path.display(), e))?;
    let mut csv = std::io::BufWriter::new(file);
    let io = |e| rhizome_common::Error::io(path.display(), e);
    writeln!(
        csv,
        "id:ID(P),grp:int,name:string,score:float,opt:string,tag:string"
    )
    .map_err(io)?;
    for id in 0..nodes {
        let opt = if id % 3 == 0 {
            String::new()
        } else {
            format!("o{id}")
        };
        let grp = id % 100;
        writeln!(csv, "{id},{grp},n{id},{},{opt},t{grp}", id as f64 / 7.0).map_err(io)?;
    }
    csv.flush().map_err(io)?;
    Ok(ImportOptions {
        nodes: vec![InputGroup::new(["P"], [path.clone()])],
        id_type: IdType::Integer,
        ignore_empty_strings: true,
        ..ImportOptions::default()
    })
}

/// The property graph of [`PROPS_QUERIES`], as many nodes as the chain
/// graph, cached in the data directory.
fn props_engine(options: &QueryBenchOptions) -> Result<Engine> {
    let nodes = options.chain.nodes;
    // `v2`: the graph gained `tag`; a cached graph without it is not reused.
    let db = crate::cached_dir(&options.data_dir, &format!("props-v2-{nodes}"), |csv| {
        generate_props(csv, nodes)
    })?;
    Engine::open(&db)
}

/// Runs the queries `options` selects (by name; all but [`COLLECT_QUERY`]
/// if none is named) on the chain and property graphs, printing each
/// result line and the Kuzu reference.
pub fn run_aggregate_bench(
    options: &QueryBenchOptions,
    out: &mut dyn Write,
) -> Result<Vec<BenchRow>> {
    let workers = rhizome_exec::scheduler::WorkerPool::global().threads();
    let _ = writeln!(
        out,
        "query  1 worker      {workers} workers    speedup  throughput                    PROFILE share  machine / hand-off speedup, line"
    );
    let probe = machine::MachineProbe::new();
    let named = |name: &str| options.only.iter().any(|o| o.eq_ignore_ascii_case(name));
    let mut chain_queries = AGGREGATE_QUERIES.to_vec();
    if named(COLLECT_QUERY.name) {
        chain_queries.push(COLLECT_QUERY);
    }
    let selected =
        |qs: &[AggregateQuery]| options.only.is_empty() || qs.iter().any(|q| named(q.name));
    let mut results = Vec::new();
    if selected(&chain_queries) {
        let engine = chain_engine(options)?;
        results.extend(run_queries(&engine, &chain_queries, &probe, options, out)?);
    }
    if selected(&PROPS_QUERIES) {
        let engine = props_engine(options)?;
        results.extend(run_queries(&engine, &PROPS_QUERIES, &probe, options, out)?);
    }
    Ok(results)
}

/// Resets the process's peak resident set (`VmHWM`) to its current size
/// (Linux: writing 5 to `/proc/self/clear_refs`), so that the next reading
/// is one query's peak; elsewhere the reading stays the process's peak.
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs the selected queries of `queries` on `engine`.
fn run_queries(
    engine: &Engine,
    queries: &[AggregateQuery],
    probe: &machine::MachineProbe,
    options: &QueryBenchOptions,
    out: &mut dyn Write,
) -> Result<Vec<BenchRow>> {
    let rows = |tally: &Tally, _: &BTreeMap<String, Value>| tally.rows as f64;
    let mut results = Vec::new();
    for &q in queries {
        let spec = Spec {
            name: q.name,
            query: q.query.into(),
            params: BTreeMap::new(),
            unit: "rows",
            units: rows,
            reference: None,
        };
        if q.kuzu_peak_mb.is_some() {
            reset_peak_memory();
        }
        let Some(row) = run_selected(engine, &[spec], probe, options, out)?.pop() else {
            continue;
        };
        if let Some(kuzu) = q.kuzu_peak_mb {
            let peak = rhizome_import::report::peak_memory_bytes() as f64 / 1e6;
            let _ = writeln!(
                out,
                "      {}: Kuzu 0.11 peak memory (issue 21) {kuzu:.0} MB; Rhizome peak resident set over its runs {peak:.0} MB = {:.2}x Kuzu",
                q.name,
                peak / kuzu
            );
        }
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
