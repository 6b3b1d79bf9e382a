//! Pipeline breakers as sinks with per-worker local state: collecting,
//! hash aggregation and limit (sort and top-k are in [`super::sort`]).

use super::simple::constant_count;
use super::sort::SortSink;
use crate::chunk::{Chunk, RowBuilder, CHUNK_SIZE};
use crate::compile::{CExpr, CNode};
use crate::context::QueryContext;
use crate::expr::{Evaluator, Row};
use crate::per_worker::PerWorker;
use crate::pipeline::{Sink, TaskCtx};
use crate::rows::Rows;
use crate::scheduler::CancelToken;
use crate::stream::{RowBlock, RowReceiver};
use crate::vector::{self, Vector};
use rhizome_common::{Result, Value};
use rhizome_functions::aggregate::{Accumulator, AggregateKind};
use rhizome_functions::ops::{GroupKey, KeyMap};
use rhizome_plan::{AggregateFunction, OpKind, Slot};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

/// Approximate bytes one materialized value takes (for the memory budget).
pub(super) const VALUE_BYTES: usize = 48;

/// Collects chunks as they come (per worker); optionally stops the run at the first row.
pub struct CollectSink {
    locals: PerWorker<Vec<Chunk>>,
    stop_after_first: Option<Arc<CancelToken>>,
}

impl CollectSink {
    /// A sink for `slots` workers; `stop_after_first` is cancelled once a row arrives.
    pub fn new(slots: usize, stop_after_first: Option<Arc<CancelToken>>) -> CollectSink {
        CollectSink {
            locals: PerWorker::new(slots, |_| Vec::new()),
            stop_after_first,
        }
    }
}

impl Sink for CollectSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        ctx.q.memory.charge(chunk.len() * chunk.width() * 8)?;
        self.locals.lock(ctx.worker).push(chunk);
        if let Some(token) = &self.stop_after_first {
            token.cancel();
        }
        Ok(())
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        Ok(self.locals.take_all().flatten().collect())
    }
}

/// Result rows built from one chunk: its source chunk and its values,
/// row-major.
type SourceRows = (usize, Vec<Value>);

/// Where the result sink puts the rows it builds.
enum Destination {
    /// Kept, per worker, until [`RowsSink::take_rows`].
    Collect(PerWorker<Vec<SourceRows>>),
    /// Handed to a receiver; each worker refills one block.
    Stream(Arc<dyn RowReceiver>, PerWorker<RowBlock>),
}

/// The result sink of a query: turns each chunk into a block of result
/// values (row-major, in column order) on the worker that produced it, so
/// building the rows is as parallel as the pipeline that ends here. It
/// collects the blocks (one allocation per chunk) or streams them to a
/// [`RowReceiver`] (no allocation once each worker's block has grown).
pub struct RowsSink {
    columns: Vec<Slot>,
    destination: Destination,
}

impl RowsSink {
    /// A sink for `slots` workers that keeps the values of `columns` (none:
    /// no rows, as for a statement without result columns), or streams
    /// them to `receiver` if given.
    pub fn new(
        slots: usize,
        columns: Vec<Slot>,
        receiver: Option<Arc<dyn RowReceiver>>,
    ) -> RowsSink {
        let destination = match receiver {
            None => Destination::Collect(PerWorker::new(slots, |_| Vec::new())),
            Some(receiver) => Destination::Stream(
                receiver,
                PerWorker::new(slots, |worker| RowBlock::new(columns.len(), worker)),
            ),
        };
        RowsSink {
            columns,
            destination,
        }
    }

    /// The collected rows in the order of their source chunks (rows of one
    /// source chunk: worker by worker, each in arrival order). The blocks
    /// are moved, not copied. Empty if the rows were streamed.
    pub fn take_rows(&self) -> Rows {
        let mut pieces: Vec<SourceRows> = Vec::new();
        if let Destination::Collect(locals) = &self.destination {
            pieces.extend(locals.take_all().flatten());
        }
        pieces.sort_by_key(|(source, _)| *source);
        Rows::from_blocks(
            self.columns.len(),
            pieces.into_iter().map(|(_, values)| values).collect(),
        )
    }

    /// Appends the result values of `chunk`'s rows to `values`; true if
    /// they are all ids or nulls (they own no heap memory).
    fn build(&self, chunk: &Chunk, values: &mut Vec<Value>) -> bool {
        let columns: Vec<_> = self.columns.iter().map(|&s| chunk.column(s)).collect();
        values.reserve(chunk.len() * columns.len());
        if let [Some(column)] = columns[..] {
            column.append_values(chunk.len(), values);
        } else {
            for r in 0..chunk.len() {
                values.extend(columns.iter().map(|c| match c {
                    Some(c) => c.value(r),
                    None => Value::Null,
                }));
            }
        }
        columns.iter().all(|c| c.is_none_or(|c| c.holds_ids()))
    }
}

impl Sink for RowsSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        if self.columns.is_empty() {
            return Ok(());
        }
        match &self.destination {
            Destination::Collect(locals) => {
                // Charged as the collecting sink charges chunks.
                ctx.q.memory.charge(chunk.len() * chunk.width() * 8)?;
                let mut values = Vec::new();
                self.build(&chunk, &mut values);
                locals.lock(ctx.worker).push((ctx.source, values));
                Ok(())
            }
            Destination::Stream(receiver, blocks) => {
                let mut block = blocks.lock(ctx.worker);
                block.refill(ctx.source, |values| self.build(&chunk, values));
                receiver.receive(&mut block)
            }
        }
    }

    fn sequenced(&self) -> bool {
        true
    }

    fn reads(&self) -> Option<&[Slot]> {
        Some(&self.columns)
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        Ok(Vec::new())
    }
}

/// Builds the sink of a breaker node.
/// `wanted`: the only slots read from its output, if known (a sort then
/// gathers no others into its output chunks).
pub fn breaker_sink(
    node: &Arc<CNode>,
    q: &QueryContext,
    wanted: Option<Vec<Slot>>,
) -> Result<Arc<dyn Sink>> {
    Ok(match &node.kind {
        OpKind::Aggregate { .. } => Arc::new(AggregateSink::new(node.clone(), q.worker_slots)),
        OpKind::Sort { keys } => {
            Arc::new(SortSink::new(keys.clone(), None, q.worker_slots, wanted))
        }
        OpKind::Top { keys, .. } => {
            let limit = constant_count(q, &node.c.exprs[0], "LIMIT")?;
            Arc::new(SortSink::new(
                keys.clone(),
                Some(limit),
                q.worker_slots,
                wanted,
            ))
        }
        OpKind::Limit { .. } => Arc::new(LimitSink::new(
            constant_count(q, &node.c.exprs[0], "LIMIT")?,
            q.worker_slots,
        )),
        other => {
            return Err(rhizome_common::Error::internal(format!(
                "{other:?} is not a breaker"
            )))
        }
    })
}

fn kind_of(f: AggregateFunction) -> AggregateKind {
    match f {
        AggregateFunction::CountStar => AggregateKind::CountStar,
        AggregateFunction::Count => AggregateKind::Count,
        AggregateFunction::Sum => AggregateKind::Sum,
        AggregateFunction::Avg => AggregateKind::Avg,
        AggregateFunction::Min => AggregateKind::Min,
        AggregateFunction::Max => AggregateKind::Max,
        AggregateFunction::Collect => AggregateKind::Collect,
        AggregateFunction::StDev => AggregateKind::StDev,
        AggregateFunction::StDevP => AggregateKind::StDevP,
        AggregateFunction::PercentileCont => AggregateKind::PercentileCont,
        AggregateFunction::PercentileDisc => AggregateKind::PercentileDisc,
    }
}

/// A group's first-seen sequence number and its accumulators.
type GroupState = (u64, Vec<Accumulator>);
type Groups = KeyMap<Vec<GroupKey>, GroupState>;

/// Hash aggregation: per-worker group tables merged at the end. Groups keep
/// the order in which they were first seen on each worker.
pub struct AggregateSink {
    node: Arc<CNode>,
    locals: PerWorker<(Groups, u64)>,
}

impl AggregateSink {
    fn new(node: Arc<CNode>, slots: usize) -> AggregateSink {
        AggregateSink {
            node,
            locals: PerWorker::new(slots, |_| (KeyMap::default(), 0)),
        }
    }

    fn fresh(&self) -> Vec<Accumulator> {
        self.node
            .c
            .aggregates
            .iter()
            .map(|(item, _)| Accumulator::new(kind_of(item.function), item.distinct))
            .collect()
    }
}

/// Feeds row `r` to `acc`: its arguments are read from `columns` where they
/// were computed a column at a time, else evaluated (`args` is scratch).
fn feed(
    acc: &mut Accumulator,
    arg_exprs: &[CExpr],
    columns: &[Option<Vector>],
    eval: &Evaluator<'_>,
    r: &Row<'_>,
    args: &mut Vec<Value>,
) -> Result<()> {
    if arg_exprs.is_empty() {
        acc.update_row();
        return Ok(());
    }
    args.clear();
    for (e, column) in arg_exprs.iter().zip(columns) {
        args.push(vector::value_at(eval, e, column, r)?);
    }
    acc.update_args(args)
}

impl Sink for AggregateSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let eval = Evaluator::new(ctx.q);
        // Keys and arguments computed a column at a time where possible.
        let keys = vector::columns(ctx.q, &self.node.c.exprs, &chunk);
        let arg_columns: Vec<Vec<Option<Vector>>> = self
            .node
            .c
            .aggregates
            .iter()
            .map(|(_, exprs)| vector::columns(ctx.q, exprs, &chunk))
            .collect();
        let mut guard = self.locals.lock(ctx.worker);
        let (groups, seq) = &mut *guard;
        let mut args = Vec::new();
        let before = groups.len();
        if self.node.c.exprs.is_empty() {
            // No grouping keys: one group, found once per chunk.
            if groups.is_empty() {
                *seq += 1;
                groups.insert(Vec::new(), (*seq, self.fresh()));
            }
            let entry = groups
                .get_mut(&Vec::new())
                .expect("the single group exists");
            for ((acc, (_, arg_exprs)), columns) in entry
                .1
                .iter_mut()
                .zip(&self.node.c.aggregates)
                .zip(&arg_columns)
            {
                for row in 0..chunk.len() {
                    let r = Row::new(&chunk, row);
                    feed(acc, arg_exprs, columns, &eval, &r, &mut args)?;
                }
            }
            return Ok(());
        }
        // One key buffer for the chunk: a row allocates only for a new group.
        let mut key: Vec<GroupKey> = Vec::with_capacity(keys.len());
        for row in 0..chunk.len() {
            let r = Row::new(&chunk, row);
            key.clear();
            for (e, column) in self.node.c.exprs.iter().zip(&keys) {
                key.push(GroupKey(vector::value_at(&eval, e, column, &r)?));
            }
            let entry = match groups.get_mut(key.as_slice()) {
                Some(e) => e,
                None => {
                    *seq += 1;
                    groups.entry(key.clone()).or_insert((*seq, self.fresh()))
                }
            };
            for ((acc, (_, arg_exprs)), columns) in entry
                .1
                .iter_mut()
                .zip(&self.node.c.aggregates)
                .zip(&arg_columns)
            {
                feed(acc, arg_exprs, columns, &eval, &r, &mut args)?;
            }
        }
        let added = groups.len() - before;
        drop(guard);
        ctx.q.memory.charge(
            added * (self.node.c.exprs.len() + self.node.c.aggregates.len() + 2) * VALUE_BYTES,
        )?;
        Ok(())
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        let OpKind::Aggregate { keys, aggregates } = &self.node.kind else {
            unreachable!("aggregate sink built for an Aggregate node");
        };
        let mut merged: Vec<(Vec<GroupKey>, GroupState)> = Vec::new();
        let mut index: KeyMap<Vec<GroupKey>, usize> = KeyMap::default();
        for (worker, (groups, _)) in self.locals.take_all().enumerate() {
            let mut groups: Vec<_> = groups.into_iter().collect();
            groups.sort_by_key(|(_, (seq, _))| *seq);
            for (key, (seq, accs)) in groups {
                match index.get(&key) {
                    Some(&i) => {
                        for (mine, theirs) in merged[i].1 .1.iter_mut().zip(accs) {
                            mine.merge(theirs)?;
                        }
                    }
                    None => {
                        index.insert(key.clone(), merged.len());
                        merged.push((key, ((worker as u64) << 48 | seq, accs)));
                    }
                }
            }
        }
        if merged.is_empty() && keys.is_empty() {
            merged.push((Vec::new(), (0, self.fresh())));
        }
        let width = keys
            .iter()
            .map(|(s, _)| *s)
            .chain(aggregates.iter().map(|a| a.slot))
            .max()
            .map_or(0, |m| m + 1);
        let mut out = Vec::new();
        let mut builder = RowBuilder::new(width);
        for (key, (_, accs)) in merged {
            let mut row = vec![Value::Null; width];
            for ((slot, _), k) in keys.iter().zip(key) {
                row[*slot] = k.0;
            }
            for (item, acc) in aggregates.iter().zip(accs) {
                row[item.slot] = acc.finish()?;
            }
            builder.push_row(row);
            if builder.len() == CHUNK_SIZE {
                out.push(std::mem::replace(&mut builder, RowBuilder::new(width)).finish());
            }
        }
        if !builder.is_empty() {
            out.push(builder.finish());
        }
        Ok(out)
    }
}

/// Keeps the first `limit` rows to arrive and stops its pipeline once it has them.
pub struct LimitSink {
    remaining: AtomicU64,
    locals: PerWorker<Vec<(u64, Chunk)>>,
    seq: AtomicU64,
}

impl LimitSink {
    fn new(limit: u64, slots: usize) -> LimitSink {
        LimitSink {
            remaining: AtomicU64::new(limit),
            locals: PerWorker::new(slots, |_| Vec::new()),
            seq: AtomicU64::new(0),
        }
    }
}

impl Sink for LimitSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let n = chunk.len() as u64;
        let mut taken = 0;
        let _ = self
            .remaining
            .fetch_update(AtomicOrdering::AcqRel, AtomicOrdering::Acquire, |r| {
                taken = r.min(n);
                Some(r - taken)
            });
        if self.remaining.load(AtomicOrdering::Acquire) == 0 {
            ctx.stop_pipeline();
        }
        if taken == 0 {
            return Ok(());
        }
        let chunk = if taken == n {
            chunk
        } else {
            chunk.select((0..taken as u32).collect())
        };
        let seq = self.seq.fetch_add(1, AtomicOrdering::Relaxed);
        self.locals.lock(ctx.worker).push((seq, chunk));
        Ok(())
    }

    fn finish(&self, _: &QueryContext) -> Result<Vec<Chunk>> {
        let mut all: Vec<(u64, Chunk)> = self.locals.take_all().flatten().collect();
        all.sort_by_key(|(s, _)| *s);
        Ok(all.into_iter().map(|(_, c)| c).collect())
    }
}
