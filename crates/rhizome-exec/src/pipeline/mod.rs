//! Pipelines: a source, a chain of streaming operators and a sink, and the
//! two modules on top of [`crate::operator`] that make and run them.
//!
//! A plan is cut into pipelines at breakers (aggregation, sort, top, limit,
//! the build side of joins, union branches) by [`build`]. Pipelines run one
//! after another in dependency order ([`drive`]); inside one, every source
//! chunk is a task on the worker pool, and operators split their remaining
//! work into new tasks at their own stage when workers are idle
//! ([`crate::operator::TaskCtx::split_off`]), so even a query that starts
//! at one node fans out over all workers.
//!
//! The same pipelines run *inline* (on the current thread, without the pool)
//! for the inner side of applies and expression subqueries, where a whole run
//! is one quantum of the outer task.

pub mod build;
pub mod drive;
pub mod instances;

use crate::chunk::Chunk;
use crate::context::QueryContext;
use crate::operator::{Cell, Chain, Source};
use rhizome_common::Result;

/// One pipeline of a run.
pub struct Pipeline {
    /// Its operators and sink.
    pub chain: Chain,
    /// Where its chunks come from.
    pub source: Box<dyn Source>,
    /// Where the sink's output goes (`None` for the run's output).
    pub output: Option<Cell>,
    /// Ordered, but each source chunk may be a task of its own: the sink
    /// restores the order of the source chunks, and no stage keeps state
    /// across chunks.
    pub sequenced: bool,
}

impl Pipeline {
    /// Finishes the sink and hands its output on: into the next pipeline's
    /// cell, or returned as the run's output.
    pub fn finish(&self, q: &QueryContext) -> Result<Vec<Chunk>> {
        let out = self.chain.sink.1.finish(q)?;
        // A breaker's rows are its sink's output (nothing emits them); the
        // result sink's were counted where they were produced.
        if let (Some(profile), Some(id), false) =
            (&q.profile, self.chain.sink.0, self.chain.result_sink)
        {
            profile.add_rows(id, out.iter().map(|c| c.len() as u64).sum());
        }
        match &self.output {
            Some(cell) => {
                cell.lock().unwrap_or_else(|p| p.into_inner()).extend(out);
                Ok(Vec::new())
            }
            None => Ok(out),
        }
    }
}

/// The source of a pipeline that starts from the run's argument row.
pub struct ArgumentSource;

impl Source for ArgumentSource {
    fn chunks(&self, argument: &Chunk) -> Vec<Chunk> {
        vec![argument.clone()]
    }
}

/// The source of a pipeline that reads what an earlier one left in a cell
/// (or rows an updating run materialized).
pub struct CellSource(pub Cell);

impl Source for CellSource {
    fn chunks(&self, _: &Chunk) -> Vec<Chunk> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
