//! Single-hop expansion over the CSR adjacency: `Expand`, `ExpandInto` and
//! the factorized `ExpandCount`.
//!
//! Expand walks each input row's adjacency slices and emits chunk by chunk;
//! while workers are idle it hands the second half of its remaining input
//! rows to a new task at its own stage, so a single start node fans out.

use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::{directions, CExpr, CNode, Types};
use crate::expr::{Evaluator, Row};
use crate::pipeline::{Operator, TaskCtx};
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_plan::{BinaryOp, ExpandDirection, OpKind, Slot};
use rhizome_storage::{Adjacency, Direction, GraphRead, LabelId, RelTypeId, Snapshot};
use std::sync::Arc;

/// Reads the relationships a row's expansion must not use (single
/// relationships or lists of them) into `out`.
pub(crate) fn excluded_rels(input: &Chunk, row: usize, slots: &[Slot], out: &mut Vec<RelId>) {
    out.clear();
    for &slot in slots {
        let Some(column) = input.column(slot) else {
            continue;
        };
        match column.rel(row) {
            Some(NULL_ID) => {}
            Some(r) => out.push(r),
            None => {
                if let Value::List(items) = column.value(row) {
                    out.extend(items.iter().filter_map(|v| match v {
                        Value::Relationship(r) => Some(*r),
                        _ => None,
                    }));
                }
            }
        }
    }
}

/// True if `node` carries every label (a missing label matches nothing).
#[inline]
pub(crate) fn has_labels(snap: &Snapshot, node: NodeId, labels: &[Option<LabelId>]) -> bool {
    labels
        .iter()
        .all(|l| l.is_some_and(|l| snap.has_label(node, l)))
}

/// The (type, direction) pairs an expansion walks, and whether incoming
/// self-loops must be skipped (undirected expansions see them once).
pub(crate) fn walks(
    snap: &Snapshot,
    types: &Types,
    direction: ExpandDirection,
) -> Vec<(RelTypeId, Direction)> {
    let all = snap.catalog().rel_types.len();
    let mut out = Vec::new();
    for t in types.ids(all) {
        for &d in directions(direction) {
            out.push((t, d));
        }
    }
    out
}

/// For `Both`, an incoming entry that is a self-loop was already seen outgoing.
#[inline]
pub(crate) fn skip_entry(
    direction: ExpandDirection,
    d: Direction,
    from: NodeId,
    neighbour: NodeId,
) -> bool {
    direction == ExpandDirection::Both && d == Direction::Incoming && neighbour == from
}

/// Answers "is relationship `r` in the `d`-list of `node` for type `t`" in
/// constant time from the type's outgoing CSR: an outgoing list is a
/// contiguous id range, an incoming entry's relationship ends at the node.
struct ListMembership<'a> {
    snap: &'a Snapshot,
    rel_type: RelTypeId,
    base: u64,
    count: u64,
    out: Option<rhizome_storage::csr::Csr<'a>>,
}

impl<'a> ListMembership<'a> {
    fn new(snap: &'a Snapshot, t: RelTypeId) -> ListMembership<'a> {
        let (base, count) = snap
            .rel_type_ranges()
            .find(|(id, _, _)| *id == t)
            .map_or((0, 0), |(_, base, count)| (base, count));
        ListMembership {
            snap,
            rel_type: t,
            base,
            count,
            out: snap.csr(t, Direction::Outgoing),
        }
    }

    #[inline]
    fn contains(&self, r: RelId, node: NodeId, d: Direction) -> bool {
        let Some(out) = &self.out else {
            // The type changed since the last checkpoint: ask the snapshot.
            return self.snap.rel_in_list(r, node, self.rel_type, d);
        };
        if r < self.base || r >= self.base + self.count {
            return false;
        }
        let p = (r - self.base) as usize;
        match d {
            Direction::Outgoing => out.positions(node).contains(&p),
            Direction::Incoming => out.all_neighbours().get(p) == Some(&node),
        }
    }
}

/// `(from)-[rel]->(to)` for each input row.
pub struct Expand {
    node: Arc<CNode>,
}

impl Expand {
    /// The operator for an `Expand` node.
    pub fn new(node: Arc<CNode>) -> Expand {
        Expand { node }
    }
}

struct Output {
    rows: Vec<u32>,
    rels: Vec<RelId>,
    nodes: Vec<NodeId>,
}

impl Output {
    fn new() -> Output {
        Output {
            rows: Vec::with_capacity(CHUNK_SIZE),
            rels: Vec::with_capacity(CHUNK_SIZE),
            nodes: Vec::with_capacity(CHUNK_SIZE),
        }
    }

    fn flush(&mut self, input: &Chunk, rel: Slot, to: Slot, ctx: &mut TaskCtx<'_>) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut chunk = input.select(std::mem::replace(
            &mut self.rows,
            Vec::with_capacity(CHUNK_SIZE),
        ));
        chunk.set_column(
            rel,
            Column::new(ColumnData::Rels(std::mem::replace(
                &mut self.rels,
                Vec::with_capacity(CHUNK_SIZE),
            ))),
        );
        chunk.set_column(
            to,
            Column::new(ColumnData::Nodes(std::mem::replace(
                &mut self.nodes,
                Vec::with_capacity(CHUNK_SIZE),
            ))),
        );
        ctx.emit(chunk)
    }
}

/// Hands the second half of `input[next..]` to another worker if that helps;
/// returns the new end of the rows this task keeps.
fn maybe_split(input: &Chunk, next: usize, end: usize, ctx: &mut TaskCtx<'_>) -> Result<usize> {
    if end - next >= 2 && ctx.can_split() {
        let mid = next + (end - next) / 2;
        let rest = input.select((mid as u32..end as u32).collect());
        ctx.spawn(move |ctx| ctx.push_here(rest))?;
        return Ok(mid);
    }
    Ok(end)
}

impl Operator for Expand {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let OpKind::Expand {
            from,
            rel,
            to,
            direction,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("Expand built for an Expand node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let labels = &self.node.c.to_labels;
        let walks = walks(snap, types, *direction);
        let mut out = Output::new();
        let mut excluded = Vec::new();
        let from_column = input.column(*from).cloned();
        let mut end = input.len();
        let mut row = 0;
        while row < end {
            if row % 64 == 0 {
                if ctx.cancelled() {
                    return Ok(());
                }
                end = maybe_split(&input, row + 1, end, ctx)?;
            }
            let source = from_column
                .as_ref()
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut found = false;
            if source != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                for &(t, d) in &walks {
                    let adj = snap.adjacency(source, t, d);
                    for i in 0..adj.len() {
                        let neighbour = adj.neighbours[i];
                        if skip_entry(*direction, d, source, neighbour) {
                            continue;
                        }
                        if !labels.is_empty() && !has_labels(snap, neighbour, labels) {
                            continue;
                        }
                        let r = adj.rel_id(i);
                        if !excluded.is_empty() && excluded.contains(&r) {
                            continue;
                        }
                        found = true;
                        out.rows.push(row as u32);
                        out.rels.push(r);
                        out.nodes.push(neighbour);
                        if out.rows.len() == CHUNK_SIZE {
                            out.flush(&input, *rel, *to, ctx)?;
                        }
                    }
                }
            }
            if *optional && !found {
                out.rows.push(row as u32);
                out.rels.push(NULL_ID);
                out.nodes.push(NULL_ID);
                if out.rows.len() == CHUNK_SIZE {
                    out.flush(&input, *rel, *to, ctx)?;
                }
            }
            row += 1;
        }
        out.flush(&input, *rel, *to, ctx)
    }
}

/// The positions of `target` in a sorted neighbour slice.
#[inline]
fn equal_range(neighbours: &[NodeId], target: NodeId) -> std::ops::Range<usize> {
    let lo = neighbours.partition_point(|&n| n < target);
    let hi = lo + neighbours[lo..].partition_point(|&n| n == target);
    lo..hi
}

/// Relationships between two bound nodes.
pub struct ExpandInto {
    node: Arc<CNode>,
}

impl ExpandInto {
    /// The operator for an `ExpandInto` node.
    pub fn new(node: Arc<CNode>) -> ExpandInto {
        ExpandInto { node }
    }
}

impl Operator for ExpandInto {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let OpKind::ExpandInto {
            from,
            rel,
            to,
            direction,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("ExpandInto built for an ExpandInto node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let walks = walks(snap, types, *direction);
        let mut out = Output::new();
        let mut excluded = Vec::new();
        for row in 0..input.len() {
            let a = input
                .column(*from)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let b = input
                .column(*to)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut found = false;
            if a != NULL_ID && b != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                for &(t, d) in &walks {
                    // Look from whichever end has the shorter list.
                    let (adj, flipped) = if snap.degree(a, t, d) <= snap.degree(b, t, d.reverse()) {
                        (snap.adjacency(a, t, d), false)
                    } else {
                        (snap.adjacency(b, t, d.reverse()), true)
                    };
                    let target = if flipped { a } else { b };
                    for i in equal_range(adj.neighbours, target) {
                        if skip_entry(*direction, d, a, b) {
                            continue;
                        }
                        let r = adj.rel_id(i);
                        if excluded.contains(&r) {
                            continue;
                        }
                        found = true;
                        out.rows.push(row as u32);
                        out.rels.push(r);
                        out.nodes.push(b);
                        if out.rows.len() == CHUNK_SIZE {
                            out.flush(&input, *rel, *to, ctx)?;
                        }
                    }
                }
            }
            if *optional && !found {
                out.rows.push(row as u32);
                out.rels.push(NULL_ID);
                out.nodes.push(b);
            }
        }
        out.flush(&input, *rel, *to, ctx)
    }
}

/// A relationship predicate `rel.key <op> number` evaluated on the property
/// column directly, without building values.
#[derive(Clone, Copy)]
struct NumericRelFilter {
    key: Option<u32>,
    op: BinaryOp,
    value: f64,
}

impl NumericRelFilter {
    fn recognise(rel_slot: Slot, e: &CExpr) -> Option<NumericRelFilter> {
        let CExpr::Binary(op, a, b) = e else {
            return None;
        };
        let number = |e: &CExpr| match e {
            CExpr::Literal(Value::Int(i)) => Some(*i as f64),
            CExpr::Literal(Value::Float(x)) => Some(*x),
            _ => None,
        };
        let property = |e: &CExpr| match e {
            CExpr::Property(base, key) if matches!(**base, CExpr::Slot(s) if s == rel_slot) => {
                Some(key.id)
            }
            _ => None,
        };
        let flip = |op: BinaryOp| match op {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::Le => BinaryOp::Ge,
            BinaryOp::Ge => BinaryOp::Le,
            other => other,
        };
        if !matches!(
            op,
            BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        ) {
            return None;
        }
        match (property(a), number(b), property(b), number(a)) {
            (Some(key), Some(value), _, _) => Some(NumericRelFilter {
                key,
                op: *op,
                value,
            }),
            (_, _, Some(key), Some(value)) => Some(NumericRelFilter {
                key,
                op: flip(*op),
                value,
            }),
            _ => None,
        }
    }

    #[inline]
    fn test(&self, x: f64) -> bool {
        match self.op {
            BinaryOp::Lt => x < self.value,
            BinaryOp::Gt => x > self.value,
            BinaryOp::Le => x <= self.value,
            BinaryOp::Ge => x >= self.value,
            BinaryOp::Eq => x == self.value,
            _ => x != self.value,
        }
    }

    /// Counts matching entries of an adjacency, or `None` if the column is not a plain number column.
    fn count(&self, snap: &Snapshot, t: RelTypeId, adj: &Adjacency<'_>) -> Option<u64> {
        let Some(key) = self.key else { return Some(0) };
        let Some(column) = snap.rel_column(t, key) else {
            // No base column: no such key (nothing passes), or the type
            // changed since the last checkpoint (count entry by entry).
            return (!snap.rel_type_changed(t)).then_some(0);
        };
        if let Some(values) = column.dense_f64() {
            return Some(match adj.contiguous_rows() {
                Some(rows) => values[rows].iter().filter(|&&x| self.test(x)).count() as u64,
                None => (0..adj.len())
                    .filter(|&i| self.test(values[adj.property_row(i) as usize]))
                    .count() as u64,
            });
        }
        if let Some(values) = column.dense_i64() {
            return Some(match adj.contiguous_rows() {
                Some(rows) => values[rows]
                    .iter()
                    .filter(|&&x| self.test(x as f64))
                    .count() as u64,
                None => (0..adj.len())
                    .filter(|&i| self.test(values[adj.property_row(i) as usize] as f64))
                    .count() as u64,
            });
        }
        None
    }
}

/// One walk step of an `ExpandCount`: a hop's (type, direction) pairs,
/// labels, relationship predicate, and the list-membership helpers.
struct Step<'a> {
    walks: Vec<(RelTypeId, Direction)>,
    members: Vec<ListMembership<'a>>,
    direction: ExpandDirection,
    labels: &'a [Option<LabelId>],
    predicate: Option<(Slot, &'a CExpr)>,
    numeric: Option<NumericRelFilter>,
    /// Per walk: the numeric filter's property column as plain floats, if it is one.
    floats: Vec<Option<&'a [f64]>>,
    /// Per walk, when its type changed since the last checkpoint: the
    /// filter's property as floats over base + delta.
    delta_floats: Vec<Option<rhizome_storage::RelFloats<'a>>>,
}

impl<'a> Step<'a> {
    fn new(
        snap: &'a Snapshot,
        types: &Types,
        direction: ExpandDirection,
        labels: &'a [Option<LabelId>],
        predicate: Option<(Slot, &'a CExpr)>,
    ) -> Step<'a> {
        let walks = walks(snap, types, direction);
        let numeric = predicate.and_then(|(slot, e)| NumericRelFilter::recognise(slot, e));
        let floats = walks
            .iter()
            .map(|&(t, _)| {
                let key = numeric.as_ref()?.key?;
                snap.rel_column(t, key)?.dense_f64()
            })
            .collect();
        let delta_floats = walks
            .iter()
            .map(|&(t, _)| snap.rel_floats(t, numeric.as_ref()?.key?))
            .collect();
        Step {
            delta_floats,
            members: walks
                .iter()
                .map(|&(t, _)| ListMembership::new(snap, t))
                .collect(),
            walks,
            direction,
            labels,
            numeric,
            floats,
            predicate,
        }
    }

    /// The value a numeric filter tests for relationship `r`, row `row` of
    /// the type of walk `w`.
    #[inline]
    fn numeric_value(&self, w: usize, snap: &Snapshot, r: RelId, row: u64) -> Option<f64> {
        let f = self.numeric.as_ref()?;
        if let Some(values) = self.floats[w] {
            return values.get(row as usize).copied();
        }
        if let Some(values) = &self.delta_floats[w] {
            return values.get(r, row);
        }
        match snap.rel_property(r, f.key?) {
            Value::Float(x) => Some(x),
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    /// Whether relationship `r` (property row `prow` of type `t`) passes the predicate.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn passes(
        &self,
        eval: &Evaluator<'_>,
        input: &Chunk,
        row: usize,
        snap: &Snapshot,
        w: usize,
        r: RelId,
        prow: u64,
    ) -> Result<bool> {
        let Some((slot, e)) = self.predicate else {
            return Ok(true);
        };
        if let Some(f) = &self.numeric {
            return Ok(self
                .numeric_value(w, snap, r, prow)
                .is_some_and(|x| f.test(x)));
        }
        let locals = [(slot, Value::Relationship(r))];
        eval.predicate(
            e,
            &Row {
                chunk: input,
                row,
                locals: &locals,
            },
        )
    }
}

/// Counts what an `Expand` of the last hop would have produced, after
/// walking the hops of its prefix without producing rows.
pub struct ExpandCount {
    node: Arc<CNode>,
}

impl ExpandCount {
    /// The operator for an `ExpandCount` node.
    pub fn new(node: Arc<CNode>) -> ExpandCount {
        ExpandCount { node }
    }
}

/// A hop that is one relationship type's base CSR in one direction, with no
/// label test and at most a numeric filter on a float property column: the
/// counted walk reads it as plain arrays.
struct PlainHop<'a> {
    /// First relationship id of the type: the relationship at outgoing
    /// position `p` is `base + p`, and `p` is its property row.
    base: u64,
    csr: rhizome_storage::csr::Csr<'a>,
    filter: Option<(NumericRelFilter, &'a [f64])>,
}

impl<'a> PlainHop<'a> {
    /// The step as a plain hop, if it is one (the type unchanged since the
    /// checkpoint, so the base CSR is authoritative).
    fn of(snap: &'a Snapshot, step: &Step<'a>) -> Option<PlainHop<'a>> {
        let [(t, d)] = step.walks.as_slice() else {
            return None;
        };
        if !step.labels.is_empty() || step.direction == ExpandDirection::Both {
            return None;
        }
        let filter = match (step.predicate, step.numeric) {
            (None, _) => None,
            (Some(_), Some(f)) => Some((f, step.floats[0]?)),
            (Some(_), None) => return None,
        };
        Some(PlainHop {
            base: step.members[0].base,
            csr: snap.csr(*t, *d)?,
            filter,
        })
    }

    /// Whether relationship `r` lies in outgoing positions `lo..hi` (as ids)
    /// and passes the filter.
    #[inline(always)]
    fn counts(&self, r: RelId, lo: u64, hi: u64) -> bool {
        r >= lo
            && r < hi
            && self
                .filter
                .is_none_or(|(f, w)| f.test(w[(r - self.base) as usize]))
    }

    /// The counted (outgoing) hop from `source`: the degree is the width of
    /// the node's offset range (or the passing entries of the property column
    /// slice beside it), less the excluded relationships and `extra` that lie
    /// in that range and pass.
    #[inline(always)]
    fn count_from(&self, source: NodeId, excluded: &[RelId], extra: RelId) -> u64 {
        let range = self.csr.positions(source);
        let (lo, hi) = (self.base + range.start as u64, self.base + range.end as u64);
        let mut count = match self.filter {
            None => hi - lo,
            Some((f, w)) => w[range].iter().filter(|&&x| f.test(x)).count() as u64,
        };
        for &r in excluded {
            count -= self.counts(r, lo, hi) as u64;
        }
        count - self.counts(extra, lo, hi) as u64
    }

    /// The walked hop from `node` followed by the counted hop `last`: the sum
    /// over the passing relationships `r` not in `path` of `last` counted
    /// from `r`'s other end, without `path` and `r`.
    fn walk_then_count(&self, last: &PlainHop<'_>, node: NodeId, path: &[RelId]) -> u64 {
        let range = self.csr.positions(node);
        let neighbours = &self.csr.all_neighbours()[range.clone()];
        match self.csr.perm() {
            None => neighbours
                .iter()
                .zip(range)
                .map(|(&other, pos)| self.visit(last, pos, other, path))
                .sum(),
            Some(perm) => neighbours
                .iter()
                .zip(&perm[range])
                .map(|(&other, &pos)| self.visit(last, pos as usize, other, path))
                .sum(),
        }
    }

    /// One entry of [`PlainHop::walk_then_count`]: the relationship at
    /// outgoing position `pos`, leading to `other`.
    #[inline(always)]
    fn visit(&self, last: &PlainHop<'_>, pos: usize, other: NodeId, path: &[RelId]) -> u64 {
        if let Some((f, w)) = self.filter {
            if !f.test(w[pos]) {
                return 0;
            }
        }
        let r = self.base + pos as u64;
        if path.contains(&r) {
            return 0;
        }
        last.count_from(other, path, r)
    }
}

struct CountCtx<'a, 'q> {
    snap: &'a Snapshot,
    eval: Evaluator<'q>,
    input: &'a Chunk,
    row: usize,
    prefix: Vec<Step<'a>>,
    last: Step<'a>,
    /// The counted hop as a plain outgoing CSR, if it is one.
    last_csr: Option<PlainHop<'a>>,
    /// The last walked hop as a plain CSR, if it is one and so is the counted hop.
    walked_csr: Option<PlainHop<'a>>,
}

impl<'a> CountCtx<'a, '_> {
    /// Matches of the counted hop from `source`, none of them in `excluded`.
    fn count_last(&self, source: NodeId, excluded: &[RelId]) -> Result<u64> {
        if let Some(last) = &self.last_csr {
            return Ok(match excluded.split_last() {
                Some((&extra, rest)) => last.count_from(source, rest, extra),
                None => last.count_from(source, &[], RelId::MAX),
            });
        }
        let step = &self.last;
        let snap = self.snap;
        let mut count = 0u64;
        for (w, &(t, d)) in step.walks.iter().enumerate() {
            let adj = snap.adjacency(source, t, d);
            let plain_list = step.labels.is_empty() && step.direction != ExpandDirection::Both;
            if plain_list && step.predicate.is_none() {
                // Degree minus the excluded relationships that lie in this list.
                count += adj.len() as u64;
                for &r in excluded {
                    if step.members[w].contains(r, source, d) {
                        count -= 1;
                    }
                }
                continue;
            }
            if let (true, Some(f)) = (plain_list, &step.numeric) {
                let fast = step.floats[w].map(|values| match adj.contiguous_rows() {
                    Some(rows) => values[rows].iter().filter(|&&x| f.test(x)).count() as u64,
                    None => (0..adj.len())
                        .filter(|&i| f.test(values[adj.property_row(i) as usize]))
                        .count() as u64,
                });
                if let Some(n) = fast.or_else(|| f.count(snap, t, &adj)) {
                    count += n;
                    for &r in excluded {
                        if step.members[w].contains(r, source, d) {
                            let row = r - step.members[w].base;
                            if step
                                .numeric_value(w, snap, r, row)
                                .is_some_and(|x| f.test(x))
                            {
                                count -= 1;
                            }
                        }
                    }
                    continue;
                }
            }
            for i in 0..adj.len() {
                let neighbour = adj.neighbours[i];
                if skip_entry(step.direction, d, source, neighbour) {
                    continue;
                }
                if !step.labels.is_empty() && !has_labels(snap, neighbour, step.labels) {
                    continue;
                }
                let r = adj.rel_id(i);
                if excluded.contains(&r) {
                    continue;
                }
                if step.passes(
                    &self.eval,
                    self.input,
                    self.row,
                    snap,
                    w,
                    r,
                    adj.property_row(i),
                )? {
                    count += 1;
                }
            }
        }
        Ok(count)
    }

    /// Walks prefix hops `level..` from `node`; `path` holds the excluded
    /// relationships plus those of the walk so far.
    fn walk(&self, level: usize, node: NodeId, path: &mut Vec<RelId>) -> Result<u64> {
        if level == self.prefix.len() {
            return self.count_last(node, path);
        }
        let step = &self.prefix[level];
        let snap = self.snap;
        let mut total = 0u64;
        // Last walked hop feeding a plain counted list: count it inline (as
        // two array loops when the walked hop is a plain CSR too).
        let inline_last = self
            .last_csr
            .as_ref()
            .filter(|_| level + 1 == self.prefix.len());
        if let (Some(walked), Some(last)) = (&self.walked_csr, inline_last) {
            return Ok(walked.walk_then_count(last, node, path));
        }
        for (w, &(t, d)) in step.walks.iter().enumerate() {
            let adj = snap.adjacency(node, t, d);
            for i in 0..adj.len() {
                let neighbour = adj.neighbours[i];
                if skip_entry(step.direction, d, node, neighbour) {
                    continue;
                }
                if !step.labels.is_empty() && !has_labels(snap, neighbour, step.labels) {
                    continue;
                }
                let r = adj.rel_id(i);
                if path.contains(&r) {
                    continue;
                }
                if !step.passes(
                    &self.eval,
                    self.input,
                    self.row,
                    snap,
                    w,
                    r,
                    adj.property_row(i),
                )? {
                    continue;
                }
                total += match inline_last {
                    Some(last) => last.count_from(neighbour, path, r),
                    None => {
                        path.push(r);
                        let n = self.walk(level + 1, neighbour, path);
                        path.pop();
                        n?
                    }
                };
            }
        }
        Ok(total)
    }
}

impl Operator for ExpandCount {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
        let OpKind::ExpandCount {
            from,
            prefix,
            direction,
            distinct_from,
            count_slot,
            rel_predicate,
            ..
        } = &self.node.kind
        else {
            unreachable!("ExpandCount built for an ExpandCount node");
        };
        let snap = &ctx.q.snapshot;
        let c = &self.node.c;
        if prefix.len() != c.hops.len() {
            return Err(rhizome_common::Error::internal(
                "ExpandCount prefix was not compiled",
            ));
        }
        let types = c.types.as_ref().expect("compiled types");
        let hop_steps: Vec<Step<'_>> = prefix
            .iter()
            .zip(&c.hops)
            .map(|(hop, ch)| {
                Step::new(
                    snap,
                    &ch.types,
                    hop.direction,
                    &ch.to_labels,
                    hop.rel_predicate
                        .as_ref()
                        .map(|(s, _)| *s)
                        .zip(ch.predicate.as_ref()),
                )
            })
            .collect();
        let last = Step::new(
            snap,
            types,
            *direction,
            &c.to_labels,
            rel_predicate.as_ref().map(|(s, _)| *s).zip(c.exprs.first()),
        );
        let last_csr = PlainHop::of(snap, &last).filter(|_| {
            last.walks
                .first()
                .is_some_and(|w| w.1 == Direction::Outgoing)
        });
        let walked_csr = last_csr
            .as_ref()
            .and_then(|_| PlainHop::of(snap, hop_steps.last()?));
        let mut cc = CountCtx {
            snap,
            eval: Evaluator::new(ctx.q),
            input: &input,
            row: 0,
            prefix: hop_steps,
            last,
            last_csr,
            walked_csr,
        };
        let heavy = !prefix.is_empty();
        let mut counts: Vec<Value> = Vec::with_capacity(input.len());
        let mut excluded = Vec::new();
        let from_column = input.column(*from).cloned();
        let mut end = input.len();
        let mut row = 0;
        while row < end {
            if heavy || row % 256 == 0 {
                if ctx.cancelled() {
                    return Ok(());
                }
                end = maybe_split(&input, row + 1, end, ctx)?;
            }
            let source = from_column
                .as_ref()
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut count = 0u64;
            if source != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                cc.row = row;
                count = cc.walk(0, source, &mut excluded)?;
            }
            counts.push(Value::Int(count as i64));
            row += 1;
        }
        let mut chunk = if end == input.len() {
            input
        } else {
            input.select((0..end as u32).collect())
        };
        chunk.set_column(*count_slot, Column::new(ColumnData::Values(counts)));
        ctx.emit(chunk)
    }
}
