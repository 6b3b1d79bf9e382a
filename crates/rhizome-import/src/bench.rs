//! The import benchmark (`rhizome bench import`, `cargo bench -p rhizome-import`):
//! generates the likes graph, imports it, and imports LDBC SF0.1, measuring
//! each import separately.

use crate::generate::{generate_likes, LikesOptions};
use crate::ldbc::{ldbc_options, LdbcLayout};
use crate::progress::ImportProgress;
use crate::report::{group_digits, human_bytes, peak_memory_bytes, reset_peak_memory};
use crate::{import, ImportReport};
use rhizome_common::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchOptions {
    /// The likes graph to generate and import; `None` skips it.
    pub likes: Option<LikesOptions>,
    /// An LDBC SF0.1 directory to import; `None` skips it.
    pub ldbc_sf01: Option<PathBuf>,
    /// Where generated CSV and databases go (a temporary directory, removed
    /// afterwards, when `None`).
    pub work_dir: Option<PathBuf>,
    /// Parsing threads (0: one per core).
    pub threads: usize,
}

impl Default for BenchOptions {
    /// The default likes graph, and SF0.1 from [`find_datasets_dir`] when found.
    fn default() -> BenchOptions {
        BenchOptions {
            likes: Some(LikesOptions::default()),
            ldbc_sf01: find_datasets_dir().map(|d| d.join(LdbcLayout::Sf01.dir_name())),
            work_dir: None,
            threads: 0,
        }
    }
}

/// One measured import.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchLine {
    /// What was imported (`likes`, `ldbc-sf0.1`).
    pub name: String,
    /// Time to generate the input (likes only).
    pub generate_time: Option<Duration>,
    /// The import's report: counts, time, rows/s, bytes on disk, and peak
    /// memory measured from a reset just before this import (where Linux
    /// allows the reset; otherwise the process-wide peak).
    pub report: ImportReport,
    /// Wall-clock time of each import stage (`nodes`, `relationships`, `writing`).
    pub stages: Vec<(String, Duration)>,
    /// CPU time (user + system, all threads) the import used, where the
    /// platform reports it: a measure that other load on the machine
    /// disturbs less than wall-clock time.
    pub cpu_time: Option<Duration>,
}

impl BenchLine {
    /// Bytes on disk per relationship (0 without relationships).
    pub fn bytes_per_relationship(&self) -> f64 {
        if self.report.relationships == 0 {
            0.0
        } else {
            self.report.bytes_on_disk as f64 / self.report.relationships as f64
        }
    }

    /// One line: name, rows, time, rows/s, size, bytes per relationship, peak memory.
    pub fn render(&self) -> String {
        let generate = self.generate_time.map_or(String::new(), |t| {
            format!(" (generated in {:.2} s)", t.as_secs_f64())
        });
        let stages: Vec<String> = self
            .stages
            .iter()
            .map(|(name, time)| format!("{name} {:.2} s", time.as_secs_f64()))
            .collect();
        format!(
            "import {:<12} {:>12} rows in {:>7.2} s  {:>12} rows/s  {:>10} on disk  {:>6.1} B/rel  peak {} [{}{}]{}",
            self.name,
            group_digits(self.report.rows),
            self.report.elapsed.as_secs_f64(),
            group_digits(self.report.rows_per_second().round() as u64),
            human_bytes(self.report.bytes_on_disk),
            self.bytes_per_relationship(),
            human_bytes(self.report.peak_memory_bytes),
            stages.join(", "),
            self.cpu_time.map_or(String::new(), |c| format!("; cpu {:.2} s", c.as_secs_f64())),
            generate
        )
    }
}

/// Finds `shared/datasets`: `$RHIZOME_DATASETS` if set, else the first
/// `shared/datasets` (or `datasets` beside a `shared` checkout) found walking
/// up from the current directory, then from this crate's source directory.
pub fn find_datasets_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RHIZOME_DATASETS") {
        return Some(PathBuf::from(dir));
    }
    let starts = [
        std::env::current_dir().ok(),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))),
    ];
    for start in starts.into_iter().flatten() {
        for dir in start.ancestors() {
            let candidate = dir.join("shared").join("datasets");
            if candidate.is_dir() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Forwards progress and records the wall-clock time of each stage.
struct StageTimer<'a> {
    inner: &'a dyn ImportProgress,
    current: Mutex<Option<(String, Instant)>>,
    done: Mutex<Vec<(String, Duration)>>,
}

impl ImportProgress for StageTimer<'_> {
    fn begin(&self, stage: &str, total_bytes: u64) {
        if let Ok(mut current) = self.current.lock() {
            *current = Some((stage.to_string(), Instant::now()));
        }
        self.inner.begin(stage, total_bytes);
    }

    fn advance(&self, bytes: u64, rows: u64) {
        self.inner.advance(bytes, rows);
    }

    fn end(&self) {
        self.inner.end();
        let finished = self.current.lock().ok().and_then(|mut c| c.take());
        if let (Some((stage, started)), Ok(mut done)) = (finished, self.done.lock()) {
            done.push((stage, started.elapsed()));
        }
    }
}

type Stages = Vec<(String, Duration)>;

/// CPU time (user + system) of this process so far, from `/proc/self/stat`
/// (assumes the usual 100 clock ticks per second).
fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at field 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

fn measured_import(
    db: &Path,
    options: &crate::ImportOptions,
    progress: &dyn ImportProgress,
) -> Result<(ImportReport, Stages, Option<Duration>)> {
    let timer = StageTimer {
        inner: progress,
        current: Mutex::new(None),
        done: Mutex::new(Vec::new()),
    };
    let reset = reset_peak_memory();
    let cpu_before = process_cpu_time();
    let mut report = import(db, options, &timer)?;
    let cpu_time = match (cpu_before, process_cpu_time()) {
        (Some(before), Some(after)) => Some(after.saturating_sub(before)),
        _ => None,
    };
    if reset {
        report.peak_memory_bytes = peak_memory_bytes();
    }
    let stages = timer.done.into_inner().unwrap_or_default();
    Ok((report, stages, cpu_time))
}

/// Runs the benchmark and returns one line per import. Databases are
/// written under the work directory and deleted after measuring.
pub fn run_import_bench(
    options: &BenchOptions,
    progress: &dyn ImportProgress,
) -> Result<Vec<BenchLine>> {
    let temp;
    let work: PathBuf = match &options.work_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
            dir.clone()
        }
        None => {
            temp = TempDir::new()?;
            temp.path.clone()
        }
    };
    let mut lines = Vec::new();
    if let Some(likes) = &options.likes {
        let csv = work.join("likes-csv");
        let started = Instant::now();
        let mut import_options = generate_likes(&csv, likes)?;
        let generate_time = started.elapsed();
        import_options.threads = options.threads;
        let db = work.join("likes-db");
        let _ = std::fs::remove_dir_all(&db);
        let (report, stages, cpu_time) = measured_import(&db, &import_options, progress)?;
        let _ = std::fs::remove_dir_all(&db);
        let _ = std::fs::remove_dir_all(&csv);
        lines.push(BenchLine {
            name: "likes".to_string(),
            generate_time: Some(generate_time),
            report,
            stages,
            cpu_time,
        });
    }
    if let Some(dir) = &options.ldbc_sf01 {
        let mut import_options = ldbc_options(dir, LdbcLayout::Sf01);
        import_options.threads = options.threads;
        let db = work.join("ldbc-sf0.1-db");
        let _ = std::fs::remove_dir_all(&db);
        let (report, stages, cpu_time) = measured_import(&db, &import_options, progress)?;
        let _ = std::fs::remove_dir_all(&db);
        lines.push(BenchLine {
            name: "ldbc-sf0.1".to_string(),
            generate_time: None,
            report,
            stages,
            cpu_time,
        });
    }
    Ok(lines)
}

/// A directory under the system temp dir, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!(
            "rhizome-import-bench-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).map_err(|e| Error::io(path.display(), e))?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
