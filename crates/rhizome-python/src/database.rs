//! `rhizome.Database`, `Connection` and `Transaction`: the embedded engine
//! opened from Python.

use crate::columns::ColumnReceiver;
use crate::errors::{to_py_err, IntoPyResult};
use crate::result::QueryResult;
use crate::running::run_released;
use crate::values;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;
use rhizome_common::{Error, ErrorKind};
use rhizome_engine::{Engine, QueryOptions};
use rhizome_exec::scheduler::CancelToken;
use rhizome_storage::{Database as Storage, GraphBuilder};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// An engine handle that can be closed, shared by a database and its
/// connections (each holds its own clone of the engine).
struct Handle {
    engine: RwLock<Option<Engine>>,
    read_only: bool,
    /// Most bytes one statement may hold (see [`memory_limit`]).
    memory_limit: Option<usize>,
}

/// The per-statement memory limit `Database(memory_limit=...)` asks for:
/// bytes as an `int` or a size such as `"512MiB"` / `"2GB"` (as the
/// command line's `--memory-limit`), or by default half the memory of the
/// machine or container, as the command line and the server default to.
fn memory_limit(limit: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(limit) = limit else {
        return Ok(rhizome_common::memory::share_of_memory(
            rhizome_common::memory::DEFAULT_QUERY_SHARE,
        ));
    };
    if limit.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "memory_limit must be a number of bytes or a size such as '512MiB', not a bool",
        ));
    }
    if let Ok(text) = limit.extract::<String>() {
        return rhizome_common::memory::parse_size(&text)
            .map(Some)
            .map_err(|e| PyValueError::new_err(format!("memory_limit: {e}")));
    }
    match limit.extract::<i128>() {
        Ok(bytes) if bytes >= 1 => Ok(Some(usize::try_from(bytes).unwrap_or(usize::MAX))),
        Ok(bytes) => Err(PyValueError::new_err(format!(
            "memory_limit must be at least 1 byte, not {bytes}"
        ))),
        Err(_) => Err(PyTypeError::new_err(format!(
            "memory_limit must be a number of bytes or a size such as '512MiB', not {}",
            limit.get_type().name()?
        ))),
    }
}

fn closed(what: &str) -> Error {
    Error::new(ErrorKind::ArgumentError, format!("the {what} is closed"))
}

fn options(
    cancel: &Arc<CancelToken>,
    timeout: Option<f64>,
    memory_limit: Option<usize>,
) -> PyResult<QueryOptions> {
    let timeout = match timeout {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(PyValueError::new_err(format!(
                "timeout must be a positive number of seconds, not {t}"
            )))
        }
    };
    Ok(QueryOptions {
        cancel: Some(cancel.clone()),
        timeout,
        memory_limit,
        ..QueryOptions::default()
    })
}

impl Handle {
    fn new(engine: Engine, read_only: bool, memory_limit: Option<usize>) -> Handle {
        Handle {
            engine: RwLock::new(Some(engine)),
            read_only,
            memory_limit,
        }
    }

    fn engine(&self, py: Python<'_>, what: &str) -> PyResult<Engine> {
        let guard = self.engine.read().unwrap_or_else(|e| e.into_inner());
        guard.clone().ok_or_else(|| to_py_err(py, closed(what)))
    }

    fn close(&self) {
        let mut guard = self.engine.write().unwrap_or_else(|e| e.into_inner());
        guard.take();
    }

    fn execute(
        &self,
        py: Python<'_>,
        what: &str,
        query: &str,
        parameters: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<QueryResult> {
        let engine = self.engine(py, what)?;
        let params = values::parameters(parameters)?;
        let cancel = CancelToken::root();
        let options = options(&cancel, timeout, self.memory_limit)?;
        let read_only = self.read_only;
        let query = query.to_string();
        let outcome = run_released(py, &cancel, move || {
            if read_only && engine.describe(&query, &params)?.updating {
                return Err(Error::new(
                    ErrorKind::SemanticError,
                    "the database was opened read-only (read_only=True): this statement writes",
                )
                .with_code("AccessMode"));
            }
            let receiver = Arc::new(ColumnReceiver::new());
            let result = engine.execute_streaming(&query, params, &options, receiver.clone())?;
            let columns = receiver.finish(result.columns.len());
            Ok((result, columns, engine.database().snapshot()))
        })?;
        let (result, columns, snapshot) = outcome.py_err(py)?;
        Ok(QueryResult::new(result, columns, snapshot))
    }

    fn transaction(&self, py: Python<'_>, what: &str) -> PyResult<Transaction> {
        if self.read_only {
            return Err(to_py_err(
                py,
                Error::new(
                    ErrorKind::SemanticError,
                    "the database was opened read-only (read_only=True): no write transaction",
                )
                .with_code("AccessMode"),
            ));
        }
        let engine = self.engine(py, what)?;
        let cancel = CancelToken::root();
        let txn = run_released(py, &cancel, move || engine.begin())?.py_err(py)?;
        Ok(Transaction {
            txn: Arc::new(Mutex::new(Some(txn))),
            memory_limit: self.memory_limit,
        })
    }
}

/// Opens the database in `path`, creating an empty one if nothing is there
/// (unless `read_only`).
fn open(path: &Path, read_only: bool) -> rhizome_common::Result<Engine> {
    let empty_dir = path.is_dir()
        && std::fs::read_dir(path)
            .map_err(|e| Error::io(path.display(), e))?
            .next()
            .is_none();
    if !path.exists() || empty_dir {
        if read_only {
            return Err(Error::new(
                ErrorKind::IoError,
                format!("no database at `{}` to open read-only", path.display()),
            ));
        }
        if empty_dir {
            std::fs::remove_dir(path).map_err(|e| Error::io(path.display(), e))?;
        }
        GraphBuilder::new().write(path)?;
    }
    let options = rhizome_storage::DatabaseOptions {
        read_only,
        ..Default::default()
    };
    Ok(Engine::new(Storage::open_with(path, options)?))
}

/// A database directory opened in this process. `Database(path)` creates an
/// empty database if `path` does not exist; `read_only=True` refuses every
/// statement that writes; `memory_limit` caps what one statement may hold
/// (default: half the memory). Share one `Database` between threads:
/// queries run in parallel (the GIL is released while they run).
#[pyclass(module = "rhizome", frozen)]
pub(crate) struct Database {
    handle: Handle,
    path: PathBuf,
}

#[pymethods]
impl Database {
    #[new]
    #[pyo3(signature = (path, read_only = false, *, memory_limit = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        memory_limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Database> {
        let limit = self::memory_limit(memory_limit)?;
        let opened = py.detach(|| open(&path, read_only)).py_err(py)?;
        Ok(Database {
            handle: Handle::new(opened, read_only, limit),
            path,
        })
    }

    /// Most bytes one statement's sorts, aggregations, joins, lists and
    /// result may hold (`None` if the machine's memory could not be read).
    #[getter]
    fn memory_limit(&self) -> Option<usize> {
        self.handle.memory_limit
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// True if opened with `read_only=True`.
    #[getter]
    fn read_only(&self) -> bool {
        self.handle.read_only
    }

    /// Runs one Cypher statement with `parameters` (a dict) and returns its
    /// `Result`. A statement that writes commits on its own. `timeout` (in
    /// seconds) aborts it with `QueryAborted`; Ctrl-C cancels it.
    #[pyo3(signature = (query, parameters = None, *, timeout = None))]
    fn execute(
        &self,
        py: Python<'_>,
        query: &str,
        parameters: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<QueryResult> {
        self.handle
            .execute(py, "database", query, parameters, timeout)
    }

    /// A connection: its own handle on the database (for a thread, say).
    fn connect(&self, py: Python<'_>) -> PyResult<Connection> {
        Ok(Connection {
            handle: Handle::new(
                self.handle.engine(py, "database")?,
                self.handle.read_only,
                self.handle.memory_limit,
            ),
        })
    }

    /// Starts a write transaction (waits for the single writer lock; a
    /// `TransientError` if it stays busy). Use it in a `with` block: it
    /// commits on success and rolls back on an exception.
    fn transaction(&self, py: Python<'_>) -> PyResult<Transaction> {
        self.handle.transaction(py, "database")
    }

    /// Closes this handle (the files close when no connection is left).
    fn close(&self) {
        self.handle.close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!("rhizome.Database({:?})", self.path.display().to_string())
    }
}

/// A connection to a `Database`, as `db.connect()` returns: the same
/// `execute` and `transaction` as the database.
#[pyclass(module = "rhizome", frozen)]
pub(crate) struct Connection {
    handle: Handle,
}

#[pymethods]
impl Connection {
    /// Runs one statement; see `Database.execute`.
    #[pyo3(signature = (query, parameters = None, *, timeout = None))]
    fn execute(
        &self,
        py: Python<'_>,
        query: &str,
        parameters: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<QueryResult> {
        self.handle
            .execute(py, "connection", query, parameters, timeout)
    }

    /// Starts a write transaction; see `Database.transaction`.
    fn transaction(&self, py: Python<'_>) -> PyResult<Transaction> {
        self.handle.transaction(py, "connection")
    }

    /// Closes the connection.
    fn close(&self) {
        self.handle.close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }
}

/// An explicit write transaction: its statements see each other's writes,
/// others see nothing until `commit()`. As a context manager it commits
/// when the block ends normally and rolls back when it raises. After a
/// failed statement only rollback remains.
#[pyclass(module = "rhizome", frozen)]
pub(crate) struct Transaction {
    txn: Arc<Mutex<Option<rhizome_engine::Transaction>>>,
    memory_limit: Option<usize>,
}

impl Transaction {
    fn take(&self) -> Option<rhizome_engine::Transaction> {
        self.txn.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[pymethods]
impl Transaction {
    /// Runs one statement inside the transaction.
    #[pyo3(signature = (query, parameters = None, *, timeout = None))]
    fn execute(
        &self,
        py: Python<'_>,
        query: &str,
        parameters: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<QueryResult> {
        let params = values::parameters(parameters)?;
        let cancel = CancelToken::root();
        let options = options(&cancel, timeout, self.memory_limit)?;
        let txn = self.txn.clone();
        let query = query.to_string();
        let outcome = run_released(py, &cancel, move || {
            let mut guard = txn.lock().unwrap_or_else(|e| e.into_inner());
            let txn = guard.as_mut().ok_or_else(|| closed("transaction"))?;
            let receiver = Arc::new(ColumnReceiver::new());
            let result = txn.execute_streaming(&query, params, &options, receiver.clone())?;
            let columns = receiver.finish(result.columns.len());
            let snapshot = txn.snapshot().ok_or_else(|| closed("transaction"))?;
            Ok((result, columns, snapshot))
        })?;
        let (result, columns, snapshot) = outcome.py_err(py)?;
        Ok(QueryResult::new(result, columns, snapshot))
    }

    /// Makes the writes durable and visible (after the log is synced).
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let txn = self
            .take()
            .ok_or_else(|| to_py_err(py, closed("transaction")))?;
        py.detach(|| txn.commit()).py_err(py)?;
        Ok(())
    }

    /// Discards the writes (nothing happens if already closed).
    fn rollback(&self, py: Python<'_>) {
        if let Some(txn) = self.take() {
            py.detach(|| txn.rollback());
        }
    }

    /// True until committed or rolled back.
    #[getter]
    fn open(&self) -> bool {
        self.txn.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type = None, _exc = None, _traceback = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if exc_type.is_none() && self.open() {
            self.commit(py)?;
        } else {
            self.rollback(py);
        }
        Ok(false)
    }
}
