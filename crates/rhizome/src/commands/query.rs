//! `rhizome query`: run one statement and print its result.

use crate::cli::QueryArgs;
use crate::engine;
use crate::format::{output_error, write_result, OutputFormat};
use crate::storage_view::{open_database_with, StorageView};
use crate::Failure;
use rhizome_common::{Error, Result};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// Runs `rhizome query`.
pub fn run(args: QueryArgs) -> Result<(), Failure> {
    let query = query_text(&args)?;
    // A parameter given twice takes its last value.
    let params: BTreeMap<_, _> = args.params.into_iter().collect();
    let options = super::exec_options(&args.exec);
    // Entities are rendered from the state the statement ran on.
    let (result, snapshot) = if is_mapping(&args.db_dir) {
        // A graph source's mapping file: read-only Cypher over the source.
        let source = engine::connect_source(&args.db_dir)?;
        engine::execute_on_source(&source, &query, &params, &options)
            .map_err(|e| Failure::in_query(e, &query))?
    } else {
        let db = open_database_with(&args.db_dir, &args.open)?;
        engine::execute(&db, &query, &params, &options).map_err(|e| Failure::in_query(e, &query))?
    };
    // The table shows the plan of EXPLAIN / PROFILE itself; JSON and CSV
    // stay machine-readable, so the plan goes to stderr.
    if let Some(plan) = result
        .plan_text()
        .filter(|_| args.format != OutputFormat::Table)
    {
        eprintln!("{}", plan.trim_end());
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_result(&mut out, &result, args.format, &StorageView::new(&snapshot))?;
    out.flush().map_err(output_error)?;
    Ok(())
}

/// True if `target` is a graph source's mapping file (a `.json` file)
/// rather than a database directory.
pub fn is_mapping(target: &std::path::Path) -> bool {
    target.is_file() && target.extension().is_some_and(|e| e == "json")
}

/// The statement: the QUERY argument, or the contents of `-f FILE` (`-`: stdin).
fn query_text(args: &QueryArgs) -> Result<String> {
    if let Some(query) = &args.query {
        return Ok(query.clone());
    }
    let file = args.file.as_ref().expect("clap requires QUERY or --file");
    if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Error::io("standard input", e))?;
        Ok(text)
    } else {
        std::fs::read_to_string(file).map_err(|e| Error::io(file.display(), e))
    }
}
