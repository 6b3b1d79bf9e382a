//! The service benchmark (`rhizome bench service`, issue 22): Rhizome as a
//! graph query *service*, measured through `rhizome serve` by a load
//! client written for the benchmark (threads, each with its own
//! connection of the minimal Bolt client [`rhizome_server::client`]), so
//! the client's own CPU does not decide the result.
//!
//! It imports the LDBC data set (cached like `rhizome bench ldbc`), picks
//! the parameters ([`crate::banyan::banyan_persons`], [`ldbc_parameters`]),
//! closes the database and starts `rhizome serve` on it as a child process
//! on a free loopback port, with users and passwords (the administrator
//! `neo4j` and, for measurement 3, two tenants' users). Then it prints, every figure beside its
//! reference or limit from the same run:
//! 1. the latency of CQ1–CQ6 per `$n` over the parameter persons with
//!    scopes off (`CYPHER scheduling=off`), then scopes on under each
//!    policy against it ([`scopes`]);
//! 2. isolation across queries: a foreground query's latency distribution
//!    idle and while W = 1, 2, 4 background clients run a heavy query,
//!    against 1.25 × idle p95 + 2 ms (W = 1) and 1.5 × idle p95 + 2 ms;
//! 3. isolation across tenants: two users (tenants of share 1), one
//!    flooding the server, the other's throughput alone and under the
//!    flood against 40% ([`tenants`]);
//! 4. one query with a fixed parameter at W = 1 … 32 concurrent clients,
//!    the client counts taking turns in short slices: throughput and
//!    latency per W, the drop from the peak against 10%.
//!
//! A run of a CQ longer than the timeout is interrupted (Bolt RESET) and
//! counted as timed out; its latency is then a lower bound (`>`).

mod scopes;

use crate::banyan::{banyan_persons, Cq};
use crate::ldbc::{
    ldbc_engine, ldbc_parameters, ldbc_query_text, LdbcBenchOptions, LdbcQuery, Params,
};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_import::LdbcLayout;
use rhizome_server::client::{open, Auth, BoltClient, BoltUri, ClientError, ConnectOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

mod tenants;

/// The password of the benchmark's users (the administrator `neo4j`, set
/// when the cached database has no users yet, and the tenants' users).
const ADMIN_PASSWORD: &str = "rhizome-bench";

/// How the benchmark's own clients log in: as the administrator.
fn admin() -> Auth {
    Auth::Basic {
        user: "neo4j".into(),
        password: ADMIN_PASSWORD.into(),
    }
}

/// Settings of the service benchmark.
#[derive(Debug, Clone)]
pub struct ServiceBenchOptions {
    /// The LDBC data set directory.
    pub dataset: PathBuf,
    /// Its layout.
    pub layout: LdbcLayout,
    /// Where the imported database is cached.
    pub data_dir: PathBuf,
    /// The `rhizome` executable that serves the database.
    pub binary: PathBuf,
    /// Workers one query may use on the server (`--threads`; default all).
    pub threads: Option<usize>,
    /// The server's `--worker-nice` (default: the server's own default).
    pub worker_nice: Option<i32>,
    /// Parameter persons of each CQ (the first of the ten the rule picks).
    pub persons: usize,
    /// The values of `$n`.
    pub limits: Vec<i64>,
    /// Queries of the latency table (measurement 1).
    pub queries: Vec<Cq>,
    /// A CQ run longer than this is interrupted and counted as timed out.
    pub timeout: Duration,
    /// The same for runs at `$n` >= 10⁴ (more rows than any answer set:
    /// the full enumerations, seconds each) and for the overhead runs.
    pub full_timeout: Duration,
    /// Rounds of measurement 1's interleaved overhead runs (CQ1 without
    /// `LIMIT`, scopes off and each policy) per person; 0 skips them.
    pub overhead_rounds: usize,
    /// The foreground query of measurement 2 (`IC2`, `IS3`, `CQ3`, …).
    pub foreground: String,
    /// Foreground submissions per background level.
    pub foreground_runs: usize,
    /// The heavy background query of measurement 2, run at `$n` = 10⁴ if a CQ.
    pub background: String,
    /// Background client counts of measurement 2.
    pub background_clients: Vec<usize>,
    /// The query of measurement 4, with its first parameter set.
    pub throughput_query: String,
    /// Client counts of measurement 4.
    pub concurrency: Vec<usize>,
    /// Seconds counted at each client count of measurement 4, over all cycles.
    pub seconds_per_level: f64,
    /// Cycles of measurement 4, each over every client count (ascending in
    /// odd cycles, descending in even ones) with a slice of the seconds, so
    /// that a drift of the machine's speed favours no count.
    pub concurrency_cycles: usize,
}

impl ServiceBenchOptions {
    /// The full run on `dataset` (SF0.1 layout), served by `binary`.
    pub fn new(dataset: PathBuf, binary: PathBuf) -> ServiceBenchOptions {
        ServiceBenchOptions {
            dataset,
            layout: LdbcLayout::Sf01,
            data_dir: crate::default_data_dir(),
            binary,
            threads: None,
            worker_nice: None,
            persons: crate::banyan::PERSONS,
            limits: crate::banyan::LIMITS.to_vec(),
            queries: Cq::ALL.to_vec(),
            timeout: Duration::from_secs(10),
            full_timeout: Duration::from_secs(60),
            overhead_rounds: 2,
            foreground: "IC2".into(),
            foreground_runs: 200,
            background: "CQ4".into(),
            background_clients: vec![1, 2, 4],
            throughput_query: "CQ3".into(),
            concurrency: vec![1, 2, 4, 8, 16, 32],
            seconds_per_level: 4.0,
            concurrency_cycles: 8,
        }
    }

    /// A short run: three persons, timeout 1 s (20 s at `$n` = 10⁴), one
    /// overhead round, 50 foreground runs, one second per client count
    /// in two cycles.
    pub fn quick(mut self) -> ServiceBenchOptions {
        self.persons = 3;
        self.timeout = Duration::from_secs(1);
        self.full_timeout = Duration::from_secs(20);
        self.overhead_rounds = 1;
        self.foreground_runs = 50;
        self.seconds_per_level = 1.0;
        self.concurrency_cycles = 2;
        self
    }

    /// The timeout of a CQ run at `$n` = `n` ([`ServiceBenchOptions::full_timeout`]
    /// from 10⁴ rows on).
    pub fn timeout_at(&self, n: i64) -> Duration {
        if n >= FULL {
            self.full_timeout
        } else {
            self.timeout
        }
    }
}

/// From this `$n` on a CQ's run is the full enumeration (no answer set
/// of the workload is larger).
pub const FULL: i64 = 10_000;

/// A query of the benchmark with its parameter sets.
#[derive(Debug, Clone)]
struct Workload {
    name: String,
    text: String,
    sets: Vec<Params>,
}

/// `CQ1` … `CQ6` (at `$n` = `n`, one set per person) or an LDBC read
/// (`IC1` … `IS7`, its own parameter sets).
fn workload(
    name: &str,
    n: i64,
    persons: &[i64],
    ldbc: &std::collections::BTreeMap<LdbcQuery, Vec<Params>>,
) -> Result<Workload> {
    if let Ok(q) = Cq::parse(name) {
        return Ok(Workload {
            name: format!("{} $n={n}", q.name()),
            text: q.text().to_string(),
            sets: persons.iter().map(|&p| Cq::params(p, n)).collect(),
        });
    }
    let q = LdbcQuery::ALL
        .into_iter()
        .find(|q| q.name().eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::ArgumentError,
                format!("unknown query `{name}`: expected CQ1 … CQ6, IC1 … IC14 or IS1 … IS7"),
            )
        })?;
    Ok(Workload {
        name: q.name(),
        text: ldbc_query_text(q).to_string(),
        sets: ldbc.get(&q).cloned().unwrap_or_default(),
    })
}

/// `rhizome serve` as a child process; killed when dropped.
struct Served {
    child: Child,
    address: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `options.binary serve db` (with the options' `--threads` and
/// `--worker-nice`) on a free loopback port with users and passwords (the
/// administrator's password is [`ADMIN_PASSWORD`]) and waits until it
/// accepts connections; its address and log files go to the data dir.
fn serve(db: &Path, options: &ServiceBenchOptions) -> Result<Served> {
    let (binary, work) = (&options.binary, options.data_dir.as_path());
    let address_file = work.join(format!("service-bench-{}.address", std::process::id()));
    let log_file = work.join(format!("service-bench-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&address_file);
    let log = std::fs::File::create(&log_file).map_err(|e| Error::io(log_file.display(), e))?;
    let mut command = Command::new(binary);
    command
        .arg("serve")
        .arg(db)
        .args(["--bolt", "127.0.0.1:0", "--auth", "basic"])
        .args(["--initial-password", ADMIN_PASSWORD, "--address-file"])
        .arg(&address_file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    if let Some(t) = options.threads {
        command.args(["--threads", &t.to_string()]);
    }
    if let Some(nice) = options.worker_nice {
        command.args(["--worker-nice", &nice.to_string()]);
    }
    let child = command
        .spawn()
        .map_err(|e| Error::io(binary.display(), e))?;
    let mut served = Served {
        child,
        address: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(&address_file) {
            if !text.trim().is_empty() {
                served.address = text.trim().to_string();
                let _ = std::fs::remove_file(&address_file);
                return Ok(served);
            }
        }
        let exited = served
            .child
            .try_wait()
            .map_err(|e| Error::io(binary.display(), e))?;
        if exited.is_some() || Instant::now() > deadline {
            let log = std::fs::read_to_string(&log_file).unwrap_or_default();
            return Err(Error::new(
                ErrorKind::IoError,
                format!(
                    "`{} serve` {}: {}",
                    binary.display(),
                    if exited.is_some() {
                        "exited"
                    } else {
                        "did not start within 60 s"
                    },
                    log.trim()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn client_error(e: ClientError) -> Error {
    Error::new(ErrorKind::IoError, format!("bench client: {e}"))
}

fn connect(address: &str) -> Result<BoltClient> {
    BoltClient::connect(address, &admin()).map_err(client_error)
}

/// A client whose statements are interrupted after a timeout.
struct TimedClient {
    client: rhizome_server::client::Connection,
    started: Instant,
    /// Nanoseconds after `started` at which the running statement is reset.
    deadline: Arc<AtomicU64>,
}

impl TimedClient {
    fn connect(address: &str) -> Result<TimedClient> {
        let uri = BoltUri::parse(&format!("bolt://{address}"))
            .map_err(|e| Error::new(ErrorKind::ArgumentError, e))?;
        let options = ConnectOptions {
            poll: Some(Duration::from_millis(5)),
            ..ConnectOptions::default()
        };
        let mut client = open(&uri, &admin(), &options).map_err(client_error)?;
        let started = Instant::now();
        let deadline = Arc::new(AtomicU64::new(u64::MAX));
        let check = deadline.clone();
        client.set_interrupt(Some(Arc::new(move || {
            started.elapsed().as_nanos() as u64 > check.load(Ordering::Relaxed)
        })));
        Ok(TimedClient {
            client,
            started,
            deadline,
        })
    }

    /// Runs `text`, returning its latency and rows, or `None` if it was
    /// interrupted at `timeout`.
    fn run(
        &mut self,
        text: &str,
        params: &Params,
        timeout: Duration,
    ) -> Result<Option<(Duration, usize)>> {
        let at = self.started.elapsed() + timeout;
        self.deadline.store(at.as_nanos() as u64, Ordering::Relaxed);
        let begun = Instant::now();
        let mut rows = 0;
        let outcome = self.client.stream(text, params, |_| rows += 1);
        let took = begun.elapsed();
        self.deadline.store(u64::MAX, Ordering::Relaxed);
        match outcome {
            Ok(_) => Ok(Some((took, rows))),
            Err(ClientError::Interrupted) => Ok(None),
            Err(e) => Err(client_error(e)),
        }
    }
}

/// Percentile `p` (0..=100) of sorted samples (nearest rank).
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p / 100.0).round() as usize]
}

fn ms(d: Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// The machine's load average (1, 5, 15 minutes), as `/proc/loadavg` has it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Prints `text` as one line of the benchmark's output, at once.
fn line(out: &mut dyn Write, text: String) -> Result<()> {
    writeln!(out, "{text}").map_err(|e| Error::io("standard output", e))?;
    out.flush().map_err(|e| Error::io("standard output", e))
}

/// Runs the benchmark and prints its lines to `out`.
pub fn run_service_bench(options: &ServiceBenchOptions, out: &mut dyn Write) -> Result<()> {
    let ldbc_options = LdbcBenchOptions {
        dataset: options.dataset.clone(),
        layout: options.layout,
        data_dir: options.data_dir.clone(),
        ..LdbcBenchOptions::new(Path::new(""))
    };
    let db = options.data_dir.join(options.layout.dir_name()).join("db");
    let (persons, ldbc) = {
        let engine = ldbc_engine(&ldbc_options)?;
        // The first `persons` of the rule's ten, not a rule of their own.
        let mut persons = banyan_persons(&engine, crate::banyan::PERSONS)?;
        persons.truncate(options.persons.max(1));
        let ldbc = ldbc_parameters(&engine, options.persons.max(5))?;
        (persons, ldbc)
    };
    // Every query name resolves before the server starts.
    let fg = workload(&options.foreground, 10_000, &persons, &ldbc)?;
    let bg = workload(&options.background, 10_000, &persons, &ldbc)?;
    // Measurement 3's heavy query: the throughput query over every person.
    let heavy = workload(&options.throughput_query, 10_000, &persons, &ldbc)?;
    let mut fixed = heavy.clone();
    fixed.sets.truncate(1);
    if fg.sets.is_empty() || bg.sets.is_empty() || fixed.sets.is_empty() {
        return Err(Error::new(
            ErrorKind::ArgumentError,
            "the data set gave no parameters for the foreground, background or throughput query",
        ));
    }
    let server = serve(&db, options)?;
    let address = server.address.clone();
    line(
        out,
        format!(
            "service bench on {}: `rhizome serve` (pid {}) at bolt://{address}, auth basic, {}, workers at nice {}; load average {}",
            options.layout.dir_name(),
            server.child.id(),
            options
                .threads
                .map_or("all workers per query".to_string(), |t| format!("{t} workers per query")),
            options.worker_nice.map_or_else(
                || format!("{} (the server's default)", rhizome_server::config::DEFAULT_WORKER_NICE),
                |n| n.to_string()
            ),
            load_average()
        ),
    )?;
    line(
        out,
        format!(
            "parameter persons (a WORK_AT, KNOWS degree {}..={}, by id, every k-th): {persons:?}",
            crate::banyan::DEGREE_BAND.0,
            crate::banyan::DEGREE_BAND.1
        ),
    )?;

    cq_latencies(options, &address, &persons, out)?;
    scopes::scope_speedups(options, &address, &persons, out)?;
    isolation(options, &address, &fg, &bg, out)?;
    let window = Duration::from_secs_f64(options.seconds_per_level);
    tenants::tenants(&address, &heavy, window, out)?;
    concurrency(options, &address, &fixed, out)?;
    line(out, format!("load average at the end: {}", load_average()))?;
    drop(server);
    Ok(())
}

/// `q` with scopes off.
fn off_text(q: Cq) -> String {
    format!("{}{}", scopes::OFF, q.text())
}

/// Measurement 1, scopes off: each CQ at each `$n` for every person.
fn cq_latencies(
    options: &ServiceBenchOptions,
    address: &str,
    persons: &[i64],
    out: &mut dyn Write,
) -> Result<()> {
    let mut client = TimedClient::connect(address)?;
    writeln!(
        out,
        "[1] CQ latency per $n, scopes off (CYPHER scheduling=off), one client, {} persons, timeout {:.1} s ({:.1} s at $n >= {FULL}):",
        persons.len(),
        options.timeout.as_secs_f64(),
        options.full_timeout.as_secs_f64()
    )
    .map_err(|e| Error::io("standard output", e))?;
    for &q in &options.queries {
        // One untimed run warms the plan cache.
        if let Some(&p) = persons.first() {
            client.run(&off_text(q), &Cq::params(p, 1), options.timeout)?;
        }
        for &n in &options.limits {
            let timeout = options.timeout_at(n);
            let mut times = Vec::new();
            let (mut timeouts, mut rows) = (0, 0);
            for &p in persons {
                match client.run(&off_text(q), &Cq::params(p, n), timeout)? {
                    Some((took, r)) => {
                        times.push(took);
                        rows += r;
                    }
                    None => {
                        timeouts += 1;
                        times.push(timeout);
                    }
                }
            }
            times.sort();
            let bound = if timeouts > 0 { ">" } else { "" };
            let over = |d: Duration| -> &str {
                if timeouts > 0 && d >= timeout {
                    ">"
                } else {
                    ""
                }
            };
            let (p50, p90) = (percentile(&times, 50.0), percentile(&times, 90.0));
            writeln!(
                out,
                "  {} $n={:<6} median {}{:>9}  p90 {}{:>9}  max {bound}{:>9}  ({} runs, {} timed out, {:.1} rows per finished run)",
                q.name(),
                n,
                over(p50),
                ms(p50),
                over(p90),
                ms(p90),
                ms(times.last().copied().unwrap_or_default()),
                times.len(),
                timeouts,
                rows as f64 / (times.len() - timeouts).max(1) as f64
            )
            .map_err(|e| Error::io("standard output", e))?;
        }
    }
    Ok(())
}

/// Background clients running `work` in a loop until dropped.
struct Background {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<Result<u64>>>,
}

impl Background {
    fn start(address: &str, clients: usize, work: &Workload) -> Result<Background> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for c in 0..clients {
            let mut client = connect(address)?;
            let (stop, work) = (stop.clone(), work.clone());
            threads.push(std::thread::spawn(move || -> Result<u64> {
                let mut done = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let set = &work.sets[(c + done as usize) % work.sets.len()];
                    client
                        .stream(&work.text, set, |_| {})
                        .map_err(client_error)?;
                    done += 1;
                }
                Ok(done)
            }));
        }
        Ok(Background { stop, threads })
    }

    /// Stops the clients (each finishes its query) and returns how many
    /// queries they completed.
    fn finish(mut self) -> Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        let mut total = 0;
        for t in self.threads.drain(..) {
            total += t
                .join()
                .unwrap_or_else(|_| Err(Error::internal("a background client panicked")))?;
        }
        Ok(total)
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// `runs` sequential submissions of `work`, sorted latencies.
fn foreground(client: &mut BoltClient, work: &Workload, runs: usize) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let set = &work.sets[i % work.sets.len()];
        let begun = Instant::now();
        client
            .stream(&work.text, set, |_| {})
            .map_err(client_error)?;
        times.push(begun.elapsed());
    }
    times.sort();
    Ok(times)
}

fn distribution(times: &[Duration]) -> String {
    format!(
        "p50 {:>9}  p95 {:>9}  p99 {:>9}  max {:>9}",
        ms(percentile(times, 50.0)),
        ms(percentile(times, 95.0)),
        ms(percentile(times, 99.0)),
        ms(times.last().copied().unwrap_or_default())
    )
}

/// Measurement 2: the foreground query idle and under W background clients.
fn isolation(
    options: &ServiceBenchOptions,
    address: &str,
    fg: &Workload,
    bg: &Workload,
    out: &mut dyn Write,
) -> Result<()> {
    line(
        out,
        format!(
            "[2] isolation across queries: foreground {} submitted {} times by one client; background {} in a loop by W clients; all the same user",
            fg.name, options.foreground_runs, bg.name
        ),
    )?;
    let mut client = connect(address)?;
    foreground(&mut client, fg, options.foreground_runs.div_ceil(10))?;
    let idle = foreground(&mut client, fg, options.foreground_runs)?;
    let idle_p95 = percentile(&idle, 95.0);
    let idle_p50 = percentile(&idle, 50.0);
    line(
        out,
        format!(
            "  idle     {}   (the issue asks for an idle latency of 1-50 ms: {})",
            distribution(&idle),
            if (1.0..=50.0).contains(&(idle_p50.as_secs_f64() * 1e3)) {
                "p50 inside"
            } else {
                "p50 OUTSIDE"
            }
        ),
    )?;
    for &clients in &options.background_clients {
        let background = Background::start(address, clients, bg)?;
        // Let every background client start its first query.
        std::thread::sleep(Duration::from_millis(50));
        let loaded = foreground(&mut client, fg, options.foreground_runs)?;
        let begun = Instant::now();
        let completed = background.finish()?;
        let factor = if clients <= 1 { 1.25 } else { 1.5 };
        let limit = idle_p95.mul_f64(factor) + Duration::from_millis(2);
        let p95 = percentile(&loaded, 95.0);
        line(
            out,
            format!(
                "  W={clients:<2}     {}   p95 limit {factor}x idle p95 + 2 ms = {}: {}  ({} background queries; waited {} for them to end)",
                distribution(&loaded),
                ms(limit),
                if p95 <= limit { "met" } else { "MISSED" },
                completed,
                ms(begun.elapsed())
            ),
        )?;
    }
    Ok(())
}

/// The middle value (the upper one of an even count; NaN if none).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One window of measurement 4: client count `level` (an index into
/// [`ServiceBenchOptions::concurrency`]) ran from `from` to `to`.
struct Window {
    level: usize,
    from: Instant,
    to: Instant,
}

/// Measurement 4: one query with a fixed parameter at each client count.
/// The counts take turns in short slices ([`ServiceBenchOptions::concurrency_cycles`]
/// cycles over all of them, ascending then descending), so a machine that
/// is faster for a while favours no count; a count's rate is its queries
/// over its windows' total time.
fn concurrency(
    options: &ServiceBenchOptions,
    address: &str,
    work: &Workload,
    out: &mut dyn Write,
) -> Result<()> {
    let counts = &options.concurrency;
    let cycles = options.concurrency_cycles.max(1);
    let window = Duration::from_secs_f64(options.seconds_per_level / cycles as f64);
    let settle = warm_up(window);
    line(
        out,
        format!(
            "[4] throughput under concurrency: {} with one parameter set {:?}, W clients; {cycles} cycle(s) over every W (ascending, then descending), each W counting the queries that end in a {:.2} s window after {:.2} s at that W ({:.1} s per W in all)",
            work.name,
            work.sets[0],
            window.as_secs_f64(),
            settle.as_secs_f64(),
            options.seconds_per_level,
        ),
    )?;
    let most = counts.iter().copied().max().unwrap_or(1);
    let pool = ClientPool::start(address, most, work)?;
    let mut windows = Vec::new();
    for cycle in 0..cycles {
        let mut order: Vec<usize> = (0..counts.len()).collect();
        if cycle % 2 == 1 {
            order.reverse();
        }
        for level in order {
            pool.activate(counts[level]);
            std::thread::sleep(settle);
            let from = Instant::now();
            std::thread::sleep(window);
            windows.push(Window {
                level,
                from,
                to: Instant::now(),
            });
        }
    }
    let ended = pool.finish()?;
    let mut times = vec![Vec::new(); counts.len()];
    let mut spent = vec![0.0; counts.len()];
    let mut per_window = vec![Vec::new(); counts.len()];
    for w in &windows {
        let inside: Vec<Duration> = ended
            .iter()
            .filter(|(at, _)| (w.from..w.to).contains(at))
            .map(|&(_, took)| took)
            .collect();
        let seconds = (w.to - w.from).as_secs_f64();
        spent[w.level] += seconds;
        per_window[w.level].push(inside.len() as f64 / seconds);
        times[w.level].extend(inside);
    }
    let levels: Vec<f64> = (0..counts.len())
        .map(|i| times[i].len() as f64 / spent[i].max(1e-9))
        .collect();
    let peak = levels.iter().copied().fold(0.0, f64::max);
    let peak_at = levels.iter().position(|&l| l >= peak).unwrap_or(0);
    for t in &mut times {
        t.sort();
    }
    let base = times
        .first()
        .map(|t| percentile(t, 50.0))
        .unwrap_or_default();
    for (i, &clients) in counts.iter().enumerate() {
        let rate = levels[i];
        let drop = if peak > 0.0 {
            100.0 * (peak - rate) / peak
        } else {
            0.0
        };
        let verdict = if i < peak_at {
            "before the peak".to_string()
        } else {
            format!("limit 10%: {}", if drop <= 10.0 { "met" } else { "MISSED" })
        };
        let spread = if cycles > 1 {
            let w = &per_window[i];
            let low = w.iter().copied().fold(f64::INFINITY, f64::min);
            let high = w.iter().copied().fold(0.0, f64::max);
            format!(
                "  windows {low:.0}-{high:.0} (median {:.0})",
                median(w.clone())
            )
        } else {
            String::new()
        };
        let p50 = percentile(&times[i], 50.0);
        line(
            out,
            format!(
                "  W={clients:<2} {rate:>8.1} queries/s  drop from peak {drop:>5.1}% ({verdict})  latency p50 {:>9} p95 {:>9}  p50 / W=1 p50 {:>5.2}{spread}",
                ms(p50),
                ms(percentile(&times[i], 95.0)),
                p50.as_secs_f64() / base.as_secs_f64().max(1e-9),
            ),
        )?;
    }
    line(
        out,
        format!(
            "  peak {peak:.1} queries/s at W={}; past the peak latency should grow linearly with W (p50 / W=1 p50 near W / W_peak)",
            counts.get(peak_at).copied().unwrap_or(0)
        ),
    )?;
    Ok(())
}

/// When each query of a client ended and how long it took.
type Ended = Vec<(Instant, Duration)>;

/// Measurement 4's clients: each logged in once, running `work` in a loop
/// while its index is below the active count, and blocked (not polling,
/// which would take CPU from the server at small counts) otherwise.
struct ClientPool {
    gate: Arc<ClientGate>,
    threads: Vec<std::thread::JoinHandle<Result<Ended>>>,
}

/// How many of the clients run (`.0`) and whether they stop (`.1`).
struct ClientGate {
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

impl ClientGate {
    fn set(&self, update: impl FnOnce(&mut (usize, bool))) {
        update(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
        self.changed.notify_all();
    }

    /// Waits until client `index` may run a query; false once the clients stop.
    fn may_run(&self, index: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while index >= state.0 && !state.1 {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        !state.1
    }
}

impl ClientPool {
    /// Logs `clients` clients in (none active yet).
    fn start(address: &str, clients: usize, work: &Workload) -> Result<ClientPool> {
        let gate = Arc::new(ClientGate {
            state: Mutex::new((0, false)),
            changed: Condvar::new(),
        });
        let mut threads = Vec::new();
        for index in 0..clients {
            let mut client = connect(address)?;
            let (gate, work) = (gate.clone(), work.clone());
            threads.push(std::thread::spawn(move || {
                let mut ended = Vec::new();
                while gate.may_run(index) {
                    let begun = Instant::now();
                    client
                        .stream(&work.text, &work.sets[0], |_| {})
                        .map_err(client_error)?;
                    ended.push((Instant::now(), begun.elapsed()));
                }
                Ok(ended)
            }));
        }
        Ok(ClientPool { gate, threads })
    }

    /// Lets the first `clients` clients run.
    fn activate(&self, clients: usize) {
        self.gate.set(|state| state.0 = clients);
    }

    /// Stops the clients (each ends its query) and returns when each
    /// query ended and how long it took.
    fn finish(mut self) -> Result<Ended> {
        self.gate.set(|state| state.1 = true);
        let mut ended = Vec::new();
        for t in self.threads.drain(..) {
            ended.extend(
                t.join()
                    .unwrap_or_else(|_| Err(Error::internal("a client panicked")))?,
            );
        }
        Ok(ended)
    }
}

impl Drop for ClientPool {
    fn drop(&mut self) {
        self.gate.set(|state| state.1 = true);
    }
}

/// How long measurement 4 runs at a client count before its window opens:
/// half the window. By then the queries begun at the previous count have
/// ended (at W = 32 on SF0.1 a query takes about 30 ms) and the new
/// count's queries start and end at spread-out times, as in a steady state.
fn warm_up(window: Duration) -> Duration {
    window / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_resolve_by_name() {
        let ldbc = std::collections::BTreeMap::new();
        let w = workload("cq3", 10, &[1, 2], &ldbc).unwrap();
        assert_eq!(w.name, "CQ3 $n=10");
        assert_eq!(w.sets.len(), 2);
        let w = workload("IC2", 10, &[1], &ldbc).unwrap();
        assert_eq!(w.name, "IC2");
        assert!(w.sets.is_empty());
        assert!(workload("XY", 1, &[], &ldbc)
            .unwrap_err()
            .message
            .contains("IC1"));
        assert_eq!(ms(Duration::from_micros(1500)), "1.50 ms");
        assert_eq!(ms(Duration::from_millis(250)), "250 ms");
    }
}
