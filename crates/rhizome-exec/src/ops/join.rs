//! Joins over a materialized side: cartesian product and hash join.

use crate::chunk::Chunk;
use crate::pipeline::{Cell, Operator, TaskCtx};
use rhizome_common::Result;
use rhizome_functions::ops::{GroupKey, KeyMap};
use rhizome_plan::Slot;
use std::sync::OnceLock;

/// Materializes a cell's chunks into one chunk, once.
struct Materialized {
    cell: Cell,
    chunk: OnceLock<Chunk>,
}

impl Materialized {
    fn get(&self, width: usize) -> &Chunk {
        self.chunk.get_or_init(|| {
            let chunks = std::mem::take(&mut *self.cell.lock().unwrap_or_else(|p| p.into_inner()));
            Chunk::concat(&chunks, width)
        })
    }
}

/// Combines `left` rows `li` with `right` rows `ri`: slots the right side
/// sets and the left does not come from the right.
fn combine(left: &Chunk, li: Vec<u32>, right: &Chunk, ri: Vec<u32>) -> Chunk {
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

/// Every combination of the streamed (left) rows with the materialized right rows.
pub struct Cartesian {
    right: Materialized,
}

impl Cartesian {
    /// A product with the rows collected in `cell`.
    pub fn new(cell: Cell) -> Cartesian {
        Cartesian {
            right: Materialized {
                cell,
                chunk: OnceLock::new(),
            },
        }
    }
}

impl Operator for Cartesian {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let right = self.right.get(input.width());
        if right.is_empty() {
            return Ok(());
        }
        let (mut li, mut ri) = (Vec::new(), Vec::new());
        for l in 0..input.len() {
            for r in 0..right.len() {
                li.push(l as u32);
                ri.push(r as u32);
                if li.len() >= crate::chunk::CHUNK_SIZE {
                    if ctx.cancelled() {
                        return Ok(());
                    }
                    ctx.emit(combine(
                        &input,
                        std::mem::take(&mut li),
                        right,
                        std::mem::take(&mut ri),
                    ))?;
                }
            }
        }
        if !li.is_empty() {
            ctx.emit(combine(&input, li, right, ri))?;
        }
        Ok(())
    }
}

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
            build: Materialized {
                cell,
                chunk: OnceLock::new(),
            },
            table: OnceLock::new(),
            build_keys,
            probe_keys,
        }
    }
}

impl Operator for HashJoin {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
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
            ctx.emit(combine(&input, li, build, ri))?;
        }
        Ok(())
    }
}
