//! Measurement 1 of the service benchmark, scopes on: CQ1–CQ6 under each
//! scheduling policy (the planner's choice, `fifo`, `bfs`, `dfs`, and the
//! planner's choice with MAX_SI = 4) against
//! the same queries with scopes off (`CYPHER scheduling=off`: the plain
//! pipelined operators, every `EXISTS` run to its end), paired per
//! parameter person; the best policy against FIFO on CQ6 beside Banyan's
//! 1.8–3.5×; and the loop scopes' instantiation overhead where nothing
//! is cancelled (CQ1 at the largest `$n`: no LIMIT reached, no branch
//! scope) against the 15%.

use super::{line, ms, percentile, ServiceBenchOptions, TimedClient};
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

fn median(mut ratios: Vec<f64>) -> f64 {
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
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
             one client, {} persons, timeout {:.1} s (a timed-out run counts at the timeout, \
             marked *):",
            persons.len(),
            options.timeout.as_secs_f64()
        ),
    )?;
    // CQ6's median t(fifo) / t(best policy) per $n, and CQ1's overhead.
    let mut cq6_best = Vec::new();
    let mut overhead = Vec::new();
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
            let mut off: Vec<Run> = Vec::new();
            let mut on: Vec<Vec<Run>> = vec![Vec::new(); VARIANTS.len()];
            for &p in persons {
                off.push(timed(
                    &mut client,
                    &format!("{OFF}{}", q.text()),
                    p,
                    n,
                    options.timeout,
                )?);
                for (i, (_, prefix)) in VARIANTS.iter().enumerate() {
                    let text = format!("{prefix}{}", q.text());
                    on[i].push(timed(&mut client, &text, p, n, options.timeout)?);
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
                cq6_best.push((n, VARIANTS[best].0, median(ratios)));
            }
            if q == Cq::Cq1 && Some(&n) == options.limits.iter().max() {
                for (i, (name, _)) in VARIANTS.iter().enumerate().skip(1) {
                    let ratios: Vec<f64> = on[i]
                        .iter()
                        .zip(&off)
                        .map(|(s, o)| s.0.as_secs_f64() / o.0.as_secs_f64().max(1e-9))
                        .collect();
                    let timed_out = on[i].iter().chain(&off).any(|r| r.1);
                    overhead.push((*name, median(ratios), timed_out, n));
                }
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
            .map(|(n, best, r)| format!("$n={n} {best} {r:.2}x"))
            .collect();
        let all = cq6_best.iter().all(|(_, _, r)| *r > 1.0);
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
    if overhead.is_empty() {
        line(
            out,
            "[1] scope instantiation overhead: CQ1 not run (--only)".into(),
        )?;
    } else {
        let n = overhead[0].3;
        let parts: Vec<String> = overhead
            .iter()
            .map(|(name, r, t, _)| {
                format!(
                    "{name} {:+.0}%{}",
                    (r - 1.0) * 100.0,
                    if *t { " (timed out)" } else { "" }
                )
            })
            .collect();
        line(
            out,
            format!(
                "[1] scope instantiation overhead where nothing is cancelled (CQ1 at $n={n}: no branch \
                 scope, no LIMIT reached when $n exceeds the answer set), median per-person \
                 t(policy) / t(off) - 1: {} (target <= +15%; Banyan: 25%, 13% with MAX_SI = 1)",
                parts.join(", ")
            ),
        )?;
    }
    Ok(())
}
