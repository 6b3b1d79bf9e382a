//! `rhizome bench roads`: A* route finding on a road network over native
//! storage, PostgreSQL and Redis sources, and a PL/pgSQL A* (see
//! `docs/benchmarks.md`).

use crate::Failure;
use clap::Args;
use rhizome_sources::bench::{run_roads_bench, RoadsBenchOptions};
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
}

/// Runs `rhizome bench roads`.
pub fn run(args: BenchRoadsArgs) -> Result<(), Failure> {
    let options = RoadsBenchOptions {
        db: args.db_dir,
        postgres: args.postgres,
        redis: args.redis,
        schema: args.schema,
        plpgsql_max_settled: args.plpgsql_max_settled,
        ..RoadsBenchOptions::default()
    };
    run_roads_bench(&options, &mut std::io::stdout())?;
    Ok(())
}
