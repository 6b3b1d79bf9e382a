//! `Skip`: drops the first rows.

use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::context::QueryContext;
use crate::expr::constant_count;
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Drops the first rows.
pub struct Skip {
    remaining: AtomicU64,
}

impl Skip {
    /// The operator for a `Skip` node (its count is evaluated now).
    pub fn new(node: Arc<CNode>, q: &QueryContext) -> Result<Skip> {
        Ok(Skip {
            remaining: AtomicU64::new(constant_count(q, &node.c.exprs[0], "SKIP")?),
        })
    }
}

impl Operator for Skip {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let n = input.len() as u64;
        let mut skipped = 0;
        let _ = self
            .remaining
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                skipped = r.min(n);
                Some(r - skipped)
            });
        if skipped == 0 {
            return ctx.emit(input);
        }
        if skipped == n {
            return NEED_MORE;
        }
        let out = input.select((skipped as u32..n as u32).collect());
        ctx.emit(out)
    }
}
