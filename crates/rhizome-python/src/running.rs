//! Running engine work without the GIL, so other Python threads run (and
//! run queries) meanwhile, and with Ctrl-C cancelling it.
//!
//! Python runs signal handlers only on the main thread and only while that
//! thread holds the GIL. So on the main thread the work runs on a helper
//! thread (it mostly waits for the worker pool) while the calling thread
//! waits for it with the GIL released, taking the GIL back every
//! [`POLL`] to run the signal handlers; a `KeyboardInterrupt` (or any
//! exception a handler raises) cancels the query's token, waits for the
//! query to stop, and is raised. Other threads cannot receive signals:
//! they run the work themselves with the GIL released.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use rhizome_exec::scheduler::CancelToken;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// How often the main thread looks for signals while a query runs.
const POLL: Duration = Duration::from_millis(50);

/// True when called on Python's main thread.
fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    static FUNCTIONS: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();
    let (main_thread, get_ident) = FUNCTIONS.get_or_try_init(py, || -> PyResult<_> {
        let threading = py.import("threading")?;
        Ok((
            threading.getattr("main_thread")?.unbind(),
            threading.getattr("get_ident")?.unbind(),
        ))
    })?;
    let main = main_thread.bind(py).call0()?.getattr("ident")?;
    let me = get_ident.bind(py).call0()?;
    main.eq(me)
}

fn panicked(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    PyRuntimeError::new_err(format!("internal error in Rhizome (a bug): {what}"))
}

/// Runs `work` with the GIL released; on the main thread, a signal
/// (Ctrl-C) cancels `cancel` and its exception is raised once `work`
/// returned.
pub(crate) fn run_released<T: Send>(
    py: Python<'_>,
    cancel: &Arc<CancelToken>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    if !on_main_thread(py)? {
        return py
            .detach(|| catch_unwind(AssertUnwindSafe(work)))
            .map_err(panicked);
    }
    std::thread::scope(|scope| {
        let (sender, mut receiver) = sync_channel(1);
        scope.spawn(move || {
            let _ = sender.send(catch_unwind(AssertUnwindSafe(work)));
        });
        let mut interrupted: Option<PyErr> = None;
        loop {
            let (outcome, back) = py.detach(move || (receiver.recv_timeout(POLL), receiver));
            receiver = back;
            match outcome {
                Ok(done) => {
                    let value = done.map_err(panicked)?;
                    return match interrupted {
                        Some(error) => Err(error),
                        None => Ok(value),
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    if interrupted.is_none() {
                        if let Err(error) = py.check_signals() {
                            cancel.cancel();
                            interrupted = Some(error);
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "internal error in Rhizome: the query thread vanished",
                    ))
                }
            }
        }
    })
}
