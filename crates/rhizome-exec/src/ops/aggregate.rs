//! `AggregateSink`: hash aggregation with per-worker group tables, fed a
//! column at a time.
//!
//! Per chunk, each aggregate's argument is computed as one typed vector
//! ([`crate::vector`]) and folded into its accumulator with one call:
//! `count(*)` adds the chunk's length, `count(x)` of a node or
//! relationship slot counts the column's non-null ids, and integer or
//! float vectors reach `sum`/`avg`/`min`/`max`/`count` as slices
//! ([`Accumulator::update_ints`]), string views `min`/`max`/`count`
//! ([`Accumulator::update_strs`]). Grouped aggregation finds each row's
//! group first (through a table keyed by the plain integer when the only
//! key is an integer column, by the string view when it is a string
//! column, by the bytes of a composite key ([`super::typed_keys`]) when
//! several keys are all typed columns (integers, booleans, strings, node
//! ids), else by [`GroupKey`]s) and then feeds every
//! aggregate its column for the rows' groups. Arguments the vector
//! evaluator cannot compute, mixed-type columns and `DISTINCT` aggregates
//! fall back to a value per row, with the same results.

use super::typed_keys;
use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::{CExpr, CNode};
use crate::context::{QueryContext, VALUE_BYTES};
use crate::expr::{Evaluator, Row};
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::PerWorker;
use crate::vector::{self, Vector};
use rhizome_common::{AggregateKind, Result, Value};
use rhizome_functions::aggregate::{Accumulator, Finished};
use rhizome_functions::ops::{GroupKey, KeyMap};
use rhizome_plan::{AggregateItem, Expr, OpKind, Slot};
use std::sync::Arc;

/// One worker's groups in first-seen order, with two indexes into them.
#[derive(Default)]
struct Groups {
    /// Keys and accumulators, in the order the groups were first seen.
    groups: Vec<(Vec<GroupKey>, Vec<Accumulator>)>,
    /// Every group by its keys.
    by_key: KeyMap<Vec<GroupKey>, u32>,
    /// Groups of a single integer key found through an integer column.
    by_int: KeyMap<i64, u32>,
    /// Groups of a single node key found through a node-id column.
    by_node: KeyMap<u64, u32>,
    /// Groups of a single string key found through a string-view column.
    by_str: KeyMap<Box<str>, u32>,
    /// Groups of several keys found through typed columns, by the keys'
    /// encoding ([`typed_keys`]).
    by_bytes: KeyMap<Box<[u8]>, u32>,
}

/// Hash aggregation: per-worker group tables merged at the end. Groups keep
/// the order in which they were first seen on each worker.
pub struct AggregateSink {
    node: Arc<CNode>,
    locals: PerWorker<Groups>,
}

impl AggregateSink {
    /// The sink of an `Aggregate` node, for `slots` workers.
    pub fn new(node: Arc<CNode>, slots: usize) -> AggregateSink {
        AggregateSink {
            node,
            locals: PerWorker::new(slots, |_| Groups::default()),
        }
    }

    fn fresh(&self) -> Vec<Accumulator> {
        self.node
            .c
            .aggregates
            .iter()
            .map(|(item, _)| Accumulator::new(item.function, item.distinct))
            .collect()
    }

    /// The aggregates' argument columns over `chunk` (`None` where an
    /// argument needs the row evaluator).
    fn argument_columns<'a>(
        &self,
        q: &'a QueryContext,
        chunk: &'a Chunk,
    ) -> Vec<Vec<Option<Vector<'a>>>> {
        self.node
            .c
            .aggregates
            .iter()
            .map(|(item, exprs)| {
                if counts_ids(item.function, item.distinct, exprs) {
                    // Counted from the id column itself: no vector needed.
                    vec![None]
                } else {
                    vector::columns(q, exprs, chunk)
                }
            })
            .collect()
    }
}

/// The runs of equal groups in `group_of`: each group with the range of
/// consecutive rows in it, so a typed column is fed a slice per run.
fn runs(group_of: &[u32]) -> impl Iterator<Item = (u32, std::ops::Range<usize>)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        let &g = group_of.get(start)?;
        let len = group_of[start..].iter().take_while(|&&h| h == g).count();
        let rows = start..start + len;
        start += len;
        Some((g, rows))
    })
}

/// A chunk's rows in group order (a stable counting sort of the rows by
/// group), built when the rows' groups change so often that feeding each
/// run of equal groups would feed one row at a time.
struct GroupedRows {
    /// Row indexes, group by group, ascending within a group.
    order: Vec<u32>,
    /// For each group index, where its rows start in `order` (one more
    /// entry at the end).
    starts: Vec<u32>,
}

impl GroupedRows {
    /// Groups at most this many (a worker's groups so far) are sorted by
    /// counting; more keep the runs.
    const MAX_GROUPS: usize = 4_096;

    /// The rows of `group_of` in group order, if its runs average fewer
    /// than four rows and there are at most [`Self::MAX_GROUPS`] groups.
    fn when_runs_are_short(group_of: &[u32], groups: usize) -> Option<GroupedRows> {
        let runs = 1 + group_of.windows(2).filter(|w| w[0] != w[1]).count();
        if group_of.is_empty() || groups > Self::MAX_GROUPS || runs * 4 <= group_of.len() {
            return None;
        }
        let mut starts = vec![0u32; groups + 1];
        for &g in group_of {
            starts[g as usize + 1] += 1;
        }
        for g in 0..groups {
            starts[g + 1] += starts[g];
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; group_of.len()];
        for (row, &g) in group_of.iter().enumerate() {
            order[next[g as usize] as usize] = row as u32;
            next[g as usize] += 1;
        }
        Some(GroupedRows { order, starts })
    }

    /// Each group that has rows in the chunk, with its rows in order.
    fn groups(&self) -> impl Iterator<Item = (u32, &[u32])> + '_ {
        self.starts.windows(2).enumerate().filter_map(|(g, w)| {
            let rows = &self.order[w[0] as usize..w[1] as usize];
            (!rows.is_empty()).then_some((g as u32, rows))
        })
    }
}

/// True if the aggregate is a plain `count(v)` of a slot: counted from the
/// slot's column without building values.
fn counts_ids(function: AggregateKind, distinct: bool, exprs: &[CExpr]) -> bool {
    function == AggregateKind::Count && !distinct && matches!(exprs, [CExpr::Slot(_)])
}

/// Feeds every row of `chunk` to `acc` (the ungrouped case): a column at a
/// time where the argument's vector allows, else a row at a time. Adds to
/// `held` the bytes `acc` keeps more (collect, percentiles, DISTINCT).
fn feed_chunk(
    acc: &mut Accumulator,
    exprs: &[CExpr],
    columns: &[Option<Vector>],
    eval: &Evaluator<'_>,
    chunk: &Chunk,
    held: &mut usize,
) -> Result<()> {
    let before = acc.held_bytes(VALUE_BYTES);
    let fed = feed_chunk_values(acc, exprs, columns, eval, chunk);
    *held += acc.held_bytes(VALUE_BYTES) - before;
    fed
}

/// The work of [`feed_chunk`], without the accounting.
fn feed_chunk_values(
    acc: &mut Accumulator,
    exprs: &[CExpr],
    columns: &[Option<Vector>],
    eval: &Evaluator<'_>,
    chunk: &Chunk,
) -> Result<()> {
    let n = chunk.len();
    match (exprs, columns) {
        ([], _) if acc.add_count(n as u64) => return Ok(()),
        ([CExpr::Slot(s)], _) if counts_ids(acc.kind(), acc.is_distinct(), exprs) => {
            let count = chunk.column(*s).map_or(0, |c| c.count_non_null(n));
            if acc.add_count(count as u64) {
                return Ok(());
            }
        }
        ([_], [Some(Vector::Ints(xs, nulls))]) => return acc.update_ints(xs, nulls.as_deref()),
        ([_], [Some(Vector::Floats(xs, nulls))]) => return acc.update_floats(xs, nulls.as_deref()),
        ([_], [Some(Vector::Strs(xs, nulls))]) => return acc.update_strs(xs, nulls.as_deref()),
        ([_], [Some(Vector::Const(v))]) => {
            if v.is_null() {
                return Ok(());
            }
            if acc.add_count(n as u64) {
                return Ok(());
            }
            return (0..n).try_for_each(|_| acc.update(v));
        }
        _ => {}
    }
    let mut args = Vec::new();
    let mut counted_by_caller = 0;
    for row in 0..n {
        feed(
            acc,
            exprs,
            columns,
            eval,
            &Row::new(chunk, row),
            (&mut args, &mut counted_by_caller),
        )?;
    }
    Ok(())
}

/// Feeds row `r` to `acc`: its arguments are read from `columns` where they
/// were computed a column at a time, else evaluated (`args` is scratch).
/// Adds to `held` the bytes `acc` keeps more (collect, percentiles, DISTINCT).
fn feed(
    acc: &mut Accumulator,
    arg_exprs: &[CExpr],
    columns: &[Option<Vector>],
    eval: &Evaluator<'_>,
    r: &Row<'_>,
    (args, held): (&mut Vec<Value>, &mut usize),
) -> Result<()> {
    if arg_exprs.is_empty() {
        acc.update_row();
        return Ok(());
    }
    if let ([CExpr::Slot(s)], true) = (
        arg_exprs,
        counts_ids(acc.kind(), acc.is_distinct(), arg_exprs),
    ) {
        if !r.chunk.value(*s, r.row).is_null() {
            acc.add_count(1);
        }
        return Ok(());
    }
    args.clear();
    for (e, column) in arg_exprs.iter().zip(columns) {
        args.push(vector::value_at(eval, e, column, r)?);
    }
    let before = acc.held_bytes(VALUE_BYTES);
    acc.update_args(args)?;
    *held += acc.held_bytes(VALUE_BYTES) - before;
    Ok(())
}

impl Groups {
    /// The index of the group keyed by `key`, created (with `fresh`
    /// accumulators) if new.
    fn find(&mut self, key: &[GroupKey], fresh: impl FnOnce() -> Vec<Accumulator>) -> u32 {
        if let Some(&g) = self.by_key.get(key) {
            return g;
        }
        let g = self.groups.len() as u32;
        self.by_key.insert(key.to_vec(), g);
        self.groups.push((key.to_vec(), fresh()));
        g
    }

    /// The index of the group of the single node key `id` (`NULL_ID`
    /// for null).
    #[inline]
    fn find_node(&mut self, id: u64, fresh: impl FnOnce() -> Vec<Accumulator>) -> u32 {
        if let Some(&g) = self.by_node.get(&id) {
            return g;
        }
        let key = match id {
            NULL_ID => Value::Null,
            id => Value::Node(id),
        };
        let g = self.find(&[GroupKey(key)], fresh);
        self.by_node.insert(id, g);
        g
    }

    /// The index of the group of the single integer key `x`.
    #[inline]
    fn find_int(&mut self, x: i64, fresh: impl FnOnce() -> Vec<Accumulator>) -> u32 {
        if let Some(&g) = self.by_int.get(&x) {
            return g;
        }
        // The group may exist under an equivalent key (`1.0` for `1`).
        let g = self.find(&[GroupKey(Value::Int(x))], fresh);
        self.by_int.insert(x, g);
        g
    }

    /// The index of the group of the single string key `x`, found by the
    /// view (a `Value` is built only for a new group).
    #[inline]
    fn find_str(&mut self, x: &str, fresh: impl FnOnce() -> Vec<Accumulator>) -> u32 {
        if let Some(&g) = self.by_str.get(x) {
            return g;
        }
        // The group may have been made by a chunk read as values.
        let g = self.find(&[GroupKey(Value::String(x.to_owned()))], fresh);
        self.by_str.insert(x.into(), g);
        g
    }

    /// The index of the group whose typed key encodes as `bytes`; `key`
    /// builds its values, called only for bytes not seen before.
    #[inline]
    fn find_bytes(
        &mut self,
        bytes: &[u8],
        key: impl FnOnce() -> Vec<GroupKey>,
        fresh: impl FnOnce() -> Vec<Accumulator>,
    ) -> u32 {
        if let Some(&g) = self.by_bytes.get(bytes) {
            return g;
        }
        // The group may exist under an equivalent key, or have been made
        // by a chunk read as values.
        let g = self.find(&key(), fresh);
        self.by_bytes.insert(bytes.into(), g);
        g
    }

    /// Appends to `group_of` the group of every row of a chunk of `rows`
    /// rows whose keys are the typed `columns`: one reused buffer per
    /// chunk, the previous row's group tried first (equal keys often come
    /// in runs).
    fn find_typed(
        &mut self,
        columns: &[typed_keys::KeyColumn<'_>],
        rows: usize,
        group_of: &mut Vec<u32>,
        fresh: impl Fn() -> Vec<Accumulator>,
    ) {
        let mut key = Vec::with_capacity(64);
        let mut last = Vec::with_capacity(64);
        let mut last_group = None;
        for row in 0..rows {
            typed_keys::encode_row(columns, row, &mut key);
            let g = match last_group {
                Some(g) if last == key => g,
                _ => self.find_bytes(
                    &key,
                    || columns.iter().map(|c| GroupKey(c.value(row))).collect(),
                    &fresh,
                ),
            };
            std::mem::swap(&mut key, &mut last);
            last_group = Some(g);
            group_of.push(g);
        }
    }
}

impl Sink for AggregateSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let eval = Evaluator::new(ctx.q);
        let arg_columns = self.argument_columns(ctx.q, &chunk);
        let aggregates = &self.node.c.aggregates;
        if self.node.c.exprs.is_empty() {
            // No grouping keys: one group, fed a column at a time.
            let mut guard = self.locals.lock(ctx.worker);
            let g = guard.find(&[], || self.fresh());
            let accs = &mut guard.groups[g as usize].1;
            let mut held = 0;
            for ((acc, (_, exprs)), columns) in accs.iter_mut().zip(aggregates).zip(&arg_columns) {
                feed_chunk(acc, exprs, columns, &eval, &chunk, &mut held)?;
            }
            drop(guard);
            ctx.q.memory.charge(held)?;
            return NEED_MORE;
        }
        // A single node key is read from the id column; other keys are
        // computed a column at a time where possible.
        let node_key = match self.node.c.exprs.as_slice() {
            [CExpr::Slot(s)] => chunk.column(*s).and_then(|c| c.node_ids()),
            _ => None,
        };
        // Node-id slots among several keys are read from their columns.
        let keys: Vec<Option<Vector>> = match node_key {
            Some(_) => Vec::new(),
            None => self
                .node
                .c
                .exprs
                .iter()
                .map(|e| match typed_keys::is_node_slot(e, &chunk) {
                    true => None,
                    false => vector::column(ctx.q, e, &chunk),
                })
                .collect(),
        };
        let typed = match keys.len() {
            0 | 1 => None,
            _ => typed_keys::key_columns(&self.node.c.exprs, &keys, &chunk),
        };
        let mut guard = self.locals.lock(ctx.worker);
        let groups = &mut *guard;
        let before = groups.groups.len();
        // Each row's group first, then each aggregate over the rows.
        let mut group_of: Vec<u32> = Vec::with_capacity(chunk.len());
        if let Some((ids, selection)) = node_key {
            // Rows of one node come in runs (an expansion's rows per
            // source): the previous row's group is tried first.
            let mut last: Option<(u64, u32)> = None;
            for row in 0..chunk.len() {
                let id = ids[selection.map_or(row, |sel| sel[row] as usize)];
                let g = match last {
                    Some((seen, g)) if seen == id => g,
                    _ => groups.find_node(id, || self.fresh()),
                };
                last = Some((id, g));
                group_of.push(g);
            }
        } else if let [Some(Vector::Ints(xs, None))] = keys.as_slice() {
            for &x in xs.iter() {
                group_of.push(groups.find_int(x, || self.fresh()));
            }
        } else if let [Some(Vector::Strs(xs, nulls))] = keys.as_slice() {
            // Equal keys often come in runs: the previous row's group is
            // tried first.
            let mut last: Option<(&str, u32)> = None;
            for (row, &x) in xs.iter().enumerate() {
                let g = if nulls.as_ref().is_some_and(|m| m[row]) {
                    groups.find(&[GroupKey(Value::Null)], || self.fresh())
                } else {
                    match last {
                        Some((seen, g)) if seen == x => g,
                        _ => {
                            let g = groups.find_str(x, || self.fresh());
                            last = Some((x, g));
                            g
                        }
                    }
                };
                group_of.push(g);
            }
        } else if let Some(columns) = &typed {
            groups.find_typed(columns, chunk.len(), &mut group_of, || self.fresh());
        } else {
            // One key buffer for the chunk: a row allocates only for a new group.
            let mut key: Vec<GroupKey> = Vec::with_capacity(keys.len());
            for row in 0..chunk.len() {
                let r = Row::new(&chunk, row);
                key.clear();
                for (e, column) in self.node.c.exprs.iter().zip(&keys) {
                    key.push(GroupKey(vector::value_at(&eval, e, column, &r)?));
                }
                group_of.push(groups.find(&key, || self.fresh()));
            }
        }
        let mut args = Vec::new();
        let mut held = 0;
        // Keys that change from row to row (`n.id % 7`) make runs of one
        // row: the rows are then put in group order once, so each group's
        // typed values go to its accumulators as one slice.
        let by_group = GroupedRows::when_runs_are_short(&group_of, groups.groups.len());
        let mut gathered: Vec<i64> = Vec::new();
        for (a, ((_, exprs), columns)) in aggregates.iter().zip(&arg_columns).enumerate() {
            match (exprs.as_slice(), columns.as_slice(), &by_group) {
                ([], _, Some(by_group))
                    if groups.groups[group_of[0] as usize].1[a].add_count(0) =>
                {
                    for (g, rows) in by_group.groups() {
                        groups.groups[g as usize].1[a].add_count(rows.len() as u64);
                    }
                }
                ([_], [Some(Vector::Ints(xs, None))], Some(by_group)) => {
                    for (g, rows) in by_group.groups() {
                        gathered.clear();
                        gathered.extend(rows.iter().map(|&row| xs[row as usize]));
                        let acc = &mut groups.groups[g as usize].1[a];
                        let before = acc.held_bytes(VALUE_BYTES);
                        acc.update_ints(&gathered, None)?;
                        held += acc.held_bytes(VALUE_BYTES) - before;
                    }
                }
                ([_], [Some(Vector::Ints(xs, None))], None) => {
                    for (g, rows) in runs(&group_of) {
                        let acc = &mut groups.groups[g as usize].1[a];
                        let before = acc.held_bytes(VALUE_BYTES);
                        acc.update_ints(&xs[rows], None)?;
                        held += acc.held_bytes(VALUE_BYTES) - before;
                    }
                }
                ([_], [Some(Vector::Floats(xs, None))], _) => {
                    for (g, rows) in runs(&group_of) {
                        let acc = &mut groups.groups[g as usize].1[a];
                        let before = acc.held_bytes(VALUE_BYTES);
                        acc.update_floats(&xs[rows], None)?;
                        held += acc.held_bytes(VALUE_BYTES) - before;
                    }
                }
                ([_], [Some(Vector::Strs(xs, nulls))], _) => {
                    for (g, rows) in runs(&group_of) {
                        let acc = &mut groups.groups[g as usize].1[a];
                        let before = acc.held_bytes(VALUE_BYTES);
                        let mask = nulls.as_ref().map(|m| &m[rows.clone()]);
                        acc.update_strs(&xs[rows], mask)?;
                        held += acc.held_bytes(VALUE_BYTES) - before;
                    }
                }
                _ => {
                    for (row, &g) in group_of.iter().enumerate() {
                        let acc = &mut groups.groups[g as usize].1[a];
                        let r = Row::new(&chunk, row);
                        feed(acc, exprs, columns, &eval, &r, (&mut args, &mut held))?;
                    }
                }
            }
        }
        let added = groups.groups.len() - before;
        drop(guard);
        ctx.q.memory.charge(
            added * (self.node.c.exprs.len() + self.node.c.aggregates.len() + 2) * VALUE_BYTES
                + held,
        )?;
        NEED_MORE
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        let OpKind::Aggregate { keys, aggregates } = &self.node.kind else {
            unreachable!("aggregate sink built for an Aggregate node");
        };
        // The first worker's groups and key table take in the others'
        // groups: no key is copied for a group only one worker saw.
        let mut locals = self.locals.take_all().filter(|g| !g.groups.is_empty());
        let (mut merged, mut index) = match locals.next() {
            Some(first) => (first.groups, first.by_key),
            None => Default::default(),
        };
        for groups in locals {
            for (key, accs) in groups.groups {
                match index.get(&key) {
                    Some(&i) => {
                        for (mine, theirs) in merged[i as usize].1.iter_mut().zip(accs) {
                            mine.merge(theirs)?;
                        }
                    }
                    None => {
                        index.insert(key.clone(), merged.len() as u32);
                        merged.push((key, accs));
                    }
                }
            }
        }
        drop(index);
        if merged.is_empty() && keys.is_empty() {
            merged.push((Vec::new(), self.fresh()));
        }
        let width = keys
            .iter()
            .map(|(s, _)| *s)
            .chain(aggregates.iter().map(|a| a.slot))
            .max()
            .map_or(0, |m| m + 1);
        // A chunk of groups at a time; each group's accumulators are
        // consumed (their buffers moved or freed) as its row is built.
        let mut out = Vec::with_capacity(merged.len().div_ceil(CHUNK_SIZE));
        let mut groups = merged.into_iter();
        loop {
            let batch: Vec<_> = groups.by_ref().take(CHUNK_SIZE).collect();
            if batch.is_empty() {
                break;
            }
            out.push(output_chunk(batch, keys, aggregates, width)?);
        }
        Ok(out)
    }
}

/// The output chunk of `groups`: the keys as values, every aggregate's
/// results as values except `collect`'s, whose lists stay as collected
/// ([`ColumnData::Lists`]: 8 bytes an element while typed) until a
/// consumer reads them.
fn output_chunk(
    groups: Vec<(Vec<GroupKey>, Vec<Accumulator>)>,
    keys: &[(Slot, Expr)],
    aggregates: &[AggregateItem],
    width: usize,
) -> Result<Chunk> {
    let n = groups.len();
    let mut key_columns: Vec<Vec<Value>> = vec![Vec::with_capacity(n); keys.len()];
    let mut results: Vec<Vec<Finished>> = vec![Vec::with_capacity(n); aggregates.len()];
    for (key, accs) in groups {
        for (column, k) in key_columns.iter_mut().zip(key) {
            column.push(k.0);
        }
        for (column, acc) in results.iter_mut().zip(accs) {
            column.push(acc.finish_typed()?);
        }
    }
    let mut chunk = Chunk::new(width, n);
    for ((slot, _), values) in keys.iter().zip(key_columns) {
        set_values(&mut chunk, *slot, values);
    }
    for (item, column) in aggregates.iter().zip(results) {
        if column.iter().all(|f| matches!(f, Finished::List(_))) {
            let lists = column
                .into_iter()
                .filter_map(|f| match f {
                    Finished::List(list) => Some(list),
                    Finished::Value(_) => None,
                })
                .collect();
            chunk.set_column(item.slot, Column::new(ColumnData::Lists(lists)));
        } else {
            let values = column
                .into_iter()
                .map(|f| match f {
                    Finished::Value(v) => v,
                    Finished::List(list) => Value::List(list.into_values()),
                })
                .collect();
            set_values(&mut chunk, item.slot, values);
        }
    }
    Ok(chunk)
}

/// Sets `slot` of `chunk` to `values` unless every one is null (a slot
/// without a column is null).
fn set_values(chunk: &mut Chunk, slot: Slot, values: Vec<Value>) {
    if values.iter().any(|v| !v.is_null()) {
        chunk.set_column(slot, Column::new(ColumnData::Values(values)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_functions::aggregate::Collected;

    fn collect_item(slot: Slot, distinct: bool) -> AggregateItem {
        AggregateItem {
            slot,
            function: AggregateKind::Collect,
            args: vec![Expr::Slot(9)],
            distinct,
        }
    }

    /// Groups of `sizes[g]` integers each, fed a chunk's worth at a time
    /// as the sink does.
    fn groups(sizes: &[usize], distinct: bool) -> Vec<(Vec<GroupKey>, Vec<Accumulator>)> {
        sizes
            .iter()
            .enumerate()
            .map(|(g, &n)| {
                let mut acc = Accumulator::new(AggregateKind::Collect, distinct);
                let xs: Vec<i64> = (0..n as i64).collect();
                for part in xs.chunks(CHUNK_SIZE) {
                    acc.update_ints(part, None).unwrap();
                }
                (vec![GroupKey(Value::Int(g as i64))], vec![acc])
            })
            .collect()
    }

    #[test]
    fn collected_lists_leave_the_aggregate_typed_within_one_and_a_half_times_the_payload() {
        let sizes = [1_000_000, 1, 0, 37, 250_000, 4096];
        let keys = vec![(0, Expr::Literal(Value::Null))];
        let items = vec![collect_item(1, false)];
        let chunk = output_chunk(groups(&sizes, false), &keys, &items, 2).unwrap();
        let Some(ColumnData::Lists(lists)) = chunk.column(1).and_then(|c| c.dense()) else {
            panic!("collect's column is not typed: {:?}", chunk.column(1));
        };
        let payload: usize = sizes.iter().map(|n| n * 8).sum();
        let held: usize = lists.iter().map(|l| l.bytes(VALUE_BYTES)).sum();
        // Integer lists, each group's own (an empty one as an empty list).
        for (list, &n) in lists.iter().zip(&sizes) {
            assert_eq!(list.len(), n);
            if n > 0 {
                assert!(matches!(list, Collected::Ints(_)), "{n}");
            }
        }
        assert!(
            held * 2 <= payload * 3,
            "held {held} bytes for a payload of {payload}"
        );
        // Read as values, a row is the boxed list, in order.
        assert_eq!(
            chunk.value(1, 3),
            Value::List((0..37).map(Value::Int).collect())
        );
        assert_eq!(chunk.column(1).unwrap().list_len(4), Some(250_000));
    }

    #[test]
    fn typed_composite_keys_find_the_groups_of_boxed_keys() {
        use typed_keys::KeyColumn;
        let fresh = || vec![Accumulator::new(AggregateKind::CountStar, false)];
        let mut groups = Groups::default();
        // A group made by a chunk read as values, under an equivalent key.
        let boxed = [
            GroupKey(Value::String("a".into())),
            GroupKey(Value::Float(1.0)),
        ];
        assert_eq!(groups.find(&boxed, fresh), 0);
        let strs = ["a", "a", "b", "a", "", "a"];
        let ints = [1i64, 1, 1, 2, 0, 1];
        let nulls = [false, false, false, false, true, false];
        let columns = [
            KeyColumn::Strs(&strs, None),
            KeyColumn::Ints(&ints, Some(&nulls)),
        ];
        let mut group_of = Vec::new();
        groups.find_typed(&columns, strs.len(), &mut group_of, fresh);
        assert_eq!(group_of, vec![0, 0, 1, 2, 3, 0]);
        // Found by bytes, one entry per group; keys kept as values.
        assert_eq!(groups.by_bytes.len(), 4);
        let keys: Vec<_> = groups.groups.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            keys[1],
            [GroupKey(Value::String("b".into())), GroupKey(Value::Int(1))]
        );
        assert_eq!(
            keys[3],
            [GroupKey(Value::String("".into())), GroupKey(Value::Null)]
        );
        // A second chunk finds the same groups without new keys.
        group_of.clear();
        groups.find_typed(&columns, strs.len(), &mut group_of, fresh);
        assert_eq!(group_of, vec![0, 0, 1, 2, 3, 0]);
        assert_eq!(groups.groups.len(), 4);
    }

    #[test]
    fn rows_are_put_in_group_order_only_when_runs_are_short() {
        let cycling = [2, 0, 1, 2, 0, 1, 2, 0];
        let by_group = GroupedRows::when_runs_are_short(&cycling, 3).unwrap();
        let groups: Vec<(u32, Vec<u32>)> = by_group
            .groups()
            .map(|(g, rows)| (g, rows.to_vec()))
            .collect();
        assert_eq!(
            groups,
            vec![(0, vec![1, 4, 7]), (1, vec![2, 5]), (2, vec![0, 3, 6])]
        );
        // A group with no row in the chunk is left out.
        let by_group = GroupedRows::when_runs_are_short(&[3, 1, 3, 1], 4).unwrap();
        assert_eq!(
            by_group.groups().map(|(g, _)| g).collect::<Vec<_>>(),
            [1, 3]
        );
        // Long runs keep the run-by-run path, and so do many groups.
        assert!(GroupedRows::when_runs_are_short(&[0, 0, 0, 0, 1, 1, 1, 1], 2).is_none());
        assert!(GroupedRows::when_runs_are_short(&[0, 1], GroupedRows::MAX_GROUPS + 1).is_none());
        assert!(GroupedRows::when_runs_are_short(&[], 0).is_none());
    }

    #[test]
    fn runs_split_rows_into_consecutive_groups() {
        let got: Vec<_> = runs(&[4, 4, 1, 4, 4, 4, 2]).collect();
        assert_eq!(got, vec![(4, 0..2), (1, 2..3), (4, 3..6), (2, 6..7)]);
        assert_eq!(runs(&[]).count(), 0);
    }

    #[test]
    fn distinct_and_other_aggregates_finish_as_before() {
        let keys = vec![(0, Expr::Literal(Value::Null))];
        let items = vec![collect_item(1, true)];
        let mut gs = groups(&[3], true);
        gs[0].1[0].update_ints(&[2, 1, 7], None).unwrap();
        let chunk = output_chunk(gs, &keys, &items, 2).unwrap();
        let list = chunk.value(1, 0);
        assert_eq!(list, Value::List([0, 1, 2, 7].map(Value::Int).to_vec()));
        // A sum column stays values; a key of only nulls gets no column.
        let sum = AggregateItem {
            function: AggregateKind::Sum,
            ..collect_item(1, false)
        };
        let mut acc = Accumulator::new(AggregateKind::Sum, false);
        acc.update_ints(&[4, 5], None).unwrap();
        let chunk = output_chunk(
            vec![(vec![GroupKey(Value::Null)], vec![acc])],
            &keys,
            &[sum],
            2,
        )
        .unwrap();
        assert!(chunk.column(0).is_none());
        assert!(matches!(
            chunk.column(1).and_then(|c| c.dense()),
            Some(ColumnData::Values(_))
        ));
        assert_eq!(chunk.value(1, 0), Value::Int(9));
    }
}
