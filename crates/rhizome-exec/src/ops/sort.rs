//! The sort and top-k breaker: per-worker sorted runs merged in parallel
//! parts.
//!
//! Rows are never copied on the way in: a worker keeps the chunks it
//! consumes and, per row, a small fixed-size entry (where the row lies, its
//! arrival position, and up to two integer keys inline). Sorting and merging
//! move these entries; key values other than integers are read from the
//! chunks in place when two entries are compared. The output chunks are
//! gathered from the kept chunks column by column, so node and relationship
//! columns stay id columns.

use super::sinks::{lock, VALUE_BYTES};
use crate::chunk::{Chunk, CHUNK_SIZE};
use crate::context::QueryContext;
use crate::pipeline::{Sink, TaskCtx};
use rhizome_common::{Result, Value};
use rhizome_functions::ops::order;
use rhizome_plan::{Slot, SortKey};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Mutex, RwLock};

/// One input row: where it lies, when it arrived, and its integer keys.
#[derive(Debug, Clone, Copy)]
struct SortRow {
    /// The keys, when there are at most two and all are integers, mapped to
    /// unsigned numbers whose plain order is the sort order
    /// ([`ordered_int`]): compared without reaching into the chunks.
    ints: [u64; 2],
    ints_valid: bool,
    /// Arrival order within its worker (ties keep it: the sort is stable).
    seq: u64,
    /// The worker whose chunks hold the row, the chunk, and the row in it.
    worker: u32,
    chunk: u32,
    row: u32,
}

/// What one worker consumed.
#[derive(Default)]
struct Local {
    rows: Vec<SortRow>,
    chunks: Vec<Chunk>,
    seq: u64,
}

/// One part of a parallel merge: its range of each sorted run, then its
/// output chunks.
type MergePart = (Vec<Range<usize>>, Vec<Chunk>);

/// What the merge reads once every run is sorted: the runs and every
/// worker's chunks. Released in a last wave of tasks, a worker's share per
/// task, so freeing the input does not hold up the query on one thread.
#[derive(Default)]
struct Frozen {
    runs: Vec<Vec<SortRow>>,
    chunks: Vec<Vec<Chunk>>,
}

/// Rows per part of a parallel merge, at least.
const MERGE_PART_ROWS: usize = 4 * CHUNK_SIZE;

/// Sort (and top-k, when `limit` is set): stable in arrival order per worker.
///
/// Finishing runs in three waves of pool tasks: each worker's rows are
/// sorted on their own; the sorted runs are cut at common splitter rows into
/// parts that are merged (and turned into output chunks) independently; the
/// input chunks and runs are freed. The output is the parts' chunks in order.
pub struct SortSink {
    keys: Vec<SortKey>,
    limit: Option<u64>,
    locals: Vec<Mutex<Local>>,
    /// The sorted runs and every worker's chunks, read-only until released.
    frozen: RwLock<Frozen>,
    /// Finishing waves started so far.
    wave: AtomicU64,
    /// Per merge part: its pieces of the sorted runs, then its output chunks.
    parts: Mutex<Vec<MergePart>>,
    /// The only slots read from the output, if known: no others are gathered.
    wanted: Option<Vec<Slot>>,
}

impl SortSink {
    /// A sort by `keys` keeping the first `limit` rows (all if `None`), for
    /// `slots` workers; its output holds only the `wanted` slots, if given.
    pub fn new(
        keys: Vec<SortKey>,
        limit: Option<u64>,
        slots: usize,
        wanted: Option<Vec<Slot>>,
    ) -> SortSink {
        SortSink {
            keys,
            limit,
            locals: (0..slots.max(1)).map(|_| Mutex::default()).collect(),
            frozen: RwLock::default(),
            wave: AtomicU64::new(0),
            parts: Mutex::new(Vec::new()),
            wanted,
        }
    }

    /// The order of the sort keys; `chunk` finds a row's chunk.
    #[inline]
    fn compare_keys<'c>(
        &self,
        a: &SortRow,
        b: &SortRow,
        chunk: impl Fn(&SortRow) -> &'c Chunk,
    ) -> Ordering {
        if a.ints_valid && b.ints_valid {
            return a.ints.cmp(&b.ints);
        }
        let (ca, cb) = (chunk(a), chunk(b));
        for k in &self.keys {
            let x = key_value(ca, k.slot, a.row);
            let y = key_value(cb, k.slot, b.row);
            let o = order(&x, &y);
            let o = if k.descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// The total order of the sort: keys, then arrival (worker, sequence).
    #[inline]
    fn compare<'c>(
        &self,
        a: &SortRow,
        b: &SortRow,
        chunk: impl Fn(&SortRow) -> &'c Chunk,
    ) -> Ordering {
        self.compare_keys(a, b, chunk)
            .then((a.worker, a.seq).cmp(&(b.worker, b.seq)))
    }

    /// Compares rows of any workers, once the chunks are frozen.
    fn compare_frozen(&self, chunks: &[Vec<Chunk>], a: &SortRow, b: &SortRow) -> Ordering {
        self.compare(a, b, |r| &chunks[r.worker as usize][r.chunk as usize])
    }

    /// Freezes the sorted runs and the chunks, and cuts the runs into merge
    /// parts at splitter rows of the longest run; returns the number of parts.
    fn plan_merge(&self) -> usize {
        let mut frozen = self.frozen.write().unwrap_or_else(|p| p.into_inner());
        for local in &self.locals {
            let local = std::mem::take(&mut *lock(local));
            if !local.rows.is_empty() {
                frozen.runs.push(local.rows);
            }
            frozen.chunks.push(local.chunks);
        }
        let Frozen { runs, chunks } = &*frozen;
        let total: usize = runs.iter().map(Vec::len).sum();
        // Top-k keeps few rows: one part.
        let count = if self.limit.is_some() {
            1
        } else {
            (total / MERGE_PART_ROWS).clamp(1, 2 * self.locals.len())
        };
        let mut parts: Vec<MergePart> = (0..count).map(|_| (Vec::new(), Vec::new())).collect();
        if let Some(longest) = (0..runs.len()).max_by_key(|&i| runs[i].len()) {
            let pivots: Vec<SortRow> = (1..count)
                .map(|j| runs[longest][j * runs[longest].len() / count])
                .collect();
            for run in runs {
                // Part j ends (and part j + 1 starts) at cut j.
                let mut start = 0;
                for (j, p) in pivots.iter().enumerate() {
                    let cut = run
                        .partition_point(|x| self.compare_frozen(chunks, x, p) == Ordering::Less);
                    parts[j].0.push(start..cut);
                    start = cut;
                }
                parts[count - 1].0.push(start..run.len());
            }
        }
        let n = parts.len();
        *lock(&self.parts) = parts;
        n
    }

    /// Top-k: keeps the first `limit` of a worker's rows, and only the
    /// chunk data they use, gathered into one chunk.
    fn prune(&self, local: &mut Local, limit: u64) {
        let Local { rows, chunks, .. } = local;
        rows.sort_unstable_by(|a, b| self.compare(a, b, |r| &chunks[r.chunk as usize]));
        rows.truncate(limit as usize);
        let kept = gather(
            rows.iter().map(|r| (&chunks[r.chunk as usize], r.row)),
            None,
        );
        for (i, r) in rows.iter_mut().enumerate() {
            (r.chunk, r.row) = (0, i as u32);
        }
        *chunks = vec![kept];
    }

    /// Merges two sorted runs (ties in arrival order: worker, then
    /// sequence); `after(x, y)` says whether `x` sorts after `y`.
    fn merge(
        a: &[SortRow],
        b: &[SortRow],
        after: impl Fn(&SortRow, &SortRow) -> bool,
    ) -> Vec<SortRow> {
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if after(&a[i], &b[j]) {
                out.push(b[j]);
                j += 1;
            } else {
                out.push(a[i]);
                i += 1;
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        out
    }

    /// Merges part `part` of the sorted runs into its output chunks.
    fn merge_part(&self, part: usize) {
        let ranges = std::mem::take(&mut lock(&self.parts)[part].0);
        let frozen = self.frozen.read().unwrap_or_else(|p| p.into_inner());
        let Frozen { runs, chunks } = &*frozen;
        let mut pieces: Vec<Cow<'_, [SortRow]>> = runs
            .iter()
            .zip(ranges)
            .map(|(run, range)| Cow::Borrowed(&run[range]))
            .collect();
        // Integer keys only: compared inline, without reaching into chunks.
        let ints = pieces.iter().all(|p| p.iter().all(|r| r.ints_valid));
        let inline =
            |x: &SortRow, y: &SortRow| (x.ints, x.worker, x.seq) > (y.ints, y.worker, y.seq);
        let in_chunks =
            |x: &SortRow, y: &SortRow| self.compare_frozen(chunks, x, y) == Ordering::Greater;
        while pieces.len() > 1 {
            let mut merged = Vec::with_capacity(pieces.len().div_ceil(2));
            let mut pairs = pieces.into_iter();
            while let Some(a) = pairs.next() {
                merged.push(match pairs.next() {
                    Some(b) if ints => Cow::Owned(Self::merge(&a, &b, inline)),
                    Some(b) => Cow::Owned(Self::merge(&a, &b, in_chunks)),
                    None => a,
                });
            }
            pieces = merged;
        }
        let rows = pieces.pop().unwrap_or_default();
        let keep = self
            .limit
            .map_or(rows.len(), |l| rows.len().min(l as usize));
        let out = rows[..keep]
            .chunks(CHUNK_SIZE)
            .map(|rows| {
                gather(
                    rows.iter()
                        .map(|r| (&chunks[r.worker as usize][r.chunk as usize], r.row)),
                    self.wanted.as_deref(),
                )
            })
            .collect();
        drop(frozen);
        lock(&self.parts)[part].1 = out;
    }

    /// Sorts worker `part`'s rows.
    fn sort_run(&self, part: usize) {
        // Ties are broken by arrival, so an unstable sort is stable here.
        let mut guard = lock(&self.locals[part]);
        let Local { rows, chunks, .. } = &mut *guard;
        if rows.iter().all(|r| r.ints_valid) {
            // Integer keys only: a stable radix sort by the keys as one
            // number keeps ties in arrival order, as the rows were pushed
            // (a top-k prune leaves them in (keys, arrival) order).
            if self.keys.len() == 1 {
                radsort::sort_by_key(rows, |r| r.ints[0]);
            } else {
                radsort::sort_by_key(rows, |r| {
                    (u128::from(r.ints[0]) << 64) | u128::from(r.ints[1])
                });
            }
        } else {
            rows.sort_unstable_by(|a, b| self.compare(a, b, |r| &chunks[r.chunk as usize]));
        }
        if let Some(limit) = self.limit {
            rows.truncate(limit as usize);
        }
    }
}

/// `x` as an unsigned number that sorts as `x` does (descending: reversed).
#[inline]
fn ordered_int(x: i64, descending: bool) -> u64 {
    let ascending = (x as u64) ^ (1 << 63);
    if descending {
        !ascending
    } else {
        ascending
    }
}

/// The value of `slot` in `row` of `chunk`, borrowed where it is stored as a value.
#[inline]
fn key_value(chunk: &Chunk, slot: usize, row: u32) -> Cow<'_, Value> {
    match chunk.column(slot) {
        Some(column) => column.value_ref(row as usize),
        None => Cow::Owned(Value::Null),
    }
}

/// A chunk of the given rows, in order, with the slots in `only` (all if
/// `None`); see [`Chunk::gather_slots`].
fn gather<'c>(rows: impl Iterator<Item = (&'c Chunk, u32)>, only: Option<&[Slot]>) -> Chunk {
    let picks: Vec<(&Chunk, u32)> = rows.collect();
    Chunk::gather_slots(&picks, only)
}

impl Sink for SortSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        if self.limit == Some(0) || chunk.is_empty() {
            return Ok(());
        }
        let worker = ctx.worker % self.locals.len();
        let mut guard = lock(&self.locals[worker]);
        let local = &mut *guard;
        let index = local.chunks.len() as u32;
        let int_keys = self.keys.len() <= 2;
        for row in 0..chunk.len() {
            local.seq += 1;
            let mut ints = [0u64; 2];
            let mut ints_valid = int_keys;
            for (i, k) in self.keys.iter().enumerate().take(2) {
                match key_value(&chunk, k.slot, row as u32).as_ref() {
                    Value::Int(x) => ints[i] = ordered_int(*x, k.descending),
                    _ => ints_valid = false,
                }
            }
            local.rows.push(SortRow {
                ints,
                ints_valid,
                seq: local.seq,
                worker: worker as u32,
                chunk: index,
                row: row as u32,
            });
        }
        let (len, width) = (chunk.len(), chunk.width());
        local.chunks.push(chunk);
        match self.limit {
            Some(limit) => {
                if local.rows.len() as u64 > 2 * limit + CHUNK_SIZE as u64 {
                    self.prune(local, limit);
                }
            }
            None => {
                drop(guard);
                ctx.q
                    .memory
                    .charge(len * (width + self.keys.len()) * VALUE_BYTES)?;
            }
        }
        Ok(())
    }

    /// First wave: sort each worker's rows; second wave: merge the parts;
    /// third wave: free each worker's runs and chunks.
    fn finish_parts(&self) -> usize {
        match self.wave.fetch_add(1, AtomicOrdering::AcqRel) {
            0 => self.locals.len(),
            1 => self.plan_merge(),
            2 => self.locals.len(),
            _ => 0,
        }
    }

    fn finish_part(&self, part: usize) -> Result<()> {
        match self.wave.load(AtomicOrdering::Acquire) {
            1 => self.sort_run(part),
            2 => self.merge_part(part),
            _ => {
                // Taken under the lock, freed outside it.
                let mut frozen = self.frozen.write().unwrap_or_else(|p| p.into_inner());
                let chunks = frozen.chunks.get_mut(part).map(std::mem::take);
                let run = frozen.runs.get_mut(part).map(std::mem::take);
                drop(frozen);
                drop((chunks, run));
            }
        }
        Ok(())
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        Ok(std::mem::take(&mut *lock(&self.parts))
            .into_iter()
            .flat_map(|(_, chunks)| chunks)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::ordered_int;

    #[test]
    fn ordered_ints_sort_like_the_ints() {
        let xs = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in xs.windows(2) {
            assert!(ordered_int(w[0], false) < ordered_int(w[1], false));
            assert!(ordered_int(w[0], true) > ordered_int(w[1], true));
        }
    }
}
