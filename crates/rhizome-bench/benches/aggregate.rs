//! `cargo bench -p rhizome-bench --bench aggregate`: the aggregation suite
//! of issue 21 (`rhizome bench aggregate`). Environment: `RHIZOME_BENCH_DATA`
//! (dataset cache), `RHIZOME_BENCH_RUNS` (timed runs at least),
//! `RHIZOME_BENCH_SECONDS` (time per query at least), `RHIZOME_BENCH_ONLY`
//! (comma-separated names: `COUNT,SQ2C,FSUM,GROUP`).

/// The allocator of Rhizome's binaries (see `crates/rhizome/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let options = rhizome_bench::QueryBenchOptions::from_env();
    if let Err(e) = rhizome_bench::aggregate::run_aggregate_bench(&options, &mut std::io::stdout())
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
