//! The bounded hand-off between a running query and the connection that
//! sends its records.
//!
//! The engine's workers hand blocks of rows to [`ResultBuffer`] (a
//! [`RowReceiver`]); the connection takes them out as the client PULLs.
//!
//! Back-pressure, and why it is safe for the shared worker pool: when a
//! block does not fit, the buffer takes it all the same and *holds* the
//! query ([`QueryScope::hold`]): no worker takes its queued tasks, and its
//! running tasks hand the rest of their work back to the query's queue at
//! their next hand-back point (a scan's next morsel, an expansion's next
//! input row, an unwound list's next chunk) and free their workers. The
//! query's state waits in its queued tasks, not on a thread. When the
//! client has pulled the buffer down to half its capacity the query is
//! resumed and the workers take its tasks again. So a 10-million-row result
//! holds about `capacity` blocks (plus what its running tasks made before
//! their hand-back point) in server memory, and clients that stop pulling
//! hold no worker: other queries run on.
//!
//! A hold never lasts indefinitely: it ends at once when the result is
//! closed (RESET, a dropped connection, TERMINATE TRANSACTION, the server
//! shutting down — each also cancels the query's token, so its tasks end
//! as soon as they run), when the query's timeout passes, and after
//! `stall_timeout` without room the query fails with a clear error (the
//! next worker that looks for work sees each of these). Only if a single
//! task makes more than [`OVERFLOW_FACTOR`] times the capacity before its
//! next hand-back point (one node with millions of neighbours) does it wait
//! on its thread, as a receiver without a query to hold does (the blocks
//! [`rhizome_exec::stream::deliver`] hands over); that wait ends the same
//! ways. Only streamed reads are held; a statement that writes hands its
//! rows over after its writes are done and is buffered whole (those rows
//! are already materialised by the engine).
//!
//! Order: an unordered result's blocks go out as they arrive. A result
//! whose order is significant (`ORDER BY`) may reach the receiver slightly
//! out of order (parallel workers emit neighbouring positions, see
//! [`RowReceiver`]), and a receiver cannot know which positions are still
//! to come; so such a result is kept whole and sent in position order once
//! the query ends. Its rows were held by the sort already, so this at most
//! doubles what the query holds, and a `LIMIT` bounds both.

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_engine::{QueryResult, RowBlock, RowReceiver};
use rhizome_exec::scheduler::{CancelToken, QueryScope};
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How many times its capacity a held result may take in before a
/// producing task that has not reached a hand-back point waits on its
/// thread instead (see the module documentation).
pub const OVERFLOW_FACTOR: usize = 4;

/// Sizes of the hand-off.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    /// Blocks buffered before the query is held.
    pub capacity: usize,
    /// How long a query is held (or a task waits) for the client to pull
    /// before the query fails.
    pub stall_timeout: Duration,
}

impl Default for StreamLimits {
    fn default() -> StreamLimits {
        StreamLimits {
            capacity: 16,
            stall_timeout: Duration::from_secs(60),
        }
    }
}

/// What the connection gets next from a result.
pub enum Next {
    /// A block of rows, row-major, `width` values per row.
    Rows(Vec<Value>),
    /// The query ended (after all its rows).
    Finished(Box<Result<QueryResult>>),
}

struct Inner {
    blocks: BTreeMap<(usize, u64), Vec<Value>>,
    arrivals: u64,
    finished: Option<Result<QueryResult>>,
    closed: bool,
    bounded: bool,
    /// Kept whole and released in position order at the end.
    in_order: bool,
    /// The query's scope, to hold and resume it (weak: its tasks hold us).
    scope: Weak<QueryScope>,
    /// The query is held by this buffer (it was full).
    holding: bool,
}

/// A running query's rows on their way to the client.
pub struct ResultBuffer {
    inner: Mutex<Inner>,
    space: Condvar,
    ready: Notify,
    cancel: Arc<CancelToken>,
    limits: StreamLimits,
}

impl ResultBuffer {
    /// A buffer for one query's streamed rows; `in_order` for a result
    /// whose order is significant (kept whole, sent in order at the end).
    pub fn new(
        cancel: Arc<CancelToken>,
        limits: StreamLimits,
        in_order: bool,
    ) -> Arc<ResultBuffer> {
        Arc::new(ResultBuffer {
            inner: Mutex::new(Inner {
                blocks: BTreeMap::new(),
                arrivals: 0,
                finished: None,
                closed: false,
                bounded: !in_order,
                in_order,
                scope: Weak::new(),
                holding: false,
            }),
            space: Condvar::new(),
            ready: Notify::new(),
            cancel,
            limits,
        })
    }

    /// Says whether the result's order is significant, once the statement
    /// is planned (as `in_order` of [`ResultBuffer::new`]); called before
    /// the query hands over its first block.
    pub fn set_ordered(&self, in_order: bool) {
        let mut inner = self.lock();
        inner.in_order = in_order;
        inner.bounded = !in_order;
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The query's cancellation token.
    pub fn cancel_token(&self) -> &Arc<CancelToken> {
        &self.cancel
    }

    /// Records how the query ended (called once, by the thread that ran it).
    pub fn finish(&self, result: Result<QueryResult>) {
        let mut inner = self.lock();
        inner.finished = Some(result);
        inner.holding = false;
        inner.scope = Weak::new();
        drop(inner);
        self.ready.notify_one();
    }

    /// Stops the query at once and drops its buffered rows: the token is
    /// cancelled, a held query resumed (its tasks end as they run), waiting
    /// tasks return with an error.
    pub fn close(&self) {
        self.cancel.cancel();
        let mut inner = self.lock();
        inner.closed = true;
        inner.blocks.clear();
        Self::resume(&mut inner);
        drop(inner);
        self.space.notify_all();
        self.ready.notify_one();
    }

    /// Lifts the bound: the rest of the result is buffered whole (used when
    /// a transaction runs its next statement before this one is consumed).
    pub fn unbound(&self) {
        let mut inner = self.lock();
        inner.bounded = false;
        Self::resume(&mut inner);
        drop(inner);
        self.space.notify_all();
    }

    /// Ends this buffer's hold on its query, if it holds it (called with
    /// the lock held, so a hold and its end are never reordered).
    fn resume(inner: &mut Inner) {
        if std::mem::take(&mut inner.holding) {
            if let Some(scope) = inner.scope.upgrade() {
                scope.resume();
            }
        }
    }

    /// True while the buffer holds its query (tests).
    pub fn is_holding(&self) -> bool {
        self.lock().holding
    }

    /// Waits for the next block of rows or the end of the query.
    pub async fn next(&self) -> Next {
        loop {
            let notified = self.ready.notified();
            {
                let mut inner = self.lock();
                let release = inner.finished.is_some() || inner.closed || !inner.in_order;
                if release {
                    if let Some((_, rows)) = inner.blocks.pop_first() {
                        if inner.blocks.len() <= self.limits.capacity / 2 {
                            Self::resume(&mut inner);
                        }
                        drop(inner);
                        self.space.notify_all();
                        return Next::Rows(rows);
                    }
                    if let Some(result) = inner.finished.take() {
                        return Next::Finished(Box::new(result));
                    }
                }
            }
            notified.await;
        }
    }
}

fn cancelled() -> Error {
    Error::new(ErrorKind::QueryAborted, "the query was cancelled")
}

impl ResultBuffer {
    fn stalled(&self) -> Error {
        Error::new(
            ErrorKind::QueryAborted,
            format!(
                "the client did not fetch more records for {} s; the query was stopped",
                self.limits.stall_timeout.as_secs()
            ),
        )
    }
}

impl ResultBuffer {
    /// Worker time the query feeding this buffer has used so far (none
    /// before it started or after it ended).
    pub fn busy_time(&self) -> Option<std::time::Duration> {
        self.lock().scope.upgrade().map(|scope| scope.busy_time())
    }
}

impl RowReceiver for ResultBuffer {
    fn attach(&self, scope: &Arc<QueryScope>) {
        self.lock().scope = Arc::downgrade(scope);
    }

    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        if block.is_empty() {
            return Ok(());
        }
        let position = block.position();
        let deadline = Instant::now() + self.limits.stall_timeout;
        let mut inner = self.lock();
        loop {
            if inner.closed {
                return Err(cancelled());
            }
            // (A bounded result is never an ordered one, so any block may
            // wait: there is no position the client must see first.)
            let held = inner.blocks.len();
            let fits = !inner.bounded || held < self.limits.capacity;
            if fits {
                break;
            }
            // Full: take the block and hold the query, whose tasks hand
            // their work back to its queue (see the module documentation).
            if held < self.limits.capacity * OVERFLOW_FACTOR {
                if let Some(scope) = inner.scope.upgrade() {
                    if !inner.holding {
                        inner.holding = true;
                        scope.hold(deadline, self.stalled());
                    }
                    break;
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.stalled());
            }
            inner = self
                .space
                .wait_timeout(inner, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let arrival = inner.arrivals;
        inner.arrivals += 1;
        inner
            .blocks
            .insert((position, arrival), block.take_values());
        drop(inner);
        self.ready.notify_one();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(capacity: usize, stall_ms: u64) -> StreamLimits {
        StreamLimits {
            capacity,
            stall_timeout: Duration::from_millis(stall_ms),
        }
    }

    /// Delivers `blocks` (position, values) through the public receiver
    /// API, via the engine's own `deliver` of collected rows.
    fn deliver(buffer: &Arc<ResultBuffer>, count: usize) -> Result<()> {
        let mut rows = rhizome_engine::Rows::new(1);
        rows.extend((0..count as i64).map(|i| vec![Value::Int(i)]));
        rhizome_exec::stream::deliver(rows, buffer.as_ref())
    }

    #[tokio::test]
    async fn a_full_buffer_makes_the_producer_wait_until_the_client_pulls() {
        let buffer = ResultBuffer::new(CancelToken::root(), limits(2, 10_000), false);
        let producer = {
            let buffer = buffer.clone();
            std::thread::spawn(move || deliver(&buffer, 100_000))
        };
        let mut seen = 0;
        loop {
            match buffer.next().await {
                Next::Rows(values) => {
                    for v in values {
                        assert_eq!(v, Value::Int(seen));
                        seen += 1;
                    }
                    let held = buffer.lock().blocks.len();
                    assert!(held <= 2, "{held} blocks held");
                }
                Next::Finished(_) => unreachable!("finish is not called in this test"),
            }
            if seen == 100_000 {
                break;
            }
        }
        producer.join().unwrap().unwrap();
    }

    #[test]
    fn closing_releases_a_waiting_worker_with_an_error() {
        let buffer = ResultBuffer::new(CancelToken::root(), limits(1, 60_000), false);
        let producer = {
            let buffer = buffer.clone();
            std::thread::spawn(move || deliver(&buffer, 50_000))
        };
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        buffer.close();
        let err = producer.join().unwrap().unwrap_err();
        assert_eq!(err.kind, ErrorKind::QueryAborted);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(buffer.cancel_token().is_cancelled());
    }

    #[test]
    fn a_client_that_never_pulls_stops_the_query_after_the_stall_timeout() {
        let buffer = ResultBuffer::new(CancelToken::root(), limits(1, 100), false);
        let err = deliver(&buffer, 50_000).unwrap_err();
        assert!(err.message.contains("did not fetch"), "{err}");
    }

    #[tokio::test]
    async fn an_ordered_result_is_released_in_position_order_at_the_end() {
        let buffer = ResultBuffer::new(CancelToken::root(), limits(1, 10_000), true);
        // Blocks arrive out of position order, more than the capacity.
        for position in [2usize, 0, 3, 1] {
            let mut rows = rhizome_engine::Rows::new(1);
            rows.extend([vec![Value::Int(position as i64)]]);
            // `deliver` numbers blocks from 0; shift them to `position`.
            struct At<'a>(&'a ResultBuffer, usize);
            impl RowReceiver for At<'_> {
                fn receive(&self, block: &mut RowBlock) -> Result<()> {
                    let mut inner = self.0.lock();
                    let arrival = inner.arrivals;
                    inner.arrivals += 1;
                    inner.blocks.insert((self.1, arrival), block.take_values());
                    Ok(())
                }
            }
            rhizome_exec::stream::deliver(rows, &At(&buffer, position)).unwrap();
        }
        // Nothing is released before the end...
        let early = tokio::time::timeout(Duration::from_millis(50), buffer.next()).await;
        assert!(early.is_err(), "released before the query ended");
        buffer.finish(Err(cancelled()));
        let mut order = Vec::new();
        while let Next::Rows(values) = buffer.next().await {
            order.extend(values);
        }
        assert_eq!(order, (0..4).map(Value::Int).collect::<Vec<_>>());
    }
}
