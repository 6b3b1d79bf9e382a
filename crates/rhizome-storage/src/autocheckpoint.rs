//! Checkpoints that run by themselves: the policy that says when one is
//! due, and the background thread that runs it.
//!
//! A long-running process (the server) commits for days; without a
//! checkpoint, every change since the last one stays in the in-memory delta
//! (deleted entities included, as tombstones) and in the log. A checkpoint
//! is due when either
//! - the log has grown past [`crate::DatabaseOptions::checkpoint_wal_bytes`], or
//! - the delta holds more than `max(checkpoint_delta_bytes, 2 × what it held
//!   right after the last checkpoint)` bytes (see
//!   [`crate::DatabaseOptions::checkpoint_delta_bytes`]). The doubling
//!   matters after an *incremental* checkpoint, which keeps the delta in
//!   memory (it is now saved in the delta file): the next one then waits
//!   until the delta has doubled, so the delta files written before a full
//!   checkpoint add up to at most twice the last one (each change is
//!   rewritten a bounded number of times, as in a levelled LSM tree). A full
//!   checkpoint empties the delta, which is what bounds memory.
//!
//! Commits only wake the thread ([`Trigger::wake`]: a mutex and a condition
//! variable, no I/O); the thread decides and checkpoints. The checkpoint
//! writes its segment or delta file without the writer lock, so no commit
//! waits for those writes — a transaction waits only if it begins while the
//! checkpoint freezes its state or installs its files (see `relog` and
//! `docs/architecture.md`). The thread belongs to one database handle, holds
//! it weakly and ends when the handle closes.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What the step of the background thread asks for next.
pub(crate) enum Step {
    /// Nothing more to do until the next commit wakes the thread.
    Idle,
    /// The writer lock was busy: look again after a short pause.
    RetrySoon,
    /// The database handle is gone: the thread ends.
    Exit,
}

/// The thread's doorbell.
#[derive(Default)]
pub(crate) struct Trigger {
    state: Mutex<TriggerState>,
    cv: Condvar,
}

#[derive(Default)]
struct TriggerState {
    /// A commit happened since the thread last looked.
    woken: bool,
    /// The handle is closing.
    closing: bool,
}

/// The shortest pause between two looks at the database: a burst of
/// commits wakes the thread once per pause, not once per commit.
const MIN_PAUSE: Duration = Duration::from_millis(20);

/// How long to wait before trying again when the writer lock was busy.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Trigger {
    /// Tells the thread a commit happened (cheap: no I/O, no allocation).
    pub(crate) fn wake(&self) {
        let mut s = lock(&self.state);
        if !s.woken {
            s.woken = true;
            self.cv.notify_one();
        }
    }

    /// Tells the thread to end.
    pub(crate) fn close(&self) {
        lock(&self.state).closing = true;
        self.cv.notify_all();
    }

    /// Waits until woken, closing, or `timeout` passed; false if closing.
    fn wait(&self, timeout: Option<Duration>) -> bool {
        let mut s = lock(&self.state);
        loop {
            if s.closing {
                return false;
            }
            if s.woken {
                s.woken = false;
                return true;
            }
            match timeout {
                Some(t) => {
                    let (next, out) = self
                        .cv
                        .wait_timeout(s, t)
                        .unwrap_or_else(|e| e.into_inner());
                    s = next;
                    if out.timed_out() {
                        return !s.closing;
                    }
                }
                None => s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// Starts the background checkpoint thread: `step` looks at the database
/// (and checkpoints if due) each time a commit rang `trigger`, at most once
/// per [`MIN_PAUSE`]; the thread ends when `step` says [`Step::Exit`] or the
/// trigger closes.
pub(crate) fn spawn(
    trigger: Arc<Trigger>,
    step: impl Fn() -> Step + Send + 'static,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("rhizome-checkpoint".into())
        .spawn(move || {
            let mut retry = false;
            loop {
                let timeout = retry.then_some(RETRY_PAUSE);
                if !trigger.wait(timeout) {
                    return;
                }
                match step() {
                    Step::Exit => return,
                    Step::Idle => retry = false,
                    Step::RetrySoon => retry = true,
                }
                std::thread::sleep(MIN_PAUSE);
            }
        })
        .map(|_| ())
}

/// The policy: is a checkpoint due for a log of `wal_bytes` and a delta of
/// `delta_bytes`, when the delta held `baseline` bytes right after the last
/// checkpoint (0 after a full one)?
pub(crate) fn due(
    wal_bytes: u64,
    delta_bytes: u64,
    baseline: u64,
    wal_limit: u64,
    delta_limit: u64,
) -> bool {
    wal_bytes >= wal_limit || delta_bytes >= delta_limit.max(baseline.saturating_mul(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_on_a_long_log_or_a_large_delta() {
        assert!(!due(100, 100, 0, 1000, 1000));
        assert!(due(1000, 0, 0, 1000, 1000));
        assert!(due(0, 1000, 0, 1000, 1000));
        // After an incremental checkpoint of 800 bytes, wait until 1600.
        assert!(!due(0, 1500, 800, 1000, 1000));
        assert!(due(0, 1600, 800, 1000, 1000));
    }

    #[test]
    fn the_thread_runs_when_rung_and_ends_when_closed() {
        let trigger = Arc::new(Trigger::default());
        let (tx, rx) = std::sync::mpsc::channel();
        spawn(trigger.clone(), move || {
            tx.send(()).ok();
            Step::Idle
        })
        .unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        trigger.wake();
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        trigger.close();
        // Closed: the step never runs again and the sender is dropped.
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(5)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        ));
    }
}
