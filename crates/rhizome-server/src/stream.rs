//! The bounded hand-off between a running query and the connection that
//! sends its records.
//!
//! The engine's workers hand blocks of rows to [`ResultBuffer`] (a
//! [`RowReceiver`]); the connection takes them out as the client PULLs.
//!
//! Back-pressure, and why it is safe for the shared worker pool: a worker
//! whose block does not fit waits (on a condition variable) until the
//! client pulls, so a 10-million-row result holds at most
//! `capacity` blocks (plus one per worker) in server memory. The wait is
//! never indefinite: it ends at once when the result is closed (RESET, a
//! dropped connection, the server shutting down — each also cancels the
//! query's token, so queued morsels are dropped), and after
//! `stall_timeout` without a PULL the query fails with a clear error and
//! frees its workers. Only streamed reads block; a statement that writes
//! hands its rows over after its writes are done and is buffered whole
//! (those rows are already materialised by the engine).
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
use rhizome_exec::scheduler::CancelToken;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Sizes of the hand-off.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    /// Blocks buffered before workers wait.
    pub capacity: usize,
    /// How long a worker waits for the client to pull before the query fails.
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
            }),
            space: Condvar::new(),
            ready: Notify::new(),
            cancel,
            limits,
        })
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
        self.lock().finished = Some(result);
        self.ready.notify_one();
    }

    /// Stops the query at once and drops its buffered rows: waiting
    /// workers return with an error, the token is cancelled.
    pub fn close(&self) {
        self.cancel.cancel();
        let mut inner = self.lock();
        inner.closed = true;
        inner.blocks.clear();
        drop(inner);
        self.space.notify_all();
        self.ready.notify_one();
    }

    /// Lifts the bound: the rest of the result is buffered whole (used when
    /// a transaction runs its next statement before this one is consumed).
    pub fn unbound(&self) {
        self.lock().bounded = false;
        self.space.notify_all();
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

impl RowReceiver for ResultBuffer {
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
            let fits = !inner.bounded
                || inner.blocks.len() < self.limits.capacity
                || inner
                    .blocks
                    .keys()
                    .next()
                    .is_some_and(|&(p, _)| position <= p);
            if fits {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::new(
                    ErrorKind::QueryAborted,
                    format!(
                        "the client did not fetch more records for {} s; the query was stopped",
                        self.limits.stall_timeout.as_secs()
                    ),
                ));
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
