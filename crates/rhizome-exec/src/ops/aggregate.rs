//! `AggregateSink`: hash aggregation with per-worker group tables.

use crate::chunk::{Chunk, RowBuilder, CHUNK_SIZE};
use crate::compile::{CExpr, CNode};
use crate::context::{QueryContext, VALUE_BYTES};
use crate::expr::{Evaluator, Row};
use crate::operator::{OperatorResult, Sink, TaskCtx, NEED_MORE};
use crate::per_worker::PerWorker;
use crate::vector::{self, Vector};
use rhizome_common::{Result, Value};
use rhizome_functions::aggregate::Accumulator;
use rhizome_functions::ops::{GroupKey, KeyMap};
use rhizome_plan::OpKind;
use std::sync::Arc;

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
    /// The sink of an `Aggregate` node, for `slots` workers.
    pub fn new(node: Arc<CNode>, slots: usize) -> AggregateSink {
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
            .map(|(item, _)| Accumulator::new(item.function, item.distinct))
            .collect()
    }
}

/// Feeds row `r` to `acc`: its arguments are read from `columns` where they
/// were computed a column at a time, else evaluated (`args` is scratch).
/// Adds to `held` the values `acc` keeps more (collect, percentiles, DISTINCT).
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
    args.clear();
    for (e, column) in arg_exprs.iter().zip(columns) {
        args.push(vector::value_at(eval, e, column, r)?);
    }
    let before = acc.held();
    acc.update_args(args)?;
    *held += acc.held() - before;
    Ok(())
}

impl Sink for AggregateSink {
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
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
        let mut held = 0;
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
                    feed(acc, arg_exprs, columns, &eval, &r, (&mut args, &mut held))?;
                }
            }
            drop(guard);
            ctx.q.memory.charge(held * VALUE_BYTES)?;
            return NEED_MORE;
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
                feed(acc, arg_exprs, columns, &eval, &r, (&mut args, &mut held))?;
            }
        }
        let added = groups.len() - before;
        drop(guard);
        ctx.q.memory.charge(
            (added * (self.node.c.exprs.len() + self.node.c.aggregates.len() + 2) + held)
                * VALUE_BYTES,
        )?;
        NEED_MORE
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
