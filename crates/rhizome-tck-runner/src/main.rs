//! `rhizome-tck [DIR] [--filter TEXT] [--threads N] [--query-threads N]`: runs the openCypher TCK
//! features under DIR (default: `$RHIZOME_TCK_FEATURES` or
//! `../shared/tck/features` from the repository root) and prints the report.
//! Exits 0 when the run completed, whatever the number of failures.

use rhizome_tck_runner::{default_features_dir, run, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut options = RunOptions::default();
    let mut dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--filter" => options.filter = args.next(),
            "--threads" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => options.threads = n,
                None => {
                    eprintln!("--threads needs a number");
                    return ExitCode::from(2);
                }
            },
            "--query-threads" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => options.query_threads = Some(n),
                None => {
                    eprintln!("--query-threads needs a number");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!(
                    "usage: rhizome-tck [FEATURES_DIR] [--filter TEXT] [--threads N] [--query-threads N]\n\
                     \n\
                     Runs the openCypher TCK features under FEATURES_DIR (default: \
                     $RHIZOME_TCK_FEATURES, else ../shared/tck/features from the repository root).\n\
                     --filter TEXT      only features whose path or name, or scenarios whose name, contain TEXT\n\
                     --threads N        scenarios run at once (default: 4 per core)\n\
                     --query-threads N  workers per query (default: the engine's)"
                );
                return ExitCode::SUCCESS;
            }
            _ if dir.is_none() => dir = Some(PathBuf::from(arg)),
            _ => {
                eprintln!("unexpected argument `{arg}`");
                return ExitCode::from(2);
            }
        }
    }
    let dir = dir.unwrap_or_else(default_features_dir);
    if !dir.is_dir() {
        eprintln!("no features directory at {}", dir.display());
        return ExitCode::from(2);
    }
    let report = run(&dir, &options);
    print!("{}", report.render());
    ExitCode::SUCCESS
}
