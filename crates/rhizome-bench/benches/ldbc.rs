//! `cargo bench -p rhizome-bench --bench ldbc`: the LDBC SNB Interactive
//! reads (IC1–IC14, IS1–IS7) on LDBC SF0.1, per-query median and p90
//! latency. Environment: `RHIZOME_DATASETS` (where `ldbc-sf0.1` is),
//! `RHIZOME_BENCH_DATA` (database cache), `RHIZOME_BENCH_RUNS` (timed runs
//! per parameter set), `RHIZOME_BENCH_THREADS` (most workers per query),
//! `RHIZOME_LDBC_QUERIES` (a directory of query files named like LDBC's
//! reference implementation, instead of Rhizome's own).

/// The allocator of Rhizome's binaries (see `crates/rhizome/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let Some(datasets) = rhizome_import::bench::find_datasets_dir() else {
        eprintln!("LDBC data sets not found: set RHIZOME_DATASETS");
        std::process::exit(1);
    };
    let mut options = rhizome_bench::ldbc::LdbcBenchOptions::new(&datasets);
    if let Some(runs) = std::env::var("RHIZOME_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        options.runs = runs;
    }
    options.threads = std::env::var("RHIZOME_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok());
    options.queries_dir = std::env::var_os("RHIZOME_LDBC_QUERIES").map(Into::into);
    if let Err(e) = rhizome_bench::ldbc::run_ldbc_bench(&options, &mut std::io::stdout()) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
