//! Rhizome from Python: the native part of the `rhizome` package
//! (`rhizome._rhizome`), built with maturin as one abi3 wheel for
//! Python ≥ 3.10.
//!
//! The engine is embedded: [`database`] opens it and runs statements (with
//! the GIL released, Ctrl-C cancelling: [`running`]) streaming their rows
//! into typed columns ([`columns`]), [`result`] hands rows out as tuples or
//! whole as Arrow ([`arrow`]), [`values`] converts values
//! both ways, [`errors`] maps engine errors to the exception classes of
//! `python/rhizome/errors.py`, [`import`] wraps the bulk importer. The
//! user guide is `docs/python.md`; the tests are `tests/` (pytest).

mod arrow;
mod columns;
mod database;
mod errors;
mod import;
mod python_side;
mod result;
mod running;
mod values;

use pyo3::prelude::*;

/// The native module `rhizome._rhizome`.
#[pymodule]
fn _rhizome(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<database::Database>()?;
    m.add_class::<database::Connection>()?;
    m.add_class::<database::Transaction>()?;
    m.add_class::<result::QueryResult>()?;
    m.add_class::<arrow::ArrowStream>()?;
    m.add_function(wrap_pyfunction!(import::import_csv, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
