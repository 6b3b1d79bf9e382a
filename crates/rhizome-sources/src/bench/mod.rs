//! `rhizome bench roads`: A* route finding on a road network, native vs
//! PostgreSQL (cold per prefetcher, hot) vs Redis (cold, hot) vs a pure
//! PL/pgSQL A* — the Crackle paper's experiment, against our own native A*.
//!
//! Two parts: [`six`] — six routes chosen on the native import so A*
//! settles about 400, 800, 1,700, 2,700, 5,300 and 7,800 nodes, as the
//! paper's, with every prefetcher tried cold; [`twenty`] — twenty routes,
//! each repeated, with per-route and total times and the ratios to native
//! beside the paper's 326× / 6× / 1.3×. Every route's cost must be
//! identical everywhere; a difference fails the benchmark.

mod hot;
mod plpgsql;
mod six;
mod twenty;

use crate::counters::CounterSnapshot;
use crate::mapping::{Mapping, Prefetch};
use crate::source::{Source, SourceGraph};
use plpgsql::PlpgsqlBaseline;
use rhizome_common::{Error, ErrorKind, NodeId, Result};
use rhizome_routes::expand::{parse_filter, ExpandSpec};
use rhizome_routes::native::NativeGraph;
use rhizome_routes::{shortest_path, Goal, RouteGraph, SearchOptions, SearchStats};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which parts of the benchmark run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchParts {
    /// The six routes with every prefetcher (see [`six`]).
    Six,
    /// The twenty repeated routes (see [`twenty`]).
    Twenty,
    /// Both.
    All,
    /// Only the repeated routes' hot runs against native, in turn (see [`hot`]).
    Hot,
}

/// What `rhizome bench roads` measures.
#[derive(Debug, Clone)]
pub struct RoadsBenchOptions {
    /// The native database of the network (`rhizome import-dimacs`).
    pub db: PathBuf,
    /// The PostgreSQL mapping, if PostgreSQL is measured.
    pub postgres: Option<PathBuf>,
    /// The Redis mapping, if Redis is measured.
    pub redis: Option<PathBuf>,
    /// The PostgreSQL schema the PL/pgSQL baseline reads (`junction`, `road`).
    pub schema: String,
    /// Settled-node targets of the six routes.
    pub targets: Vec<u64>,
    /// Skip the PL/pgSQL baseline for routes settling more nodes than this.
    pub plpgsql_max_settled: u64,
    /// Which parts run.
    pub parts: BenchParts,
    /// Routes of the repeated part.
    pub twenty: usize,
    /// Runs per route and system in the repeated part (medians are
    /// reported; cold runs are repeated `(repeats + 1) / 2` times).
    pub repeats: usize,
    /// The prefetchers the six routes try cold on PostgreSQL (`None`:
    /// every one of [`six`]'s list); no prefetch is always measured too.
    pub prefetchers: Option<Vec<Prefetch>>,
    /// The six routes' ends as printed (`from->to`, node numbers from 1),
    /// instead of drawing routes near [`targets`](Self::targets): the same
    /// routes in every run, whatever the load (the draw stops after 20 s).
    pub six_routes: Option<Vec<(u64, u64)>>,
}

impl Default for RoadsBenchOptions {
    fn default() -> Self {
        RoadsBenchOptions {
            db: PathBuf::new(),
            postgres: None,
            redis: None,
            schema: "luxembourg".into(),
            targets: vec![400, 800, 1_700, 2_700, 5_300, 7_800],
            plpgsql_max_settled: 8_000,
            parts: BenchParts::All,
            twenty: 20,
            repeats: 5,
            prefetchers: None,
            six_routes: None,
        }
    }
}

/// What both parts share: the native graph, the sources, the baseline and
/// the candidate routes.
struct Bench<'a> {
    options: &'a RoadsBenchOptions,
    specs: Vec<ExpandSpec>,
    native: NativeGraph<'a>,
    pg: Option<Arc<Source>>,
    redis: Option<Arc<Source>>,
    baseline: Option<PlpgsqlBaseline>,
    /// Random (from, to, settled) pairs measured on the native graph, in
    /// the order they were drawn.
    candidates: Vec<(NodeId, NodeId, u64)>,
}

fn a_star() -> SearchOptions {
    SearchOptions {
        goal: Goal::AStar,
        default_weight: None,
        weight_name: "distance".into(),
    }
}

/// One run: cost, settled nodes, time.
fn run(graph: &dyn RouteGraph, from: NodeId, to: NodeId) -> Result<(f64, u64, Duration)> {
    let mut stats = SearchStats::default();
    let started = Instant::now();
    let route = shortest_path(graph, from, to, &a_star(), &mut stats)?;
    let took = started.elapsed();
    let cost = route.map(|r| r.cost).ok_or_else(|| {
        Error::new(
            ErrorKind::ArgumentError,
            format!("no route from {from} to {to}"),
        )
    })?;
    Ok((cost, stats.settled, took))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn check(got: f64, want: f64, what: &str) -> Result<()> {
    if got != want {
        return Err(Error::new(
            ErrorKind::Internal,
            format!("{what} found a route of {got} m, native {want} m"),
        ));
    }
    Ok(())
}

fn io(e: std::io::Error) -> Error {
    Error::new(ErrorKind::IoError, format!("writing the report: {e}"))
}

impl Bench<'_> {
    /// Median time in ms of `times` runs of the native A* (its cost checked).
    fn native_ms(&self, from: NodeId, to: NodeId, cost: f64, times: usize) -> Result<f64> {
        let mut v = Vec::with_capacity(times);
        for _ in 0..times {
            let (c, _, took) = run(&self.native, from, to)?;
            check(c, cost, "native")?;
            v.push(ms(took));
        }
        Ok(median(v))
    }

    /// One cold run over `source` with `prefetch` (the cache emptied
    /// first): ms and what it cost the source (round trips, rows, bytes,
    /// time waiting). `from`, `to` are native ids.
    fn cold(
        &self,
        source: &Source,
        prefetch: Prefetch,
        (from, to, cost): (NodeId, NodeId, f64),
    ) -> Result<(f64, CounterSnapshot)> {
        source.clear_cache();
        let graph = SourceGraph::new(source, &self.specs, "distance")?.with_prefetch(prefetch);
        let before = source.counters();
        let (c, _, took) = run(&graph, from + 1, to + 1)?;
        check(c, cost, &format!("{} {prefetch}", source.describe()))?;
        Ok((ms(took), source.counters().since(&before)))
    }

    /// Median ms of `times` hot runs over `source` (after one run that
    /// fills what the cold run left out).
    fn hot(
        &self,
        source: &Source,
        prefetch: Prefetch,
        (from, to, cost): (NodeId, NodeId, f64),
        times: usize,
    ) -> Result<f64> {
        let graph = SourceGraph::new(source, &self.specs, "distance")?.with_prefetch(prefetch);
        run(&graph, from + 1, to + 1)?;
        let mut v = Vec::with_capacity(times);
        for _ in 0..times {
            let (c, _, took) = run(&graph, from + 1, to + 1)?;
            check(c, cost, &format!("{} hot", source.describe()))?;
            v.push(ms(took));
        }
        Ok(median(v))
    }

    /// The PL/pgSQL A*'s time in ms, if it runs for a route settling
    /// `settled` nodes.
    fn plpgsql(&self, from: NodeId, to: NodeId, cost: f64, settled: u64) -> Result<Option<f64>> {
        match &self.baseline {
            Some(b) if settled <= self.options.plpgsql_max_settled => {
                let (c, took) = b.run(&self.options.schema, from as i64 + 1, to as i64 + 1)?;
                check(c, cost, "PL/pgSQL")?;
                Ok(Some(ms(took)))
            }
            _ => Ok(None),
        }
    }
}

/// Runs the benchmark, writing its tables to `out`.
pub fn run_roads_bench(options: &RoadsBenchOptions, out: &mut dyn Write) -> Result<()> {
    let db = rhizome_storage::Database::open(&options.db)?;
    let snapshot = db.snapshot();
    let specs = parse_filter("ROAD>", "relTypesAndDirections")?;
    let native = NativeGraph::new(&snapshot, &specs, "distance", Some(("lat", "lon")));
    let nodes = rhizome_storage::GraphRead::node_bound(&snapshot);

    // Random pairs, measured on the native graph; each part picks its routes.
    let mut candidates: Vec<(NodeId, NodeId, u64)> = Vec::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % nodes
    };
    let started = Instant::now();
    let drawn = options.six_routes.is_none() || options.parts != BenchParts::Six;
    while drawn && candidates.len() < 3000 && started.elapsed() < Duration::from_secs(20) {
        let (from, to) = (next(), next());
        let (_, settled, _) = run(&native, from, to)?;
        candidates.push((from, to, settled));
    }

    let connect = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| Source::connect(Mapping::load(p)?))
            .transpose()
    };
    let baseline = match &options.postgres {
        Some(pg) if options.parts != BenchParts::Hot => {
            let mapping = Mapping::load(pg)?;
            let text = plpgsql::plpgsql_function(&options.schema);
            Some(PlpgsqlBaseline::new(&mapping.connection, &text)?)
        }
        _ => None,
    };
    let bench = Bench {
        options,
        specs,
        native,
        pg: connect(&options.postgres)?,
        redis: connect(&options.redis)?,
        baseline,
        candidates,
    };
    writeln!(
        out,
        "rhizome bench roads: A* ('ROAD>', great-circle heuristic) on {} ({} nodes); times in ms, cold = empty cache",
        options.db.display(),
        nodes
    )
    .map_err(io)?;
    if options.parts == BenchParts::Hot {
        return hot::run_hot(&bench, out);
    }
    let mut best = None;
    if options.parts != BenchParts::Twenty {
        best = six::run_six(&bench, out)?;
    }
    if options.parts != BenchParts::Six {
        twenty::run_twenty(&bench, best.unwrap_or(Prefetch::BoxBlock(0.01)), out)?;
    }
    Ok(())
}

/// Parses `--six-routes`: `from->to` pairs (node numbers from 1, as the
/// six routes' table prints them), comma-separated.
pub fn parse_six_routes(text: &str) -> Result<Vec<(u64, u64)>> {
    text.split(',')
        .map(|pair| {
            let bad = || {
                Error::new(
                    ErrorKind::ArgumentError,
                    format!("`{pair}` is not a route: expected FROM->TO, node numbers from 1"),
                )
            };
            let (from, to) = pair.trim().split_once("->").ok_or_else(bad)?;
            let number = |t: &str| t.trim().parse::<u64>().ok().filter(|&n| n >= 1);
            Ok((number(from).ok_or_else(bad)?, number(to).ok_or_else(bad)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn six_routes_parse() {
        assert_eq!(
            super::parse_six_routes("22221->75884, 5->6").unwrap(),
            vec![(22221, 75884), (5, 6)]
        );
        for bad in ["", "1-2", "0->4", "1->x", "1->2,"] {
            assert!(super::parse_six_routes(bad).is_err(), "{bad}");
        }
    }
}
