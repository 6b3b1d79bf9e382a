//! `HashJoin`: equi-join of streamed probe rows against a hash table of the
//! materialized build rows.

use super::materialized::{combine, Materialized};
use crate::chunk::Chunk;
use crate::operator::{return_if_finished, Cell, Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::Result;
use rhizome_functions::ops::{GroupKey, KeyMap};
use rhizome_plan::Slot;
use std::sync::OnceLock;

/// Equi-join of streamed probe rows against a hash table of the build rows.
pub struct HashJoin {
    build: Materialized,
    table: OnceLock<KeyMap<Vec<GroupKey>, Vec<u32>>>,
    build_keys: Vec<Slot>,
    probe_keys: Vec<Slot>,
}

impl HashJoin {
    /// A join whose build rows are collected in `cell`.
    pub fn new(cell: Cell, build_keys: Vec<Slot>, probe_keys: Vec<Slot>) -> HashJoin {
        HashJoin {
            build: Materialized::new(cell),
            table: OnceLock::new(),
            build_keys,
            probe_keys,
        }
    }
}

impl Operator for HashJoin {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let build = self.build.get(input.width());
        let table = self.table.get_or_init(|| {
            let mut table: KeyMap<Vec<GroupKey>, Vec<u32>> = KeyMap::default();
            for row in 0..build.len() {
                let key: Vec<_> = self
                    .build_keys
                    .iter()
                    .map(|&s| build.value(s, row))
                    .collect();
                if key.iter().any(|v| v.is_null()) {
                    continue;
                }
                table
                    .entry(key.into_iter().map(GroupKey).collect())
                    .or_default()
                    .push(row as u32);
            }
            table
        });
        let (mut li, mut ri) = (Vec::new(), Vec::new());
        for row in 0..input.len() {
            let key: Vec<_> = self
                .probe_keys
                .iter()
                .map(|&s| input.value(s, row))
                .collect();
            if key.iter().any(|v| v.is_null()) {
                continue;
            }
            if let Some(matches) = table.get(&key.into_iter().map(GroupKey).collect::<Vec<_>>()) {
                for &m in matches {
                    li.push(row as u32);
                    ri.push(m);
                }
            }
        }
        if !li.is_empty() {
            return_if_finished!(ctx.emit(combine(&input, li, build, ri)));
        }
        NEED_MORE
    }
}
