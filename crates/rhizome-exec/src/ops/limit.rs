//! `LimitSink`: keeps the first rows to arrive and stops its pipeline.

use crate::chunk::Chunk;
use crate::context::QueryContext;
use crate::operator::{OperatorResult, Sink, TaskCtx};
use crate::per_worker::PerWorker;
use rhizome_common::Result;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// Keeps the first `limit` rows to arrive and answers
/// [`OperatorResult::Finished`] once it has them, which stops its pipeline.
pub struct LimitSink {
    remaining: AtomicU64,
    locals: PerWorker<Vec<(u64, Chunk)>>,
    seq: AtomicU64,
}

impl LimitSink {
    /// A sink keeping the first `limit` rows, for `slots` workers.
    pub fn new(limit: u64, slots: usize) -> LimitSink {
        LimitSink {
            remaining: AtomicU64::new(limit),
            locals: PerWorker::new(slots, |_| Vec::new()),
            seq: AtomicU64::new(0),
        }
    }
}

impl Sink for LimitSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let n = chunk.len() as u64;
        let mut taken = 0;
        let _ = self
            .remaining
            .fetch_update(AtomicOrdering::AcqRel, AtomicOrdering::Acquire, |r| {
                taken = r.min(n);
                Some(r - taken)
            });
        let finished = self.remaining.load(AtomicOrdering::Acquire) == 0;
        let result = if finished {
            OperatorResult::Finished
        } else {
            OperatorResult::NeedMoreInput
        };
        if taken == 0 {
            return Ok(result);
        }
        let chunk = if taken == n {
            chunk
        } else {
            chunk.select((0..taken as u32).collect())
        };
        let seq = self.seq.fetch_add(1, AtomicOrdering::Relaxed);
        self.locals.lock(ctx.worker).push((seq, chunk));
        Ok(result)
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        let mut all: Vec<(u64, Chunk)> = self.locals.take_all().flatten().collect();
        all.sort_by_key(|(s, _)| *s);
        Ok(all.into_iter().map(|(_, c)| c).collect())
    }
}
