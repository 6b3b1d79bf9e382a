//! `cargo bench -p rhizome-bench --bench writes`: the issue-5 write
//! benchmark (bulk `UNWIND … CREATE`, durable single-row transactions, likes
//! reads on base + delta against after a checkpoint) at full size.
//! Environment: `RHIZOME_BENCH_DATA` (dataset cache and work copies),
//! `RHIZOME_BENCH_RUNS`, `RHIZOME_BENCH_ROWS` (bulk nodes).

fn main() {
    let mut options = rhizome_bench::writes::WriteBenchOptions::default();
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    if let Some(runs) = var("RHIZOME_BENCH_RUNS") {
        options.runs = runs;
    }
    if let Some(rows) = var("RHIZOME_BENCH_ROWS") {
        options.bulk_nodes = rows;
    }
    if let Err(e) = rhizome_bench::writes::run_write_bench(&options, &mut std::io::stdout()) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
