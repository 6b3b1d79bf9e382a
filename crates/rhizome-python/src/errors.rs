//! Rhizome errors as Python exceptions of the matching `rhizome.errors`
//! class (kind, code, message, position).

use crate::python_side::helpers;
use pyo3::prelude::*;
use rhizome_common::Error;

/// The Python exception for `error`.
pub(crate) fn to_py_err(py: Python<'_>, error: Error) -> PyErr {
    let position = error.position.map(|p| (p.offset, p.line, p.column));
    let made = helpers(py).and_then(|h| {
        h.error_from_native.bind(py).call1((
            error.kind.name(),
            error.message.as_str(),
            error.code,
            position,
            error.source_name.as_deref(),
        ))
    });
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(failed) => failed,
    }
}

/// Extension: `result.py_err(py)?` for engine results.
pub(crate) trait IntoPyResult<T> {
    /// The value, or the error as a Python exception.
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for rhizome_common::Result<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py_err(py, e))
    }
}
