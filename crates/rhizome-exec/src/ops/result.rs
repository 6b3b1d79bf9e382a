//! `RowsSink`: the result sink of a query, building result rows on the
//! workers.

use crate::chunk::Chunk;
use crate::context::QueryContext;
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::PerWorker;
use crate::rows::Rows;
use crate::stream::{RowBlock, RowReceiver};
use rhizome_common::{Result, Value};
use rhizome_plan::Slot;
use std::sync::Arc;

/// Result rows built from one chunk: its source chunk and its values,
/// row-major.
type SourceRows = (usize, Vec<Value>);

/// Where the result sink puts the rows it builds.
enum Destination {
    /// Kept, per worker, until [`RowsSink::take_rows`].
    Collect(PerWorker<Vec<SourceRows>>),
    /// Handed to a receiver; each worker refills one block.
    Stream(Arc<dyn RowReceiver>, PerWorker<RowBlock>),
}

/// The result sink of a query: turns each chunk into a block of result
/// values (row-major, in column order) on the worker that produced it, so
/// building the rows is as parallel as the pipeline that ends here. It
/// collects the blocks (one allocation per chunk) or streams them to a
/// [`RowReceiver`] (no allocation once each worker's block has grown).
pub struct RowsSink {
    columns: Vec<Slot>,
    destination: Destination,
}

impl RowsSink {
    /// A sink for `slots` workers that keeps the values of `columns` (none:
    /// no rows, as for a statement without result columns), or streams
    /// them to `receiver` if given.
    pub fn new(
        slots: usize,
        columns: Vec<Slot>,
        receiver: Option<Arc<dyn RowReceiver>>,
    ) -> RowsSink {
        let destination = match receiver {
            None => Destination::Collect(PerWorker::new(slots, |_| Vec::new())),
            Some(receiver) => Destination::Stream(
                receiver,
                PerWorker::new(slots, |worker| RowBlock::new(columns.len(), worker)),
            ),
        };
        RowsSink {
            columns,
            destination,
        }
    }

    /// The collected rows in the order of their source chunks (rows of one
    /// source chunk: worker by worker, each in arrival order). The blocks
    /// are moved, not copied. Empty if the rows were streamed.
    pub fn take_rows(&self) -> Rows {
        let mut pieces: Vec<SourceRows> = Vec::new();
        if let Destination::Collect(locals) = &self.destination {
            pieces.extend(locals.take_all().flatten());
        }
        pieces.sort_by_key(|(source, _)| *source);
        Rows::from_blocks(
            self.columns.len(),
            pieces.into_iter().map(|(_, values)| values).collect(),
        )
    }

    /// Appends the result values of `chunk`'s rows to `values`; true if
    /// they are all ids or nulls (they own no heap memory).
    fn build(&self, chunk: &Chunk, values: &mut Vec<Value>) -> bool {
        let columns: Vec<_> = self.columns.iter().map(|&s| chunk.column(s)).collect();
        values.reserve(chunk.len() * columns.len());
        if let [Some(column)] = columns[..] {
            column.append_values(chunk.len(), values);
        } else {
            for r in 0..chunk.len() {
                values.extend(columns.iter().map(|c| match c {
                    Some(c) => c.value(r),
                    None => Value::Null,
                }));
            }
        }
        columns.iter().all(|c| c.is_none_or(|c| c.holds_ids()))
    }
}

impl Sink for RowsSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        if self.columns.is_empty() {
            return NEED_MORE;
        }
        match &self.destination {
            Destination::Collect(locals) => {
                // Charged as the collecting sink charges chunks.
                ctx.q.memory.charge(chunk.len() * chunk.width() * 8)?;
                let mut values = Vec::new();
                self.build(&chunk, &mut values);
                locals.lock(ctx.worker).push((ctx.source, values));
                NEED_MORE
            }
            Destination::Stream(receiver, blocks) => {
                if receiver.keeps_rows() {
                    ctx.q.memory.charge(chunk.len() * chunk.width() * 8)?;
                }
                let mut block = blocks.lock(ctx.worker);
                block.refill(ctx.source, |values| self.build(&chunk, values));
                receiver.receive(&mut block)?;
                NEED_MORE
            }
        }
    }

    fn sequenced(&self) -> bool {
        true
    }

    fn reads(&self) -> Option<&[Slot]> {
        Some(&self.columns)
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        Ok(Vec::new())
    }
}
