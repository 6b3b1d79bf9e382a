//! `rhizome bench aggregate`: the aggregation shapes of issue 21 on the
//! chain graph (1,000,000 nodes), and the column-wise predicates and
//! aggregates over string, float and nullable columns on a property graph
//! of as many nodes ([`PROPS_QUERIES`]), timed like the query suite (one
//! worker and all workers, alternating, medians), each printed beside the
//! figure Kuzu 0.11 gave on one thread in the measurement where it
//! gave one, and beside Kuzu's figures measured on this machine by
//! `scripts/bench-kuzu.sh` where that script has run ([`KuzuReference`]).

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
/// SQ3 counted and `count(DISTINCT c)` over two hops are the table's other
/// chain rows.
pub const AGGREGATE_QUERIES: [AggregateQuery; 6] = [
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
    AggregateQuery {
        name: "SQ3C",
        query: crate::SQ3,
        kuzu_ms: Some(136.0),
        kuzu_peak_mb: None,
    },
    AggregateQuery {
        name: "DISTINCT",
        query: "MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)",
        kuzu_ms: Some(650.0),
        kuzu_peak_mb: None,
    },
];

/// `collect(b.id)` per node over `(a)--(b)`, the largest list: issue 21's
/// row (Kuzu 0.11 6.8 s and 3.5 GB on the 1M-node chain). It collects 100
/// million ids at the default size, so the suite runs it only when named
/// (`--only COLLECT`); time and peak memory of a smaller chain are in
/// docs/benchmarks.md. Every chain node has as many neighbours, so the
/// order breaks the tie by `a.id`: the bench compares the results of its
/// single-worker and parallel runs, and Cypher leaves tied rows unordered.
pub const COLLECT_QUERY: AggregateQuery = AggregateQuery {
    name: "COLLECT",
    query: "MATCH (a)--(b) WITH a, collect(b.id) AS ids \
            RETURN a.id, size(ids) ORDER BY size(ids) DESC, a.id LIMIT 1",
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
        let kuzu = KuzuReference::load(&options.data_dir, &options.chain, out);
        results.extend(run_queries(
            &engine,
            &chain_queries,
            &kuzu,
            &probe,
            options,
            out,
        )?);
    }
    if selected(&PROPS_QUERIES) {
        let engine = props_engine(options)?;
        let none = KuzuReference::default();
        results.extend(run_queries(
            &engine,
            &PROPS_QUERIES,
            &none,
            &probe,
            options,
            out,
        )?);
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
    kuzu_here: &KuzuReference,
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
        let measured = kuzu_here.figures(q.name);
        if q.kuzu_peak_mb.is_some() || !measured.is_empty() {
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
        if !measured.is_empty() {
            let peak = rhizome_import::report::peak_memory_bytes() as f64 / 1e6;
            for figure in measured {
                let (ours, label) = if figure.threads == 1 {
                    (row.one, "1 worker".to_string())
                } else {
                    (row.all, format!("{} workers", row.workers))
                };
                let ms = ours.as_secs_f64() * 1e3;
                let _ = writeln!(
                    out,
                    "      {}: Kuzu {} measured here ({}, load {}) {} thread(s) {:.2} ms, peak {:.0} MB; Rhizome {label} {ms:.2} ms = {:.2}x, peak {peak:.0} MB = {:.2}x",
                    q.name,
                    figure.version,
                    figure.when,
                    figure.load,
                    figure.threads,
                    figure.median_ms,
                    figure.peak_mb,
                    ms / figure.median_ms,
                    peak / figure.peak_mb,
                );
            }
        }
        results.push(row);
    }
    Ok(results)
}

/// Kuzu's figures for the chain queries measured on this machine by
/// `scripts/bench-kuzu.sh` (`scripts/bench/kuzu_chain.py`), read from
/// `DATA_DIR/kuzu-chain-N-D/reference.tsv`: empty if the script has not
/// run for this graph; lines that do not parse are reported and skipped.
#[derive(Debug, Default)]
pub struct KuzuReference {
    figures: Vec<KuzuFigure>,
}

/// One (query, threads) line of a [`KuzuReference`].
#[derive(Debug, Clone, PartialEq)]
pub struct KuzuFigure {
    /// The suite's query name (`COUNT`, `SQ3C`, ...).
    pub name: String,
    /// Kuzu's thread count.
    pub threads: usize,
    /// Median of the warm runs, ms.
    pub median_ms: f64,
    /// Peak resident set of Kuzu's process, MB.
    pub peak_mb: f64,
    /// When it was measured (UTC).
    pub when: String,
    /// The load average when it was measured.
    pub load: String,
    /// Kuzu's version.
    pub version: String,
}

impl KuzuReference {
    /// Reads the reference file of the chain graph `chain` under
    /// `data_dir`, reporting unreadable lines to `out`.
    pub fn load(
        data_dir: &Path,
        chain: &rhizome_import::generate::ChainOptions,
        out: &mut dyn Write,
    ) -> KuzuReference {
        let path = data_dir
            .join(format!("kuzu-chain-{}-{}", chain.nodes, chain.degree))
            .join("reference.tsv");
        match std::fs::read_to_string(&path) {
            Ok(text) => KuzuReference::parse(&text, &path.display().to_string(), out),
            Err(_) => KuzuReference::default(),
        }
    }

    /// Parses the tab-separated lines of `text` (`#` lines are comments):
    /// name, threads, median ms, minimum ms, peak MB, runs, when, load,
    /// Kuzu version, result. A line that does not parse is reported to
    /// `out` with its number and skipped.
    pub fn parse(text: &str, origin: &str, out: &mut dyn Write) -> KuzuReference {
        let mut figures = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let parsed = (fields.len() >= 9)
                .then(|| {
                    Some(KuzuFigure {
                        name: fields[0].to_string(),
                        threads: fields[1].parse().ok().filter(|&t| t > 0)?,
                        median_ms: fields[2].parse().ok().filter(|m: &f64| *m > 0.0)?,
                        peak_mb: fields[4].parse().ok().filter(|m: &f64| *m > 0.0)?,
                        when: fields[6].to_string(),
                        load: fields[7].to_string(),
                        version: fields[8].to_string(),
                    })
                })
                .flatten();
            match parsed {
                Some(figure) => figures.push(figure),
                None => {
                    let _ = writeln!(
                        out,
                        "note: {origin} line {}: expected name, threads, median ms, min ms, peak MB, runs, when, load, version (tab-separated, positive numbers); skipped",
                        index + 1
                    );
                }
            }
        }
        KuzuReference { figures }
    }

    /// The figures measured for query `name`, fewest threads first.
    pub fn figures(&self, name: &str) -> Vec<KuzuFigure> {
        let mut found: Vec<KuzuFigure> = self
            .figures
            .iter()
            .filter(|f| f.name == name)
            .cloned()
            .collect();
        found.sort_by_key(|f| f.threads);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_lines_parse_and_bad_lines_are_reported() {
        let text = "# comment\n\
                    COUNT\t1\t0.225\t0.192\t84\t3\t2026-11-26 19:00 UTC\t2.2\t0.11.3\t[[10000]]\n\
                    COUNT\t2\t0.311\t0.203\t84\t3\twhen\t2.2\t0.11.3\t[[10000]]\n\
                    SQ2C\tx\t0.6\t0.5\t86\t3\twhen\t2.2\t0.11.3\t[[1]]\n\
                    SQ2C\t1\t-1\t0.5\t86\t3\twhen\t2.2\t0.11.3\t[[1]]\n\
                    short\tline\n";
        let mut out = Vec::new();
        let reference = KuzuReference::parse(text, "ref.tsv", &mut out);
        let count = reference.figures("COUNT");
        assert_eq!(count.len(), 2);
        assert_eq!(count[0].threads, 1);
        assert_eq!(count[0].median_ms, 0.225);
        assert_eq!(count[1].threads, 2);
        assert!(reference.figures("SQ2C").is_empty());
        let notes = String::from_utf8(out).unwrap();
        assert_eq!(notes.matches("skipped").count(), 3, "{notes}");
        assert!(notes.contains("ref.tsv line 4"), "{notes}");
    }

    #[test]
    fn bench_prints_measured_kuzu_figures_beside_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = QueryBenchOptions {
            data_dir: dir.path().to_path_buf(),
            runs: 1,
            min_time: std::time::Duration::ZERO,
            ..QueryBenchOptions::default()
        };
        options.chain = rhizome_import::generate::ChainOptions {
            nodes: 2_000,
            degree: 3,
        };
        options.select("COUNT,DISTINCT");
        let home = dir.path().join("kuzu-chain-2000-3");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("reference.tsv"),
            "DISTINCT\t1\t4.0\t3.9\t88\t3\t2026-11-26 19:00 UTC\t2.2\t0.11.3\t[[2000]]\n",
        )
        .unwrap();
        let mut out = Vec::new();
        let rows = run_aggregate_bench(&options, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(
            text.contains("DISTINCT: Kuzu 0.11.3 measured here (2026-11-26 19:00 UTC, load 2.2) 1 thread(s) 4.00 ms"),
            "{text}"
        );
        assert!(!text.contains("COUNT: Kuzu 0.11.3 measured here"), "{text}");
    }
}
