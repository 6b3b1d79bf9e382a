//! `rhizome bench roads`: A* route finding on a road network, native vs
//! PostgreSQL (cold per prefetcher, hot) vs Redis (cold, hot) vs a pure
//! PL/pgSQL A* — the Crackle paper's experiment, against our own native A*.
//!
//! Routes are chosen on the native import so A* settles about 400, 800,
//! 1,700, 2,700, 5,300 and 7,800 nodes, as the paper's. Every route's cost
//! must be identical everywhere; a difference fails the benchmark.

use crate::mapping::{Mapping, Prefetch};
use crate::source::{Source, SourceGraph};
use rhizome_common::{Error, ErrorKind, NodeId, Result};
use rhizome_routes::expand::parse_filter;
use rhizome_routes::native::NativeGraph;
use rhizome_routes::{shortest_path, Goal, RouteGraph, SearchOptions, SearchStats};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Settled-node targets of the routes.
    pub targets: Vec<u64>,
    /// Skip the PL/pgSQL baseline for routes settling more nodes than this.
    pub plpgsql_max_settled: u64,
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
        }
    }
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

/// The PL/pgSQL A* of the baseline: open and closed sets as temporary tables.
fn plpgsql_function(schema: &str) -> String {
    format!(
        r#"
CREATE OR REPLACE FUNCTION {schema}.astar(src integer, dst integer) RETURNS double precision AS $f$
DECLARE
  cur integer; cur_g double precision; dlat double precision; dlon double precision;
BEGIN
  SELECT lat, lon INTO dlat, dlon FROM {schema}.junction WHERE id = dst;
  DROP TABLE IF EXISTS pg_temp.open_set;
  DROP TABLE IF EXISTS pg_temp.closed_set;
  CREATE TEMP TABLE open_set (id integer PRIMARY KEY, g double precision, f double precision);
  CREATE INDEX ON open_set (f);
  CREATE TEMP TABLE closed_set (id integer PRIMARY KEY);
  INSERT INTO open_set VALUES (src, 0, 0);
  LOOP
    SELECT o.id, o.g INTO cur, cur_g FROM open_set o ORDER BY o.f LIMIT 1;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF cur = dst THEN RETURN cur_g; END IF;
    DELETE FROM open_set WHERE id = cur;
    INSERT INTO closed_set VALUES (cur);
    INSERT INTO open_set (id, g, f)
      SELECT DISTINCT ON (r.target) r.target, cur_g + r.distance,
             cur_g + r.distance + 0.999999999 * 2 * 6371008.8 * asin(least(1, sqrt(
               sin(radians(j.lat - dlat) / 2) ^ 2
               + cos(radians(dlat)) * cos(radians(j.lat)) * sin(radians(j.lon - dlon) / 2) ^ 2)))
      FROM {schema}.road r JOIN {schema}.junction j ON j.id = r.target
      WHERE r.source = cur AND NOT EXISTS (SELECT 1 FROM closed_set c WHERE c.id = r.target)
      ORDER BY r.target, r.distance
    ON CONFLICT (id) DO UPDATE SET g = EXCLUDED.g, f = EXCLUDED.f WHERE EXCLUDED.g < open_set.g;
  END LOOP;
END $f$ LANGUAGE plpgsql;
"#
    )
}

/// Runs the benchmark, writing its table to `out`.
pub fn run_roads_bench(options: &RoadsBenchOptions, out: &mut dyn Write) -> Result<()> {
    let io = |e: std::io::Error| Error::new(ErrorKind::IoError, format!("writing the report: {e}"));
    let db = rhizome_storage_open(&options.db)?;
    let snapshot = db.snapshot();
    let specs = parse_filter("ROAD>", "relTypesAndDirections")?;
    let native = NativeGraph::new(&snapshot, &specs, "distance", Some(("lat", "lon")));
    let nodes = snapshot_node_count(&snapshot);

    // Routes: from a few starts, the target whose A* settles closest to each goal.
    let mut candidates: Vec<(NodeId, NodeId, u64)> = Vec::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % nodes
    };
    let started = Instant::now();
    while candidates.len() < 3000 && started.elapsed() < Duration::from_secs(20) {
        let (from, to) = (next(), next());
        let (_, settled, _) = run(&native, from, to)?;
        candidates.push((from, to, settled));
    }
    let routes: Vec<(NodeId, NodeId, u64)> = options
        .targets
        .iter()
        .map(|&t| {
            *candidates
                .iter()
                .min_by_key(|c| c.2.abs_diff(t))
                .expect("candidates")
        })
        .collect();

    let pg = options
        .postgres
        .as_ref()
        .map(|p| Source::connect(Mapping::load(p)?))
        .transpose()?;
    let redis = options
        .redis
        .as_ref()
        .map(|p| Source::connect(Mapping::load(p)?))
        .transpose()?;
    let mut baseline = None;
    if let Some(pg) = &options.postgres {
        let mapping = Mapping::load(pg)?;
        let text = plpgsql_function(&options.schema);
        baseline = Some(PlpgsqlBaseline::new(&mapping.connection, &text)?);
    }

    writeln!(out, "rhizome bench roads: A* ('ROAD>', great-circle heuristic) on {} ({} nodes); times in ms, cold = empty cache", options.db.display(), nodes).map_err(io)?;
    writeln!(out, "route  from->to         settled    native  pg-none  (trips)  best-pg-cold (trips)     pg-hot  redis-cold (trips)  redis-hot   plpgsql").map_err(io)?;
    let mut ratios = Vec::new();
    for (from, to, _) in &routes {
        let (cost, settled, _) = run(&native, *from, *to)?;
        let native_ms = (0..5)
            .map(|_| run(&native, *from, *to).map(|r| ms(r.2)))
            .collect::<Result<Vec<_>>>()?;
        let native_ms = median(native_ms);
        let (key_from, key_to) = (*from as i64 + 1, *to as i64 + 1);
        let mut line = format!(
            "{:>5}  {:>7}->{:<7} {:>7} {:>9.3}",
            ratios.len() + 1,
            key_from,
            key_to,
            settled,
            native_ms
        );
        let mut row = Ratios::default();
        if let Some(pg) = &pg {
            let cold = |prefetch: Prefetch| -> Result<(f64, u64)> {
                pg.clear_cache();
                let graph = SourceGraph::new(pg, &specs, "distance")?.with_prefetch(prefetch);
                let before = pg.counters();
                let (c, _, took) = run(&graph, key_from as NodeId, key_to as NodeId)?;
                check(c, cost, &format!("PostgreSQL {prefetch:?}"))?;
                Ok((ms(took), pg.counters().since(&before).round_trips))
            };
            let (none_ms, none_trips) = cold(Prefetch::None)?;
            let mut best = (f64::MAX, 0, Prefetch::None);
            let strategies = (1..=8)
                .map(Prefetch::Lookahead)
                .chain([64, 256, 1024].map(Prefetch::KeyBlock))
                .chain([0.002, 0.005, 0.01].map(Prefetch::BoxBlock));
            for prefetch in strategies {
                let (t, trips) = cold(prefetch)?;
                if t < best.0 {
                    best = (t, trips, prefetch);
                }
            }
            // Hot: the cache holds what the best strategy fetched.
            cold(best.2)?;
            let graph = SourceGraph::new(pg, &specs, "distance")?.with_prefetch(best.2);
            let hot = median(
                (0..5)
                    .map(|_| run(&graph, key_from as NodeId, key_to as NodeId).map(|r| ms(r.2)))
                    .collect::<Result<Vec<_>>>()?,
            );
            line += &format!(
                " {:>8.1} ({:>5}) {:>8.1} ({:>4}) {:<14} {:>7.2}",
                none_ms,
                none_trips,
                best.0,
                best.1,
                format!("{:?}", best.2),
                hot
            );
            row.none = none_ms;
            row.best = best.0;
            row.hot = hot;
        } else {
            line += &format!("{:>56}", "-");
        }
        if let Some(redis) = &redis {
            redis.clear_cache();
            let graph =
                SourceGraph::new(redis, &specs, "distance")?.with_prefetch(Prefetch::Lookahead(4));
            let before = redis.counters();
            let (c, _, took) = run(&graph, key_from as NodeId, key_to as NodeId)?;
            check(c, cost, "Redis")?;
            let trips = redis.counters().since(&before).round_trips;
            let hot = median(
                (0..5)
                    .map(|_| run(&graph, key_from as NodeId, key_to as NodeId).map(|r| ms(r.2)))
                    .collect::<Result<Vec<_>>>()?,
            );
            line += &format!(" {:>10.1} ({:>4}) {:>9.2}", ms(took), trips, hot);
        } else {
            line += &format!("{:>28}", "-");
        }
        match &baseline {
            Some(b) if settled <= options.plpgsql_max_settled => {
                let (c, took) = b.run(&options.schema, key_from, key_to)?;
                check(c, cost, "PL/pgSQL")?;
                line += &format!(" {:>9.1}", ms(took));
                row.plpgsql = Some(ms(took));
            }
            _ => line += &format!(" {:>9}", "-"),
        }
        row.native = native_ms;
        ratios.push(row);
        writeln!(out, "{line}").map_err(io)?;
    }
    if pg.is_some() {
        writeln!(
            out,
            "\nratios per route (ours, then the paper's against Neo4j):"
        )
        .map_err(io)?;
        for (i, r) in ratios.iter().enumerate() {
            let plpgsql = r
                .plpgsql
                .map_or("-".to_string(), |p| format!("{:.0}x", p / r.best));
            writeln!(
                out,
                "  route {}: PL/pgSQL / best cold = {plpgsql} (paper 326/6 = 54x, target >= 50x); cold none / best cold = {:.1}x (target >= 5x); hot / native = {:.1}x (paper 1.3x, target <= 1.5x)",
                i + 1,
                r.none / r.best,
                r.hot / r.native
            )
            .map_err(io)?;
        }
    }
    Ok(())
}

#[derive(Default)]
struct Ratios {
    native: f64,
    none: f64,
    best: f64,
    hot: f64,
    plpgsql: Option<f64>,
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

fn rhizome_storage_open(dir: &std::path::Path) -> Result<rhizome_storage::Database> {
    rhizome_storage::Database::open(dir)
}

fn snapshot_node_count(snapshot: &rhizome_storage::Snapshot) -> u64 {
    use rhizome_storage::GraphRead;
    snapshot.node_bound()
}

/// A connection that runs the PL/pgSQL A*.
struct PlpgsqlBaseline {
    runtime: tokio::runtime::Runtime,
    client: Arc<tokio_postgres::Client>,
}

impl PlpgsqlBaseline {
    fn new(url: &str, function: &str) -> Result<PlpgsqlBaseline> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let client = runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .map_err(|e| crate::fetch::unavailable("plpgsql", e))?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
                .batch_execute(function)
                .await
                .map_err(|e| crate::fetch::unavailable("plpgsql", e))?;
            Ok::<_, Error>(client)
        })?;
        Ok(PlpgsqlBaseline {
            runtime,
            client: Arc::new(client),
        })
    }

    fn run(&self, schema: &str, from: i64, to: i64) -> Result<(f64, Duration)> {
        let client = self.client.clone();
        let sql = format!("SELECT {schema}.astar($1, $2)");
        self.runtime.block_on(async move {
            let started = Instant::now();
            let row = client
                .query_one(&sql, &[&(from as i32), &(to as i32)])
                .await
                .map_err(|e| crate::fetch::unavailable("plpgsql", e))?;
            let cost: Option<f64> = row.get(0);
            Ok((cost.unwrap_or(f64::NAN), started.elapsed()))
        })
    }
}
