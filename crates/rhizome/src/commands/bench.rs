//! `rhizome bench <target>`: runs a benchmark of a library and prints its
//! result lines.

use crate::cli::{BenchCommand, BenchImportArgs, BenchLdbcArgs, BenchQueriesArgs, BenchWritesArgs};
use crate::progress::ProgressDisplay;
use crate::Failure;
use rhizome_import::bench::{run_import_bench, BenchOptions};
use rhizome_import::LikesOptions;

/// Runs `rhizome bench`.
pub fn run(command: BenchCommand) -> Result<(), Failure> {
    match command {
        BenchCommand::Import(args) => import(args),
        BenchCommand::Queries(args) => queries(args, false),
        BenchCommand::Aggregate(args) => queries(args, true),
        BenchCommand::Ldbc(args) => ldbc(args),
        BenchCommand::Writes(args) => writes(args),
        BenchCommand::Roads(args) => super::bench_roads::run(args),
        BenchCommand::Server(args) => server(args),
        BenchCommand::Service(args) => service(args),
    }
}

fn positive_seconds(flag: &str, value: f64) -> Result<std::time::Duration, Failure> {
    if value.is_finite() && value > 0.0 {
        Ok(std::time::Duration::from_secs_f64(value))
    } else {
        Err(rhizome_common::Error::new(
            rhizome_common::ErrorKind::ArgumentError,
            format!("{flag} must be a positive number of seconds (got {value})"),
        )
        .into())
    }
}

fn service(args: crate::cli::BenchServiceArgs) -> Result<(), Failure> {
    use rhizome_bench::service::ServiceBenchOptions;
    let layout = rhizome_import::LdbcLayout::parse(&args.layout)?;
    let dataset = match args.dataset {
        Some(dir) => dir,
        None => rhizome_import::bench::find_datasets_dir()
            .unwrap_or_default()
            .join(layout.dir_name()),
    };
    let binary = std::env::current_exe()
        .map_err(|e| rhizome_common::Error::io("the rhizome executable", e))?;
    let mut options = ServiceBenchOptions::new(dataset, binary);
    if args.quick {
        options = options.quick();
    }
    options.layout = layout;
    options.threads = args.threads;
    options.worker_nice = args.worker_nice;
    if let Some(n) = args.persons {
        if n == 0 || n > rhizome_bench::banyan::PERSONS {
            return Err(rhizome_common::Error::new(
                rhizome_common::ErrorKind::ArgumentError,
                format!(
                    "--persons must be 1 to {} (got {n})",
                    rhizome_bench::banyan::PERSONS
                ),
            )
            .into());
        }
        options.persons = n;
    }
    if !args.limits.is_empty() {
        if let Some(bad) = args.limits.iter().find(|&&n| n < 0) {
            return Err(rhizome_common::Error::new(
                rhizome_common::ErrorKind::ArgumentError,
                format!("--limits takes numbers of rows, at least 0 (got {bad})"),
            )
            .into());
        }
        options.limits = args.limits;
    }
    if !args.only.is_empty() {
        options.queries = args
            .only
            .iter()
            .map(|name| rhizome_bench::banyan::Cq::parse(name))
            .collect::<rhizome_common::Result<_>>()?;
    }
    if let Some(t) = args.timeout {
        options.timeout = positive_seconds("--timeout", t)?;
    }
    if let Some(t) = args.full_timeout {
        options.full_timeout = positive_seconds("--full-timeout", t)?;
    }
    if let Some(n) = args.overhead_rounds {
        options.overhead_rounds = n;
    }
    if let Some(s) = args.seconds {
        options.seconds_per_level = positive_seconds("--seconds", s)?.as_secs_f64();
    }
    if let Some(n) = args.cycles {
        options.concurrency_cycles = n.max(1);
    }
    if let Some(n) = args.foreground_runs {
        options.foreground_runs = n.max(1);
    }
    if !args.clients.is_empty() {
        options.concurrency = args.clients.into_iter().map(|c| c.max(1)).collect();
    }
    options.foreground = args.foreground;
    options.background = args.background;
    options.throughput_query = args.throughput_query;
    if let Some(dir) = args.data_dir {
        options.data_dir = dir;
    }
    rhizome_bench::service::run_service_bench(&options, &mut std::io::stdout())?;
    Ok(())
}

fn server(args: crate::cli::BenchServerArgs) -> Result<(), Failure> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        return Err(rhizome_common::Error::new(
            rhizome_common::ErrorKind::ArgumentError,
            format!("--seconds must be a positive number (got {})", args.seconds),
        )
        .into());
    }
    let defaults = rhizome_bench::server::ServerBenchOptions::default();
    let options = rhizome_bench::server::ServerBenchOptions {
        data_dir: args.data_dir.unwrap_or(defaults.data_dir.clone()),
        nodes: args.nodes,
        round_trips: args.round_trips.max(1),
        seconds_per_level: args.seconds,
        python: args.python.or(defaults.python.clone()),
        ..defaults
    };
    rhizome_bench::server::run_server_bench(&options, &mut std::io::stdout())?;
    Ok(())
}

fn ldbc(args: BenchLdbcArgs) -> Result<(), Failure> {
    let layout = rhizome_import::LdbcLayout::parse(&args.layout)?;
    let dataset = match args.dataset {
        Some(dir) => dir,
        None => rhizome_import::bench::find_datasets_dir()
            .unwrap_or_default()
            .join(layout.dir_name()),
    };
    let mut options = rhizome_bench::ldbc::LdbcBenchOptions::new(std::path::Path::new(""));
    options.dataset = dataset;
    options.layout = layout;
    options.queries_dir = args.queries;
    options.sets = args.sets;
    options.runs = args.runs;
    options.threads = args.threads;
    if let Some(dir) = args.data_dir {
        options.data_dir = dir;
    }
    rhizome_bench::ldbc::run_ldbc_bench(&options, &mut std::io::stdout())?;
    Ok(())
}

fn writes(args: BenchWritesArgs) -> Result<(), Failure> {
    let defaults = rhizome_bench::writes::WriteBenchOptions::default();
    let options = rhizome_bench::writes::WriteBenchOptions {
        data_dir: args.data_dir.unwrap_or(defaults.data_dir.clone()),
        runs: args.runs,
        likes: LikesOptions {
            persons: args.persons,
            items: args.items,
            likes_per_person: args.likes_per_person,
            ..LikesOptions::default()
        },
        bulk_nodes: args.rows,
        batch: args.batch,
        single: args.single,
        threads: (args.threads > 0).then_some(args.threads),
        binary: std::env::current_exe().ok(),
        phases: if args.only.is_empty() {
            rhizome_bench::writes::WritePhase::ALL.to_vec()
        } else {
            args.only
                .iter()
                .map(|name| rhizome_bench::writes::WritePhase::parse(name))
                .collect::<rhizome_common::Result<_>>()?
        },
        chain: rhizome_import::generate::ChainOptions {
            nodes: args.chain_nodes,
            degree: args.chain_degree,
        },
        process_runs: args.process_runs,
        ..defaults
    };
    if args.profile {
        std::env::set_var("RHIZOME_BENCH_PROFILE", "1");
    }
    rhizome_bench::writes::run_write_bench(&options, &mut std::io::stdout())?;
    Ok(())
}

/// The query suite, or with `aggregate` the aggregation suite.
fn queries(args: BenchQueriesArgs, aggregate: bool) -> Result<(), Failure> {
    if !(args.min_seconds.is_finite() && args.min_seconds >= 0.0) {
        return Err(rhizome_common::Error::new(
            rhizome_common::ErrorKind::ArgumentError,
            format!(
                "--min-seconds must be a number of seconds, at least 0 (got {})",
                args.min_seconds
            ),
        )
        .into());
    }
    let mut options = rhizome_bench::QueryBenchOptions {
        runs: args.runs,
        min_time: std::time::Duration::from_secs_f64(args.min_seconds),
        ..rhizome_bench::QueryBenchOptions::default()
    };
    if let Some(dir) = args.data_dir {
        options.data_dir = dir;
    }
    if let Some(only) = &args.only {
        options.select(only);
    }
    if args.profile {
        std::env::set_var("RHIZOME_BENCH_PROFILE", "1");
    }
    if aggregate {
        rhizome_bench::aggregate::run_aggregate_bench(&options, &mut std::io::stdout())?;
    } else {
        rhizome_bench::run_query_bench(&options, &mut std::io::stdout())?;
    }
    Ok(())
}

fn import(args: BenchImportArgs) -> Result<(), Failure> {
    let defaults = BenchOptions::default();
    let options = BenchOptions {
        likes: (!args.skip_likes).then(|| LikesOptions {
            persons: args.persons,
            items: args.items,
            likes_per_person: args.likes_per_person,
            ..LikesOptions::default()
        }),
        ldbc_sf01: if args.skip_ldbc {
            None
        } else {
            args.ldbc.or(defaults.ldbc_sf01)
        },
        work_dir: args.work_dir,
        threads: args.threads.unwrap_or(0),
    };
    if options.ldbc_sf01.is_none() && !args.skip_ldbc {
        eprintln!(
            "note: LDBC SF0.1 not found (set RHIZOME_DATASETS or pass --ldbc DIR); skipping it"
        );
    }
    for line in run_import_bench(&options, &ProgressDisplay::for_stderr())? {
        println!("{}", line.render());
    }
    Ok(())
}
