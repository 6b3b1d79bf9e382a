//! Measurement 3 of the service benchmark: isolation across tenants.
//!
//! Two users are created through the administrator's connection (no
//! `[scheduling]` table: each is a tenant of its own with share 1). Tenant
//! B runs one stream of the heavy query alone, then again while tenant A
//! floods the server with [`FLOOD`] clients running the same query; B
//! should keep at least [`TARGET`] of its throughput alone (half the
//! machine, less noise). Both figures come from the same run.

use super::{client_error, line, ms, percentile, Workload, ADMIN_PASSWORD};
use rhizome_common::{Error, Result};
use rhizome_server::client::{Auth, BoltClient};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tenant A's concurrent clients.
pub const FLOOD: usize = 8;

/// The share of its solo throughput tenant B must keep under A's flood.
pub const TARGET: f64 = 0.40;

/// The two tenants' users (created if missing; reader role).
const USERS: [&str; 2] = ["bench_tenant_a", "bench_tenant_b"];

fn user(name: &str) -> Auth {
    Auth::Basic {
        user: name.into(),
        password: ADMIN_PASSWORD.into(),
    }
}

/// Creates the tenants' users through the administrator's connection.
fn create_users(address: &str) -> Result<()> {
    let mut admin = BoltClient::connect(address, &user("neo4j")).map_err(client_error)?;
    for name in USERS {
        for statement in [
            format!(
                "CREATE USER {name} IF NOT EXISTS SET PASSWORD '{ADMIN_PASSWORD}' CHANGE NOT REQUIRED"
            ),
            format!("GRANT ROLE reader TO {name}"),
        ] {
            admin
                .stream(&statement, &BTreeMap::new(), |_| {})
                .map_err(client_error)?;
        }
    }
    Ok(())
}

/// `clients` connections of `name`, each running `work` in a loop until
/// `stop`; their latencies of the queries that ended before it.
fn stream(
    address: &str,
    name: &str,
    clients: usize,
    work: &Workload,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<std::thread::JoinHandle<Result<Vec<Duration>>>>> {
    let mut threads = Vec::new();
    for c in 0..clients {
        let mut client = BoltClient::connect(address, &user(name)).map_err(client_error)?;
        let (stop, work) = (stop.clone(), work.clone());
        threads.push(std::thread::spawn(move || -> Result<Vec<Duration>> {
            let mut times = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let set = &work.sets[(c + times.len()) % work.sets.len()];
                let begun = Instant::now();
                client
                    .stream(&work.text, set, |_| {})
                    .map_err(client_error)?;
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                times.push(begun.elapsed());
            }
            Ok(times)
        }));
    }
    Ok(threads)
}

fn joined(threads: Vec<std::thread::JoinHandle<Result<Vec<Duration>>>>) -> Result<Vec<Duration>> {
    let mut times = Vec::new();
    for t in threads {
        times.extend(
            t.join()
                .unwrap_or_else(|_| Err(Error::internal("a tenant client panicked")))?,
        );
    }
    times.sort();
    Ok(times)
}

/// Tenant B's queries per second over `window` (one client), with tenant A
/// running `flood` clients meanwhile; B's latencies and A's query count.
fn phase(
    address: &str,
    work: &Workload,
    flood: usize,
    window: Duration,
) -> Result<(f64, Vec<Duration>, usize)> {
    let stop = Arc::new(AtomicBool::new(false));
    let a = stream(address, USERS[0], flood, work, &stop)?;
    if flood > 0 {
        // Every flooding client has its first query running.
        std::thread::sleep(Duration::from_millis(50));
    }
    let b = stream(address, USERS[1], 1, work, &stop)?;
    let begun = Instant::now();
    std::thread::sleep(window);
    stop.store(true, Ordering::Relaxed);
    let elapsed = begun.elapsed().as_secs_f64();
    let b_times = joined(b)?;
    let a_count = joined(a)?.len();
    Ok((b_times.len() as f64 / elapsed, b_times, a_count))
}

/// Measurement 3: tenant B's throughput alone and under tenant A's flood.
pub(super) fn tenants(
    address: &str,
    work: &Workload,
    window: Duration,
    out: &mut dyn Write,
) -> Result<()> {
    create_users(address)?;
    line(
        out,
        format!(
            "[3] isolation across tenants: users {} (tenant A) and {} (tenant B), share 1 each; {} by B's one client for {:.1} s, alone and while A's {FLOOD} clients run it",
            USERS[0],
            USERS[1],
            work.name,
            window.as_secs_f64()
        ),
    )?;
    let (alone, alone_times, _) = phase(address, work, 0, window)?;
    let (loaded, loaded_times, a_count) = phase(address, work, FLOOD, window)?;
    let keeps = if alone > 0.0 { loaded / alone } else { 0.0 };
    line(
        out,
        format!(
            "  B alone        {alone:>8.1} queries/s  latency p50 {:>9} p95 {:>9}",
            ms(percentile(&alone_times, 50.0)),
            ms(percentile(&alone_times, 95.0)),
        ),
    )?;
    line(
        out,
        format!(
            "  B under flood  {loaded:>8.1} queries/s  latency p50 {:>9} p95 {:>9}  (A completed {a_count} queries, {:.1}/s)",
            ms(percentile(&loaded_times, 50.0)),
            ms(percentile(&loaded_times, 95.0)),
            a_count as f64 / window.as_secs_f64(),
        ),
    )?;
    line(
        out,
        format!(
            "  B keeps {:.0}% of its solo throughput (target >= {:.0}%): {}",
            keeps * 100.0,
            TARGET * 100.0,
            if keeps >= TARGET { "met" } else { "MISSED" }
        ),
    )
}
