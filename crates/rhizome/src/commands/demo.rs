//! `rhizome demo`: builds the built-in example graph (once) and opens the
//! shell on it.
//!
//! The graph is a small movie and social network: 56 `Person`s (also
//! `Actor` and/or `Director`) linked to 22 `Movie`s by `ACTED_IN {roles}` and
//! `DIRECTED`; 24 `User`s who `FOLLOWS {since}` each other, `RATED {stars,
//! date, review}` movies and `LIVES_IN` one of 8 `City`s. Its CSV files
//! (`crates/rhizome/demo/`) are compiled into the binary and imported through
//! the import library like any user data.

use crate::cli::DemoArgs;
use crate::progress::ProgressDisplay;
use crate::shell::Shell;
use crate::storage_view::open_database;
use crate::Failure;
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_import::{ImportOptions, InputGroup};
use rhizome_storage::Database;
use std::io::IsTerminal;
use std::path::Path;

/// The demo CSV files: (file name, contents).
const FILES: [(&str, &str); 9] = [
    ("persons.csv", include_str!("../../demo/persons.csv")),
    ("movies.csv", include_str!("../../demo/movies.csv")),
    ("users.csv", include_str!("../../demo/users.csv")),
    ("cities.csv", include_str!("../../demo/cities.csv")),
    ("acted_in.csv", include_str!("../../demo/acted_in.csv")),
    ("directed.csv", include_str!("../../demo/directed.csv")),
    ("follows.csv", include_str!("../../demo/follows.csv")),
    ("rated.csv", include_str!("../../demo/rated.csv")),
    ("lives_in.csv", include_str!("../../demo/lives_in.csv")),
];

/// How the demo files are imported: (labels or type, file).
const NODE_GROUPS: [(&[&str], &str); 4] = [
    (&[], "persons.csv"),
    (&["Movie"], "movies.csv"),
    (&["User"], "users.csv"),
    (&["City"], "cities.csv"),
];
const REL_GROUPS: [(&str, &str); 5] = [
    ("ACTED_IN", "acted_in.csv"),
    ("DIRECTED", "directed.csv"),
    ("FOLLOWS", "follows.csv"),
    ("RATED", "rated.csv"),
    ("LIVES_IN", "lives_in.csv"),
];

/// What a new user might type first.
const TRY: &str = "Try :schema, then for instance
  MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) WHERE m.released < 2000
  RETURN p.name, r.roles, m.title ORDER BY m.title LIMIT 10;";

/// Runs `rhizome demo`.
pub fn run(args: DemoArgs) -> Result<(), Failure> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => crate::config::default_demo_dir()?,
    };
    let db = ensure_demo(&dir, args.reset)?;
    let stats = db.statistics();
    eprintln!(
        "Rhizome demo graph in {}: {} nodes, {} relationships (movies, the people who made them, \
         and users who rate them).",
        dir.display(),
        stats.node_count,
        stats.relationship_count
    );
    if std::io::stdin().is_terminal() {
        eprintln!("{TRY}");
    }
    Shell::new(db, super::exec_options(&args.exec)).run()
}

/// Opens the demo database in `dir`, importing it first if `dir` holds none
/// (or `reset` is set).
fn ensure_demo(dir: &Path, reset: bool) -> Result<Database> {
    let occupied = dir.exists() && !is_empty_dir(dir)?;
    if occupied && !reset {
        return Database::open(dir).map_err(|e| {
            Error::new(
                ErrorKind::ArgumentError,
                format!(
                    "`{}` exists but does not hold a readable Rhizome database ({e}); \
                     run `rhizome demo --reset` to rebuild it, or name another directory",
                    dir.display()
                ),
            )
        });
    }
    let staging = tempfile::tempdir().map_err(|e| Error::io("temporary directory", e))?;
    for (name, text) in FILES {
        let path = staging.path().join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(path.display(), e))?;
    }
    let mut options = demo_import_options(staging.path());
    options.overwrite = occupied;
    let report = rhizome_import::import(dir, &options, &ProgressDisplay::for_stderr())?;
    eprintln!(
        "Imported the demo graph in {} ms.",
        report.elapsed.as_millis()
    );
    open_database(dir)
}

fn is_empty_dir(dir: &Path) -> Result<bool> {
    let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
    Ok(entries.next().is_none())
}

/// The import options for the demo files in `csv_dir`.
fn demo_import_options(csv_dir: &Path) -> ImportOptions {
    ImportOptions {
        nodes: NODE_GROUPS
            .iter()
            .map(|(labels, file)| InputGroup::new(labels.iter().copied(), [csv_dir.join(file)]))
            .collect(),
        relationships: REL_GROUPS
            .iter()
            .map(|(rel_type, file)| InputGroup::new([*rel_type], [csv_dir.join(file)]))
            .collect(),
        // Empty fields (no original title, no review text) set no property.
        ignore_empty_strings: true,
        ..ImportOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_imported_once() {
        let mut named: Vec<&str> = NODE_GROUPS.iter().map(|g| g.1).collect();
        named.extend(REL_GROUPS.iter().map(|g| g.1));
        named.sort_unstable();
        let mut files: Vec<&str> = FILES.iter().map(|f| f.0).collect();
        files.sort_unstable();
        assert_eq!(named, files);
    }

    #[test]
    fn demo_graph_imports_with_expected_shape() {
        let tmp = tempfile::tempdir().unwrap();
        let db_dir = tmp.path().join("demo");
        let db = ensure_demo(&db_dir, false).unwrap();
        let stats = db.statistics();
        assert_eq!(stats.node_count, 56 + 22 + 24 + 8);
        assert_eq!(stats.relationship_count, 54 + 23 + 48 + 86 + 24);
        let labels: Vec<&str> = db.labels().into_iter().map(|(_, n)| n).collect();
        for label in ["Person", "Actor", "Director", "Movie", "User", "City"] {
            assert!(labels.contains(&label), "{label} missing from {labels:?}");
        }
        // A second call reuses the database; --reset rebuilds it in place.
        ensure_demo(&db_dir, false).unwrap();
        ensure_demo(&db_dir, true).unwrap();
    }

    #[test]
    fn occupied_directory_that_is_not_a_database_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
        let Err(err) = ensure_demo(tmp.path(), false) else {
            panic!("a directory with other files was taken as the demo database")
        };
        assert_eq!(err.kind, ErrorKind::ArgumentError);
        assert!(err.message.contains("--reset"), "{err}");
        assert!(tmp.path().join("notes.txt").exists());
    }
}
