//! `rhizome tck [DIR]`: runs the openCypher TCK through the engine and
//! prints the report, ending with `N passed, M failed`.

use crate::cli::TckArgs;
use crate::Failure;
use rhizome_tck_runner::{default_features_dir, run as run_tck, RunOptions};

/// Runs `rhizome tck`. Exits 0 whenever the run finished, whatever failed.
pub fn run(args: TckArgs) -> Result<(), Failure> {
    let dir = args.dir.unwrap_or_else(default_features_dir);
    let options = RunOptions {
        filter: args.filter,
        ..RunOptions::default()
    };
    let report = run_tck(&dir, &options);
    print!("{}", report.render());
    Ok(())
}
