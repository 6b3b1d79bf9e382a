//! Output formats of query results: an aligned text table for people, one
//! JSON object per row and CSV for programs.
//!
//! Every format resolves the nodes, relationships and paths in a result
//! through a [`GraphView`], so a row prints entities with their labels, type,
//! endpoints and properties rather than bare ids.

mod csv;
mod json;
mod table;

pub use self::csv::write_csv;
pub use self::json::{json_value, write_json};
pub use self::table::{render_grid, render_table, Cell};

use crate::engine::QueryResult;
use crate::graph::GraphView;
use rhizome_common::{Error, Result};
use std::io::Write;

/// How `rhizome query` prints a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// Aligned columns with a `n rows, elapsed X ms` footer.
    #[default]
    Table,
    /// One JSON object per row (JSON Lines), keys in column order.
    Json,
    /// A header line, then one CSV record per row.
    Csv,
}

/// Writes `result` to `out` in `format`.
pub fn write_result(
    out: &mut dyn Write,
    result: &QueryResult,
    format: OutputFormat,
    graph: &dyn GraphView,
) -> Result<()> {
    match format {
        OutputFormat::Table => {
            let text = render_table(result, graph)?;
            out.write_all(text.as_bytes()).map_err(output_error)
        }
        OutputFormat::Json => write_json(out, result, graph),
        OutputFormat::Csv => write_csv(out, result, graph),
    }
}

/// Detail code of an error writing to a pipe whose reader has gone.
const BROKEN_PIPE: &str = "BrokenPipe";

/// An error writing to the output (e.g. a closed pipe).
pub(crate) fn output_error(err: std::io::Error) -> Error {
    let broken = err.kind() == std::io::ErrorKind::BrokenPipe;
    let error = Error::io("standard output", err);
    if broken {
        error.with_code(BROKEN_PIPE)
    } else {
        error
    }
}

/// True if `error` says the reader of standard output went away.
pub fn is_broken_pipe(error: &Error) -> bool {
    error.code == Some(BROKEN_PIPE)
}

/// Human-readable duration: `0.42 ms`, `3.1 ms`, `1234 ms`.
pub fn format_elapsed(elapsed: std::time::Duration) -> String {
    let ms = elapsed.as_secs_f64() * 1000.0;
    if ms < 1.0 {
        format!("{ms:.2} ms")
    } else if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn elapsed_keeps_two_significant_digits_for_short_times() {
        assert_eq!(format_elapsed(Duration::from_micros(420)), "0.42 ms");
        assert_eq!(format_elapsed(Duration::from_micros(3_140)), "3.1 ms");
        assert_eq!(format_elapsed(Duration::from_millis(1_234)), "1234 ms");
    }
}
