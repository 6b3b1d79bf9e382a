//! The server benchmark (`rhizome bench server`): what the Bolt protocol
//! costs over running the same query in-process.
//!
//! It starts `rhizome serve`'s server in this process on a free loopback
//! port over a graph of `nodes` nodes (the chain graph of degree 1, cached
//! like the query suite's graphs) and prints, each figure beside its
//! in-process counterpart and its target:
//! - the round trip of `RETURN 1` from the minimal Bolt client
//!   ([`rhizome_server::client`]; target p50 ≤ 100 µs) and from the
//!   official Python driver;
//! - small-read throughput (a lookup by `id`) with 1, 16 and 64 clients,
//!   each client a thread with its own connection;
//! - the streaming rate of `MATCH (n) RETURN n.id` over all nodes to the
//!   minimal client and to the Python driver.
//!
//! The Python figures need an interpreter with the `neo4j` driver
//! (`--python`, default `target/drivers/venv/bin/python`, which
//! `scripts/suites/30-drivers.sh` and `scripts/bench-server.sh` create);
//! without one they are reported as not measured.

use crate::QueryBenchOptions;
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_engine::{Engine, QueryOptions};
use rhizome_import::ChainOptions;
use rhizome_server::client::{Auth, BoltClient};
use rhizome_server::{AuthMode, Server, ServerConfig, ShutdownHandle};
use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The round-trip target of the minimal client (p50, loopback).
pub const ROUND_TRIP_TARGET: Duration = Duration::from_micros(100);

/// The small read: one node by its `id` property (an index seek).
pub const SMALL_READ: &str = "MATCH (n:LBL_ALL {id: $id}) RETURN n.idMod7";

/// The streamed query.
pub const STREAM: &str = "MATCH (n) RETURN n.id";

/// Settings of the server benchmark.
#[derive(Debug, Clone)]
pub struct ServerBenchOptions {
    /// Where the graph is cached.
    pub data_dir: PathBuf,
    /// Nodes of the graph.
    pub nodes: u64,
    /// Timed `RETURN 1` round trips.
    pub round_trips: usize,
    /// Time spent at each client count of the throughput test.
    pub seconds_per_level: f64,
    /// Client counts of the throughput test.
    pub clients: Vec<usize>,
    /// A Python interpreter with the `neo4j` driver.
    pub python: Option<PathBuf>,
    /// The driver-side script (`scripts/bench/server_driver.py`).
    pub driver_script: PathBuf,
}

impl Default for ServerBenchOptions {
    fn default() -> ServerBenchOptions {
        let root = repository_root();
        ServerBenchOptions {
            data_dir: crate::default_data_dir(),
            nodes: 1_000_000,
            round_trips: 5_000,
            seconds_per_level: 2.0,
            clients: vec![1, 16, 64],
            python: Some(root.join("target/drivers/venv/bin/python")),
            driver_script: root.join("scripts/bench/server_driver.py"),
        }
    }
}

/// The repository root (the crate's directory's grandparent), for the
/// default paths of the driver script and the drivers' virtual environment.
fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A server on a runtime of its own thread; stopped when dropped.
struct Running {
    address: SocketAddr,
    stop: ShutdownHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn start(engine: Engine) -> Result<Running> {
    let config = ServerConfig {
        bolt: "127.0.0.1:0".parse().expect("a socket address"),
        auth: AuthMode::None,
        ..ServerConfig::default()
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => return drop(sender.send(Err(e.to_string()))),
        };
        runtime.block_on(async move {
            match Server::bind(&config, engine).await {
                Ok(server) => {
                    let _ = sender.send(Ok((server.local_addr(), server.shutdown_handle())));
                    server.run().await;
                }
                Err(e) => drop(sender.send(Err(e))),
            }
        });
    });
    let (address, stop) = receiver
        .recv()
        .map_err(|e| Error::internal(e.to_string()))?
        .map_err(|e| Error::new(ErrorKind::IoError, e))?;
    Ok(Running {
        address,
        stop,
        thread: Some(thread),
    })
}

fn client_error(e: rhizome_server::client::ClientError) -> Error {
    Error::new(ErrorKind::IoError, format!("bench client: {e}"))
}

/// Percentile `p` (0..=100) of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p / 100.0).round() as usize;
    sorted[i]
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.2} M/s", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.1} k/s", per_second / 1e3)
    } else {
        format!("{per_second:.0} /s")
    }
}

/// `count` timed runs of `f` after a tenth as many untimed ones; sorted.
fn timed(count: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<Duration>> {
    for _ in 0..count / 10 {
        f()?;
    }
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        f()?;
        samples.push(started.elapsed());
    }
    samples.sort();
    Ok(samples)
}

/// Calls of `work` (given its worker index) per second with `workers`
/// threads for `seconds`.
fn throughput(
    workers: usize,
    seconds: f64,
    work: impl Fn(usize, &AtomicBool) -> Result<u64> + Sync,
) -> Result<f64> {
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let total = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (work, stop, total) = (&work, &stop, &total);
                scope.spawn(move || -> Result<()> {
                    total.fetch_add(work(w, stop)?, Ordering::Relaxed);
                    Ok(())
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::internal("a bench thread panicked")))
        })
    })?;
    Ok(total.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

/// What the Python driver measured.
#[derive(Debug, Default)]
struct DriverFigures {
    p50_us: f64,
    p99_us: f64,
    rows_per_second: f64,
    stream_wall_seconds: f64,
    stream_cpu_seconds: f64,
}

/// Runs the driver script against `address`; `Err` says why there are no
/// figures.
fn python_driver(
    options: &ServerBenchOptions,
    address: SocketAddr,
) -> std::result::Result<DriverFigures, String> {
    let python = options
        .python
        .as_ref()
        .filter(|p| p.exists())
        .ok_or("no Python with the neo4j driver (run scripts/bench-server.sh, which creates target/drivers/venv)")?;
    let output = std::process::Command::new(python)
        .arg(&options.driver_script)
        .arg(format!("bolt://{address}"))
        .arg(options.round_trips.min(2_000).to_string())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !output.status.success() {
        return Err(format!(
            "the driver script failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut figures = DriverFigures::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value: f64 = value
            .trim()
            .parse()
            .map_err(|_| format!("bad line `{line}`"))?;
        match key.trim() {
            "rtt_p50_us" => figures.p50_us = value,
            "rtt_p99_us" => figures.p99_us = value,
            "stream_rows_per_second" => figures.rows_per_second = value,
            "stream_wall_seconds" => figures.stream_wall_seconds = value,
            "stream_cpu_seconds" => figures.stream_cpu_seconds = value,
            _ => {}
        }
    }
    Ok(figures)
}

/// Runs the benchmark and prints its lines to `out`.
pub fn run_server_bench(options: &ServerBenchOptions, out: &mut dyn Write) -> Result<()> {
    let line = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| Error::io("standard output", e))?;
        out.flush().map_err(|e| Error::io("standard output", e))
    };
    let graph = QueryBenchOptions {
        data_dir: options.data_dir.clone(),
        chain: ChainOptions {
            nodes: options.nodes,
            degree: 1,
        },
        ..QueryBenchOptions::default()
    };
    let engine = crate::chain_engine(&graph)?;
    // The small read is an index seek (the cached graph keeps the index).
    match engine.execute(
        "CREATE INDEX server_bench_id FOR (n:LBL_ALL) ON (n.id)",
        BTreeMap::new(),
        &QueryOptions::default(),
    ) {
        Err(e) if e.kind != ErrorKind::SchemaError => return Err(e),
        _ => {}
    }
    let server = start(engine.clone())?;
    let address = server.address.to_string();
    line(
        out,
        format!(
            "server bench: {} nodes, server at bolt://{address} (in this process, auth none)",
            options.nodes
        ),
    )?;
    let no_params = BTreeMap::new();
    let one_thread = QueryOptions {
        threads: Some(1),
        ..QueryOptions::default()
    };

    // Round trip of RETURN 1.
    let mut client = BoltClient::connect(&address, &Auth::None).map_err(client_error)?;
    let bolt = timed(options.round_trips, || {
        client
            .stream("RETURN 1", &no_params, |_| {})
            .map(drop)
            .map_err(client_error)
    })?;
    let local = timed(options.round_trips, || {
        engine
            .execute("RETURN 1", BTreeMap::new(), &one_thread)
            .map(drop)
    })?;
    let p50 = percentile(&bolt, 50.0);
    line(out, format!(
        "RETURN 1 round trip, minimal Bolt client: p50 {} p99 {}   target p50 ≤ {} ({})   in-process: p50 {} p99 {}",
        micros(p50),
        micros(percentile(&bolt, 99.0)),
        micros(ROUND_TRIP_TARGET),
        if p50 <= ROUND_TRIP_TARGET { "met" } else { "missed" },
        micros(percentile(&local, 50.0)),
        micros(percentile(&local, 99.0)),
    ))?;
    let driver = python_driver(options, server.address);
    match &driver {
        Ok(f) => line(out, format!(
            "RETURN 1 round trip, Python driver:      p50 {:.0} µs p99 {:.0} µs   (minimal client p50 {})",
            f.p50_us, f.p99_us, micros(p50)
        ))?,
        Err(why) => line(out, format!("RETURN 1 round trip, Python driver: not measured: {why}"))?,
    }

    // Small reads with 1, 16, 64 clients.
    let ids = crate::random_ids(4096, options.nodes, 7);
    let params_of = |i: usize| BTreeMap::from([("id".to_string(), Value::Int(ids[i % ids.len()]))]);
    for &clients in &options.clients {
        let over_bolt = throughput(clients, options.seconds_per_level, |w, stop| {
            let mut client = BoltClient::connect(&address, &Auth::None).map_err(client_error)?;
            let mut done = 0;
            while !stop.load(Ordering::Relaxed) {
                let params = params_of(w * 7919 + done as usize);
                client
                    .stream(SMALL_READ, &params, |_| {})
                    .map_err(client_error)?;
                done += 1;
            }
            Ok(done)
        })?;
        let in_process = throughput(clients, options.seconds_per_level, |w, stop| {
            let mut done = 0;
            while !stop.load(Ordering::Relaxed) {
                let params = params_of(w * 7919 + done as usize);
                engine.execute(SMALL_READ, params, &one_thread)?;
                done += 1;
            }
            Ok(done)
        })?;
        line(out, format!(
            "small reads, {clients:>2} client(s): Bolt {} queries   in-process {} ({:.0}% of in-process)",
            rate(over_bolt),
            rate(in_process),
            100.0 * over_bolt / in_process.max(1.0),
        ))?;
    }

    // Streaming all node ids.
    let started = Instant::now();
    let mut rows = 0u64;
    client
        .stream(STREAM, &no_params, |_| rows += 1)
        .map_err(client_error)?;
    let bolt_rate = rows as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    let result = engine.execute(STREAM, BTreeMap::new(), &QueryOptions::default())?;
    let local_rate = result.rows.len() as f64 / started.elapsed().as_secs_f64();
    if rows != result.rows.len() as u64 {
        return Err(Error::internal(format!(
            "the stream sent {rows} rows, in-process gave {}",
            result.rows.len()
        )));
    }
    line(
        out,
        format!(
            "stream `{STREAM}` ({rows} rows): minimal Bolt client {} rows   in-process {} rows",
            rate(bolt_rate),
            rate(local_rate)
        ),
    )?;
    match &driver {
        Ok(f) => line(
            out,
            format!(
            "stream `{STREAM}` to the Python driver: {} rows   (minimal client {}, in-process {}; \
             the driver used {:.1} s of CPU in {:.1} s)",
            rate(f.rows_per_second),
            rate(bolt_rate),
            rate(local_rate),
            f.stream_cpu_seconds,
            f.stream_wall_seconds,
        ),
        )?,
        Err(why) => line(
            out,
            format!("stream to the Python driver: not measured: {why}"),
        )?,
    }
    client.goodbye().map_err(client_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile(&samples, 50.0), Duration::from_micros(51));
        assert_eq!(percentile(&samples, 99.0), Duration::from_micros(99));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
        assert_eq!(rate(2_500_000.0), "2.50 M/s");
        assert_eq!(rate(1_500.0), "1.5 k/s");
    }

    #[test]
    fn a_small_server_bench_runs_and_prints_every_figure() {
        let dir = tempfile::tempdir().unwrap();
        let options = ServerBenchOptions {
            data_dir: dir.path().to_path_buf(),
            nodes: 2_000,
            round_trips: 50,
            seconds_per_level: 0.2,
            clients: vec![1, 4],
            python: None,
            ..ServerBenchOptions::default()
        };
        let mut out = Vec::new();
        run_server_bench(&options, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let engine = Engine::open(&dir.path().join("chain-2000-1/db")).unwrap();
        let plan = engine
            .execute(
                &format!("EXPLAIN {SMALL_READ}"),
                BTreeMap::new(),
                &QueryOptions::default(),
            )
            .unwrap()
            .plan
            .unwrap();
        assert!(plan.contains("IndexSeek"), "{plan}");
        for expected in [
            "RETURN 1 round trip, minimal Bolt client: p50 ",
            "target p50 ≤ 100 µs",
            "Python driver: not measured",
            "small reads,  1 client(s): Bolt ",
            "small reads,  4 client(s): Bolt ",
            "stream `MATCH (n) RETURN n.id` (2000 rows): minimal Bolt client ",
        ] {
            assert!(text.contains(expected), "{expected}\n{text}");
        }
    }
}
