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

use crate::chunk::{Chunk, CHUNK_SIZE};
use crate::context::QueryContext;
use crate::context::VALUE_BYTES;
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::{lock, PerWorker};
use rhizome_common::{Result, Value};
use rhizome_functions::ops::order;
use rhizome_plan::{Slot, SortKey};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Mutex, RwLock};

/// One input row: where it lies and its integer keys (32 bytes, so the
/// sort and the merge move little memory).
///
/// A row's place in its worker's chunks is also its arrival order there:
/// chunks are kept in arrival order, and a top-k prune renumbers the rows
/// it keeps in (keys, arrival) order into a first chunk, before any row
/// that arrives later. Ties are therefore broken by (worker, chunk, row).
#[derive(Debug, Clone, Copy)]
struct SortRow {
    /// The keys, when there are at most two and all are integers, mapped to
    /// unsigned numbers whose plain order is the sort order
    /// ([`ordered_int`]): compared without reaching into the chunks.
    ints: [u64; 2],
    /// The worker whose chunks hold the row, the chunk, and the row in it.
    worker: u32,
    chunk: u32,
    row: u32,
    ints_valid: bool,
}

impl SortRow {
    /// The row's arrival order across workers.
    #[inline]
    fn arrival(&self) -> (u32, u32, u32) {
        (self.worker, self.chunk, self.row)
    }
}

/// What one worker consumed.
#[derive(Default)]
struct Local {
    rows: Vec<SortRow>,
    chunks: Vec<Chunk>,
    /// Some row's keys are not held inline (they are compared in the chunks).
    keys_in_chunks: bool,
    /// Top-k, after a prune: the inline keys of the last of the `limit`
    /// rows kept, if they are inline. A later row whose inline keys are not
    /// below them cannot be output and is not kept.
    threshold: Option<[u64; 2]>,
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
    /// Some worker consumed a row whose keys are not held inline.
    keys_in_chunks: bool,
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
    locals: PerWorker<Local>,
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
            locals: PerWorker::new(slots, |_| Local::default()),
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
        for (i, k) in self.keys.iter().enumerate() {
            let x = key_value(a, i, k, ca);
            let y = key_value(b, i, k, cb);
            let o = order(&x, &y);
            let o = if k.descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// The total order of the sort: keys, then arrival.
    #[inline]
    fn compare<'c>(
        &self,
        a: &SortRow,
        b: &SortRow,
        chunk: impl Fn(&SortRow) -> &'c Chunk,
    ) -> Ordering {
        self.compare_keys(a, b, chunk)
            .then(a.arrival().cmp(&b.arrival()))
    }

    /// Compares rows of any workers, once the chunks are frozen.
    fn compare_frozen(&self, chunks: &[Vec<Chunk>], a: &SortRow, b: &SortRow) -> Ordering {
        self.compare(a, b, |r| &chunks[r.worker as usize][r.chunk as usize])
    }

    /// Freezes the sorted runs and the chunks, and cuts the runs into merge
    /// parts at splitter rows of the longest run; returns the number of parts.
    fn plan_merge(&self) -> usize {
        let mut frozen = self.frozen.write().unwrap_or_else(|p| p.into_inner());
        for local in self.locals.take_all() {
            frozen.keys_in_chunks |= local.keys_in_chunks;
            if !local.rows.is_empty() {
                frozen.runs.push(local.rows);
            }
            frozen.chunks.push(local.chunks);
        }
        let Frozen { runs, chunks, .. } = &*frozen;
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

    /// Frees the columns of `chunk` that neither the output nor a
    /// comparison reads (the keys are read from the chunk only when they
    /// are not all held inline), here on the worker that made them rather
    /// than when the query ends.
    fn keep_needed(&self, chunk: &mut Chunk, keys_inline: bool) {
        let Some(wanted) = &self.wanted else {
            return;
        };
        for slot in 0..chunk.width() {
            let is_key = self.keys.iter().any(|k| k.slot == slot);
            if !wanted.contains(&slot) && (keys_inline || !is_key) {
                chunk.clear_column(slot);
            }
        }
    }

    /// Pushes an entry for each row of `chunk` (the worker's next chunk)
    /// into `local`, except, in a top-k, the rows whose inline keys are not
    /// before the worker's threshold ([`Local::threshold`]): those sort
    /// after `limit` rows the worker already holds (ties included, as they
    /// arrived later), so they can never be output. Returns how many rows
    /// were pushed and whether all of them hold their keys inline.
    fn push_rows(&self, local: &mut Local, chunk: &Chunk, worker: u32) -> (usize, bool) {
        let index = local.chunks.len() as u32;
        let int_keys = self.keys.len() <= 2;
        let columns: Vec<_> = self
            .keys
            .iter()
            .take(2)
            .map(|k| (chunk.column(k.slot), k.descending))
            .collect();
        let threshold = local.threshold;
        if threshold.is_none() {
            local.rows.reserve(chunk.len());
        }
        let (mut pushed, mut all_inline) = (0, int_keys);
        for row in 0..chunk.len() {
            let mut ints = [0u64; 2];
            let mut ints_valid = int_keys;
            for (i, (column, descending)) in columns.iter().enumerate() {
                match column.map(|c| c.value_ref(row)).as_deref() {
                    Some(Value::Int(x)) => ints[i] = ordered_int(*x, *descending),
                    _ => ints_valid = false,
                }
            }
            if ints_valid && threshold.is_some_and(|t| ints >= t) {
                continue;
            }
            local.rows.push(SortRow {
                ints,
                worker,
                chunk: index,
                row: row as u32,
                ints_valid,
            });
            pushed += 1;
            all_inline &= ints_valid;
        }
        (pushed, all_inline)
    }

    /// Top-k: true once `local` holds enough rows beyond `limit` to be
    /// worth a prune, or keeps many chunks for few rows (each holds on to
    /// its whole chunk until a prune).
    fn needs_prune(&self, local: &Local, limit: u64) -> bool {
        let rows = local.rows.len() as u64;
        rows > 2 * limit + CHUNK_SIZE as u64 || (local.chunks.len() >= 16 && rows > limit)
    }

    /// Top-k: keeps the first `limit` of a worker's rows, and only the
    /// chunk data they use, gathered into one chunk. The rows are selected
    /// (linear time) before the kept ones are sorted; the last kept row's
    /// inline keys become the worker's threshold.
    fn prune(&self, local: &mut Local, limit: u64) {
        let Local {
            rows,
            chunks,
            threshold,
            ..
        } = local;
        let limit = limit as usize;
        let order = |a: &SortRow, b: &SortRow| self.compare(a, b, |r| &chunks[r.chunk as usize]);
        if rows.len() > limit {
            rows.select_nth_unstable_by(limit, order);
            rows.truncate(limit);
        }
        rows.sort_unstable_by(order);
        *threshold = match rows.last() {
            Some(last) if rows.len() == limit && last.ints_valid => Some(last.ints),
            _ => None,
        };
        let kept = gather(
            rows.iter().map(|r| (&chunks[r.chunk as usize], r.row)),
            None,
        );
        for (i, r) in rows.iter_mut().enumerate() {
            (r.chunk, r.row) = (0, i as u32);
        }
        *chunks = vec![kept];
    }

    /// Merges two sorted runs, passing their first `limit` rows in order to
    /// `push`; `after(x, y)` says whether `x` sorts after `y` (it breaks
    /// ties by arrival, so the merge is stable across workers).
    ///
    /// Runs that interleave in stretches (each worker's rows of a scan
    /// come in id ranges) are merged a stretch at a time: the end of the
    /// stretch one run contributes before the other's next row is found
    /// by a galloping search, and the stretch is passed on without a
    /// comparison per row.
    fn merge(
        a: &[SortRow],
        b: &[SortRow],
        limit: usize,
        after: impl Fn(&SortRow, &SortRow) -> bool,
        mut push: impl FnMut(&SortRow),
    ) {
        let (mut i, mut j, mut n) = (0, 0, 0);
        while n < limit && i < a.len() && j < b.len() {
            // Rows still to pass on (`limit` may be `usize::MAX`).
            let room = limit - n;
            let stretch = if after(&a[i], &b[j]) {
                let end = j + gallop(&b[j..], |y| after(&a[i], y));
                let stretch = &b[j..end.min(j.saturating_add(room))];
                j += stretch.len();
                stretch
            } else {
                let end = i + gallop(&a[i..], |x| !after(x, &b[j]));
                let stretch = &a[i..end.min(i.saturating_add(room))];
                i += stretch.len();
                stretch
            };
            stretch.iter().for_each(&mut push);
            n += stretch.len();
        }
        a[i..].iter().chain(&b[j..]).take(limit - n).for_each(push);
    }

    /// Merges part `part` of the sorted runs into its output chunks: pairs
    /// of pieces are merged until two are left, whose merge is gathered
    /// into the output as it goes.
    fn merge_part(&self, part: usize) {
        let ranges = std::mem::take(&mut lock(&self.parts)[part].0);
        let frozen = self.frozen.read().unwrap_or_else(|p| p.into_inner());
        let Frozen {
            runs,
            chunks,
            keys_in_chunks,
        } = &*frozen;
        let mut pieces: Vec<Cow<'_, [SortRow]>> = runs
            .iter()
            .zip(ranges)
            .filter(|(_, range)| !range.is_empty())
            .map(|(run, range)| Cow::Borrowed(&run[range]))
            .collect();
        let keep = self.limit.map_or(usize::MAX, |l| l as usize);
        // Integer keys only (as the workers noted while consuming):
        // compared inline, without reaching into chunks.
        let ints = !keys_in_chunks;
        let inline = |x: &SortRow, y: &SortRow| (x.ints, x.arrival()) > (y.ints, y.arrival());
        let in_chunks =
            |x: &SortRow, y: &SortRow| self.compare_frozen(chunks, x, y) == Ordering::Greater;
        let merge = |a: &[SortRow], b: &[SortRow], push: &mut dyn FnMut(&SortRow)| {
            if ints {
                Self::merge(a, b, keep, inline, push)
            } else {
                Self::merge(a, b, keep, in_chunks, push)
            }
        };
        while pieces.len() > 2 {
            let mut merged = Vec::with_capacity(pieces.len().div_ceil(2));
            let mut pairs = pieces.into_iter();
            while let Some(a) = pairs.next() {
                merged.push(match pairs.next() {
                    Some(b) => {
                        let mut rows = Vec::with_capacity(a.len() + b.len());
                        merge(&a, &b, &mut |r| rows.push(*r));
                        Cow::Owned(rows)
                    }
                    None => a,
                });
            }
            pieces = merged;
        }
        let mut out = Vec::new();
        let mut picks: Vec<(&Chunk, u32)> = Vec::with_capacity(CHUNK_SIZE);
        let wanted = self.wanted.as_deref();
        let mut push = |r: &SortRow| {
            picks.push((&chunks[r.worker as usize][r.chunk as usize], r.row));
            if picks.len() == CHUNK_SIZE {
                out.push(Chunk::gather_slots(&picks, wanted));
                picks.clear();
            }
        };
        match (pieces.first(), pieces.get(1)) {
            (Some(a), Some(b)) => merge(a, b, &mut push),
            (Some(a), None) => a.iter().take(keep).for_each(&mut push),
            _ => {}
        }
        if !picks.is_empty() {
            out.push(Chunk::gather_slots(&picks, wanted));
        }
        drop(pieces);
        drop(frozen);
        lock(&self.parts)[part].1 = out;
    }

    /// Sorts worker `part`'s rows.
    fn sort_run(&self, part: usize) {
        // Ties are broken by arrival, so an unstable sort is stable here.
        let mut guard = self.locals.lock(part);
        let Local {
            rows,
            chunks,
            keys_in_chunks,
            ..
        } = &mut *guard;
        if !*keys_in_chunks {
            // Integer keys only: a stable radix sort keeps ties in arrival
            // order, as the rows were pushed (a top-k prune leaves them in
            // (keys, arrival) order).
            radix_sort_ints(rows, self.keys.len());
        } else {
            rows.sort_unstable_by(|a, b| self.compare(a, b, |r| &chunks[r.chunk as usize]));
        }
        if let Some(limit) = self.limit {
            rows.truncate(limit as usize);
        }
    }
}

/// How many leading rows of `rows` satisfy `before`, which holds for the
/// first row and, once false, for no later one: an exponential search
/// followed by a binary search, so a stretch of `k` rows costs about
/// `2 log k` tests.
#[inline]
fn gallop(rows: &[SortRow], before: impl Fn(&SortRow) -> bool) -> usize {
    let mut bound = 1;
    while bound < rows.len() && before(&rows[bound]) {
        bound *= 2;
    }
    let low = bound / 2 + 1;
    let high = bound.min(rows.len());
    low + rows[low.min(high)..high].partition_point(|r| before(r))
}

/// Sorts rows whose `keys` (one or two) are inline integers, stably, by a
/// radix sort on the keys packed into one number: each key as its offset
/// from its smallest value in `rows`, the first key above the second, in
/// 8, 16, 32 or 64 bits when their ranges fit (fewer bytes to count and
/// scatter).
fn radix_sort_ints(rows: &mut [SortRow], keys: usize) {
    let Some(first) = rows.first() else {
        return;
    };
    // One pass finds each key's range and whether the rows already come in
    // its order.
    let (mut min, mut max, mut previous) = (first.ints, first.ints, first.ints);
    let mut in_order = [true; 2];
    for r in rows.iter() {
        for k in 0..2 {
            min[k] = min[k].min(r.ints[k]);
            max[k] = max[k].max(r.ints[k]);
            in_order[k] &= previous[k] <= r.ints[k];
        }
        previous = r.ints;
    }
    // Rows already in order of their second key (as a scan in id order
    // delivers them for `ORDER BY x, n.id`) need a stable sort by the first
    // key only; rows in order of every key need none.
    let keys = if keys == 2 && in_order[1] { 1 } else { keys };
    if keys == 1 && in_order[0] {
        return;
    }
    let bits = |k: usize| 64 - (max[k] - min[k]).leading_zeros();
    let low_bits = if keys == 2 { bits(1) } else { 0 };
    let packed = |r: &SortRow| {
        let high = (r.ints[0] - min[0]).checked_shl(low_bits).unwrap_or(0);
        let low = if keys == 2 { r.ints[1] - min[1] } else { 0 };
        high | low
    };
    match bits(0) + low_bits {
        0..=8 => radsort::sort_by_key(rows, |r| packed(r) as u8),
        9..=16 => radsort::sort_by_key(rows, |r| packed(r) as u16),
        17..=32 => radsort::sort_by_key(rows, |r| packed(r) as u32),
        33..=64 => radsort::sort_by_key(rows, packed),
        _ => radsort::sort_by_key(rows, |r| {
            (u128::from(r.ints[0]) << 64) | u128::from(r.ints[1])
        }),
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

/// The inverse of [`ordered_int`].
#[inline]
fn int_of_ordered(x: u64, descending: bool) -> i64 {
    let ascending = if descending { !x } else { x };
    (ascending ^ (1 << 63)) as i64
}

/// The value of sort key `key` (the `index`th) of `row`, which lies in
/// `chunk`: decoded from the row when its keys are inline (the chunk no
/// longer holds them, see [`SortSink::keep_needed`]), else borrowed from
/// the chunk where it is stored as a value.
#[inline]
fn key_value<'c>(row: &SortRow, index: usize, key: &SortKey, chunk: &'c Chunk) -> Cow<'c, Value> {
    if row.ints_valid {
        return Cow::Owned(Value::Int(int_of_ordered(row.ints[index], key.descending)));
    }
    match chunk.column(key.slot) {
        Some(column) => column.value_ref(row.row as usize),
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
    fn consume(&self, mut chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        if self.limit == Some(0) || chunk.is_empty() {
            return NEED_MORE;
        }
        let worker = ctx.worker % self.locals.len();
        let mut guard = self.locals.lock(worker);
        let local = &mut *guard;
        let (pushed, all_inline) = self.push_rows(local, &chunk, worker as u32);
        if pushed == 0 {
            // Top-k: no row of the chunk can be among this worker's first
            // `limit`; the chunk is not kept.
            return NEED_MORE;
        }
        local.keys_in_chunks |= !all_inline;
        self.keep_needed(&mut chunk, all_inline);
        let (len, width) = (chunk.len(), chunk.width());
        local.chunks.push(chunk);
        match self.limit {
            Some(limit) => {
                if self.needs_prune(local, limit) {
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
        NEED_MORE
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
    use super::{int_of_ordered, ordered_int, radix_sort_ints, Local, SortRow, SortSink};
    use crate::chunk::{Chunk, Column, ColumnData};
    use rhizome_common::Value;
    use rhizome_plan::SortKey;

    /// A chunk of two integer columns (slots 0 and 1).
    fn int_chunk(rows: &[(i64, i64)]) -> Chunk {
        let mut chunk = Chunk::new(2, rows.len());
        for slot in 0..2 {
            let values = rows
                .iter()
                .map(|r| Value::Int(if slot == 0 { r.0 } else { r.1 }))
                .collect();
            chunk.set_column(slot, Column::new(ColumnData::Values(values)));
        }
        chunk
    }

    #[test]
    fn top_k_skips_rows_behind_the_threshold_and_keeps_the_first_k() {
        // ORDER BY a DESC, b LIMIT 5 over 40 chunks of 100 pseudo-random
        // rows with many ties on a.
        let keys = vec![
            SortKey {
                slot: 0,
                descending: true,
            },
            SortKey {
                slot: 1,
                descending: false,
            },
        ];
        let sink = SortSink::new(keys, Some(5), 1, None);
        let mut local = Local::default();
        let mut state = 7u64;
        let mut all = Vec::new();
        let mut pushed_late = 0;
        for c in 0..40 {
            let rows: Vec<(i64, i64)> = (0..100)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (((state >> 33) % 50) as i64, ((state >> 13) % 1000) as i64)
                })
                .collect();
            all.extend(rows.iter().copied());
            let chunk = int_chunk(&rows);
            let (pushed, inline) = sink.push_rows(&mut local, &chunk, 0);
            assert!(inline);
            if c >= 20 {
                pushed_late += pushed;
            }
            if pushed > 0 {
                local.chunks.push(chunk);
            }
            if sink.needs_prune(&local, 5) {
                sink.prune(&mut local, 5);
            }
        }
        // Once a prune set the threshold, almost every row is skipped.
        assert!(local.threshold.is_some());
        assert!(
            pushed_late < 100,
            "{pushed_late} rows pushed in the last 20 chunks"
        );
        sink.prune(&mut local, 5);
        let got: Vec<(i64, i64)> = local
            .rows
            .iter()
            .map(|r| {
                let chunk = &local.chunks[r.chunk as usize];
                let int = |s| match chunk.value(s, r.row as usize) {
                    Value::Int(x) => x,
                    v => panic!("{v:?}"),
                };
                (int(0), int(1))
            })
            .collect();
        all.sort_by_key(|&(a, b)| (std::cmp::Reverse(a), b));
        assert_eq!(got, all[..5].to_vec());
    }

    #[test]
    fn ordered_ints_sort_like_the_ints_and_decode_to_them() {
        let xs = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in xs.windows(2) {
            assert!(ordered_int(w[0], false) < ordered_int(w[1], false));
            assert!(ordered_int(w[0], true) > ordered_int(w[1], true));
        }
        for x in xs {
            for descending in [false, true] {
                assert_eq!(int_of_ordered(ordered_int(x, descending), descending), x);
            }
        }
    }

    /// Rows with keys drawn from ranges `high` and `low` wide, starting far
    /// from zero (the full range for `u64::MAX`), numbered in arrival order.
    fn rows(n: u32, high: u64, low: u64, seed: u64) -> Vec<SortRow> {
        let mut state = seed;
        let mut next = |bound: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = state ^ (state >> 29);
            if bound == u64::MAX {
                x
            } else {
                5_000_000_000 + x % (bound + 1)
            }
        };
        (0..n)
            .map(|i| SortRow {
                ints: [next(high), next(low)],
                worker: 0,
                chunk: i / 7,
                row: i % 7,
                ints_valid: true,
            })
            .collect()
    }

    /// `rows` stably sorted by `key`, renumbered in their new order (as
    /// if they had arrived so).
    fn arrived_in_order_of(mut rows: Vec<SortRow>, key: usize) -> Vec<SortRow> {
        rows.sort_by_key(|r| r.ints[key]);
        for (i, r) in rows.iter_mut().enumerate() {
            (r.chunk, r.row) = (i as u32 / 7, i as u32 % 7);
        }
        rows
    }

    #[test]
    fn radix_sort_of_rows_already_in_order_of_a_key_is_still_stable() {
        let stable = |rows: &[SortRow], keys: usize| {
            let mut want = rows.to_vec();
            want.sort_by_key(|r| (r.ints[0], if keys == 2 { r.ints[1] } else { 0 }));
            want.iter().map(SortRow::arrival).collect::<Vec<_>>()
        };
        // Few first-key values with ties on both keys, arriving in order of
        // the second key (sorted by the first alone), of the first (no
        // sort at all for one key), or of neither.
        for key in [0, 1] {
            for keys in [1, 2] {
                let mut got = arrived_in_order_of(rows(5000, 6, 300, 9), key);
                let want = stable(&got, keys);
                radix_sort_ints(&mut got, keys);
                let got: Vec<_> = got.iter().map(SortRow::arrival).collect();
                assert_eq!(got, want, "in order of key {key}, {keys} key(s)");
            }
        }
        let mut descending = arrived_in_order_of(rows(5000, 6, 300, 9), 1);
        descending.reverse();
        let want = stable(&descending, 2);
        radix_sort_ints(&mut descending, 2);
        let got: Vec<_> = descending.iter().map(SortRow::arrival).collect();
        assert_eq!(got, want, "in reverse order of the second key");
    }

    #[test]
    fn merging_runs_that_interleave_in_stretches_of_any_length() {
        // Two runs of one key, interleaving in stretches of 1 to 64 rows
        // (and one run empty), merged whole and up to a limit.
        for stretch in [1u64, 2, 3, 7, 64] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for i in 0..500u64 {
                let run = if (i / stretch) % 2 == 0 {
                    &mut a
                } else {
                    &mut b
                };
                run.push(SortRow {
                    ints: [i / 3, 0],
                    worker: (i / stretch % 2) as u32,
                    chunk: 0,
                    row: i as u32,
                    ints_valid: true,
                });
            }
            let after = |x: &SortRow, y: &SortRow| (x.ints, x.arrival()) > (y.ints, y.arrival());
            let mut all: Vec<SortRow> = a.iter().chain(&b).copied().collect();
            all.sort_by_key(|r| (r.ints, r.arrival()));
            let want: Vec<_> = all.iter().map(SortRow::arrival).collect();
            for limit in [usize::MAX, 0, 1, 5, 333] {
                for (x, y) in [(&a, &b), (&b, &a), (&a, &Vec::new())] {
                    let mut got = Vec::new();
                    SortSink::merge(x, y, limit, after, |r| got.push(r.arrival()));
                    let mut expected: Vec<_> = if y.is_empty() {
                        x.iter().map(SortRow::arrival).collect()
                    } else {
                        want.clone()
                    };
                    expected.truncate(limit);
                    assert_eq!(got, expected, "stretch {stretch}, limit {limit}");
                }
            }
        }
    }

    #[test]
    fn radix_sort_matches_a_stable_sort_at_every_key_width() {
        // (first key's range, second key's range): packed into 32 bits,
        // into just over 32, into 64, not at all (128), and a constant
        // first key above a full-width second one (a shift by 64).
        let ranges = [
            (6, 1_000_000),
            (1 << 15, 1 << 20),
            (1 << 35, 0),
            (1 << 30, 1 << 20),
            (u64::MAX, u64::MAX),
            (0, u64::MAX),
            (u64::MAX, 0),
            (3, 3),
        ];
        for (seed, (high, low)) in ranges.into_iter().enumerate() {
            for keys in [1, 2] {
                let mut got = rows(3000, high, low, seed as u64);
                let mut want = got.clone();
                radix_sort_ints(&mut got, keys);
                want.sort_by_key(|r| {
                    if keys == 1 {
                        (r.ints[0], 0)
                    } else {
                        (r.ints[0], r.ints[1])
                    }
                });
                let order = |v: &[SortRow]| v.iter().map(SortRow::arrival).collect::<Vec<_>>();
                assert_eq!(
                    order(&got),
                    order(&want),
                    "ranges {high}/{low}, {keys} key(s)"
                );
            }
        }
    }
}
