//! `Cartesian`: every combination of the streamed rows with a materialized side.

use super::materialized::{combine, Materialized};
use crate::chunk::Chunk;
use crate::operator::{return_if_finished, Cell, Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::Result;

/// Every combination of the streamed (left) rows with the materialized right rows.
pub struct Cartesian {
    right: Materialized,
}

impl Cartesian {
    /// A product with the rows collected in `cell`.
    pub fn new(cell: Cell) -> Cartesian {
        Cartesian {
            right: Materialized::new(cell),
        }
    }
}

impl Operator for Cartesian {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let right = self.right.get(input.width());
        if right.is_empty() {
            return NEED_MORE;
        }
        let (mut li, mut ri) = (Vec::new(), Vec::new());
        for l in 0..input.len() {
            for r in 0..right.len() {
                li.push(l as u32);
                ri.push(r as u32);
                if li.len() >= crate::chunk::CHUNK_SIZE {
                    if ctx.cancelled() {
                        return NEED_MORE;
                    }
                    return_if_finished!(ctx.emit(combine(
                        &input,
                        std::mem::take(&mut li),
                        right,
                        std::mem::take(&mut ri),
                    )));
                }
            }
        }
        if !li.is_empty() {
            return_if_finished!(ctx.emit(combine(&input, li, right, ri)));
        }
        NEED_MORE
    }
}
