//! `rhizome bench <target>`: runs a benchmark of a library and prints its
//! result lines.

use crate::cli::{BenchCommand, BenchImportArgs};
use crate::progress::ProgressDisplay;
use crate::Failure;
use rhizome_import::bench::{run_import_bench, BenchOptions};
use rhizome_import::LikesOptions;

/// Runs `rhizome bench`.
pub fn run(command: BenchCommand) -> Result<(), Failure> {
    match command {
        BenchCommand::Import(args) => import(args),
    }
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
