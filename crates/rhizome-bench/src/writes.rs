//! Write benchmarks (issues 5 and 19): bulk `UNWIND $rows AS r CREATE …` in
//! rows per second, durable single-row transactions per second (one writer
//! and 16, against the disk's raw `fdatasync` rate), the likes queries A1–A4
//! over base + a large uncheckpointed delta against the same queries after a
//! checkpoint, incremental against full checkpoints (likes graph and chain
//! graph, the latter with SQ3 before and after), and one-statement
//! processes. [`WritePhase`] selects what runs.
//!
//! Every phase works on copies under `<data dir>/writes-work`, so the cached
//! likes database of the query suite stays untouched. The delta read
//! comparison uses two databases with the same content: the one the writes
//! went to (base + delta, never checkpointed) and a copy of it that was
//! reopened (replaying its log) and checkpointed. Rounds alternate between
//! the two, so both see the same machine load.

use crate::{cached_dir, count_of, likes_db, median, random_ids, A1, A2, A3, A4, SQ3};
use rhizome_common::{Error, Result, Value};
use rhizome_engine::{Engine, QueryOptions};
use rhizome_import::generate::{generate_chain, ChainOptions};
use rhizome_import::LikesOptions;
use rhizome_storage::{Database, DatabaseOptions, GraphBuilder, Snapshot};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A part of the write benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePhase {
    /// Bulk node creation, durable single-row commits (one writer, 16
    /// writers) and the raw `fdatasync` rate.
    Commits,
    /// A1–A4 on the likes graph over a large delta against after a checkpoint.
    Reads,
    /// Incremental against full checkpoint on the likes graph.
    Checkpoint,
    /// Incremental against full checkpoint on the chain graph, and SQ3
    /// over the delta against after the checkpoint.
    Chain,
    /// One-statement `rhizome query` processes (needs the binary).
    Processes,
}

impl WritePhase {
    /// Every phase, in the order they run.
    pub const ALL: [WritePhase; 5] = [
        WritePhase::Commits,
        WritePhase::Reads,
        WritePhase::Checkpoint,
        WritePhase::Chain,
        WritePhase::Processes,
    ];

    /// The phase named `name` (`commits`, `reads`, `checkpoint`, `chain`,
    /// `processes`), or an `ArgumentError` listing them.
    pub fn parse(name: &str) -> Result<WritePhase> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "commits" => WritePhase::Commits,
            "reads" => WritePhase::Reads,
            "checkpoint" => WritePhase::Checkpoint,
            "chain" => WritePhase::Chain,
            "processes" => WritePhase::Processes,
            other => {
                return Err(Error::new(
                    rhizome_common::ErrorKind::ArgumentError,
                    format!(
                        "unknown write benchmark phase `{other}`: use commits, reads, \
                         checkpoint, chain or processes"
                    ),
                ))
            }
        })
    }
}

/// What the write benchmark runs.
#[derive(Debug, Clone)]
pub struct WriteBenchOptions {
    /// The phases to run.
    pub phases: Vec<WritePhase>,
    /// The chain graph of the chain phase.
    pub chain: ChainOptions,
    /// Chain phase: every `chain_every`-th node gets new relationships
    /// (100: 1% of the nodes, as issue 19 names).
    pub chain_every: u64,
    /// Chain phase: new relationships per chosen node (50: 1% more
    /// relationships at degree 50).
    pub chain_new_per_node: u64,
    /// Where generated databases are cached and the work copies live.
    pub data_dir: PathBuf,
    /// Timed rounds per read query and database (after one warm-up round).
    pub runs: usize,
    /// The base likes graph (the real generator, imported).
    pub likes: LikesOptions,
    /// Nodes created by the bulk node phase.
    pub bulk_nodes: usize,
    /// Rows per `$rows` batch (one transaction each).
    pub batch: usize,
    /// Durable single-row transactions.
    pub single: usize,
    /// New persons written to the likes graph, per base person.
    pub new_person_share: f64,
    /// Every `extra_every`-th base person gets `likes_per_person` more likes.
    pub extra_every: u64,
    /// Person ids looked up by A1.
    pub a1_lookups: usize,
    /// Item ids looked up by A2.
    pub a2_lookups: usize,
    /// Workers per read query (`None`: all).
    pub threads: Option<usize>,
    /// The `rhizome` binary: if given, one-statement `rhizome query`
    /// processes are timed on a copy of the likes graph (CREATE against
    /// RETURN 1).
    pub binary: Option<PathBuf>,
    /// Interleaved rounds of the process comparison.
    pub process_runs: usize,
}

impl Default for WriteBenchOptions {
    /// 1M bulk nodes in batches of 10k, 16,000 single-row transactions, the
    /// default likes graph (100k persons, 2k items, 10M likes) plus 10% new
    /// persons with their likes and 5% more likes of existing persons; the
    /// issue's chain graph (1M nodes of degree 50) with 50 new
    /// relationships on every 100th node.
    fn default() -> WriteBenchOptions {
        WriteBenchOptions {
            phases: WritePhase::ALL.to_vec(),
            chain: ChainOptions {
                nodes: 1_000_000,
                degree: 50,
            },
            chain_every: 100,
            chain_new_per_node: 50,
            data_dir: crate::default_data_dir(),
            runs: 5,
            likes: LikesOptions::default(),
            bulk_nodes: 1_000_000,
            batch: 10_000,
            single: 16_000,
            new_person_share: 0.10,
            extra_every: 20,
            a1_lookups: 100_000,
            a2_lookups: 10_000,
            threads: Some(1),
            binary: None,
            process_runs: 11,
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone, Default)]
pub struct WriteBenchReport {
    /// Bulk node creation, rows per second (statements and commits).
    pub bulk_nodes_per_sec: f64,
    /// Bulk relationship creation between indexed nodes, rows per second.
    pub bulk_rels_per_sec: f64,
    /// Durable single-row autocommit transactions per second.
    pub single_tx_per_sec: f64,
    /// The same with 16 writer threads at once (group commit).
    pub group_tx_per_sec: f64,
    /// Relationships of the likes graph the writes added, as a share of the base's.
    pub delta_share: f64,
    /// A1–A4 on base + delta and after a checkpoint.
    pub reads: Vec<ReadRow>,
    /// Median wall time of a `rhizome query DB 'CREATE …'` process and of a
    /// `rhizome query DB 'RETURN 1'` process (when a binary was given).
    pub processes: Option<(Duration, Duration)>,
    /// After likes were added to 1% of the persons: an incremental
    /// checkpoint (delta file) and a full rewrite of the same content.
    pub checkpoints: Option<(Duration, Duration)>,
    /// The same on the chain graph (relationships added to 1% of the nodes).
    pub chain_checkpoints: Option<(Duration, Duration)>,
    /// SQ3 on the chain graph over its delta and after the checkpoint.
    pub chain_reads: Option<ReadRow>,
}

/// One read query on both databases.
#[derive(Debug, Clone)]
pub struct ReadRow {
    /// A1 … A4.
    pub name: &'static str,
    /// Median over base + delta.
    pub delta: Duration,
    /// Median after the checkpoint.
    pub checkpointed: Duration,
    /// Median CPU time of the process (all workers) per run over base + delta.
    pub delta_cpu: Duration,
    /// Median CPU time of the process per run after the checkpoint.
    pub checkpointed_cpu: Duration,
    /// The count both returned.
    pub answer: i64,
}

impl ReadRow {
    /// Time on the delta over time after the checkpoint (issue 19 target: ≤ 1.5).
    pub fn ratio(&self) -> f64 {
        self.delta.as_secs_f64() / self.checkpointed.as_secs_f64().max(1e-9)
    }

    /// CPU time on the delta over CPU time after the checkpoint: steadier
    /// than wall time on a loaded machine, where a process often gets a
    /// fraction of a core.
    pub fn cpu_ratio(&self) -> f64 {
        self.delta_cpu.as_secs_f64() / self.checkpointed_cpu.as_secs_f64().max(1e-9)
    }

    /// The CPU figures as printed after a ratio: `; CPU 3.10 / 2.90 ms 1.07x`.
    fn cpu_text(&self) -> String {
        format!(
            "; CPU {:.2} / {:.2} ms {:.2}x",
            ms(self.delta_cpu),
            ms(self.checkpointed_cpu),
            self.cpu_ratio()
        )
    }
}

/// CPU time (user + system) of this process so far, every thread included.
fn process_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Wall and CPU time of `run`, with its result.
fn timed_cpu<T>(run: impl FnOnce() -> Result<T>) -> Result<(Duration, Duration, T)> {
    let (t, cpu) = (Instant::now(), process_cpu());
    let value = run()?;
    Ok((t.elapsed(), process_cpu().saturating_sub(cpu), value))
}

/// Time spent in statements and in commits of a batched load.
#[derive(Debug, Clone, Copy, Default)]
struct LoadTime {
    rows: usize,
    statements: Duration,
    commits: Duration,
}

impl LoadTime {
    fn total(&self) -> Duration {
        self.statements + self.commits
    }

    fn rate(&self) -> f64 {
        self.rows as f64 / self.total().as_secs_f64().max(1e-9)
    }

    fn render(&self, what: &str, batch: usize) -> String {
        format!(
            "{what}: {} rows in batches of {batch}: {:.2} s = {:.0} rows/s (statements {:.2} s, commits incl. fsync {:.2} s)",
            self.rows,
            self.total().as_secs_f64(),
            self.rate(),
            self.statements.as_secs_f64(),
            self.commits.as_secs_f64()
        )
    }
}

/// Opens `dir` without automatic checkpoints, so the delta stays a delta.
fn open_without_checkpoints(dir: &Path) -> Result<Engine> {
    let options = DatabaseOptions {
        checkpoint_wal_bytes: u64::MAX,
        checkpoint_delta_bytes: u64::MAX,
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    Ok(Engine::new(Database::open_with(dir, options)?))
}

/// An empty work directory `name` under the data directory.
fn work_dir(options: &WriteBenchOptions, name: &str) -> Result<PathBuf> {
    let dir = options.data_dir.join("writes-work").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display(), e))?;
    Ok(dir)
}

/// Copies the files of database directory `from` into `to` (created).
fn copy_db(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to.display(), e))?;
    let entries = std::fs::read_dir(from).map_err(|e| Error::io(from.display(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(from.display(), e))?;
        if entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
            let target = to.join(entry.file_name());
            std::fs::copy(entry.path(), &target).map_err(|e| Error::io(target.display(), e))?;
        }
    }
    Ok(())
}

/// Runs `query` once per batch of `rows` (as `$rows`), each batch in its own
/// transaction; statement and commit time are measured apart.
fn load(
    engine: &Engine,
    query: &str,
    rows: usize,
    batch: usize,
    mut row: impl FnMut(usize) -> Value,
) -> Result<LoadTime> {
    let mut time = LoadTime::default();
    let mut start = 0;
    while start < rows {
        let end = (start + batch.max(1)).min(rows);
        let list = Value::List((start..end).map(&mut row).collect());
        let params = BTreeMap::from([("rows".to_string(), list)]);
        let mut tx = engine.begin()?;
        let t = Instant::now();
        tx.execute(query, params, &QueryOptions::default())?;
        let t_commit = Instant::now();
        time.statements += t_commit - t;
        tx.commit()?;
        time.commits += t_commit.elapsed();
        time.rows += end - start;
        start = end;
    }
    Ok(time)
}

/// A map value from `(key, value)` pairs.
fn map<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// Runs the benchmark, printing each result line to `out` as it completes.
pub fn run_write_bench(
    options: &WriteBenchOptions,
    out: &mut dyn Write,
) -> Result<WriteBenchReport> {
    let mut report = WriteBenchReport::default();
    let _ = writeln!(
        out,
        "writes benchmark ({} cores; figures of one run, compare them as ratios)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let runs = |phase| options.phases.contains(&phase);
    if runs(WritePhase::Commits) {
        bulk_and_single(options, out, &mut report)?;
    }
    if runs(WritePhase::Reads) {
        delta_reads(options, out, &mut report)?;
    }
    if runs(WritePhase::Checkpoint) {
        checkpoint_costs(options, out, &mut report)?;
    }
    if runs(WritePhase::Chain) {
        chain_checkpoint(options, out, &mut report)?;
    }
    if let (Some(binary), true) = (&options.binary, runs(WritePhase::Processes)) {
        let base = likes_db(&options.data_dir, &options.likes)?;
        let dir = work_dir(options, "processes")?.join("db");
        copy_db(&base, &dir)?;
        let (create, read) = process_costs(binary, &dir, options.process_runs)?;
        let _ = writeln!(
            out,
            "one-row CREATE process: {:.1} ms, RETURN 1 process: {:.1} ms (medians of {} interleaved runs; ratio {:.2}, +{:.1} ms; target <= 2.00 or <= +20 ms)",
            ms(create),
            ms(read),
            options.process_runs,
            create.as_secs_f64() / read.as_secs_f64().max(1e-9),
            ms(create) - ms(read)
        );
        report.processes = Some((create, read));
        let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(&dir));
    }
    Ok(report)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Medians of `runs` interleaved wall times of `binary query DB 'CREATE …'`
/// (a durable one-row commit) and `binary query DB 'RETURN 1'` processes.
pub fn process_costs(binary: &Path, db: &Path, runs: usize) -> Result<(Duration, Duration)> {
    let run = |query: &str, i: usize| -> Result<Duration> {
        let t = Instant::now();
        let status = std::process::Command::new(binary)
            .arg("query")
            .arg(db)
            .arg(query)
            .args(["--param", &format!("i={i}"), "--format", "csv"])
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| Error::io(binary.display(), e))?;
        let elapsed = t.elapsed();
        if !status.success() {
            return Err(Error::new(
                rhizome_common::ErrorKind::IoError,
                format!("`{} query` failed running {query}", binary.display()),
            ));
        }
        Ok(elapsed)
    };
    let (mut create, mut read) = (Vec::new(), Vec::new());
    // One untimed run of each warms the page cache.
    run("RETURN 1", 0)?;
    run("CREATE (:BenchProbe {i: $i})", 0)?;
    for i in 0..runs.max(1) {
        create.push(run("CREATE (:BenchProbe {i: $i})", i + 1)?);
        read.push(run("RETURN 1", i)?);
    }
    Ok((median(create), median(read)))
}

/// Bulk node creation and durable single-row transactions on an empty database.
fn bulk_and_single(
    options: &WriteBenchOptions,
    out: &mut dyn Write,
    report: &mut WriteBenchReport,
) -> Result<()> {
    let dir = work_dir(options, "bulk")?.join("db");
    GraphBuilder::new().write(&dir)?;
    let engine = open_without_checkpoints(&dir)?;
    let nodes = load(
        &engine,
        "UNWIND $rows AS r CREATE (:Person {id: r.id, name: r.name, score: r.score})",
        options.bulk_nodes,
        options.batch,
        |i| {
            map([
                ("id", Value::Int(i as i64)),
                ("name", Value::String(format!("person-{i}"))),
                ("score", Value::Float((i % 1000) as f64 / 10.0)),
            ])
        },
    )?;
    report.bulk_nodes_per_sec = nodes.rate();
    let _ = writeln!(
        out,
        "{}",
        nodes.render(
            "bulk UNWIND $rows AS r CREATE (:Person {id, name, score})",
            options.batch
        )
    );

    // One writer, 16 writers and the raw sync rate run in alternating
    // blocks, so that all three see the same disk and machine load.
    let query = "CREATE (:Single {i: $i})";
    let threads = 16;
    let blocks = SYNC_BLOCKS.min(options.single.max(1));
    let per_block = options.single.div_ceil(blocks);
    let per_thread = per_block.div_ceil(threads);
    let (mut single, mut group, mut raw) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut raw_reserved, mut group_cpu) = (Duration::ZERO, Duration::ZERO);
    let mut next_id = 0i64;
    // `count` durable single-row commits by this thread, ids going on.
    let mut commit_singles = |count: usize| -> Result<()> {
        for _ in 0..count {
            let params = BTreeMap::from([("i".to_string(), Value::Int(next_id))]);
            next_id += 1;
            engine.execute(query, params, &QueryOptions::default())?;
        }
        Ok(())
    };
    let baseline = dir.join("fsync-baseline");
    let mut sync_file =
        std::fs::File::create(&baseline).map_err(|e| Error::io(baseline.display(), e))?;
    let reserved_path = dir.join("fsync-baseline-reserved");
    let mut reserved = ReservedFile::create(&reserved_path, (blocks * per_block) as u64 * 64)?;
    let writers = GroupWriters::new(threads);
    std::thread::scope(|scope| -> Result<()> {
        let _stop = writers.start(scope, &engine, per_thread);
        // One untimed round of the writers first: their first commits
        // pay for fresh allocator heaps and stacks (the first timed block
        // used to take 26-49 ms against 25-33 ms for the others).
        commit_singles(per_block / 4)?;
        writers.block()?;
        for _ in 0..blocks {
            raw += fsync_time(&mut sync_file, &baseline, per_block)?;
            raw_reserved += reserved.fsync_time(per_block)?;
            let start = Instant::now();
            commit_singles(per_block)?;
            single += start.elapsed();
            let cpu = process_cpu();
            group += writers.block()?;
            group_cpu += process_cpu().saturating_sub(cpu);
        }
        Ok(())
    })?;
    drop((sync_file, reserved));
    let _ = std::fs::remove_file(&baseline);
    let _ = std::fs::remove_file(&reserved_path);
    let singles = blocks * per_block;
    let raw = singles as f64 / raw.as_secs_f64().max(1e-9);
    let raw_reserved = singles as f64 / raw_reserved.as_secs_f64().max(1e-9);
    report.single_tx_per_sec = singles as f64 / single.as_secs_f64().max(1e-9);
    let _ = writeln!(
        out,
        "raw 64-byte append + fdatasync on the same disk: {raw:.0} /s ({singles} syncs in {blocks} blocks alternating with the rows below)"
    );
    let _ = writeln!(
        out,
        "raw 64-byte write into reserved space + fdatasync (as the log writes): {raw_reserved:.0} /s (the same blocks)"
    );
    let _ = writeln!(
        out,
        "single-row autocommit `{query}`, durable commit, one writer: {singles} transactions in {:.2} s = {:.0} tx/s ({:.3} ms each) = {:.0}% of the raw sync rate (target >= 80%), {:.0}% of the reserved-space rate",
        single.as_secs_f64(),
        report.single_tx_per_sec,
        single.as_secs_f64() * 1e3 / singles.max(1) as f64,
        report.single_tx_per_sec / raw.max(1e-9) * 100.0,
        report.single_tx_per_sec / raw_reserved.max(1e-9) * 100.0
    );
    let grouped = blocks * threads * per_thread;
    let rate = grouped as f64 / group.as_secs_f64().max(1e-9);
    report.group_tx_per_sec = rate;
    let _ = writeln!(
        out,
        "{threads} concurrent single-row writers (group commit, after an untimed block): {grouped} transactions in {:.2} s = {rate:.0} tx/s = {:.0}% of {threads} x the raw sync rate (target >= 50%), {:.0}% of {threads} x the reserved-space rate; CPU {:.1} µs a commit ({:.2} of {} cores busy)",
        group.as_secs_f64(),
        rate / (raw * threads as f64).max(1e-9) * 100.0,
        rate / (raw_reserved * threads as f64).max(1e-9) * 100.0,
        group_cpu.as_secs_f64() * 1e6 / grouped.max(1) as f64,
        group_cpu.as_secs_f64() / group.as_secs_f64().max(1e-9),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    drop(engine);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(&dir));
    Ok(())
}

/// Blocks the durable-commit measurements alternate in.
const SYNC_BLOCKS: usize = 8;

/// Appends and syncs `n` small records to `file` (at `path`, for errors):
/// the disk's limit for durable commits.
fn fsync_time(file: &mut std::fs::File, path: &Path, n: usize) -> Result<Duration> {
    let start = Instant::now();
    for _ in 0..n {
        file.write_all(&[7u8; 64])
            .and_then(|_| file.sync_data())
            .map_err(|e| Error::io(path.display(), e))?;
    }
    Ok(start.elapsed())
}

/// A file whose space was reserved and zeroed before it is written, as
/// the write-ahead log reserves its own
/// ([`rhizome_storage::io::reserve_zeroed`]): writing into it and syncing
/// changes no file size and converts no extent, so `fdatasync` has no
/// metadata to write.
struct ReservedFile {
    file: std::fs::File,
    path: std::path::PathBuf,
    at: u64,
}

impl ReservedFile {
    fn create(path: &Path, bytes: u64) -> Result<ReservedFile> {
        let err = |e: std::io::Error| Error::io(path.display(), e);
        let file = std::fs::File::create(path).map_err(err)?;
        if !rhizome_storage::io::reserve_zeroed(&file, 0, bytes.max(64)).map_err(err)? {
            return Err(err(std::io::Error::other(
                "the file system cannot reserve space (fallocate)",
            )));
        }
        file.sync_all().map_err(err)?;
        Ok(ReservedFile {
            file,
            path: path.to_path_buf(),
            at: 0,
        })
    }

    /// Writes and syncs `n` small records after the ones before.
    fn fsync_time(&mut self, n: usize) -> Result<Duration> {
        use std::os::unix::fs::FileExt;
        let start = Instant::now();
        for _ in 0..n {
            self.file
                .write_all_at(&[7u8; 64], self.at)
                .and_then(|_| self.file.sync_data())
                .map_err(|e| Error::io(self.path.display(), e))?;
            self.at += 64;
        }
        Ok(start.elapsed())
    }
}

/// The writer threads of the group-commit measurement: started once and
/// reused by every block, so that a block times commits, not thread
/// start-up (a new thread's first allocations fault in fresh memory).
struct GroupWriters {
    threads: usize,
    /// Every writer and the caller meet here at a block's start and end.
    gate: std::sync::Barrier,
    /// Set (before the start gate) when no block follows.
    done: std::sync::atomic::AtomicBool,
    /// The first error of a writer.
    error: std::sync::Mutex<Option<Error>>,
}

/// Ends the writers of [`GroupWriters::start`] when dropped (also when a
/// block fails), so the scope they run in can end.
struct StopWriters<'a>(&'a GroupWriters);

impl Drop for StopWriters<'_> {
    fn drop(&mut self) {
        self.0.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.0.gate.wait();
    }
}

impl GroupWriters {
    fn new(threads: usize) -> GroupWriters {
        GroupWriters {
            threads,
            gate: std::sync::Barrier::new(threads + 1),
            done: std::sync::atomic::AtomicBool::new(false),
            error: std::sync::Mutex::new(None),
        }
    }

    /// Starts the writers in `scope`: in each block, each commits
    /// `per_thread` single-row `CREATE`s through `engine` (ids go on from
    /// block to block).
    fn start<'scope, 'env>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        engine: &'env Engine,
        per_thread: usize,
    ) -> StopWriters<'env> {
        for t in 0..self.threads {
            // Named, so that a profile can tell the writers' samples apart.
            let builder = std::thread::Builder::new().name(format!("group-writer-{t}"));
            let spawned = builder.spawn_scoped(scope, move || {
                let mut next = (t * per_thread) as i64;
                loop {
                    self.gate.wait();
                    if self.done.load(std::sync::atomic::Ordering::SeqCst) {
                        return;
                    }
                    for _ in 0..per_thread {
                        let params = BTreeMap::from([("i".to_string(), Value::Int(next))]);
                        next += 1;
                        let outcome = engine.execute(
                            "CREATE (:Group {i: $i})",
                            params,
                            &QueryOptions::default(),
                        );
                        if let Err(e) = outcome {
                            let mut first = self.error.lock().unwrap_or_else(|p| p.into_inner());
                            first.get_or_insert(e);
                            break;
                        }
                    }
                    self.gate.wait();
                    next += ((self.threads - 1) * per_thread) as i64;
                }
            });
            spawned.expect("spawning a group writer thread");
        }
        StopWriters(self)
    }

    /// Runs one block: every writer commits its share at once (group
    /// commit); returns the wall time from the start to the last commit.
    fn block(&self) -> Result<Duration> {
        self.gate.wait();
        let start = Instant::now();
        self.gate.wait();
        let elapsed = start.elapsed();
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(elapsed),
        }
    }
}

/// Writes persons and likes to a copy of the likes graph, then compares
/// A1–A4 on base + delta with the same queries after a checkpoint.
fn delta_reads(
    options: &WriteBenchOptions,
    out: &mut dyn Write,
    report: &mut WriteBenchReport,
) -> Result<()> {
    let l = &options.likes;
    let base = likes_db(&options.data_dir, l)?;
    let work = work_dir(options, "likes")?;
    let delta_dir = work.join("delta");
    copy_db(&base, &delta_dir)?;
    let delta = open_without_checkpoints(&delta_dir)?;

    // New persons, then their likes and extra likes of every k-th base person.
    let new_persons = (l.persons as f64 * options.new_person_share) as u64;
    let persons = load(
        &delta,
        "UNWIND $rows AS r CREATE (:Person {id: r.id})",
        new_persons as usize,
        options.batch,
        |i| map([("id", Value::Int((l.persons + i as u64) as i64))]),
    )?;
    let _ = writeln!(
        out,
        "{}",
        persons.render(
            "likes graph: new persons CREATE (:Person {id})",
            options.batch
        )
    );
    let every = options.extra_every.max(1);
    let mut likers: Vec<i64> = (l.persons..l.persons + new_persons)
        .chain((0..l.persons).step_by(every as usize))
        .map(|p| p as i64)
        .collect();
    likers.sort_unstable();
    let per = l.likes_per_person as usize;
    let total = likers.len() * per;
    let items = random_ids(total, l.items.max(1), 11);
    let weights = random_ids(total, 10_000, 12);
    let likes = load(
        &delta,
        "UNWIND $rows AS r MATCH (a:Person {id: r.a}), (b:Item {id: r.b}) CREATE (a)-[:LIKES {weight: r.w}]->(b)",
        total,
        options.batch,
        |i| {
            map([
                ("a", Value::Int(likers[i / per.max(1)])),
                ("b", Value::Int(items[i])),
                ("w", Value::Float(weights[i] as f64 / 1000.0)),
            ])
        },
    )?;
    report.bulk_rels_per_sec = likes.rate();
    let _ = writeln!(
        out,
        "{}",
        likes.render(
            "bulk UNWIND $rows AS r MATCH (a:Person {id: r.a}), (b:Item {id: r.b}) CREATE (a)-[:LIKES {weight: r.w}]->(b)",
            options.batch
        )
    );
    let base_likes = l.persons * l.likes_per_person;
    report.delta_share = total as f64 / base_likes.max(1) as f64;
    let _ = writeln!(
        out,
        "delta: {new_persons} new persons, {total} new LIKES = {:.1}% of the base's {base_likes} (not checkpointed)",
        report.delta_share * 100.0
    );

    // The same content, checkpointed: a copy reopened (log replay) and checkpointed.
    let ckpt_dir = work.join("checkpointed");
    copy_db(&delta_dir, &ckpt_dir)?;
    let t = Instant::now();
    let checkpointed = open_without_checkpoints(&ckpt_dir)?;
    let replay = t.elapsed();
    let t = Instant::now();
    checkpointed.database().checkpoint_full()?;
    let _ = writeln!(
        out,
        "reopen with log replay {:.2} s, full checkpoint {:.2} s",
        replay.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );

    report.reads = compare_reads(options, &delta, &checkpointed, new_persons, out)?;
    drop((delta, checkpointed));
    // RHIZOME_BENCH_KEEP leaves both databases in place for inspection
    // (`rhizome query`, `perf`).
    if std::env::var_os("RHIZOME_BENCH_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(())
}

/// An incremental checkpoint against a full rewrite of the same content:
/// `likes_per_person` new likes for every 100th base person (1% of the
/// persons, about 1% of the base's relationships), then the same database
/// checkpointed both ways (two copies).
fn checkpoint_costs(
    options: &WriteBenchOptions,
    out: &mut dyn Write,
    report: &mut WriteBenchReport,
) -> Result<()> {
    let l = &options.likes;
    let base = likes_db(&options.data_dir, l)?;
    let work = work_dir(options, "checkpoints")?;
    let incr_dir = work.join("incremental");
    copy_db(&base, &incr_dir)?;
    let engine = open_without_checkpoints(&incr_dir)?;
    let likers: Vec<i64> = (0..l.persons).step_by(100).map(|p| p as i64).collect();
    let per = l.likes_per_person as usize;
    let total = likers.len() * per;
    let items = random_ids(total, l.items.max(1), 21);
    let weights = random_ids(total, 10_000, 22);
    load(
        &engine,
        "UNWIND $rows AS r MATCH (a:Person {id: r.a}), (b:Item {id: r.b}) CREATE (a)-[:LIKES {weight: r.w}]->(b)",
        total,
        options.batch,
        |i| {
            map([
                ("a", Value::Int(likers[i / per.max(1)])),
                ("b", Value::Int(items[i])),
                ("w", Value::Float(weights[i] as f64 / 1000.0)),
            ])
        },
    )?;
    drop(engine);
    let full_dir = work.join("full");
    copy_db(&incr_dir, &full_dir)?;
    let no_auto = DatabaseOptions {
        checkpoint_wal_bytes: u64::MAX,
        checkpoint_delta_bytes: u64::MAX,
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&incr_dir, no_auto.clone())?;
    let t = Instant::now();
    db.checkpoint()?;
    let incremental = t.elapsed();
    drop(db);
    let delta_bytes = rhizome_storage::manifest::Manifest::read(&incr_dir)?
        .delta
        .map(|d| d.len);
    let t = Instant::now();
    let reopened = Database::open_with(&incr_dir, no_auto.clone())?;
    let reopen = t.elapsed();
    drop(reopened);
    let db = Database::open_with(&full_dir, no_auto)?;
    let t = Instant::now();
    db.checkpoint_full()?;
    let full = t.elapsed();
    drop(db);
    let base_likes = l.persons * l.likes_per_person;
    let kind = match delta_bytes {
        Some(b) => format!("incremental (delta file {:.1} MB)", b as f64 / 1e6),
        None => "full (the delta outgrew the ratio)".to_string(),
    };
    let _ = writeln!(
        out,
        "checkpoint after {total} new LIKES of {} persons ({:.1}% of the base's {base_likes}): {kind} {:.3} s vs full rewrite {:.3} s = {:.3} (target <= 0.10); reopen over the delta file {:.1} ms",
        likers.len(),
        total as f64 * 100.0 / base_likes.max(1) as f64,
        incremental.as_secs_f64(),
        full.as_secs_f64(),
        incremental.as_secs_f64() / full.as_secs_f64().max(1e-9),
        ms(reopen)
    );
    report.checkpoints = Some((incremental, full));
    if std::env::var_os("RHIZOME_BENCH_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(())
}

/// Issue 19's checkpoint case on the chain graph: `chain_new_per_node` new
/// relationships on every `chain_every`-th node (1% of the nodes, 1% more
/// relationships at the defaults) committed to a copy of the graph, then
/// an incremental checkpoint (delta file) timed against a full rewrite of
/// the same content (run right after it on the same copy). SQ3 runs on the
/// state before the checkpoints (base + in-memory delta) and after the full
/// one, in alternating rounds (two snapshots of one handle).
fn chain_checkpoint(
    options: &WriteBenchOptions,
    out: &mut dyn Write,
    report: &mut WriteBenchReport,
) -> Result<()> {
    let c = &options.chain;
    let name = format!("chain-{}-{}", c.nodes, c.degree);
    let base = cached_dir(&options.data_dir, &name, |csv| generate_chain(csv, c))?;
    let work = work_dir(options, "chain")?;
    let dir = work.join("db");
    copy_db(&base, &dir)?;
    let engine = open_without_checkpoints(&dir)?;
    let db = engine.database();
    // The generator numbers nodes 0..n in import order, which the builder keeps.
    let every = options.chain_every.max(1);
    let touched: Vec<u64> = (0..c.nodes).step_by(every as usize).collect();
    let per = options.chain_new_per_node;
    let total = touched.len() as u64 * per;
    let targets = random_ids(total as usize, c.nodes.max(1), 31);
    let t = Instant::now();
    let mut next = 0;
    for chunk in touched.chunks(options.batch.max(1).div_ceil(per.max(1) as usize)) {
        let mut tx = db.begin_write()?;
        for &node in chunk {
            for _ in 0..per {
                tx.create_relationship(node, targets[next] as u64, "REL_ONE", &[])?;
                next += 1;
            }
        }
        tx.commit()?;
    }
    let written = t.elapsed();
    let base_rels = c.nodes * c.degree;
    let delta_state = db.snapshot();
    let t = Instant::now();
    db.checkpoint()?;
    let incremental = t.elapsed();
    let delta_bytes = rhizome_storage::manifest::Manifest::read(&dir)?
        .delta
        .map(|d| d.len);
    let t = Instant::now();
    db.checkpoint_full()?;
    let full = t.elapsed();
    let kind = match delta_bytes {
        Some(b) => format!("incremental (delta file {:.1} MB)", b as f64 / 1e6),
        None => "full (the delta outgrew the ratio)".to_string(),
    };
    let _ = writeln!(
        out,
        "chain graph {} nodes, {base_rels} relationships: {total} new REL_ONE on {} nodes ({:.1}% of the nodes, {:.1}% of the relationships; committed in {:.2} s)",
        c.nodes,
        touched.len(),
        touched.len() as f64 * 100.0 / c.nodes.max(1) as f64,
        total as f64 * 100.0 / base_rels.max(1) as f64,
        written.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  checkpoint: {kind} {:.3} s vs full rewrite {:.3} s = {:.3} (target <= 0.10)",
        incremental.as_secs_f64(),
        full.as_secs_f64(),
        incremental.as_secs_f64() / full.as_secs_f64().max(1e-9)
    );
    report.chain_checkpoints = Some((incremental, full));
    let after_state = db.snapshot();
    let row = compare_on_snapshots(
        &engine,
        "SQ3",
        SQ3,
        &BTreeMap::new(),
        [delta_state, after_state],
        options,
    )?;
    let _ = writeln!(
        out,
        "  SQ3 over the delta {:.2} ms, after the full checkpoint {:.2} ms: {:.2}x (target <= 1.50; medians of {} alternating rounds, count {}{})",
        ms(row.delta),
        ms(row.checkpointed),
        row.ratio(),
        options.runs.max(1),
        row.answer,
        row.cpu_text()
    );
    report.chain_reads = Some(row);
    drop(engine);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Times `query` on two snapshots (base + delta, then checkpointed) in
/// alternating rounds after one untimed round each; the counts must agree.
fn compare_on_snapshots(
    engine: &Engine,
    name: &'static str,
    query: &str,
    params: &BTreeMap<String, Value>,
    [delta, checkpointed]: [Snapshot; 2],
    options: &WriteBenchOptions,
) -> Result<ReadRow> {
    let query_options = QueryOptions {
        threads: options.threads,
        ..QueryOptions::default()
    };
    let timed = |snapshot: &Snapshot| {
        timed_cpu(|| {
            let result = engine.execute_read_only_on(
                snapshot.clone(),
                query,
                params.clone(),
                &query_options,
                None,
                "the benchmark's snapshot",
            )?;
            Ok(count_of(&result.rows))
        })
    };
    let (_, _, a) = timed(&delta)?;
    let (_, _, b) = timed(&checkpointed)?;
    if a != b {
        return Err(Error::internal(format!(
            "{name}: {a} on base + delta but {b} after the checkpoint"
        )));
    }
    let mut rounds = Rounds::default();
    for _ in 0..options.runs.max(1) {
        rounds.delta.push(timed(&delta)?);
        rounds.checkpointed.push(timed(&checkpointed)?);
    }
    Ok(rounds.row(name, a))
}

/// The timed runs of one query on both states: (wall, CPU, count) each.
#[derive(Default)]
struct Rounds {
    delta: Vec<(Duration, Duration, i64)>,
    checkpointed: Vec<(Duration, Duration, i64)>,
}

impl Rounds {
    /// Medians of wall and CPU time on both states.
    fn row(self, name: &'static str, answer: i64) -> ReadRow {
        let pick = |runs: &[(Duration, Duration, i64)], cpu: bool| {
            median(runs.iter().map(|r| if cpu { r.1 } else { r.0 }).collect())
        };
        ReadRow {
            name,
            delta: pick(&self.delta, false),
            checkpointed: pick(&self.checkpointed, false),
            delta_cpu: pick(&self.delta, true),
            checkpointed_cpu: pick(&self.checkpointed, true),
            answer,
        }
    }
}

/// Times A1–A4 on both databases, alternating rounds.
fn compare_reads(
    options: &WriteBenchOptions,
    delta: &Engine,
    checkpointed: &Engine,
    new_persons: u64,
    out: &mut dyn Write,
) -> Result<Vec<ReadRow>> {
    let l = &options.likes;
    let ids = |v: Vec<i64>| {
        BTreeMap::from([(
            "ids".to_string(),
            Value::List(v.into_iter().map(Value::Int).collect()),
        )])
    };
    // A3/A4 start at a base person whose likes changed in the delta.
    let every = options.extra_every.max(1);
    let start = random_ids(1, (l.persons / every).max(1), 3)[0] * every as i64;
    let id = BTreeMap::from([("id".to_string(), Value::Int(start))]);
    let queries = [
        (
            "A1",
            A1,
            ids(random_ids(options.a1_lookups, l.persons + new_persons, 1)),
        ),
        ("A2", A2, ids(random_ids(options.a2_lookups, l.items, 2))),
        ("A3", A3, id.clone()),
        ("A4", A4, id),
    ];
    let query_options = QueryOptions {
        threads: options.threads,
        ..QueryOptions::default()
    };
    let workers = options.threads.map_or("all".to_string(), |t| t.to_string());
    let _ = writeln!(
        out,
        "likes reads ({workers} worker(s); A1 {} lookups, A2 {} lookups, A3/A4 from person {start}):",
        options.a1_lookups, options.a2_lookups
    );
    let _ = writeln!(
        out,
        "query  base+delta   checkpointed   delta/checkpointed (issue 19 target <= 1.50)"
    );
    let mut rows = Vec::new();
    for (name, query, params) in queries {
        let timed = |engine: &Engine| {
            timed_cpu(|| {
                let result = engine.execute(query, params.clone(), &query_options)?;
                Ok(count_of(&result.rows))
            })
        };
        if std::env::var_os("RHIZOME_BENCH_PROFILE").is_some() {
            for (label, engine) in [("base + delta", delta), ("checkpointed", checkpointed)] {
                let profiled = format!("PROFILE {query}");
                let result = engine.execute(&profiled, params.clone(), &query_options)?;
                if let Some(p) = result.profile {
                    let _ = writeln!(out, "{name} on {label}:\n{}", p.text);
                }
            }
        }
        let (_, _, a) = timed(delta)?;
        let (_, _, b) = timed(checkpointed)?;
        if a != b {
            return Err(Error::internal(format!(
                "{name}: {a} on base + delta but {b} after the checkpoint"
            )));
        }
        let mut rounds = Rounds::default();
        for _ in 0..options.runs.max(1) {
            rounds.delta.push(timed(delta)?);
            rounds.checkpointed.push(timed(checkpointed)?);
        }
        let row = rounds.row(name, a);
        let _ = writeln!(
            out,
            "{:<4} {:>10.2} ms {:>12.2} ms   {:>5.2}x {}   (count {}{})",
            row.name,
            row.delta.as_secs_f64() * 1e3,
            row.checkpointed.as_secs_f64() * 1e3,
            row.ratio(),
            if row.ratio() <= 1.5 { "ok" } else { "OVER" },
            row.answer,
            row.cpu_text()
        );
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_run_agrees_on_both_databases() {
        let dir = tempfile::tempdir().unwrap();
        let options = WriteBenchOptions {
            phases: WritePhase::ALL.to_vec(),
            chain: ChainOptions {
                nodes: 1000,
                degree: 3,
            },
            chain_every: 100,
            chain_new_per_node: 5,
            data_dir: dir.path().to_path_buf(),
            runs: 1,
            likes: LikesOptions {
                persons: 200,
                items: 20,
                likes_per_person: 5,
                seed: 7,
            },
            bulk_nodes: 500,
            batch: 128,
            single: 3,
            new_person_share: 0.1,
            extra_every: 10,
            a1_lookups: 50,
            a2_lookups: 10,
            threads: None,
            binary: None,
            process_runs: 1,
        };
        let mut out = Vec::new();
        let report = run_write_bench(&options, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(report.reads.len(), 4, "{text}");
        // 20 new persons and 20 base persons, 5 likes each, over 1000 base likes.
        assert!((report.delta_share - 0.2).abs() < 1e-9, "{text}");
        // A1 counts the likes of looked-up persons: never zero here.
        assert!(report.reads[0].answer > 0, "{text}");
        assert!(text.contains("delta/checkpointed"), "{text}");
        assert!(report.checkpoints.is_some(), "{text}");
        assert!(text.contains("vs full rewrite"), "{text}");
        assert!(report.chain_checkpoints.is_some(), "{text}");
        // SQ3 counts the paths of four hops from node 777 (the same on
        // both snapshots, or the run fails).
        let sq3 = report.chain_reads.as_ref().map_or(0, |r| r.answer);
        assert!(sq3 > 0, "{text}");
    }

    #[test]
    fn phases_parse_and_unknown_ones_are_named() {
        assert_eq!(WritePhase::parse(" Chain").unwrap(), WritePhase::Chain);
        let e = WritePhase::parse("sync").unwrap_err().to_string();
        assert!(e.contains("`sync`") && e.contains("processes"), "{e}");
    }
}
