//! Query benchmarks of Rhizome (issue 4): the likes graph (A1–A4), the
//! chain graph of the parallel-Cypher thesis (SQ1–SQ5) and the LDBC SNB
//! Interactive reads ([`ldbc`]).
//!
//! For each query: the median time over several runs with one worker and
//! with all workers (the rows streamed to a receiver that counts them, as
//! a client reading the result would), throughput, the speedup between
//! them (the median of the ratios of paired runs, each round timing a block
//! of runs with one worker and a block with all, each block after an
//! untimed lead-in run), the share of worker time PROFILE attributes to
//! operators, the machine's own speedup measured in the same rounds by a
//! plain memory-bound loop and by a loop whose workers sort each other's
//! rows, on the same workers, with a cache line's round trip between two
//! workers ([`machine`]), and for A1–A4
//! a reference: the same answer computed by a plain loop over Rhizome's own
//! CSR arrays, so the distance to the machine's limit is visible. Datasets
//! are generated and imported once into a cache directory and reused.

pub mod aggregate;
pub mod banyan;
pub mod ldbc;
pub mod machine;
pub mod reference;
pub mod server;
pub mod service;
pub mod writes;

use rhizome_common::{Error, Result, Value};
use rhizome_engine::{Engine, QueryOptions, RowBlock, RowReceiver, Rows};
use rhizome_import::generate::{generate_chain, generate_likes, ChainOptions, LikesOptions};
use rhizome_import::{import, NoProgress};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most rounds a query is timed in.
pub const MAX_ROUNDS: usize = 1000;

/// Timed runs per worker count in one round. Each block of them follows a
/// lead-in run that is not timed: on this virtual machine a parallel run
/// right after a stretch in which one core had no work of the query is
/// 10–15% slower than the next one (docs/benchmarks.md), and the speedup
/// is the engine's, measured in steady state on both sides.
pub const BLOCK_RUNS: usize = 3;

/// Timed runs per worker count, at least, unless told otherwise.
pub const DEFAULT_RUNS: usize = 25;

/// Seconds spent on a query's rounds, at least, unless told otherwise.
pub const DEFAULT_MIN_SECONDS: f64 = 3.0;

/// What to run.
#[derive(Debug, Clone)]
pub struct QueryBenchOptions {
    /// Where generated databases are cached.
    pub data_dir: PathBuf,
    /// Timed runs per worker count, at least (after one warm-up round); a
    /// round times [`BLOCK_RUNS`] runs on one worker and as many on all.
    pub runs: usize,
    /// Rounds go on past `runs` until this much time was spent in them (or
    /// [`MAX_ROUNDS`]), so a query of a few milliseconds is measured over
    /// hundreds of rounds rather than a fraction of a second.
    pub min_time: Duration,
    /// The likes graph.
    pub likes: LikesOptions,
    /// The chain graph.
    pub chain: ChainOptions,
    /// Run the likes queries.
    pub run_likes: bool,
    /// Run the chain queries.
    pub run_chain: bool,
    /// Person ids looked up by A1.
    pub a1_lookups: usize,
    /// Item ids looked up by A2.
    pub a2_lookups: usize,
    /// Run only the queries with these names (empty: all).
    pub only: Vec<String>,
}

impl Default for QueryBenchOptions {
    /// The sizes the issue names: likes 100k/2k/100, chain N = 1,000,000 with degree 50.
    fn default() -> QueryBenchOptions {
        QueryBenchOptions {
            data_dir: default_data_dir(),
            runs: DEFAULT_RUNS,
            min_time: Duration::from_secs_f64(DEFAULT_MIN_SECONDS),
            likes: LikesOptions::default(),
            chain: ChainOptions {
                nodes: 1_000_000,
                degree: 50,
            },
            run_likes: true,
            run_chain: true,
            a1_lookups: 500_000,
            a2_lookups: 10_000,
            only: Vec::new(),
        }
    }
}

impl QueryBenchOptions {
    /// The defaults changed by the environment of `cargo bench`:
    /// `RHIZOME_BENCH_RUNS` (timed runs at least), `RHIZOME_BENCH_SECONDS`
    /// (time per query at least; a negative or non-finite value is ignored)
    /// and `RHIZOME_BENCH_ONLY` (as [`QueryBenchOptions::select`] takes it).
    /// `RHIZOME_BENCH_DATA` is read by the default data directory.
    pub fn from_env() -> QueryBenchOptions {
        let mut options = QueryBenchOptions::default();
        if let Some(runs) = std::env::var("RHIZOME_BENCH_RUNS")
            .ok()
            .and_then(|r| r.parse().ok())
        {
            options.runs = runs;
        }
        if let Some(seconds) = std::env::var("RHIZOME_BENCH_SECONDS")
            .ok()
            .and_then(|r| r.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
        {
            options.min_time = Duration::from_secs_f64(seconds);
        }
        if let Ok(only) = std::env::var("RHIZOME_BENCH_ONLY") {
            options.select(&only);
        }
        options
    }

    /// Restricts the run to `only`: `likes`, `chain`, or a comma-separated
    /// list of query names (`A3,SQ4`).
    pub fn select(&mut self, only: &str) {
        match only {
            "likes" => self.run_chain = false,
            "chain" => self.run_likes = false,
            names => {
                self.only = names.split(',').map(|n| n.trim().to_string()).collect();
                self.run_likes = self.only.iter().any(|n| n.starts_with(['A', 'a']));
                self.run_chain = self.only.iter().any(|n| n.starts_with(['S', 's']));
            }
        }
    }

    /// Whether the query `name` is to run.
    fn selects(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o.eq_ignore_ascii_case(name))
    }
}

/// `$RHIZOME_BENCH_DATA`, else `target/rhizome-bench-data` under the current directory.
pub fn default_data_dir() -> PathBuf {
    std::env::var_os("RHIZOME_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/rhizome-bench-data"))
}

/// One benchmark result line.
#[derive(Debug, Clone)]
pub struct BenchRow {
    /// Query name (A1, SQ3, ...).
    pub name: String,
    /// Median with one worker.
    pub one: Duration,
    /// Median with all workers.
    pub all: Duration,
    /// Workers used for `all`.
    pub workers: usize,
    /// Median over paired runs of the single-worker time divided by the
    /// all-worker time: run `j` of a round's single-worker block paired
    /// with run `j` of its all-worker block.
    pub speedup: f64,
    /// First and third quartile of those ratios: how much they spread.
    pub speedup_quartiles: (f64, f64),
    /// Units of work per run (lookups, rows or paths).
    pub units: f64,
    /// What a unit is.
    pub unit: &'static str,
    /// Reference loop time, if there is one.
    pub reference: Option<Duration>,
    /// Share of worker time PROFILE attributes to operators.
    pub attributed: f64,
    /// The machine's own speedup from one worker to all in the same
    /// rounds ([`machine::MachineProbe`]): first quartile, median, third.
    pub machine: [f64; 3],
    /// The speedup of the hand-off probe in the same rounds
    /// ([`machine::MachineProbe::run_handoff`]): first quartile, median, third.
    pub handoff: [f64; 3],
    /// A cache line's round trip between two workers, the median over the
    /// rounds ([`machine::MachineProbe::round_trip`]); none on one worker.
    pub core_trip: Option<Duration>,
    /// Rounds timed.
    pub rounds: usize,
}

impl BenchRow {
    /// Single-worker throughput relative to the reference loop (1.0 = as fast).
    pub fn vs_reference(&self) -> Option<f64> {
        self.reference
            .map(|r| r.as_secs_f64() / self.one.as_secs_f64())
    }

    /// One line of the report.
    pub fn render(&self) -> String {
        let rate = |d: Duration| self.units / d.as_secs_f64();
        let mut line = format!(
            "{:<4} {:>10.2} ms {:>10.2} ms  x{:<5.2} [{:.2}-{:.2}] {:>12.3e} {}/s (1 worker)  PROFILE {:>5.1}%  {:>4} rounds",
            self.name,
            self.one.as_secs_f64() * 1e3,
            self.all.as_secs_f64() * 1e3,
            self.speedup,
            self.speedup_quartiles.0,
            self.speedup_quartiles.1,
            rate(self.one),
            self.unit,
            self.attributed * 100.0,
            self.rounds
        );
        let [low, machine, high] = self.machine;
        line.push_str(&format!("  machine x{machine:.2} [{low:.2}-{high:.2}]"));
        let [low, handoff, high] = self.handoff;
        line.push_str(&format!(" hand-off x{handoff:.2} [{low:.2}-{high:.2}]"));
        if let Some(trip) = self.core_trip {
            line.push_str(&format!(" line {:>3} ns", trip.as_nanos()));
        }
        if let (Some(r), Some(ratio)) = (self.reference, self.vs_reference()) {
            line.push_str(&format!(
                "  reference loop {:>8.2} ms ({:.3e} {}/s), engine/reference = {:.0}%",
                r.as_secs_f64() * 1e3,
                rate(r),
                self.unit,
                ratio * 100.0
            ));
        }
        line
    }
}

/// The directory of the cached database `name`, created with `make` (which
/// writes import-ready CSV into its directory) if it is not there yet.
pub(crate) fn cached_dir(
    data_dir: &Path,
    name: &str,
    make: impl FnOnce(&Path) -> Result<rhizome_import::ImportOptions>,
) -> Result<PathBuf> {
    let db = data_dir.join(name).join("db");
    if !db.join("manifest.json").exists() {
        let csv = data_dir.join(name).join("csv");
        let _ = std::fs::remove_dir_all(&csv);
        let _ = std::fs::remove_dir_all(&db);
        std::fs::create_dir_all(&csv).map_err(|e| Error::io(csv.display(), e))?;
        let options = make(&csv)?;
        import(&db, &options, &NoProgress)?;
        let _ = std::fs::remove_dir_all(&csv);
    }
    Ok(db)
}

/// The directory of the likes graph database cached in `data_dir`, created if needed.
pub fn likes_db(data_dir: &Path, l: &LikesOptions) -> Result<PathBuf> {
    let name = format!(
        "likes-{}-{}-{}-{}",
        l.persons, l.items, l.likes_per_person, l.seed
    );
    cached_dir(data_dir, &name, |csv| generate_likes(csv, l))
}

/// The likes graph database, created if needed.
pub fn likes_engine(options: &QueryBenchOptions) -> Result<Engine> {
    Engine::open(&likes_db(&options.data_dir, &options.likes)?)
}

/// The chain graph database, created if needed.
pub fn chain_engine(options: &QueryBenchOptions) -> Result<Engine> {
    let c = &options.chain;
    let name = format!("chain-{}-{}", c.nodes, c.degree);
    Engine::open(&cached_dir(&options.data_dir, &name, |csv| {
        generate_chain(csv, c)
    })?)
}

/// SQ3 of the chain suite: four hops in both directions from node 777, counted.
pub const SQ3: &str = "MATCH (:LBL_ALL {id: 777})--()--()--()--(n) RETURN count(n)";

/// A1 of the likes suite: many person lookups, each counting its likes.
pub const A1: &str = "UNWIND $ids AS id MATCH (p:Person {id: id})-[:LIKES]->(i) RETURN count(*)";
/// A2: many item lookups, each counting its likers.
pub const A2: &str = "UNWIND $ids AS id MATCH (i:Item {id: id})<-[:LIKES]-(p) RETURN count(*)";
/// A3: three hops from one person (`$id`), counted.
pub const A3: &str = "MATCH (p:Person {id: $id})-[:LIKES]->(:Item)<-[:LIKES]-(:Person)-[:LIKES]->(j:Item) RETURN count(*)";
/// A4: A3 with a relationship-property filter on every hop.
pub const A4: &str = "MATCH (p:Person {id: $id})-[r1:LIKES]->(:Item)<-[r2:LIKES]-(:Person)-[r3:LIKES]->(j:Item) \
                      WHERE r1.weight > -1.0 AND r2.weight > -1.0 AND r3.weight > -1.0 RETURN count(*)";

/// Deterministic ids in `0..bound` (SplitMix64).
pub fn random_ids(count: usize, bound: u64, seed: u64) -> Vec<i64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % bound) as i64
        })
        .collect()
}

/// The quartiles (first, median, third) of `ones[i] / alls[i]`, where
/// `ones[i]` and `alls[i]` are the same run of one round's two blocks: the
/// pair sees the same machine, so the ratio is not thrown off
/// when the machine's speed changes between rounds (this one's
/// single-thread speed shifts by up to 2x for seconds at a time). Zeros if
/// there are no rounds.
pub(crate) fn paired_speedup(ones: &[Duration], alls: &[Duration]) -> [f64; 3] {
    let mut ratios: Vec<f64> = ones
        .iter()
        .zip(alls)
        .map(|(one, all)| one.as_secs_f64() / all.as_secs_f64().max(1e-9))
        .collect();
    if ratios.is_empty() {
        return [0.0; 3];
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    [at(1), ratios[ratios.len() / 2], at(3)]
}

pub(crate) fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// PROFILE runs per query; the share printed is their median, since one
/// run that a core stalls in says more about the machine than the query.
const PROFILE_RUNS: usize = 5;

/// Share of worker time PROFILE attributes to operators, the median over
/// [`PROFILE_RUNS`] runs; with `RHIZOME_BENCH_PROFILE` set, also prints the
/// annotated plan of the first.
fn profile_share(
    engine: &Engine,
    query: &str,
    params: &BTreeMap<String, Value>,
    out: &mut dyn Write,
) -> Result<f64> {
    let mut shares = Vec::with_capacity(PROFILE_RUNS);
    for run in 0..PROFILE_RUNS {
        let result = engine.execute(
            &format!("PROFILE {query}"),
            params.clone(),
            &QueryOptions::default(),
        )?;
        let Some(profile) = result.profile else {
            return Ok(0.0);
        };
        if run == 0 && std::env::var_os("RHIZOME_BENCH_PROFILE").is_some() {
            let _ = writeln!(out, "{}", profile.text);
        }
        shares.push(profile.attributed());
    }
    shares.sort_by(f64::total_cmp);
    Ok(shares[shares.len() / 2])
}

/// One query of the suite.
struct Spec {
    name: &'static str,
    query: String,
    params: BTreeMap<String, Value>,
    unit: &'static str,
    /// Units of work given the query's result.
    units: fn(&Tally, &BTreeMap<String, Value>) -> f64,
    reference: Option<Box<dyn Fn() -> (Duration, i64)>>,
}

/// A streamed result as the suite sees it: its number of rows and its
/// first row (the answer of a `count(*)` query).
#[derive(Debug, Default, PartialEq)]
struct Tally {
    rows: u64,
    first: Option<Vec<Value>>,
}

impl Tally {
    /// The integer the first row starts with (a count), or -1.
    fn count(&self) -> i64 {
        leading_int(self.first.as_deref())
    }
}

/// A counter on a cache line of its own.
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct PaddedCount(pub(crate) AtomicU64);

/// Counts the rows streamed to it and keeps the first row of the block
/// first in the result's order.
struct TallyReceiver {
    /// Rows per worker slot (`RowBlock::worker`), a cache line each, so
    /// the workers do not contend for one counter.
    rows: [PaddedCount; 16],
    /// Position of the block `first` came from (`usize::MAX`: none yet);
    /// written under `first`'s lock.
    first_position: AtomicUsize,
    first: Mutex<Option<Vec<Value>>>,
}

impl Default for TallyReceiver {
    fn default() -> TallyReceiver {
        TallyReceiver {
            rows: Default::default(),
            first_position: AtomicUsize::new(usize::MAX),
            first: Mutex::new(None),
        }
    }
}

impl RowReceiver for TallyReceiver {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        self.rows[block.worker() % self.rows.len()]
            .0
            .fetch_add(block.len() as u64, Ordering::Relaxed);
        // Lock only for a block ahead of the first row kept so far.
        if block.position() >= self.first_position.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let Some(row) = block.rows().next() {
            let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
            if block.position() < self.first_position.load(Ordering::Relaxed) {
                self.first_position
                    .store(block.position(), Ordering::Relaxed);
                *first = Some(row.to_vec());
            }
        }
        Ok(())
    }
}

impl TallyReceiver {
    fn tally(&self) -> Tally {
        Tally {
            rows: self.rows.iter().map(|c| c.0.load(Ordering::Relaxed)).sum(),
            first: self.first.lock().unwrap_or_else(|p| p.into_inner()).take(),
        }
    }
}

/// The integer the first row starts with (the answer of a `count(*)`
/// query), or -1.
pub(crate) fn count_of(rows: &Rows) -> i64 {
    leading_int(rows.first())
}

/// The integer `row` starts with, or -1.
fn leading_int(row: Option<&[Value]>) -> i64 {
    match row {
        Some([Value::Int(n), ..]) => *n,
        _ => -1,
    }
}

fn list_len(params: &BTreeMap<String, Value>) -> f64 {
    match params.get("ids") {
        Some(Value::List(l)) => l.len() as f64,
        _ => 0.0,
    }
}

/// Times one query: each round runs a block with one worker, a block with
/// all workers (in alternating order) and the reference loop (if any) back
/// to back, so all three see the same machine load; the medians over the
/// timed runs are reported.
fn run_spec(
    engine: &Engine,
    spec: &Spec,
    probe: &machine::MachineProbe,
    options: &QueryBenchOptions,
    out: &mut dyn Write,
) -> Result<BenchRow> {
    let (runs, min_time) = (options.runs, options.min_time);
    let workers = rhizome_exec::scheduler::WorkerPool::global().threads();
    let single = QueryOptions {
        threads: Some(1),
        ..QueryOptions::default()
    };
    let parallel = QueryOptions::default();
    let timed = |options: &QueryOptions| -> Result<(Duration, Tally)> {
        // The harness's copy of the parameters is not the query's work.
        let params = spec.params.clone();
        let receiver = Arc::new(TallyReceiver::default());
        let start = Instant::now();
        engine.execute_streaming(&spec.query, params, options, receiver.clone())?;
        Ok((start.elapsed(), receiver.tally()))
    };
    // Warm-up round (page cache, lazy initialisation), not counted; the
    // parallel result must equal the single-worker one, collected or
    // streamed.
    let collected = engine
        .execute(&spec.query, spec.params.clone(), &single)?
        .rows;
    let (_, tally_one) = timed(&single)?;
    let (_, tally_all) = timed(&parallel)?;
    let expected = Tally {
        rows: collected.len() as u64,
        first: collected.first().map(<[Value]>::to_vec),
    };
    if tally_one.rows != tally_all.rows
        || tally_one.rows != expected.rows
        || (expected.rows == 1 && (tally_one != expected || tally_all != expected))
    {
        return Err(Error::internal(format!(
            "{}: parallel, single-worker and collected results differ",
            spec.name
        )));
    }
    if let Some(f) = &spec.reference {
        let (_, answer) = f();
        if answer != tally_one.count() {
            return Err(Error::internal(format!(
                "{}: the engine counted {} but the reference loop {answer}",
                spec.name,
                tally_one.count()
            )));
        }
    }
    let (mut ones, mut alls, mut refs) = (Vec::new(), Vec::new(), Vec::new());
    // One block: a lead-in run, not timed, then BLOCK_RUNS timed runs.
    let block = |options: &QueryOptions, times: &mut Vec<Duration>| -> Result<()> {
        timed(options)?;
        for _ in 0..BLOCK_RUNS {
            times.push(timed(options)?.0);
        }
        Ok(())
    };
    // The machine probe's runs, timed like the query's, and the time they
    // took (not counted against the query's `min_time`).
    let (mut probe_ones, mut probe_alls) = (Vec::new(), Vec::new());
    let (mut handoff_ones, mut handoff_alls) = (Vec::new(), Vec::new());
    let mut probe_time = Duration::ZERO;
    let mut trips = Vec::new();
    let probe_block = |run: &dyn Fn(usize, u64) -> Duration,
                       threads: usize,
                       seed: u64,
                       times: &mut Vec<Duration>| {
        // The lead-in lasts as long as a short query's would, at least
        // (one 0.3 ms probe run does not bring an idle core back up).
        let lead_in = Instant::now();
        while lead_in.elapsed() < machine::LEAD_IN {
            run(threads, seed);
        }
        for run_number in 0..BLOCK_RUNS as u64 {
            times.push(run(threads, seed + run_number + 1));
        }
    };
    let memory = |threads: usize, seed: u64| probe.run(threads, seed);
    let handoff = |threads: usize, seed: u64| probe.run_handoff(threads, seed);
    let started = Instant::now();
    let mut round = 0;
    while ones.len() < runs.max(1)
        || (started.elapsed().saturating_sub(probe_time) < min_time && round < MAX_ROUNDS)
    {
        // Which block runs first alternates, so neither always follows
        // the other.
        if round % 2 == 0 {
            block(&single, &mut ones)?;
            block(&parallel, &mut alls)?;
        } else {
            block(&parallel, &mut alls)?;
            block(&single, &mut ones)?;
        }
        if let Some(f) = &spec.reference {
            refs.push(f().0);
        }
        let probing = Instant::now();
        let seed = round as u64 * 16;
        if round % 2 == 0 {
            probe_block(&memory, 1, seed, &mut probe_ones);
            probe_block(&memory, workers, seed + 8, &mut probe_alls);
            probe_block(&handoff, 1, seed, &mut handoff_ones);
            probe_block(&handoff, workers, seed + 8, &mut handoff_alls);
        } else {
            probe_block(&memory, workers, seed + 8, &mut probe_alls);
            probe_block(&memory, 1, seed, &mut probe_ones);
            probe_block(&handoff, workers, seed + 8, &mut handoff_alls);
            probe_block(&handoff, 1, seed, &mut handoff_ones);
        }
        trips.extend(probe.round_trip());
        probe_time += probing.elapsed();
        round += 1;
    }
    // Each probe worker does the work of the single-worker run.
    let machine = paired_speedup(&probe_ones, &probe_alls).map(|r| r * workers as f64);
    let handoff = paired_speedup(&handoff_ones, &handoff_alls).map(|r| r * workers as f64);
    let [first, speedup, third] = paired_speedup(&ones, &alls);
    let row = BenchRow {
        name: spec.name.to_string(),
        one: median(ones),
        all: median(alls),
        workers,
        speedup,
        speedup_quartiles: (first, third),
        rounds: round,
        units: (spec.units)(&tally_one, &spec.params),
        unit: spec.unit,
        reference: (!refs.is_empty()).then(|| median(refs)),
        attributed: profile_share(engine, &spec.query, &spec.params, out)?,
        machine,
        handoff,
        core_trip: (!trips.is_empty()).then(|| median(trips)),
    };
    let _ = writeln!(out, "{}", row.render());
    Ok(row)
}

/// Times the specs `options` selects, in order, printing each line.
fn run_selected(
    engine: &Engine,
    specs: &[Spec],
    probe: &machine::MachineProbe,
    options: &QueryBenchOptions,
    out: &mut dyn Write,
) -> Result<Vec<BenchRow>> {
    specs
        .iter()
        .filter(|s| options.selects(s.name))
        .map(|spec| run_spec(engine, spec, probe, options, out))
        .collect()
}

/// Runs the suite, printing each line to `out` as it completes.
pub fn run_query_bench(options: &QueryBenchOptions, out: &mut dyn Write) -> Result<Vec<BenchRow>> {
    let workers = rhizome_exec::scheduler::WorkerPool::global().threads();
    let _ = writeln!(
        out,
        "query  1 worker      {workers} workers    speedup  throughput                    PROFILE share  machine / hand-off speedup, line / reference"
    );
    let probe = machine::MachineProbe::new();
    let mut results = Vec::new();
    if options.run_likes {
        let engine = likes_engine(options)?;
        let snapshot = engine.database().snapshot();
        let l = &options.likes;
        let persons = random_ids(options.a1_lookups, l.persons, 1);
        let items = random_ids(options.a2_lookups, l.items, 2);
        let start_person = random_ids(1, l.persons, 3)[0];
        let ids = |v: &[i64]| {
            BTreeMap::from([(
                "ids".to_string(),
                Value::List(v.iter().map(|&i| Value::Int(i)).collect()),
            )])
        };
        let id = BTreeMap::from([("id".to_string(), Value::Int(start_person))]);
        let refs = reference::LikesReference::new(&snapshot)?;
        let specs = [
            Spec {
                name: "A1",
                query: A1.into(),
                params: ids(&persons),
                unit: "lookups",
                units: |_, p| list_len(p),
                reference: Some({
                    let (r, v) = (refs.clone(), persons.clone());
                    Box::new(move || r.a1(&v))
                }),
            },
            Spec {
                name: "A2",
                query: A2.into(),
                params: ids(&items),
                unit: "lookups",
                units: |_, p| list_len(p),
                reference: Some({
                    let (r, v) = (refs.clone(), items.clone());
                    Box::new(move || r.a2(&v))
                }),
            },
            Spec {
                name: "A3",
                query: A3.into(),
                params: id.clone(),
                unit: "paths",
                units: |tally, _| tally.count() as f64,
                reference: Some({
                    let r = refs.clone();
                    Box::new(move || r.a3(start_person, false))
                }),
            },
            Spec {
                name: "A4",
                query: A4.into(),
                params: id,
                unit: "paths",
                units: |tally, _| tally.count() as f64,
                reference: Some({
                    let r = refs.clone();
                    Box::new(move || r.a3(start_person, true))
                }),
            },
        ];
        results.extend(run_selected(&engine, &specs, &probe, options, out)?);
    }
    if options.run_chain {
        let engine = chain_engine(options)?;
        let rows = |tally: &Tally, _: &BTreeMap<String, Value>| tally.rows as f64;
        let specs = [
            Spec {
                name: "SQ1",
                query: "MATCH (n) RETURN n".into(),
                params: BTreeMap::new(),
                unit: "rows",
                units: rows,
                reference: None,
            },
            Spec {
                name: "SQ2",
                query: "MATCH (n) WHERE (n.id % 7) / (n.id % 5 + 1) > n.id % 3 RETURN n".into(),
                params: BTreeMap::new(),
                unit: "rows",
                units: rows,
                reference: None,
            },
            Spec {
                name: "SQ3",
                query: SQ3.into(),
                params: BTreeMap::new(),
                unit: "paths",
                units: |tally, _| tally.count() as f64,
                reference: None,
            },
            Spec {
                name: "SQ4",
                query: "MATCH (n:LBL_10M) RETURN n ORDER BY n.idMod7 DESC, n.id ASC".into(),
                params: BTreeMap::new(),
                unit: "rows",
                units: rows,
                reference: None,
            },
            Spec {
                name: "SQ5",
                query: "MATCH (m)--(n) WHERE m.id % 1113 = 7 RETURN n ORDER BY m.idMod7 DESC"
                    .into(),
                params: BTreeMap::new(),
                unit: "rows",
                units: rows,
                reference: None,
            },
        ];
        results.extend(run_selected(&engine, &specs, &probe, options, out)?);
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speedup_pairs_each_round() {
        let ms = Duration::from_millis;
        // The machine halves its speed in the middle of round 3: the
        // columns' medians are both 2 ms (a speedup of 1); all rounds but
        // that one say 2.
        let ones = [ms(2), ms(2), ms(2), ms(4), ms(4)];
        let alls = [ms(1), ms(1), ms(2), ms(2), ms(2)];
        assert_eq!(median(ones.to_vec()), median(alls.to_vec()));
        assert_eq!(paired_speedup(&ones, &alls)[1], 2.0);
        assert_eq!(paired_speedup(&[], &[]), [0.0; 3]);
        // Ratios 1..=5: quartiles 2 and 4 around the median 3.
        let ones: Vec<Duration> = (1..=5).map(ms).collect();
        assert_eq!(paired_speedup(&ones, &[ms(1); 5]), [2.0, 3.0, 4.0]);
    }
}
