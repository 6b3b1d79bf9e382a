//! `CollectSink`: collects a run's chunks as they come (the end of inner
//! runs, union branches and the materialized side of joins).

use crate::chunk::Chunk;
use crate::context::QueryContext;
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::PerWorker;
use crate::scheduler::CancelToken;
use rhizome_common::Result;
use std::sync::Arc;

/// Collects chunks as they come (per worker); optionally stops the run at the first row.
pub struct CollectSink {
    locals: PerWorker<Vec<Chunk>>,
    stop_after_first: Option<Arc<CancelToken>>,
}

impl CollectSink {
    /// A sink for `slots` workers; `stop_after_first` is cancelled once a row arrives.
    pub fn new(slots: usize, stop_after_first: Option<Arc<CancelToken>>) -> CollectSink {
        CollectSink {
            locals: PerWorker::new(slots, |_| Vec::new()),
            stop_after_first,
        }
    }
}

impl Sink for CollectSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        ctx.q.memory.charge(chunk.len() * chunk.width() * 8)?;
        self.locals.lock(ctx.worker).push(chunk);
        if let Some(token) = &self.stop_after_first {
            token.cancel();
        }
        NEED_MORE
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        Ok(self.locals.take_all().flatten().collect())
    }
}
