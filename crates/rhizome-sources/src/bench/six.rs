//! The six routes of the Crackle paper's sizes: every PostgreSQL
//! prefetcher tried cold, the fastest reported with its round trips, then
//! hot runs; Redis cold with lookahead 4 and hot; the PL/pgSQL A*.

use super::{io, Bench};
use crate::counters::CounterSnapshot;
use crate::mapping::{Prefetch, RegionShape};
use crate::postgres::ServerCost;
use crate::source::SourceGraph;
use rhizome_common::{NodeId, Result};
use std::io::Write;

#[derive(Default)]
struct Ratios {
    native: f64,
    none: f64,
    best: f64,
    hot: f64,
    plpgsql: Option<f64>,
}

/// Cold runs per prefetcher and PL/pgSQL runs per route; the median is
/// reported.
const COLD_RUNS: usize = 3;

/// The prefetchers tried cold on PostgreSQL by default.
fn strategies() -> Vec<Prefetch> {
    (1..=8)
        .map(Prefetch::Lookahead)
        .chain([64, 256, 1024].map(Prefetch::KeyBlock))
        .chain([0.002, 0.005, 0.01].map(Prefetch::BoxBlock))
        .chain([1.1, 1.25, 1.35, 1.5].map(Prefetch::ellipse))
        .chain([(1.4, 1.3), (1.6, 1.3)].map(|(stretch, start_weight)| {
            Prefetch::Ellipse(RegionShape {
                stretch,
                start_weight,
            })
        }))
        .collect()
}

/// Where one cold run's time went.
struct ColdCost {
    prefetch: Prefetch,
    ms: f64,
    used: CounterSnapshot,
    /// Nodes A* settles on the route.
    settled: u64,
}

impl ColdCost {
    fn line(&self, route: usize, plpgsql: Option<f64>) -> String {
        let waiting = self.used.waiting.as_secs_f64() * 1e3;
        format!(
            "  route {route}: {:<16} {:>8.1} ms = {:>7.1} waiting + {:>6.1} computing; {:>4} trips ({:.2} ms a trip), {:>6} rows ({:.1} a settled node), {:>7.1} KB{}",
            self.prefetch.to_string(),
            self.ms,
            waiting,
            (self.ms - waiting).max(0.0),
            self.used.round_trips,
            waiting / self.used.round_trips.max(1) as f64,
            self.used.rows,
            self.used.rows as f64 / self.settled.max(1) as f64,
            self.used.bytes as f64 / 1024.0,
            plpgsql.map_or(String::new(), |p| format!("; PL/pgSQL / this = {:.1}x", p / self.ms)),
        )
    }
}

/// One route's line of server costs.
fn server_line(
    route: usize,
    prefetch: Prefetch,
    found: &[ServerCost],
    plpgsql: Option<f64>,
) -> String {
    let mut line = format!("  route {route}: {:<16}", prefetch.to_string());
    for cost in found {
        line += &format!(
            " {} {:.2} ms (planning {:.2}, {} buffers);",
            cost.statement,
            cost.total_ms(),
            cost.planning_ms,
            cost.buffers
        );
    }
    let slowest = found.iter().map(ServerCost::total_ms).fold(0.0, f64::max);
    line += &format!(" slowest {slowest:.2} ms");
    if let Some(p) = plpgsql {
        line += &format!(
            "; PL/pgSQL {p:.1} ms / slowest = {:.1}x",
            p / slowest.max(1e-9)
        );
    }
    line
}

/// Runs the six routes; returns the prefetcher that was fastest cold on
/// PostgreSQL most often (if PostgreSQL was measured).
pub(super) fn run_six(bench: &Bench<'_>, out: &mut dyn Write) -> Result<Option<Prefetch>> {
    let routes: Vec<(NodeId, NodeId, u64)> = match &bench.options.six_routes {
        Some(given) => given
            .iter()
            .map(|&(from, to)| (from.saturating_sub(1), to.saturating_sub(1), 0))
            .collect(),
        None => bench
            .options
            .targets
            .iter()
            .filter_map(|&t| {
                bench
                    .candidates
                    .iter()
                    .min_by_key(|c| c.2.abs_diff(t))
                    .copied()
            })
            .collect(),
    };
    writeln!(out, "\nsix routes (native and hot: median of 5; PostgreSQL cold: every prefetcher, median of {COLD_RUNS} runs each, the fastest shown; PL/pgSQL: median of {COLD_RUNS})").map_err(io)?;
    writeln!(out, "route  from->to         settled    native  pg-none  (trips)  best-pg-cold (trips)     pg-hot  redis-cold (trips)  redis-hot   plpgsql").map_err(io)?;
    let mut ratios: Vec<Ratios> = Vec::new();
    let mut winners: Vec<Prefetch> = Vec::new();
    let mut costs: Vec<(usize, ColdCost)> = Vec::new();
    let mut server: Vec<(usize, Prefetch, Vec<ServerCost>)> = Vec::new();
    for &(from, to, _) in &routes {
        let (cost, settled, _) = super::run(&bench.native, from, to)?;
        let native_ms = bench.native_ms(from, to, cost, 5)?;
        let route = (from, to, cost);
        let mut line = format!(
            "{:>5}  {:>7}->{:<7} {:>7} {:>9.3}",
            ratios.len() + 1,
            from + 1,
            to + 1,
            settled,
            native_ms
        );
        let mut row = Ratios {
            native: native_ms,
            ..Ratios::default()
        };
        if let Some(pg) = &bench.pg {
            let (none_ms, none_used) = bench.cold(pg, Prefetch::None, route)?;
            let none_trips = none_used.round_trips;
            let mut best = (f64::MAX, 0, Prefetch::None);
            let tried = bench.options.prefetchers.clone().unwrap_or_else(strategies);
            for prefetch in tried {
                // The median of COLD_RUNS cold runs, with the counters of
                // that run (a single cold run swings by a third on a
                // loaded machine).
                let mut runs = Vec::with_capacity(COLD_RUNS);
                for _ in 0..COLD_RUNS {
                    runs.push(bench.cold(pg, prefetch, route)?);
                }
                runs.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (t, used) = runs[runs.len() / 2];
                costs.push((
                    ratios.len() + 1,
                    ColdCost {
                        prefetch,
                        ms: t,
                        used,
                        settled,
                    },
                ));
                if t < best.0 {
                    best = (t, used.round_trips, prefetch);
                }
            }
            // What the best region's statements cost the server itself.
            if let Prefetch::Ellipse(shape) = best.2 {
                let graph = SourceGraph::new(pg, &bench.specs, "distance")?;
                if let Some(found) = graph.explain_region(from + 1, to + 1, shape, COLD_RUNS)? {
                    server.push((ratios.len() + 1, best.2, found));
                }
            }
            // Hot: the cache holds what the best strategy fetched.
            bench.cold(pg, best.2, route)?;
            let hot = bench.hot(pg, best.2, route, 5)?;
            line += &format!(
                " {:>8.1} ({:>5}) {:>8.1} ({:>4}) {:<16} {:>5.2}",
                none_ms,
                none_trips,
                best.0,
                best.1,
                best.2.to_string(),
                hot
            );
            row.none = none_ms;
            row.best = best.0;
            row.hot = hot;
            winners.push(best.2);
        } else {
            line += &format!("{:>56}", "-");
        }
        if let Some(redis) = &bench.redis {
            let (cold_ms, used) = bench.cold(redis, Prefetch::Lookahead(4), route)?;
            let trips = used.round_trips;
            let hot = bench.hot(redis, Prefetch::Lookahead(4), route, 5)?;
            line += &format!(" {:>10.1} ({:>4}) {:>9.2}", cold_ms, trips, hot);
        } else {
            line += &format!("{:>28}", "-");
        }
        let mut plpgsql = Vec::with_capacity(COLD_RUNS);
        for _ in 0..COLD_RUNS {
            if let Some(t) = bench.plpgsql(from, to, cost, settled)? {
                plpgsql.push(t);
            }
        }
        row.plpgsql = (!plpgsql.is_empty()).then(|| super::median(plpgsql));
        match row.plpgsql {
            Some(p) => line += &format!(" {p:>9.1}"),
            None => line += &format!(" {:>9}", "-"),
        }
        ratios.push(row);
        writeln!(out, "{line}").map_err(io)?;
    }
    if bench.pg.is_some() {
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
    if !costs.is_empty() {
        writeln!(
            out,
            "\nwhere PostgreSQL's cold time goes (waiting: on the backend, counted by the source; computing: the rest)"
        )
        .map_err(io)?;
        for (route, cost) in &costs {
            let plpgsql = ratios[route - 1].plpgsql;
            writeln!(out, "{}", cost.line(*route, plpgsql)).map_err(io)?;
        }
    }
    if !server.is_empty() {
        writeln!(
            out,
            "\nwhat the best region's statements cost the server (EXPLAIN (ANALYZE, BUFFERS), generic plans, median of {COLD_RUNS} after a warm-up; they run side by side on separate connections, one per statement and slice, so with a core each PL/pgSQL / the slowest one bounds PL/pgSQL / cold for that region)"
        )
        .map_err(io)?;
        for (route, prefetch, found) in &server {
            writeln!(
                out,
                "{}",
                server_line(*route, *prefetch, found, ratios[route - 1].plpgsql)
            )
            .map_err(io)?;
        }
    }
    // The prefetcher that won most often (ties: the one that won first).
    let most = winners.iter().copied().max_by_key(|w| {
        let wins = winners.iter().filter(|x| *x == w).count();
        let first = winners.iter().position(|x| x == w).unwrap_or(0);
        (wins, usize::MAX - first)
    });
    Ok(most)
}
