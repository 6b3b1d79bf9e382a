//! Bulk import of `neo4j-admin database import`–style CSV into a new Rhizome
//! database directory, and generators of import-ready data sets.
//!
//! [`import`] reads every node group, then every relationship group, into a
//! [`rhizome_storage::GraphBuilder`], and writes the database into a
//! temporary directory beside the destination that is renamed into place at
//! the end: a failed import leaves nothing behind and never damages an
//! existing database. Files are streamed in blocks of whole records and
//! parsed on several threads; merging happens in input order, so results
//! (node ids, the first error reported) are the same with any thread count.
//!
//! Modules: [`options`] (what to import), `header` (header syntax),
//! `csv_reader` (records and quoting), `parse` (typed fields),
//! `id_space` (CSV ids to node ids), `nodes` / `relationships` (one group
//! each), `pipeline` (threads), [`report`] (the summary), [`dimacs`] (DIMACS road
//! networks), [`generate`]
//! (the likes and chain data sets), [`ldbc`] (LDBC SNB layouts), [`bench`](mod@bench)
//! (the import benchmark). The user guide is `docs/import.md`.

pub mod bench;
mod csv_reader;
mod destination;
pub mod dimacs;
pub mod generate;
mod header;
mod id_space;
pub mod ldbc;
mod nodes;
pub mod options;
mod parse;
mod pipeline;
pub mod progress;
mod relationships;
pub mod report;

pub use dimacs::{import_dimacs, DimacsOptions};
pub use generate::{generate_chain, generate_likes, ChainOptions, LikesOptions};
pub use ldbc::{ldbc_options, LdbcLayout, REFERENCE_PROPERTY_RENAMES};
pub use options::{parse_delimiter, IdType, ImportOptions, InputGroup};
pub use progress::{ImportProgress, NoProgress};
pub use report::ImportReport;

use id_space::IdSpaces;
use parse::FieldRules;
use pipeline::{total_bytes, ReadSettings};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_storage::GraphBuilder;
use std::path::Path;
use std::time::Instant;

/// Imports the CSV files named by `options` into a new database at
/// `db_dir`, reporting progress to `progress`.
///
/// Contract:
/// - `db_dir` must not exist, or be an empty directory, or (with
///   `options.overwrite`) an existing database that is replaced only once the
///   new one is complete. Its parent directories are created.
/// - Errors: `InputError` for bad input, naming the file (`source_name`) and
///   the line and 1-based field number (`position.line` / `position.column`;
///   header problems are on line 1); `IoError` for missing or unreadable
///   files; `ArgumentError` for bad options or an occupied destination. On
///   any error nothing is left at or beside `db_dir`, and an existing
///   database there is unchanged.
/// - Node groups are imported in order, each a contiguous node id range;
///   relationships only after all nodes, so they may refer to nodes of any group.
pub fn import(
    db_dir: &Path,
    options: &ImportOptions,
    progress: &dyn ImportProgress,
) -> Result<ImportReport> {
    let started = Instant::now();
    let staging = destination::Staging::prepare(db_dir, options.overwrite)?;
    for (what, groups) in [
        ("--nodes", &options.nodes),
        ("--relationships", &options.relationships),
    ] {
        for group in groups {
            if group.files.is_empty() {
                return Err(Error::new(
                    ErrorKind::ArgumentError,
                    format!("a {what} group has no file"),
                ));
            }
            for file in &group.files {
                if !file.is_file() {
                    let why = if file.exists() {
                        "is not a file"
                    } else {
                        "does not exist"
                    };
                    return Err(Error::new(
                        ErrorKind::IoError,
                        format!("input file {} {why}", file.display()),
                    )
                    .in_source(file.display().to_string()));
                }
            }
        }
    }
    let settings = ReadSettings::new(
        options.delimiter,
        options.quote,
        options.effective_threads(),
    );
    let rules = FieldRules {
        array_delimiter: options.array_delimiter,
        ignore_empty_strings: options.ignore_empty_strings,
    };
    let mut builder = GraphBuilder::new();
    let mut spaces = IdSpaces::new(options.id_type);
    let mut report = ImportReport::default();

    progress.begin(
        "nodes",
        total_bytes(options.nodes.iter().flat_map(|g| &g.files)),
    );
    for group in &options.nodes {
        let stats = nodes::import_node_group(
            &mut builder,
            group,
            settings,
            rules,
            options.skip_duplicate_nodes,
            &mut spaces,
            progress,
        )?;
        report.rows += stats.rows;
        report.skipped_nodes += stats.skipped;
    }
    progress.end();
    spaces.finish();

    progress.begin(
        "relationships",
        total_bytes(options.relationships.iter().flat_map(|g| &g.files)),
    );
    for group in &options.relationships {
        let stats = relationships::import_relationship_group(
            &mut builder,
            group,
            settings,
            rules,
            options.skip_bad_relationships,
            &spaces,
            progress,
        )?;
        report.rows += stats.rows;
        report.skipped_relationships += stats.skipped;
    }
    progress.end();
    drop(spaces);

    progress.begin("writing", 0);
    let summary = builder.write(staging.temp_dir()?)?;
    staging.commit(options.overwrite)?;
    progress.end();

    report.nodes = summary.node_count;
    report.relationships = summary.relationship_count;
    report.label_counts = summary.label_counts;
    report.type_counts = summary.type_counts;
    report.bytes_on_disk = summary.bytes_on_disk;
    report.elapsed = started.elapsed();
    report.peak_memory_bytes = report::peak_memory_bytes();
    Ok(report)
}
