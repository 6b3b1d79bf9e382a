//! The six routes of the Crackle paper's sizes: every PostgreSQL
//! prefetcher tried cold, the fastest reported with its round trips, then
//! hot runs; Redis cold with lookahead 4 and hot; the PL/pgSQL A*.

use super::{io, Bench};
use crate::mapping::Prefetch;
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

/// The prefetchers tried cold on PostgreSQL.
fn strategies() -> impl Iterator<Item = Prefetch> {
    (1..=8)
        .map(Prefetch::Lookahead)
        .chain([64, 256, 1024].map(Prefetch::KeyBlock))
        .chain([0.002, 0.005, 0.01].map(Prefetch::BoxBlock))
}

/// Runs the six routes; returns the prefetcher that was fastest cold on
/// PostgreSQL most often (if PostgreSQL was measured).
pub(super) fn run_six(bench: &Bench<'_>, out: &mut dyn Write) -> Result<Option<Prefetch>> {
    let routes: Vec<(NodeId, NodeId, u64)> = bench
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
        .collect();
    writeln!(out, "\nsix routes (native and hot: median of 5; PostgreSQL cold: every prefetcher, the fastest shown)").map_err(io)?;
    writeln!(out, "route  from->to         settled    native  pg-none  (trips)  best-pg-cold (trips)     pg-hot  redis-cold (trips)  redis-hot   plpgsql").map_err(io)?;
    let mut ratios = Vec::new();
    let mut winners: Vec<Prefetch> = Vec::new();
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
            let (none_ms, none_trips) = bench.cold(pg, Prefetch::None, route)?;
            let mut best = (f64::MAX, 0, Prefetch::None);
            for prefetch in strategies() {
                let (t, trips) = bench.cold(pg, prefetch, route)?;
                if t < best.0 {
                    best = (t, trips, prefetch);
                }
            }
            // Hot: the cache holds what the best strategy fetched.
            bench.cold(pg, best.2, route)?;
            let hot = bench.hot(pg, best.2, route, 5)?;
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
            winners.push(best.2);
        } else {
            line += &format!("{:>56}", "-");
        }
        if let Some(redis) = &bench.redis {
            let (cold_ms, trips) = bench.cold(redis, Prefetch::Lookahead(4), route)?;
            let hot = bench.hot(redis, Prefetch::Lookahead(4), route, 5)?;
            line += &format!(" {:>10.1} ({:>4}) {:>9.2}", cold_ms, trips, hot);
        } else {
            line += &format!("{:>28}", "-");
        }
        row.plpgsql = bench.plpgsql(from, to, cost, settled)?;
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
    // The prefetcher that won most often (ties: the one that won first).
    let most = winners.iter().copied().max_by_key(|w| {
        let wins = winners.iter().filter(|x| *x == w).count();
        let first = winners.iter().position(|x| x == w).unwrap_or(0);
        (wins, usize::MAX - first)
    });
    Ok(most)
}
