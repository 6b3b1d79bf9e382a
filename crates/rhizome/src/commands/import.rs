//! `rhizome import`: maps the flags to [`ImportOptions`] and runs the import
//! library with a progress bar; prints the report.

use crate::cli::{IdTypeArg, ImportArgs};
use crate::progress::ProgressDisplay;
use crate::Failure;
use rhizome_import::{IdType, ImportOptions};

/// Runs `rhizome import`.
pub fn run(args: ImportArgs) -> Result<(), Failure> {
    let options = import_options(&args);
    let report = rhizome_import::import(&args.db_dir, &options, &ProgressDisplay::for_stderr())?;
    print!("{}", report.render());
    Ok(())
}

/// The library options expressed by the flags.
pub fn import_options(args: &ImportArgs) -> ImportOptions {
    ImportOptions {
        nodes: args.nodes.clone(),
        relationships: args.relationships.clone(),
        delimiter: args.delimiter,
        array_delimiter: args.array_delimiter,
        quote: args.quote,
        id_type: match args.id_type {
            IdTypeArg::String => IdType::String,
            IdTypeArg::Integer => IdType::Integer,
        },
        ignore_empty_strings: args.ignore_empty_strings,
        skip_bad_relationships: args.skip_bad_relationships,
        skip_duplicate_nodes: args.skip_duplicate_nodes,
        overwrite: args.overwrite_destination,
        threads: args.threads.unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn parse(args: &[&str]) -> ImportArgs {
        match Cli::try_parse_from(args).unwrap().command {
            Command::Import(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flags_round_trip_through_import_options() {
        let args = parse(&[
            "rhizome",
            "import",
            "db",
            "--nodes=Person=p.csv",
            "--relationships=LIKES=l.csv,l2.csv",
            "--delimiter=|",
            "--array-delimiter=,",
            "--id-type=integer",
            "--ignore-empty-strings",
            "--skip-bad-relationships",
            "--overwrite-destination",
            "--threads=2",
        ]);
        let options = import_options(&args);
        assert!(options.overwrite);
        assert_eq!(options.threads, 2);
        assert_eq!(
            options.to_args(),
            vec![
                "--nodes=Person=p.csv",
                "--relationships=LIKES=l.csv,l2.csv",
                "--delimiter=|",
                "--array-delimiter=,",
                "--id-type=integer",
                "--ignore-empty-strings",
                "--skip-bad-relationships",
            ]
        );
        let defaults = import_options(&parse(&["rhizome", "import", "db", "--nodes=n.csv"]));
        assert_eq!(
            ImportOptions {
                nodes: defaults.nodes.clone(),
                ..ImportOptions::default()
            },
            defaults
        );
    }

    #[test]
    fn bad_groups_and_delimiters_are_usage_errors() {
        for bad in [
            "--nodes=A=",
            "--nodes=A::B=f.csv",
            "--delimiter=ab",
            "--quote=é",
        ] {
            let err = Cli::try_parse_from(["rhizome", "import", "db", bad]).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}");
        }
    }
}
