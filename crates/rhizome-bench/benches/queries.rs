//! `cargo bench -p rhizome-bench --bench queries`: the issue-4 query suite
//! (likes A1–A4 with reference loops, chain SQ1–SQ5) at full size.
//! Environment: `RHIZOME_BENCH_DATA` (dataset cache), `RHIZOME_BENCH_RUNS`
//! (rounds at least), `RHIZOME_BENCH_SECONDS` (time per query at least,
//! default 2), `RHIZOME_BENCH_ONLY=likes|chain` or a comma-separated list of
//! query names (`A3,SQ4`).

/// The allocator of Rhizome's binaries (see `crates/rhizome/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let options = rhizome_bench::QueryBenchOptions::from_env();
    if let Err(e) = rhizome_bench::run_query_bench(&options, &mut std::io::stdout()) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
