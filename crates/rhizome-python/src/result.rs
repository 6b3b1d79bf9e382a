//! `rhizome.Result`: the rows of one statement, fetched as tuples or taken
//! whole as an Arrow table, a pandas or a polars DataFrame.

use crate::arrow::{record_batch, values_array, ArrowStream};
use crate::columns::{Column, ColumnView, Columns};
use crate::values::ToPython;
use arrow_array::Array;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use rhizome_storage::Snapshot;

/// The outcome of one statement: columns, rows (consumed as they are
/// fetched), and for `EXPLAIN` the plan, for `PROFILE` the profile, for a
/// writing statement its counters.
///
/// The rows are kept as columns (see `columns`): `fetch*` and iteration
/// read them from the cursor on, `arrow()` / `df()` / `pl()` take every
/// row from the cursor on and leave none.
#[pyclass(module = "rhizome", name = "Result")]
pub(crate) struct QueryResult {
    columns: Vec<String>,
    data: Columns,
    /// Index of the next row to fetch in `data`.
    cursor: usize,
    /// Rows of the result, fetched or not (`data` is emptied by `arrow()`).
    total: usize,
    /// The state the entities of the rows are read from.
    graph: Snapshot,
    elapsed: f64,
    plan: Option<String>,
    profile: Option<String>,
    counters: Vec<(&'static str, u64)>,
}

impl QueryResult {
    /// Wraps an engine result whose rows were streamed into `data` and
    /// whose entities live in `graph`.
    pub fn new(result: rhizome_engine::QueryResult, data: Columns, graph: Snapshot) -> QueryResult {
        let c = result.counters;
        let total = data.len;
        QueryResult {
            columns: result.columns,
            data,
            cursor: 0,
            total,
            graph,
            elapsed: result.elapsed.as_secs_f64(),
            plan: result.plan,
            profile: result.profile.map(|p| p.text),
            counters: vec![
                ("nodes_created", c.nodes_created),
                ("nodes_deleted", c.nodes_deleted),
                ("relationships_created", c.relationships_created),
                ("relationships_deleted", c.relationships_deleted),
                ("properties_set", c.properties_set),
                ("labels_added", c.labels_added),
                ("labels_removed", c.labels_removed),
                ("indexes_added", c.indexes_added),
                ("indexes_removed", c.indexes_removed),
                ("constraints_added", c.constraints_added),
                ("constraints_removed", c.constraints_removed),
            ],
        }
    }

    /// Up to `n` rows from the cursor as tuples.
    fn take<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let end = self.data.len.min(self.cursor.saturating_add(n));
        let mut convert = ToPython::new(py, &self.graph)?;
        let views: Vec<ColumnView<'_>> = self.data.columns.iter().map(ColumnView::of).collect();
        let mut out = Vec::with_capacity(end.saturating_sub(self.cursor));
        let mut items = Vec::with_capacity(views.len());
        for row in self.cursor..end {
            items.clear();
            for view in &views {
                items.push(cell(py, &mut convert, view, row)?);
            }
            out.push(PyTuple::new(py, items.drain(..))?);
        }
        self.cursor = end.max(self.cursor);
        Ok(out)
    }

    /// The rows not fetched yet as a pyarrow Table (and marks them
    /// fetched). Typed columns are handed over as they are (sliced at the
    /// cursor, not copied); columns of `Value`s are converted.
    fn take_arrow<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pyarrow = py.import("pyarrow").map_err(|e| {
            pyo3::exceptions::PyImportError::new_err(format!(
                "Result.arrow() needs pyarrow (pip install pyarrow): {e}"
            ))
        })?;
        let cursor = self.cursor.min(self.data.len);
        let data = std::mem::replace(&mut self.data, Columns::empty(self.columns.len()));
        self.cursor = 0;
        let rows = data.len - cursor;
        let names = &self.columns;
        let (batch, python) = py
            .detach(|| {
                let mut native = Vec::new();
                let mut python = Vec::new();
                for (index, (name, column)) in names.iter().zip(&data.columns).enumerate() {
                    let array = match column {
                        Column::Arrow(array) => Some(array.slice(cursor, rows)),
                        Column::Values(values) => values_array(&values[cursor..]),
                    };
                    match array {
                        Some(array) => native.push((name.as_str(), array)),
                        None => python.push(index),
                    }
                }
                record_batch(native, rows).map(|batch| (batch, python))
            })
            .map_err(|e| PyRuntimeError::new_err(format!("building Arrow arrays failed: {e}")))?;
        let stream = Bound::new(py, ArrowStream::new(vec![batch]))?;
        let mut table = pyarrow.getattr("table")?.call1((stream,))?;
        if !python.is_empty() {
            let to_array = python_array(py)?;
            let mut convert = ToPython::new(py, &self.graph)?.entities_as_maps();
            for &index in &python {
                let Column::Values(values) = &data.columns[index] else {
                    continue;
                };
                let list = PyList::empty(py);
                for value in &values[cursor..] {
                    list.append(convert.value(value)?)?;
                }
                let array = to_array.bind(py).call1((list,))?;
                table = table
                    .call_method1("add_column", (index, self.columns[index].as_str(), array))?;
            }
        }
        // every row is fetched now; the typed buffers belong to pyarrow
        py.detach(|| drop(data));
        Ok(table)
    }
}

/// Row `row` of a column as a Python object.
fn cell<'py>(
    py: Python<'py>,
    convert: &mut ToPython<'_, 'py>,
    view: &ColumnView<'_>,
    row: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let is_null = |array: &dyn Array| array.is_null(row);
    Ok(match view {
        ColumnView::Values(values) => return convert.value(&values[row]),
        ColumnView::Null => py.None().into_bound(py),
        ColumnView::Int(a) if is_null(*a) => py.None().into_bound(py),
        ColumnView::Float(a) if is_null(*a) => py.None().into_bound(py),
        ColumnView::Bool(a) if is_null(*a) => py.None().into_bound(py),
        ColumnView::Str(a) if is_null(*a) => py.None().into_bound(py),
        ColumnView::LargeStr(a) if is_null(*a) => py.None().into_bound(py),
        ColumnView::Int(a) => a.value(row).into_pyobject(py)?.into_any(),
        ColumnView::Float(a) => PyFloat::new(py, a.value(row)).into_any(),
        ColumnView::Bool(a) => PyBool::new(py, a.value(row)).to_owned().into_any(),
        ColumnView::Str(a) => PyString::new(py, a.value(row)).into_any(),
        ColumnView::LargeStr(a) => PyString::new(py, a.value(row)).into_any(),
    })
}

/// `rhizome._arrow._array`: a pyarrow array of Python objects.
fn python_array(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    ARRAY.get_or_try_init(py, || {
        Ok(py.import("rhizome._arrow")?.getattr("_array")?.unbind())
    })
}

#[pymethods]
impl QueryResult {
    /// The column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    /// Seconds from query text to last row.
    #[getter]
    fn elapsed(&self) -> f64 {
        self.elapsed
    }

    /// For `EXPLAIN`: the plan text, else `None`.
    #[getter]
    fn plan(&self) -> Option<String> {
        self.plan.clone()
    }

    /// For `PROFILE`: the per-operator counters as text, else `None`.
    #[getter]
    fn profile(&self) -> Option<String> {
        self.profile.clone()
    }

    /// What a writing statement changed: `nodes_created`, `properties_set`, ...
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, count) in &self.counters {
            dict.set_item(name, count)?;
        }
        Ok(dict)
    }

    /// The number of rows of the result (fetched or not).
    fn __len__(&self) -> usize {
        self.total
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        Ok(self.take(py, 1)?.pop())
    }

    /// The next row as a tuple, or `None` after the last.
    fn fetchone<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        Ok(self.take(py, 1)?.pop())
    }

    /// The next `size` rows (fewer at the end).
    #[pyo3(signature = (size=1))]
    fn fetchmany<'py>(
        &mut self,
        py: Python<'py>,
        size: usize,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.take(py, size)
    }

    /// All rows not fetched yet.
    fn fetchall<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.take(py, usize::MAX)
    }

    /// The rows not fetched yet as a `pyarrow.Table`.
    fn arrow<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.take_arrow(py)
    }

    /// The rows not fetched yet as a `pandas.DataFrame` (through Arrow).
    fn df<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("pandas").map_err(|e| {
            pyo3::exceptions::PyImportError::new_err(format!(
                "Result.df() needs pandas (pip install pandas): {e}"
            ))
        })?;
        self.take_arrow(py)?.call_method0("to_pandas")
    }

    /// The rows not fetched yet as a `polars.DataFrame` (through Arrow).
    fn pl<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let polars = py.import("polars").map_err(|e| {
            pyo3::exceptions::PyImportError::new_err(format!(
                "Result.pl() needs polars (pip install polars): {e}"
            ))
        })?;
        let table = self.take_arrow(py)?;
        polars.getattr("from_arrow")?.call1((table,))
    }

    fn __repr__(&self) -> String {
        format!(
            "<rhizome.Result columns={:?} rows={} fetched={}>",
            self.columns,
            self.total,
            self.total - (self.data.len - self.cursor.min(self.data.len))
        )
    }
}
