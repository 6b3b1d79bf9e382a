//! Measurement 1 of the service benchmark, scopes on: CQ1–CQ6 under each
//! scheduling policy (the planner's choice, `fifo`, `bfs`, `dfs`, and the
//! planner's choice with MAX_SI = 4) against
//! the same queries with scopes off (`CYPHER scheduling=off`: the plain
//! pipelined operators, every `EXISTS` run to its end), paired per
//! parameter person; the best policy against FIFO on CQ6 beside Banyan's
//! 1.8–3.5× (the runs at `$n` = 10⁴, the full enumerations, under the
//! longer `full_timeout`); and the loop scopes' instantiation overhead
//! with cancellation off and no `LIMIT` (CQ1 without its `LIMIT`, scopes
//! off and each policy back to back per person) against the 15%.

use super::{line, median, ms, percentile, ServiceBenchOptions, TimedClient, FULL};
use crate::banyan::Cq;
use rhizome_common::Result;
use std::io::Write;
use std::time::Duration;

/// The variants measured: a name and the statement prefix.
const VARIANTS: &[(&str, &str)] = &[
    ("planner", ""),
    ("fifo", "CYPHER scheduling=fifo "),
    ("bfs", "CYPHER scheduling=bfs "),
    ("dfs", "CYPHER scheduling=dfs "),
    // The planner's policies with four instances open per scope instead
    // of one (whether interleaving pays).
    ("max_si=4", "CYPHER max_si=4 "),
];

/// The scopes-off prefix.
pub(super) const OFF: &str = "CYPHER scheduling=off ";

/// One run's latency (the timeout if it timed out) and whether it did.
type Run = (Duration, bool);

fn timed(
    client: &mut TimedClient,
    text: &str,
    person: i64,
    n: i64,
    timeout: Duration,
) -> Result<Run> {
    Ok(match client.run(text, &Cq::params(person, n), timeout)? {
        Some((took, _)) => (took, false),
        None => (timeout, true),
    })
}

/// `min/median/max` of ratios, `x` suffixed.
fn spread(mut ratios: Vec<f64>) -> String {
    if ratios.is_empty() {
        return "-".into();
    }
    ratios.sort_by(f64::total_cmp);
    format!(
        "{:.2}/{:.2}/{:.2}x",
        ratios[0],
        ratios[ratios.len() / 2],
        ratios[ratios.len() - 1]
    )
}

/// Prints measurement 1's scopes-on side.
pub(super) fn scope_speedups(
    options: &ServiceBenchOptions,
    address: &str,
    persons: &[i64],
    out: &mut dyn Write,
) -> Result<()> {
    let mut client = TimedClient::connect(address)?;
    line(
        out,
        format!(
            "[1] scopes on vs off: per-person speedup t(off) / t(policy) as min/median/max, \
             one client, {} persons, timeout {:.1} s ({:.1} s at $n >= {FULL}; a timed-out run \
             counts at the timeout, marked *):",
            persons.len(),
            options.timeout.as_secs_f64(),
            options.full_timeout.as_secs_f64()
        ),
    )?;
    // CQ6's median t(fifo) / t(best policy) per $n.
    let mut cq6_best = Vec::new();
    for &q in &options.queries {
        // One untimed run per variant warms the plan cache.
        if let Some(&p) = persons.first() {
            for (_, prefix) in VARIANTS.iter().chain([("off", OFF)].iter()) {
                client.run(
                    &format!("{prefix}{}", q.text()),
                    &Cq::params(p, 1),
                    options.timeout,
                )?;
            }
        }
        for &n in &options.limits {
            let timeout = options.timeout_at(n);
            let mut off: Vec<Run> = Vec::new();
            let mut on: Vec<Vec<Run>> = vec![Vec::new(); VARIANTS.len()];
            for &p in persons {
                off.push(timed(
                    &mut client,
                    &format!("{OFF}{}", q.text()),
                    p,
                    n,
                    timeout,
                )?);
                for (i, (_, prefix)) in VARIANTS.iter().enumerate() {
                    let text = format!("{prefix}{}", q.text());
                    on[i].push(timed(&mut client, &text, p, n, timeout)?);
                }
            }
            let mark = |runs: &[Run]| if runs.iter().any(|r| r.1) { "*" } else { "" };
            let med = |runs: &[Run]| {
                let mut t: Vec<Duration> = runs.iter().map(|r| r.0).collect();
                t.sort();
                percentile(&t, 50.0)
            };
            let mut text = format!(
                "  {} $n={:<6} off {}{:>9}",
                q.name(),
                n,
                mark(&off),
                ms(med(&off))
            );
            let mut medians = Vec::new();
            for (i, (name, _)) in VARIANTS.iter().enumerate() {
                let ratios: Vec<f64> = off
                    .iter()
                    .zip(&on[i])
                    .map(|(a, b)| a.0.as_secs_f64() / b.0.as_secs_f64().max(1e-9))
                    .collect();
                medians.push(med(&on[i]));
                text.push_str(&format!(
                    " | {name} {}{} {}",
                    mark(&on[i]),
                    ms(med(&on[i])),
                    spread(ratios)
                ));
            }
            line(out, text)?;
            if q == Cq::Cq6 {
                // Best variant (of fifo, bfs, dfs, max_si=4) by median,
                // against fifo, paired.
                let (best, _) = (1..VARIANTS.len())
                    .map(|i| (i, medians[i]))
                    .min_by_key(|&(_, m)| m)
                    .expect("policies");
                let ratios: Vec<f64> = on[1]
                    .iter()
                    .zip(&on[best])
                    .map(|(f, b)| f.0.as_secs_f64() / b.0.as_secs_f64().max(1e-9))
                    .collect();
                let timed_out = on[1].iter().chain(&on[best]).any(|r| r.1);
                cq6_best.push((n, VARIANTS[best].0, median(ratios), timed_out));
            }
        }
    }
    if cq6_best.is_empty() {
        line(
            out,
            "[1] CQ6 best policy vs fifo: CQ6 not run (--only)".into(),
        )?;
    } else {
        let parts: Vec<String> = cq6_best
            .iter()
            .map(|(n, best, r, t)| {
                format!(
                    "$n={n} {best} {r:.2}x{}",
                    if *t { " (timed out)" } else { "" }
                )
            })
            .collect();
        let all = cq6_best.iter().all(|(_, _, r, t)| *r > 1.0 && !t);
        line(
            out,
            format!(
                "[1] CQ6 best policy vs fifo, median per-person t(fifo) / t(best): {} \
                 (Banyan: 1.8-3.5x; best beats fifo at every $n: {})",
                parts.join(", "),
                if all { "yes" } else { "no" }
            ),
        )?;
    }
    if options.queries.contains(&Cq::Cq1) && options.overhead_rounds > 0 {
        overhead(options, &mut client, persons, out)?;
    } else {
        line(
            out,
            "[1] scope instantiation overhead: not measured (CQ1 not in --only, or --overhead-rounds 0)"
                .into(),
        )?;
    }
    Ok(())
}

/// CQ1 without its `LIMIT`: every trail of `*5` is walked and no instance
/// is cancelled, so a scope can only cost.
fn cq1_unlimited() -> String {
    let text = Cq::Cq1.text().trim_end();
    let at = text.rfind("LIMIT").unwrap_or(text.len());
    text[..at].trim_end().to_string()
}

/// The policies of the overhead runs: forced by the hint, with the
/// pruning of a `DISTINCT`'s ends off (`prune=off`: CQ1's `RETURN
/// DISTINCT f.id` would otherwise cancel most prefixes).
const OVERHEAD_VARIANTS: &[(&str, &str)] = &[
    ("dfs", "CYPHER scheduling=dfs prune=off "),
    ("bfs", "CYPHER scheduling=bfs prune=off "),
    ("fifo", "CYPHER scheduling=fifo prune=off "),
    ("dfs max_si=4", "CYPHER scheduling=dfs max_si=4 prune=off "),
];

/// Measurement 1's instantiation overhead with cancellation off and no
/// `LIMIT`: per person and round, scopes off, each policy, scopes off
/// again, back to back; each policy's time over the mean of the two off
/// runs around it; the median over persons and rounds.
fn overhead(
    options: &ServiceBenchOptions,
    client: &mut TimedClient,
    persons: &[i64],
    out: &mut dyn Write,
) -> Result<()> {
    let text = cq1_unlimited();
    let timeout = options.full_timeout;
    let run = |client: &mut TimedClient, prefix: &str, p: i64| -> Result<Run> {
        timed(client, &format!("{prefix}{text}"), p, 0, timeout)
    };
    if let Some(&p) = persons.first() {
        // Warm the plan cache (and the pages) once per variant.
        run(client, OFF, p)?;
        for (_, prefix) in OVERHEAD_VARIANTS {
            run(client, prefix, p)?;
        }
    }
    let mut ratios = vec![Vec::new(); OVERHEAD_VARIANTS.len()];
    let mut offs = Vec::new();
    let mut timed_out = false;
    for _ in 0..options.overhead_rounds {
        for &p in persons {
            let before = run(client, OFF, p)?;
            let mut on = Vec::new();
            for (_, prefix) in OVERHEAD_VARIANTS {
                on.push(run(client, prefix, p)?);
            }
            let after = run(client, OFF, p)?;
            timed_out |= before.1 || after.1 || on.iter().any(|r| r.1);
            let off = (before.0 + after.0) / 2;
            offs.push(before.0);
            offs.push(after.0);
            for (i, r) in on.iter().enumerate() {
                ratios[i].push(r.0.as_secs_f64() / off.as_secs_f64().max(1e-9));
            }
        }
    }
    offs.sort();
    let parts: Vec<String> = OVERHEAD_VARIANTS
        .iter()
        .zip(&ratios)
        .map(|((name, _), r)| format!("{name} {:+.1}%", (median(r.clone()) - 1.0) * 100.0))
        .collect();
    let met = ratios.iter().take(3).all(|r| median(r.clone()) <= 1.15) && !timed_out;
    line(
        out,
        format!(
            "[1] scope instantiation overhead, cancellation off and no LIMIT (CQ1 without LIMIT: \
             every trail walked, no instance cancelled), {} rounds x {} persons of off, each \
             policy, off back to back; median t(policy) / t(off around it) - 1: {} \
             (off median {}{}; target <= +15% for fifo, bfs and dfs: {}; Banyan: 25%, 13% with \
             MAX_SI = 1)",
            options.overhead_rounds,
            persons.len(),
            parts.join(", "),
            ms(percentile(&offs, 50.0)),
            if timed_out {
                ", some runs timed out"
            } else {
                ""
            },
            if met { "met" } else { "not met" }
        ),
    )?;
    Ok(())
}
