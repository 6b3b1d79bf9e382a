//! The materialized side of joins and products: one chunk built once from
//! what an earlier pipeline collected.

use crate::chunk::Chunk;
use crate::operator::Cell;
use std::sync::OnceLock;

/// Materializes a cell's chunks into one chunk, once.
pub(super) struct Materialized {
    cell: Cell,
    chunk: OnceLock<Chunk>,
}

impl Materialized {
    /// The side of `cell`, materialized on first use.
    pub(super) fn new(cell: Cell) -> Materialized {
        Materialized {
            cell,
            chunk: OnceLock::new(),
        }
    }

    /// The materialized chunk of `width` slots.
    pub(super) fn get(&self, width: usize) -> &Chunk {
        self.chunk.get_or_init(|| {
            let chunks = std::mem::take(&mut *self.cell.lock().unwrap_or_else(|p| p.into_inner()));
            Chunk::concat(&chunks, width)
        })
    }
}

/// Combines `left` rows `li` with `right` rows `ri`: slots the right side
/// sets and the left does not come from the right.
pub(super) fn combine(left: &Chunk, li: Vec<u32>, right: &Chunk, ri: Vec<u32>) -> Chunk {
    let mut out = left.select(li);
    let ri: std::sync::Arc<[u32]> = ri.into();
    for slot in 0..right.width() {
        if left.column(slot).is_none() {
            if let Some(c) = right.column(slot) {
                out.set_column(slot, c.select(&ri));
            }
        }
    }
    out
}
