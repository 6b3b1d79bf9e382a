//! The `rhizome` command: bulk import, one-shot queries, an interactive Cypher
//! shell, a built-in demo graph, dataset generators and benchmarks.
//!
//! Exit codes: 0 success; 1 a query, import or database error (printed to
//! standard error as `<Classification>: <message>`); 2 a usage error (clap's
//! convention).

/// mimalloc instead of the system allocator: result rows are built on the
/// worker threads, and glibc's per-thread arenas return and re-fault their
/// memory on every query (SQ1 of the query benchmark ran twice as fast on
/// one worker with mimalloc, measured in one run on this 2-core machine).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;
mod commands;
mod config;
mod engine;
mod format;
mod graph;
mod params;
mod progress;
mod schema;
mod shell;
mod statements;
mod storage_view;

use clap::Parser;
use rhizome_common::Error;
use std::process::ExitCode;

/// Why a command failed, with what is needed to print it.
#[derive(Debug)]
pub enum Failure {
    /// An error to print; `source` is the query text it points into, if any.
    Error {
        /// The error.
        error: Error,
        /// The query the error's position refers to.
        source: Option<String>,
    },
    /// The command already printed its errors.
    Reported,
}

impl Failure {
    /// An error positioned in `query`: printed with an excerpt and a caret.
    pub fn in_query(error: Error, query: &str) -> Failure {
        Failure::Error {
            error,
            source: Some(query.to_string()),
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::Error {
            error,
            source: None,
        }
    }
}

/// Exit code of a failed command (clap exits with 2 for usage errors).
const FAILURE: u8 = 1;

/// Prints `error` to standard error, with an excerpt of `source` when the
/// error points into it.
pub fn report(error: &Error, source: Option<&str>) {
    let text = match (source, error.position, &error.source_name) {
        (Some(source), Some(_), None) => error.render_with_source(source),
        _ => error.to_string(),
    };
    eprintln!("{text}");
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(FAILURE),
        Err(Failure::Error { error, source }) => {
            if format::is_broken_pipe(&error) {
                // The reader went away (`rhizome query ... | head`): not an error.
                return ExitCode::SUCCESS;
            }
            report(&error, source.as_deref());
            ExitCode::from(FAILURE)
        }
    }
}
