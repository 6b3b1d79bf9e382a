//! Streaming a query's result: the workers hand each block of result rows
//! to a [`RowReceiver`] as they produce it, instead of collecting the whole
//! result first.
//!
//! A streamed result holds no rows: each worker builds its blocks in one
//! buffer it reuses, so rows never outlive the call that receives them and
//! the memory a large result takes is one block per worker.

use crate::chunk::clear_values;
use crate::rows::Rows;
use crate::scheduler::QueryScope;
use rhizome_common::{Result, Value};
use std::sync::Arc;

/// Receives a query's result rows, block by block, on the workers that
/// produce them.
///
/// Several workers may call [`RowReceiver::receive`] at once. Where the
/// query defines an order (`ORDER BY`), the result is the blocks in
/// increasing [`RowBlock::position`]; blocks of one position then come one
/// after another from one worker, in order. Blocks of a result without a
/// defined order may come in any order.
pub trait RowReceiver: Send + Sync {
    /// Takes one block of rows. An error stops the query, which then fails
    /// with that error.
    fn receive(&self, block: &mut RowBlock) -> Result<()>;

    /// True if the receiver keeps what it receives until the query ends
    /// (a client library building the whole result in its own form):
    /// the rows then count against the query's memory limit as collected
    /// rows do. False (the default) for a receiver that passes rows on.
    fn keeps_rows(&self) -> bool {
        false
    }

    /// Called once as the query starts, with the scope its tasks run in. A
    /// receiver with bounded room may keep it (weakly: the query's tasks
    /// hold the receiver) to hold the query while it is full and resume it
    /// when there is room ([`QueryScope::hold`], [`QueryScope::resume`]),
    /// rather than make a worker wait in [`RowReceiver::receive`]. The
    /// default keeps nothing.
    fn attach(&self, scope: &Arc<QueryScope>) {
        let _ = scope;
    }
}

/// A block of result rows: row-major values, `width` per row.
pub struct RowBlock {
    position: usize,
    worker: usize,
    width: usize,
    values: Vec<Value>,
    /// Known to hold only values that own no heap memory.
    owns_nothing: bool,
}

impl RowBlock {
    /// An empty block for rows of `width` values, refilled by worker slot
    /// `worker`.
    pub(crate) fn new(width: usize, worker: usize) -> RowBlock {
        RowBlock {
            position: 0,
            worker,
            width,
            values: Vec::new(),
            owns_nothing: true,
        }
    }

    /// Where the block stands in the result's order (see [`RowReceiver`]).
    pub fn position(&self) -> usize {
        self.position
    }

    /// The worker slot that made the block (a small number). Blocks of one
    /// slot never arrive concurrently, so a receiver may keep state per
    /// slot (indexed by `worker() % n`) rather than share one counter
    /// between workers.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Values per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    /// True if the block has no rows.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The rows, each a slice of `width` values.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, Value> {
        self.values.chunks_exact(self.width.max(1))
    }

    /// Moves the values (row-major) out, to keep them past the call; the
    /// block is empty afterwards.
    pub fn take_values(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.values)
    }

    /// Refills the block for `position`: the values left from the last
    /// block are dropped, their buffer kept, and `fill` appends the new
    /// ones, returning true if it knows they own no heap memory.
    pub(crate) fn refill(&mut self, position: usize, fill: impl FnOnce(&mut Vec<Value>) -> bool) {
        clear_values(&mut self.values, self.owns_nothing);
        self.position = position;
        self.owns_nothing = fill(&mut self.values);
    }
}

/// Hands rows already collected (as a write or a schema statement
/// returns them) to `receiver`, a block at a time, in order.
pub fn deliver(rows: Rows, receiver: &dyn RowReceiver) -> Result<()> {
    let width = rows.width();
    for (position, values) in rows.into_blocks().enumerate() {
        let mut block = RowBlock {
            position,
            worker: 0,
            width,
            values,
            owns_nothing: false,
        };
        receiver.receive(&mut block)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_as_rows_of_its_width() {
        let mut block = RowBlock::new(2, 1);
        block.refill(7, |values| {
            values.extend((0..6).map(Value::Int));
            false
        });
        assert_eq!((block.position(), block.len(), block.width()), (7, 3, 2));
        assert_eq!(block.worker(), 1);
        let rows: Vec<&[Value]> = block.rows().collect();
        assert_eq!(rows[2], &[Value::Int(4), Value::Int(5)]);
        assert_eq!(block.take_values().len(), 6);
        assert!(block.is_empty());
        let empty = RowBlock::new(0, 0);
        assert_eq!((empty.len(), empty.rows().count()), (0, 0));
    }
}
