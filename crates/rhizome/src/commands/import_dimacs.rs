//! `rhizome import-dimacs`: a DIMACS road network (`.gr` arcs, `.co`
//! coordinates) into a new database of `:Junction` nodes and `:ROAD`
//! relationships (see `docs/import.md`).

use crate::Failure;
use clap::Args;
use rhizome_import::DimacsOptions;
use std::path::PathBuf;

/// `rhizome import-dimacs <DB_DIR> --gr FILE [--co FILE]`.
#[derive(Debug, Args)]
pub struct ImportDimacsArgs {
    /// Directory of the database to create.
    #[arg(value_name = "DB_DIR")]
    pub db_dir: PathBuf,
    /// The arcs: a 9th-DIMACS-challenge `.gr` file (`p sp N M`, `a U V W`).
    #[arg(long, value_name = "FILE")]
    pub gr: PathBuf,
    /// The coordinates: a `.co` file (`p aux sp co N`, `v ID LON LAT` in
    /// millionths of a degree); without it nodes have no `lat`/`lon`.
    #[arg(long, value_name = "FILE")]
    pub co: Option<PathBuf>,
    /// Label of the nodes.
    #[arg(long, value_name = "LABEL", default_value = "Junction")]
    pub label: String,
    /// Type of the relationships.
    #[arg(long = "type", value_name = "TYPE", default_value = "ROAD")]
    pub rel_type: String,
    /// Replace an existing database in DB_DIR.
    #[arg(long)]
    pub overwrite_destination: bool,
}

/// Runs `rhizome import-dimacs`.
pub fn run(args: ImportDimacsArgs) -> Result<(), Failure> {
    let options = DimacsOptions {
        gr: args.gr,
        co: args.co,
        label: args.label,
        rel_type: args.rel_type,
        overwrite: args.overwrite_destination,
    };
    let report = rhizome_import::import_dimacs(&args.db_dir, &options)?;
    print!("{}", report.render());
    Ok(())
}
