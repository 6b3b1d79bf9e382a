//! The LDBC SNB Interactive reads (IC1–IC14, IS1–IS7) as a benchmark.
//!
//! The query texts in `crates/rhizome-bench/ldbc/` are Rhizome's own
//! formulations, written from the LDBC SNB specification; the files are
//! named like those of LDBC's reference implementation
//! (`interactive-complex-1.cypher`, `interactive-short-7.cypher`), so a
//! directory of the published texts can be run instead
//! ([`LdbcBenchOptions::queries_dir`]).
//!
//! Parameters are picked deterministically from the imported database
//! ([`ldbc_parameters`]): persons with friends spread over the id order,
//! messages spread over the id order, the most frequent countries and tags,
//! dates inside the data's range (in either date encoding: epoch
//! milliseconds as in `ldbc-tiny`, or `yyyyMMddHHmmssSSS` numbers as in
//! `ldbc-sf0.1`).

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_engine::{Engine, QueryOptions, Rows};
use rhizome_import::{import, ldbc_options, LdbcLayout, NoProgress, REFERENCE_PROPERTY_RENAMES};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One of the 21 LDBC SNB Interactive read queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LdbcQuery {
    /// IC1: transitive friends with a certain name.
    Ic1,
    /// IC2: recent messages by friends.
    Ic2,
    /// IC3: friends within two hops that have been to countries X and Y.
    Ic3,
    /// IC4: new topics.
    Ic4,
    /// IC5: new groups.
    Ic5,
    /// IC6: tag co-occurrence.
    Ic6,
    /// IC7: recent likers.
    Ic7,
    /// IC8: recent replies.
    Ic8,
    /// IC9: recent messages by friends or friends of friends.
    Ic9,
    /// IC10: friend recommendation.
    Ic10,
    /// IC11: job referral.
    Ic11,
    /// IC12: expert search.
    Ic12,
    /// IC13: single shortest path.
    Ic13,
    /// IC14: trusted connection paths.
    Ic14,
    /// IS1: profile of a person.
    Is1,
    /// IS2: recent messages of a person.
    Is2,
    /// IS3: friends of a person.
    Is3,
    /// IS4: content of a message.
    Is4,
    /// IS5: creator of a message.
    Is5,
    /// IS6: forum of a message.
    Is6,
    /// IS7: replies of a message.
    Is7,
}

impl LdbcQuery {
    /// All 21 queries, complex reads first.
    pub const ALL: [LdbcQuery; 21] = [
        LdbcQuery::Ic1,
        LdbcQuery::Ic2,
        LdbcQuery::Ic3,
        LdbcQuery::Ic4,
        LdbcQuery::Ic5,
        LdbcQuery::Ic6,
        LdbcQuery::Ic7,
        LdbcQuery::Ic8,
        LdbcQuery::Ic9,
        LdbcQuery::Ic10,
        LdbcQuery::Ic11,
        LdbcQuery::Ic12,
        LdbcQuery::Ic13,
        LdbcQuery::Ic14,
        LdbcQuery::Is1,
        LdbcQuery::Is2,
        LdbcQuery::Is3,
        LdbcQuery::Is4,
        LdbcQuery::Is5,
        LdbcQuery::Is6,
        LdbcQuery::Is7,
    ];

    /// `IC1` … `IS7`.
    pub fn name(self) -> String {
        let (kind, n) = self.kind_and_number();
        format!("{}{n}", if kind == "complex" { "IC" } else { "IS" })
    }

    fn kind_and_number(self) -> (&'static str, usize) {
        let i = LdbcQuery::ALL.iter().position(|q| *q == self).unwrap_or(0);
        if i < 14 {
            ("complex", i + 1)
        } else {
            ("short", i - 13)
        }
    }

    /// Neo4j's warm median latency in milliseconds on SF0.1, the reference
    /// of issue 21: the median over five parameter sets of Neo4j 5.26
    /// Community's warm medians (embedded, slotted runtime, one thread per
    /// query). Its parameters differ from those of [`ldbc_parameters`], so compare
    /// medians, not single runs.
    pub fn neo4j_reference_ms(self) -> f64 {
        const MS: [f64; 21] = [
            5.6, 58.8, 201.9, 49.9, 3.2, 154.7, 6.4, 5.7, 214.9, 281.6, 6.7, 239.0, 0.3, 39.9, 0.2,
            1.2, 0.4, 0.2, 0.2, 0.3, 0.4,
        ];
        let i = LdbcQuery::ALL.iter().position(|q| *q == self).unwrap_or(0);
        MS[i]
    }

    /// The file name, as in LDBC's reference implementation:
    /// `interactive-complex-1.cypher`, `interactive-short-7.cypher`.
    pub fn file_name(self) -> String {
        let (kind, n) = self.kind_and_number();
        format!("interactive-{kind}-{n}.cypher")
    }
}

/// Rhizome's own formulation of `query` (from `crates/rhizome-bench/ldbc/`).
pub fn ldbc_query_text(query: LdbcQuery) -> &'static str {
    match query {
        LdbcQuery::Ic1 => include_str!("../ldbc/interactive-complex-1.cypher"),
        LdbcQuery::Ic2 => include_str!("../ldbc/interactive-complex-2.cypher"),
        LdbcQuery::Ic3 => include_str!("../ldbc/interactive-complex-3.cypher"),
        LdbcQuery::Ic4 => include_str!("../ldbc/interactive-complex-4.cypher"),
        LdbcQuery::Ic5 => include_str!("../ldbc/interactive-complex-5.cypher"),
        LdbcQuery::Ic6 => include_str!("../ldbc/interactive-complex-6.cypher"),
        LdbcQuery::Ic7 => include_str!("../ldbc/interactive-complex-7.cypher"),
        LdbcQuery::Ic8 => include_str!("../ldbc/interactive-complex-8.cypher"),
        LdbcQuery::Ic9 => include_str!("../ldbc/interactive-complex-9.cypher"),
        LdbcQuery::Ic10 => include_str!("../ldbc/interactive-complex-10.cypher"),
        LdbcQuery::Ic11 => include_str!("../ldbc/interactive-complex-11.cypher"),
        LdbcQuery::Ic12 => include_str!("../ldbc/interactive-complex-12.cypher"),
        LdbcQuery::Ic13 => include_str!("../ldbc/interactive-complex-13.cypher"),
        LdbcQuery::Ic14 => include_str!("../ldbc/interactive-complex-14.cypher"),
        LdbcQuery::Is1 => include_str!("../ldbc/interactive-short-1.cypher"),
        LdbcQuery::Is2 => include_str!("../ldbc/interactive-short-2.cypher"),
        LdbcQuery::Is3 => include_str!("../ldbc/interactive-short-3.cypher"),
        LdbcQuery::Is4 => include_str!("../ldbc/interactive-short-4.cypher"),
        LdbcQuery::Is5 => include_str!("../ldbc/interactive-short-5.cypher"),
        LdbcQuery::Is6 => include_str!("../ldbc/interactive-short-6.cypher"),
        LdbcQuery::Is7 => include_str!("../ldbc/interactive-short-7.cypher"),
    }
}

/// Query parameters by name.
pub type Params = BTreeMap<String, Value>;

/// What [`run_ldbc_bench`] runs.
#[derive(Debug, Clone)]
pub struct LdbcBenchOptions {
    /// The LDBC data set directory (`ldbc-sf0.1` or `ldbc-tiny`).
    pub dataset: PathBuf,
    /// Its file layout.
    pub layout: LdbcLayout,
    /// Where the imported database is cached.
    pub data_dir: PathBuf,
    /// Read `<file_name>` query texts from this directory instead of the
    /// built-in formulations.
    pub queries_dir: Option<PathBuf>,
    /// Parameter sets per query.
    pub sets: usize,
    /// Timed runs per parameter set (after one warm-up run).
    pub runs: usize,
    /// Most workers per query (default: all).
    pub threads: Option<usize>,
}

impl LdbcBenchOptions {
    /// SF0.1 from `datasets/ldbc-sf0.1`, 5 parameter sets, 3 runs each.
    pub fn new(datasets: &Path) -> LdbcBenchOptions {
        LdbcBenchOptions {
            dataset: datasets.join(LdbcLayout::Sf01.dir_name()),
            layout: LdbcLayout::Sf01,
            data_dir: crate::default_data_dir(),
            queries_dir: None,
            sets: 5,
            runs: 3,
            threads: None,
        }
    }
}

/// Latencies of one query over all its parameter sets and runs.
#[derive(Debug, Clone)]
pub struct LdbcRow {
    /// The query.
    pub query: LdbcQuery,
    /// Median latency.
    pub median: Duration,
    /// 90th percentile latency.
    pub p90: Duration,
    /// Slowest run.
    pub max: Duration,
    /// Timed runs.
    pub samples: usize,
    /// Mean result rows per parameter set.
    pub mean_rows: f64,
}

impl LdbcRow {
    /// The median over Neo4j's reference median ([`LdbcQuery::neo4j_reference_ms`]).
    pub fn neo4j_ratio(&self) -> f64 {
        self.median.as_secs_f64() * 1e3 / self.query.neo4j_reference_ms()
    }

    /// One line of the report, with Neo4j's reference median and the ratio.
    pub fn render(&self) -> String {
        format!(
            "{:<5} median {:>9.2} ms  p90 {:>9.2} ms  max {:>9.2} ms  ({} runs, {:.1} rows)  Neo4j {:>7.1} ms  ratio {:>6.2}",
            self.query.name(),
            self.median.as_secs_f64() * 1e3,
            self.p90.as_secs_f64() * 1e3,
            self.max.as_secs_f64() * 1e3,
            self.samples,
            self.mean_rows,
            self.query.neo4j_reference_ms(),
            self.neo4j_ratio()
        )
    }
}

/// The geometric mean of the rows' ratios to Neo4j's reference medians
/// (`None` without rows); issue 21's target is at most 0.3 over all 21.
pub fn geometric_mean_ratio(rows: &[LdbcRow]) -> Option<f64> {
    if rows.is_empty() {
        return None;
    }
    let log_sum: f64 = rows.iter().map(|r| r.neo4j_ratio().max(1e-9).ln()).sum();
    Some((log_sum / rows.len() as f64).exp())
}

/// Imports the data set into `data_dir` unless it is already there, and
/// opens it.
pub fn ldbc_engine(options: &LdbcBenchOptions) -> Result<Engine> {
    let db = options.data_dir.join(options.layout.dir_name()).join("db");
    if !db.join("manifest.json").exists() {
        if !options.dataset.is_dir() {
            return Err(Error::new(
                ErrorKind::ArgumentError,
                format!("LDBC data set {} not found", options.dataset.display()),
            ));
        }
        return import_ldbc(&db, &options.dataset, options.layout);
    }
    Engine::open(&db)
}

/// Imports the LDBC data set in `dataset` into a new database `db` with the
/// reference implementation's schema names (labels, types and, after
/// [`REFERENCE_PROPERTY_RENAMES`], property keys), checkpoints and opens it.
pub fn import_ldbc(db: &Path, dataset: &Path, layout: LdbcLayout) -> Result<Engine> {
    let _ = std::fs::remove_dir_all(db);
    import(db, &ldbc_options(dataset, layout), &NoProgress)?;
    let engine = Engine::open(db)?;
    for statement in REFERENCE_PROPERTY_RENAMES {
        engine.execute(statement, BTreeMap::new(), &QueryOptions::default())?;
    }
    engine.execute(
        "CALL db.checkpoint()",
        BTreeMap::new(),
        &QueryOptions::default(),
    )?;
    Ok(engine)
}

fn rows(engine: &Engine, query: &str, params: Params) -> Result<Rows> {
    Ok(engine
        .execute(query, params, &QueryOptions::default())?
        .rows)
}

/// The first column of every row.
fn column(engine: &Engine, query: &str) -> Result<Vec<Value>> {
    Ok(rows(engine, query, Params::new())?
        .into_iter()
        .filter_map(|r| r.into_iter().next())
        .collect())
}

/// `n` elements spread evenly over `values` (fewer if it is shorter).
fn spread(values: &[Value], n: usize) -> Vec<Value> {
    if values.is_empty() || n == 0 {
        return Vec::new();
    }
    (0..n.min(values.len()))
        .map(|i| values[i * values.len() / n.min(values.len())].clone())
        .collect()
}

fn params(pairs: &[(&str, Value)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// `n` parameter sets for every query, picked deterministically from the
/// database.
pub fn ldbc_parameters(engine: &Engine, n: usize) -> Result<BTreeMap<LdbcQuery, Vec<Params>>> {
    let persons = spread(
        &column(
            engine,
            "MATCH (p:Person) WHERE COUNT { (p)-[:KNOWS]-() } >= 5 RETURN p.id AS id ORDER BY id",
        )?,
        n,
    );
    let first_names = spread(
        &column(
            engine,
            "MATCH (p:Person) RETURN p.firstName AS f ORDER BY p.id DESC",
        )?,
        n,
    );
    let messages = spread(
        &column(engine, "MATCH (m:Message) RETURN m.id AS id ORDER BY id")?,
        n,
    );
    let countries = column(
        engine,
        "MATCH (:Message)-[:IS_LOCATED_IN]->(c:Country) RETURN c.name AS name, count(*) AS n ORDER BY n DESC, name LIMIT 6",
    )?;
    let employer_countries = column(
        engine,
        "MATCH (:Person)-[:WORK_AT]->(:Company)-[:IS_LOCATED_IN]->(c:Country) RETURN c.name AS name, count(*) AS n ORDER BY n DESC, name LIMIT 4",
    )?;
    let tags = column(
        engine,
        "MATCH (:Post)-[:HAS_TAG]->(t:Tag) RETURN t.name AS name, count(*) AS n ORDER BY n DESC, name LIMIT 8",
    )?;
    let classes = column(
        engine,
        "MATCH (:Tag)-[:HAS_TYPE]->(c:TagClass) RETURN c.name AS name, count(*) AS n ORDER BY n DESC, name LIMIT 8",
    )?;
    let range = rows(
        engine,
        "MATCH (m:Message) RETURN min(m.creationDate) AS lo, max(m.creationDate) AS hi",
        Params::new(),
    )?;
    let (lo, hi) = match range.first().map(|r| (&r[0], &r[1])) {
        Some((Value::Int(lo), Value::Int(hi))) => (*lo, *hi),
        _ => {
            return Err(Error::new(
                ErrorKind::ArgumentError,
                "the database has no messages with creation dates",
            ))
        }
    };
    // A date `f` of the way through the data's range, and about one month
    // in the data's encoding.
    let compact = lo > 10_000_000_000_000_000;
    let at = |f: f64| -> i64 {
        if compact {
            // yyyyMMddHHmmssSSS: interpolate the year and month only.
            let month = |d: i64| (d / 10_000_000_000_000) * 12 + (d / 100_000_000_000) % 100 - 1;
            let m = month(lo) + ((month(hi) - month(lo)) as f64 * f) as i64;
            ((m / 12) * 100 + m % 12 + 1) * 100_000_000_000 + 100_000_000
        } else {
            lo + ((hi - lo) as f64 * f) as i64
        }
    };
    let month_later = |d: i64| -> i64 {
        if compact {
            let (year, month) = (d / 10_000_000_000_000, (d / 100_000_000_000) % 100);
            let (year, month) = if month == 12 {
                (year + 1, 1)
            } else {
                (year, month + 1)
            };
            (year * 100 + month) * 100_000_000_000 + d % 100_000_000_000
        } else {
            d + 30 * 86_400_000
        }
    };
    let pick = |list: &[Value], i: usize| -> Value {
        if list.is_empty() {
            Value::String(String::new())
        } else {
            list[i % list.len()].clone()
        }
    };
    let mut out = BTreeMap::new();
    for q in LdbcQuery::ALL {
        let mut sets = Vec::new();
        for (i, person) in persons.iter().enumerate() {
            let f = (i as f64 + 1.0) / (persons.len() as f64 + 1.0);
            let other = persons[(i + 1) % persons.len()].clone();
            let message = pick(&messages, i);
            let start = at(0.3 + 0.5 * f);
            let set = match q {
                LdbcQuery::Ic1 => params(&[
                    ("personId", person.clone()),
                    ("firstName", pick(&first_names, i)),
                ]),
                LdbcQuery::Ic2 | LdbcQuery::Ic9 => params(&[
                    ("personId", person.clone()),
                    ("maxDate", Value::Int(at(0.5 + 0.4 * f))),
                ]),
                LdbcQuery::Ic3 => params(&[
                    ("personId", person.clone()),
                    ("countryXName", pick(&countries, i + 1)),
                    ("countryYName", pick(&countries, i + 2)),
                    ("startDate", Value::Int(start)),
                    ("endDate", Value::Int(month_later(month_later(start)))),
                ]),
                LdbcQuery::Ic4 => params(&[
                    ("personId", person.clone()),
                    ("startDate", Value::Int(start)),
                    ("endDate", Value::Int(month_later(start))),
                ]),
                LdbcQuery::Ic5 => params(&[
                    ("personId", person.clone()),
                    ("minDate", Value::Int(at(0.2 + 0.5 * f))),
                ]),
                LdbcQuery::Ic6 => {
                    params(&[("personId", person.clone()), ("tagName", pick(&tags, i))])
                }
                LdbcQuery::Ic7 | LdbcQuery::Ic8 => params(&[("personId", person.clone())]),
                LdbcQuery::Ic10 => params(&[
                    ("personId", person.clone()),
                    ("month", Value::Int(12 - (i as i64 * 5) % 12)),
                ]),
                LdbcQuery::Ic11 => params(&[
                    ("personId", person.clone()),
                    ("countryName", pick(&employer_countries, i)),
                    ("workFromYear", Value::Int(2005 + i as i64 % 8)),
                ]),
                LdbcQuery::Ic12 => params(&[
                    ("personId", person.clone()),
                    ("tagClassName", pick(&classes, i)),
                ]),
                LdbcQuery::Ic13 | LdbcQuery::Ic14 => {
                    params(&[("person1Id", person.clone()), ("person2Id", other)])
                }
                LdbcQuery::Is1 | LdbcQuery::Is2 | LdbcQuery::Is3 => {
                    params(&[("personId", person.clone())])
                }
                LdbcQuery::Is4 | LdbcQuery::Is5 | LdbcQuery::Is6 | LdbcQuery::Is7 => {
                    params(&[("messageId", message)])
                }
            };
            sets.push(set);
        }
        out.insert(q, sets);
    }
    Ok(out)
}

/// The text of `query`: from `dir/<file_name>` if a directory is given,
/// else the built-in formulation.
pub fn load_query(query: LdbcQuery, dir: Option<&Path>) -> Result<String> {
    match dir {
        None => Ok(ldbc_query_text(query).to_string()),
        Some(dir) => {
            let path = dir.join(query.file_name());
            std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Imports the data set if needed, then runs every query with each of its
/// parameter sets (one warm-up and `runs` timed runs each) and writes one
/// line per query with median and p90 latency.
pub fn run_ldbc_bench(options: &LdbcBenchOptions, out: &mut dyn Write) -> Result<Vec<LdbcRow>> {
    let write = |out: &mut dyn Write, line: String| -> Result<()> {
        writeln!(out, "{line}").map_err(|e| Error::io("output", e))
    };
    let start = Instant::now();
    let engine = ldbc_engine(options)?;
    let all_params = ldbc_parameters(&engine, options.sets)?;
    write(
        out,
        format!(
            "LDBC SNB Interactive reads on {} ({} queries from {}; {} parameter sets x {} runs; setup {:.1} s)",
            options.dataset.display(),
            LdbcQuery::ALL.len(),
            options
                .queries_dir
                .as_ref()
                .map_or("Rhizome's formulations".to_string(), |d| d.display().to_string()),
            options.sets,
            options.runs,
            start.elapsed().as_secs_f64()
        ),
    )?;
    let query_options = QueryOptions {
        threads: options.threads,
        ..QueryOptions::default()
    };
    let mut results = Vec::new();
    for q in LdbcQuery::ALL {
        let text = load_query(q, options.queries_dir.as_deref())?;
        let mut times = Vec::new();
        let mut total_rows = 0usize;
        let sets = all_params.get(&q).map(Vec::as_slice).unwrap_or(&[]);
        for set in sets {
            let warm = engine
                .execute(&text, set.clone(), &query_options)
                .map_err(|e| Error::new(e.kind, format!("{} {set:?}: {}", q.name(), e.message)))?;
            total_rows += warm.rows.len();
            for _ in 0..options.runs {
                let t = Instant::now();
                engine.execute(&text, set.clone(), &query_options)?;
                times.push(t.elapsed());
            }
        }
        if times.is_empty() {
            continue;
        }
        times.sort();
        let row = LdbcRow {
            query: q,
            median: percentile(&times, 0.5),
            p90: percentile(&times, 0.9),
            max: *times.last().unwrap_or(&Duration::ZERO),
            samples: times.len(),
            mean_rows: total_rows as f64 / sets.len().max(1) as f64,
        };
        write(out, row.render())?;
        results.push(row);
    }
    if let Some(g) = geometric_mean_ratio(&results) {
        write(
            out,
            format!(
                "geometric mean of median / Neo4j 5.26 reference median over {} queries: {g:.3} (target <= 0.3)",
                results.len()
            ),
        )?;
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_files() {
        assert_eq!(LdbcQuery::Ic1.name(), "IC1");
        assert_eq!(LdbcQuery::Ic14.file_name(), "interactive-complex-14.cypher");
        assert_eq!(LdbcQuery::Is1.name(), "IS1");
        assert_eq!(LdbcQuery::Is7.file_name(), "interactive-short-7.cypher");
        for q in LdbcQuery::ALL {
            assert!(
                rhizome_cypher_free_check(ldbc_query_text(q)),
                "{}",
                q.name()
            );
        }
    }

    /// Every formulation is a read query with `$` parameters.
    fn rhizome_cypher_free_check(text: &str) -> bool {
        text.contains("RETURN") && text.contains('$')
    }

    #[test]
    fn reference_medians_and_their_geometric_mean() {
        assert_eq!(LdbcQuery::Ic1.neo4j_reference_ms(), 5.6);
        assert_eq!(LdbcQuery::Ic14.neo4j_reference_ms(), 39.9);
        assert_eq!(LdbcQuery::Is7.neo4j_reference_ms(), 0.4);
        let row = |query, ms: f64| LdbcRow {
            query,
            median: Duration::from_secs_f64(ms / 1e3),
            p90: Duration::ZERO,
            max: Duration::ZERO,
            samples: 1,
            mean_rows: 0.0,
        };
        // 0.5 and 0.02: geometric mean 0.1.
        let rows = [row(LdbcQuery::Ic13, 0.15), row(LdbcQuery::Ic12, 4.78)];
        assert!((geometric_mean_ratio(&rows).unwrap() - 0.1).abs() < 1e-9);
        assert!(rows[0].render().contains("Neo4j     0.3 ms  ratio   0.50"));
        assert_eq!(geometric_mean_ratio(&[]), None);
    }

    #[test]
    fn spread_picks_evenly() {
        let v: Vec<Value> = (0..10).map(Value::Int).collect();
        assert_eq!(spread(&v, 2), vec![Value::Int(0), Value::Int(5)]);
        assert_eq!(spread(&v[..1], 3), vec![Value::Int(0)]);
        assert!(spread(&[], 3).is_empty());
    }
}
