//! `rhizome bench roads`: A* route finding on a road network over native
//! storage, PostgreSQL and Redis sources, and a PL/pgSQL A*: six routes
//! with every prefetcher, and twenty repeated routes (see
//! `docs/benchmarks.md`).

use crate::Failure;
use clap::Args;
use rhizome_sources::bench::{run_roads_bench, BenchParts, RoadsBenchOptions};
use std::path::PathBuf;

/// `rhizome bench roads <DB_DIR> [--postgres MAPPING] [--redis MAPPING]`.
#[derive(Debug, Args)]
pub struct BenchRoadsArgs {
    /// The native database of the network (from `rhizome import-dimacs`).
    #[arg(value_name = "DB_DIR")]
    pub db_dir: PathBuf,
    /// A PostgreSQL mapping of the same network (e.g.
    /// examples/sources/roads-postgres.json after `scripts/sources.sh load`).
    #[arg(long, value_name = "MAPPING")]
    pub postgres: Option<PathBuf>,
    /// A Redis mapping of the same network.
    #[arg(long, value_name = "MAPPING")]
    pub redis: Option<PathBuf>,
    /// The PostgreSQL schema the PL/pgSQL baseline reads.
    #[arg(long, default_value = "luxembourg")]
    pub schema: String,
    /// Skip the PL/pgSQL baseline on routes settling more nodes than this.
    #[arg(long, default_value_t = 8_000)]
    pub plpgsql_max_settled: u64,
    /// Which part runs: `six` (six routes, every prefetcher tried cold),
    /// `twenty` (twenty repeated routes, totals and ratios to native),
    /// `all`, or `hot` (only the repeated routes' hot runs against native,
    /// in turn).
    #[arg(long, value_enum, default_value_t = Part::All)]
    pub part: Part,
    /// Routes of the repeated part.
    #[arg(long, default_value_t = 20)]
    pub routes: usize,
    /// Runs per route and system in the repeated part (medians reported).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// The prefetchers the six routes try cold on PostgreSQL, as in
    /// `CYPHER prefetch=...`, comma-separated (e.g.
    /// `box_degrees:0.01,ellipse:1.25`); by default every lookahead, key
    /// block, box and ellipse of the benchmark's list. No prefetch is
    /// always measured too.
    #[arg(long, value_delimiter = ',', value_name = "PREFETCH")]
    pub prefetchers: Option<Vec<String>>,
    /// The six routes' ends, `FROM->TO` as the table prints them
    /// (comma-separated), instead of routes drawn near the paper's sizes:
    /// the same routes in every run, whatever the load.
    #[arg(long, value_name = "ROUTES")]
    pub six_routes: Option<String>,
}

/// `--part`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The six routes.
    Six,
    /// The repeated routes.
    Twenty,
    /// Both.
    All,
    /// Only hot runs of the repeated routes against native, in turn.
    Hot,
}

/// Runs `rhizome bench roads`.
pub fn run(args: BenchRoadsArgs) -> Result<(), Failure> {
    let options = RoadsBenchOptions {
        db: args.db_dir,
        postgres: args.postgres,
        redis: args.redis,
        schema: args.schema,
        plpgsql_max_settled: args.plpgsql_max_settled,
        parts: match args.part {
            Part::Six => BenchParts::Six,
            Part::Twenty => BenchParts::Twenty,
            Part::All => BenchParts::All,
            Part::Hot => BenchParts::Hot,
        },
        twenty: args.routes,
        repeats: args.repeats,
        prefetchers: args
            .prefetchers
            .map(|list| {
                list.iter()
                    .map(|p| rhizome_sources::query_options::parse_prefetch_option(p))
                    .collect::<rhizome_common::Result<Vec<_>>>()
            })
            .transpose()?,
        six_routes: args
            .six_routes
            .as_deref()
            .map(rhizome_sources::bench::parse_six_routes)
            .transpose()?,
        ..RoadsBenchOptions::default()
    };
    run_roads_bench(&options, &mut std::io::stdout())?;
    Ok(())
}
