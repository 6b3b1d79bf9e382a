//! The Python helpers the native module calls: the entity classes, the
//! temporal conversions and the exception factory of the `rhizome` package
//! (`python/rhizome/_types.py`, `errors.py`), looked up once per process.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Callables of the pure-Python part of the package.
pub(crate) struct Helpers {
    /// `Node(id, labels, properties)`.
    pub node: Py<PyAny>,
    /// `Relationship(id, type, start, end, properties)`.
    pub relationship: Py<PyAny>,
    /// `Path(nodes, relationships)`.
    pub path: Py<PyAny>,
    /// `_date(days)`.
    pub date: Py<PyAny>,
    /// `_local_time(nanos)`.
    pub local_time: Py<PyAny>,
    /// `_time(nanos, offset_seconds)`.
    pub time: Py<PyAny>,
    /// `_local_datetime(seconds, nanos)`.
    pub local_datetime: Py<PyAny>,
    /// `_datetime(seconds, nanos, offset_seconds, zone)`.
    pub datetime: Py<PyAny>,
    /// `_duration(months, days, seconds, nanos)`.
    pub duration: Py<PyAny>,
    /// `_temporal_parts(value)`: a tagged tuple or `None`.
    pub temporal_parts: Py<PyAny>,
    /// `errors._from_native(kind, message, code, position, source)`.
    pub error_from_native: Py<PyAny>,
}

static HELPERS: PyOnceLock<Helpers> = PyOnceLock::new();

/// The helpers, imported on first use.
pub(crate) fn helpers(py: Python<'_>) -> PyResult<&'static Helpers> {
    HELPERS.get_or_try_init(py, || {
        let types = py.import("rhizome._types")?;
        let errors = py.import("rhizome.errors")?;
        let get = |name: &str| -> PyResult<Py<PyAny>> { Ok(types.getattr(name)?.unbind()) };
        Ok(Helpers {
            node: get("Node")?,
            relationship: get("Relationship")?,
            path: get("Path")?,
            date: get("_date")?,
            local_time: get("_local_time")?,
            time: get("_time")?,
            local_datetime: get("_local_datetime")?,
            datetime: get("_datetime")?,
            duration: get("_duration")?,
            temporal_parts: get("_temporal_parts")?,
            error_from_native: errors.getattr("_from_native")?.unbind(),
        })
    })
}
