//! Running engine work without the GIL, so other Python threads run (and
//! run queries) meanwhile, and with Ctrl-C cancelling it.
//!
//! Python runs signal handlers only on the main thread and only while that
//! thread holds the GIL. So on the main thread the work runs on one
//! long-lived helper thread (started on first use; it mostly waits for the
//! worker pool) while the calling thread waits for it with the GIL
//! released, taking the GIL back every [`POLL`] to run the signal
//! handlers; a `KeyboardInterrupt` (or any exception a handler raises)
//! cancels the query's token, waits for the query to stop, and is raised.
//! Only the main thread hands work over, and it waits for each piece, so
//! the helper never queues. Other threads cannot receive signals: they run
//! the work themselves with the GIL released.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use rhizome_exec::scheduler::CancelToken;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, sync_channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
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

/// Work handed to the main thread's helper.
type Job = Box<dyn FnOnce() + Send>;

/// The helper thread that runs the main thread's work (started on first use).
fn helper() -> PyResult<Sender<Job>> {
    static HELPER: OnceLock<Mutex<Option<Sender<Job>>>> = OnceLock::new();
    let slot = HELPER.get_or_init(|| Mutex::new(None));
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(sender) = guard.as_ref() {
        return Ok(sender.clone());
    }
    let (sender, jobs) = channel::<Job>();
    std::thread::Builder::new()
        .name("rhizome-python-main".into())
        .spawn(move || {
            for job in jobs {
                job();
            }
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    *guard = Some(sender.clone());
    Ok(sender)
}

/// Runs `work` with the GIL released; on the main thread, a signal
/// (Ctrl-C) cancels `cancel` and its exception is raised once `work`
/// returned.
pub(crate) fn run_released<T: Send + 'static>(
    py: Python<'_>,
    cancel: &Arc<CancelToken>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    if !on_main_thread(py)? {
        return py
            .detach(|| catch_unwind(AssertUnwindSafe(work)))
            .map_err(panicked);
    }
    let (sender, mut receiver) = sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = sender.send(catch_unwind(AssertUnwindSafe(work)));
    });
    helper()?.send(job).map_err(|_| {
        PyRuntimeError::new_err("internal error in Rhizome: the query thread is gone")
    })?;
    {
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
    }
}
