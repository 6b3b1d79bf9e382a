//! Hot routes only: the repeated routes' hot runs over PostgreSQL and
//! Redis against native, the three run in turn (native, PostgreSQL,
//! Redis, then the next repeat) so a busy machine disturbs all of them
//! alike, with medians and hot / native per route. Each source's cache
//! is filled first by one cold run with its prefetcher (PostgreSQL: the
//! ±0.01° box; Redis: lookahead 4), as in the twenty-route part.

use super::{check, io, median, ms, run, Bench};
use crate::mapping::Prefetch;
use crate::source::{Source, SourceGraph};
use rhizome_common::{NodeId, Result};
use std::io::Write;

/// The settled-node range the routes are drawn from.
const SETTLED: std::ops::RangeInclusive<u64> = 300..=8_000;

/// Runs the hot-only part.
pub(super) fn run_hot(bench: &Bench<'_>, out: &mut dyn Write) -> Result<()> {
    let options = bench.options;
    let mut routes: Vec<(NodeId, NodeId, u64)> = bench
        .candidates
        .iter()
        .filter(|c| SETTLED.contains(&c.2))
        .take(options.twenty)
        .copied()
        .collect();
    routes.sort_by_key(|r| r.2);
    let repeats = options.repeats.max(1);
    writeln!(
        out,
        "\nhot routes: {} routes settling {}..{} nodes, native / PostgreSQL hot / Redis hot in turn, medians of {repeats}",
        routes.len(),
        SETTLED.start(),
        SETTLED.end()
    )
    .map_err(io)?;
    writeln!(
        out,
        "route  from->to         settled    native    pg-hot  redis-hot   pg/native  redis/native"
    )
    .map_err(io)?;
    let sources: Vec<(&Source, Prefetch)> = [
        bench.pg.as_deref().map(|s| (s, Prefetch::BoxBlock(0.01))),
        bench.redis.as_deref().map(|s| (s, Prefetch::Lookahead(4))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut ratios: Vec<(u64, Vec<f64>)> = Vec::new();
    for (i, &(from, to, _)) in routes.iter().enumerate() {
        let (cost, settled, _) = run(&bench.native, from, to)?;
        let mut graphs = Vec::new();
        for &(source, prefetch) in &sources {
            bench.cold(source, prefetch, (from, to, cost))?;
            let graph = SourceGraph::new(source, &bench.specs, "distance")?.with_prefetch(prefetch);
            // One run derives what the cold run left out (located lists).
            run(&graph, from + 1, to + 1)?;
            graphs.push(graph);
        }
        let mut native = Vec::with_capacity(repeats);
        let mut hot: Vec<Vec<f64>> = vec![Vec::with_capacity(repeats); graphs.len()];
        for _ in 0..repeats {
            let (c, _, took) = run(&bench.native, from, to)?;
            check(c, cost, "native")?;
            native.push(ms(took));
            for (g, graph) in graphs.iter().enumerate() {
                let (c, _, took) = run(graph, from + 1, to + 1)?;
                check(c, cost, "hot")?;
                hot[g].push(ms(took));
            }
        }
        let native = median(native);
        let hot: Vec<f64> = hot.into_iter().map(median).collect();
        let per: Vec<f64> = hot.iter().map(|h| h / native).collect();
        let cell = |v: &[f64], g: usize, d: usize| {
            v.get(g).map_or("-".to_string(), |x| format!("{x:.d$}"))
        };
        writeln!(
            out,
            "{:>5}  {:>7}->{:<7} {:>7} {:>9.3} {:>9} {:>10} {:>11} {:>13}",
            i + 1,
            from + 1,
            to + 1,
            settled,
            native,
            cell(&hot, 0, 3),
            cell(&hot, 1, 3),
            cell(&per, 0, 2),
            cell(&per, 1, 2),
        )
        .map_err(io)?;
        ratios.push((settled, per));
    }
    for (name, g) in [("PostgreSQL", 0), ("Redis", 1)] {
        let over: Vec<f64> = ratios
            .iter()
            .filter(|r| r.0 > 4_000)
            .filter_map(|r| r.1.get(g).copied())
            .collect();
        if let (Some(lo), Some(hi)) = (
            over.iter().copied().reduce(f64::min),
            over.iter().copied().reduce(f64::max),
        ) {
            writeln!(
                out,
                "{name} hot / native above 4,000 settled nodes: {lo:.2}x..{hi:.2}x, median {:.2}x (target <= 1.5x)",
                median(over.clone())
            )
            .map_err(io)?;
        }
    }
    Ok(())
}
