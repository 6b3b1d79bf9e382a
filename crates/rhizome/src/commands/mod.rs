//! One module per subcommand; each turns parsed arguments into calls to the
//! libraries and prints the outcome.

mod admin;
mod bench;
pub mod bench_roads;
mod demo;
mod generate;
mod import;
pub mod import_dimacs;
mod query;
pub mod serve;
mod shell;
mod tck;

use crate::cli::{Command, ExecArgs};
use crate::engine::QueryOptions;
use crate::Failure;

/// Runs one subcommand.
pub fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Import(args) => import::run(args),
        Command::ImportDimacs(args) => import_dimacs::run(args),
        Command::Query(args) => query::run(args),
        Command::Shell(args) => shell::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Generate(which) => generate::run(which),
        Command::Bench(which) => bench::run(which),
        Command::Tck(args) => tck::run(args),
        Command::Backup(args) => {
            let options = crate::cli::OpenArgs {
                read_only: true,
                ..Default::default()
            };
            let db = crate::storage_view::open_database_with(&args.db_dir, &options)?;
            db.backup(&args.dest)?;
            println!(
                "{}: backed up to {}",
                args.db_dir.display(),
                args.dest.display()
            );
            Ok(())
        }
        Command::Upgrade(args) => {
            let mut options = rhizome_storage::UpgradeOptions::default();
            if let Some(timeout) = args.lock_timeout {
                options.lock_timeout = timeout;
            }
            let report = rhizome_storage::upgrade(&args.db_dir, &options)?;
            let dir = args.db_dir.display();
            if report.from_version == report.to_version {
                println!(
                    "{dir}: on-disk format version {} is current; nothing to upgrade",
                    report.from_version
                );
                return Ok(());
            }
            let mb = |b: u64| b as f64 / 1e6;
            println!(
                "{dir}: upgraded from on-disk format version {} to {}: segment {} ({:.1} MB) \
                 rewritten as {} ({:.1} MB){}",
                report.from_version,
                report.to_version,
                report.segments.0,
                mb(report.segment_bytes.0),
                report.segments.1,
                mb(report.segment_bytes.1),
                if report.old_segment_removed {
                    ""
                } else {
                    "; the old segment is still mapped by another process and will be \
                     removed by a later write"
                }
            );
            Ok(())
        }
        Command::Serve(args) => serve::run(*args),
        Command::Admin(command) => admin::run(command),
        Command::Check(args) => {
            let db = crate::storage_view::open_database(&args.db_dir)?;
            let problems = db.check();
            if problems.is_empty() {
                println!("{}: no problems found", args.db_dir.display());
                return Ok(());
            }
            for problem in &problems {
                println!("problem: {problem}");
            }
            Err(rhizome_common::Error::new(
                rhizome_common::ErrorKind::CorruptDatabase,
                format!(
                    "{} problem(s) found in {}",
                    problems.len(),
                    args.db_dir.display()
                ),
            )
            .into())
        }
    }
}

/// Execution options from the shared `--threads` / `--timeout` /
/// `--memory-limit` flags.
pub fn exec_options(args: &ExecArgs) -> QueryOptions {
    QueryOptions {
        threads: Some(args.threads.unwrap_or_else(crate::config::default_threads)),
        timeout: args.timeout,
        memory_limit: args.memory_limit.or_else(|| {
            rhizome_common::memory::share_of_memory(rhizome_common::memory::DEFAULT_QUERY_SHARE)
        }),
        ..QueryOptions::default()
    }
}
