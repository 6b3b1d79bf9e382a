//! `Distinct`: drops rows seen before.

use crate::chunk::Chunk;
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::Result;
use rhizome_functions::ops::{GroupKey, KeySet};
use rhizome_plan::Slot;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

const SHARDS: usize = 16;

/// Drops rows whose values in the given slots were seen before (streaming,
/// with a sharded set shared by all workers).
pub struct Distinct {
    slots: Vec<Slot>,
    seen: Vec<Mutex<KeySet<Vec<GroupKey>>>>,
}

impl Distinct {
    /// A distinct over `slots`.
    pub fn new(slots: Vec<Slot>) -> Distinct {
        Distinct {
            slots,
            seen: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Operator for Distinct {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let mut keep = Vec::new();
        for row in 0..input.len() {
            let key: Vec<GroupKey> = self
                .slots
                .iter()
                .map(|&s| GroupKey(input.value(s, row)))
                .collect();
            let mut h = DefaultHasher::new();
            key.hash(&mut h);
            let shard = (h.finish() as usize) % SHARDS;
            if self.seen[shard]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key)
            {
                keep.push(row as u32);
            }
        }
        ctx.q.memory.charge(keep.len() * self.slots.len() * 48)?;
        if keep.is_empty() {
            return NEED_MORE;
        }
        let out = if keep.len() == input.len() {
            input
        } else {
            input.select(keep)
        };
        ctx.emit(out)
    }
}
