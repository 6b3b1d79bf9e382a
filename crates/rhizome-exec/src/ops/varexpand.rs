//! Variable-length expansion: every path of `min..=max` relationships from
//! a node, no relationship twice in one path (Cypher's relationship
//! uniqueness), depth first with an explicit stack (no recursion, so deep
//! paths cannot overflow the stack). A per-hop node predicate
//! ([`rhizome_plan::PathNodePredicate`]) ends a branch at the first node
//! that fails it. With a loop scope ([`rhizome_plan::LoopScope`], policy
//! not `off`) up to MAX_SI input rows are expanded at once and their
//! pending prefixes are taken in the policy's order
//! ([`super::loop_scope::Frontier`]).

use super::adjacency::{
    excluded_rels, has_labels, prefetch_reachable, prefetch_walks, rel_list, skip_entry, walks,
};
use super::end_pruning::EndPruning;
use super::loop_scope::{Frontier, Item};
use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::{CExpr, CNode};
use crate::context::Profile;
use crate::expr::{Evaluator, Row, SuspendedRow, Suspension};
use crate::operator::{
    next_batch, return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE,
};
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_plan::usage::expr_reads;
use rhizome_plan::{ExpandDirection, LoopScope, OpKind, PruneEnds, ScopePolicy, Slot};
use rhizome_storage::{Direction, GraphRead, LabelId, RelTypeId, Snapshot};
use std::sync::{Arc, Mutex};

/// True if a walk may end at `node`: it is the expansion's known end
/// `target` when the expansion goes `into` one, and carries the end labels.
#[inline]
fn may_end_at(
    snap: &Snapshot,
    labels: &[Option<LabelId>],
    into: bool,
    node: NodeId,
    target: NodeId,
) -> bool {
    !(into && node != target) && (labels.is_empty() || has_labels(snap, node, labels))
}

/// `(from)-[rels*min..max]->(to)`.
pub struct VarExpand {
    node: Arc<CNode>,
    /// A scope that prunes ends: what this run of it knows, made by the
    /// first chunk and shared by every task of the run.
    ends: Mutex<Option<Option<Arc<EndPruning>>>>,
}

impl VarExpand {
    /// The operator for a `VarExpand` node.
    pub fn new(node: Arc<CNode>) -> VarExpand {
        VarExpand {
            node,
            ends: Mutex::new(None),
        }
    }

    /// The run's [`EndPruning`] if the scope prunes ends (none over a
    /// graph source, whose node ids are keys too sparse for a bitset).
    fn end_pruning(&self, scope: LoopScope, ctx: &TaskCtx<'_>) -> Result<Option<Arc<EndPruning>>> {
        if scope.prune_ends != PruneEnds::Shared {
            return Ok(None);
        }
        let mut made = self.ends.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ends) = made.as_ref() {
            return Ok(ends.clone());
        }
        let ends = if ctx.q.snapshot.external().is_some() {
            None
        } else {
            Some(self.new_sets(ctx)?)
        };
        *made = Some(ends.clone());
        Ok(ends)
    }

    /// Empty produced and saturated sets for this expansion over the
    /// query's graph ([`EndPruning::new`]).
    fn new_sets(&self, ctx: &TaskCtx<'_>) -> Result<Arc<EndPruning>> {
        let OpKind::VarExpand { max, .. } = &self.node.kind else {
            unreachable!("VarExpand built for a VarExpand node");
        };
        let bound = ctx.q.snapshot.node_bound();
        Ok(Arc::new(EndPruning::new(bound, *max, &ctx.q.memory)?))
    }
}

struct Frame {
    node: NodeId,
    /// Candidate (relationship, next node) pairs not yet tried.
    next: Vec<(RelId, NodeId)>,
}

impl Operator for VarExpand {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::VarExpand {
            from,
            rels,
            to,
            direction,
            min,
            max,
            rel_predicate,
            node_predicate,
            into,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("VarExpand built for a VarExpand node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let labels = &self.node.c.to_labels;
        let walks = walks(snap, types, *direction);
        let max = max.unwrap_or(u64::MAX);
        if rel_predicate.is_none() && node_predicate.is_none() {
            // Over a source: every level of the walks of the whole chunk
            // in one round trip per (type, direction).
            let starts = input.column(*from).map_or_else(Vec::new, |c| {
                (0..input.len()).filter_map(|i| c.node(i)).collect()
            });
            prefetch_reachable(snap, starts, &walks, max);
        } else {
            // A predicate may cut the walk short: only the start nodes'
            // lists come together, deeper ones as the walk reads them.
            prefetch_walks(snap, input.column(*from), input.len(), &walks);
        }
        ctx.restart_quantum();
        if let OpKind::VarExpand { scope, .. } = &self.node.kind {
            if scope.policy != ScopePolicy::Off {
                return self.execute_scoped(&input, ctx, &walks, *scope);
            }
        }
        let eval = Evaluator::new(ctx.q);
        // The per-hop node predicate: its slot, first hop, compiled form
        // (after the relationship predicate's).
        let node_test = node_predicate.as_ref().map(|np| {
            let e = &self.node.c.exprs[usize::from(rel_predicate.is_some())];
            (np.var, np.from_hop, e)
        });
        let mut excluded = Vec::new();
        let (mut out_rows, mut out_rels, mut out_nodes): (Vec<u32>, Vec<Value>, Vec<NodeId>) =
            (Vec::new(), Vec::new(), Vec::new());
        let flush = |rows: &mut Vec<u32>,
                     rs: &mut Vec<Value>,
                     ns: &mut Vec<NodeId>,
                     ctx: &mut TaskCtx<'_>|
         -> Result<OperatorResult> {
            if rows.is_empty() {
                return NEED_MORE;
            }
            let mut chunk = input.select(std::mem::take(rows));
            chunk.set_column(*rels, Column::new(ColumnData::Values(std::mem::take(rs))));
            chunk.set_column(*to, Column::new(ColumnData::Nodes(std::mem::take(ns))));
            ctx.emit(chunk)
        };
        // Steps of the walk, for its yield points.
        let mut steps = 0u32;
        for row in 0..input.len() {
            if ctx.cancelled() {
                return NEED_MORE;
            }
            let start = input
                .column(*from)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let target = if *into {
                input
                    .column(*to)
                    .and_then(|c| c.node(row))
                    .unwrap_or(NULL_ID)
            } else {
                NULL_ID
            };
            let mut found = false;
            if start != NULL_ID && !(*into && target == NULL_ID) {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                let candidates = |node: NodeId, path: &[RelId]| -> Result<Vec<(RelId, NodeId)>> {
                    let mut next = Vec::new();
                    for &(t, d) in &walks {
                        let adj = snap.adjacency(node, t, d);
                        for i in 0..adj.len() {
                            let neighbour = adj.neighbour(i);
                            if skip_entry(*direction, d, node, neighbour) {
                                continue;
                            }
                            let r = adj.rel_id(i);
                            if path.contains(&r) || excluded.contains(&r) {
                                continue;
                            }
                            if let Some((slot, _)) = rel_predicate {
                                let locals = [(*slot, Value::Relationship(r))];
                                let inner = Row {
                                    chunk: &input,
                                    row,
                                    locals: &locals,
                                };
                                if !eval.predicate(&self.node.c.exprs[0], &inner)? {
                                    continue;
                                }
                            }
                            next.push((r, neighbour));
                        }
                    }
                    // Visit in adjacency order: the stack pops from the end.
                    next.reverse();
                    Ok(next)
                };
                // False if the node reached after `depth` hops fails the
                // per-hop node predicate (and so ends its branch).
                let node_passes = |node: NodeId, depth: usize| -> Result<bool> {
                    match node_test {
                        Some((var, from_hop, e)) if depth as u64 >= from_hop => {
                            let locals = [(var, Value::Node(node))];
                            let inner = Row {
                                chunk: &input,
                                row,
                                locals: &locals,
                            };
                            eval.predicate(e, &inner)
                        }
                        _ => Ok(true),
                    }
                };
                let start_passes = node_passes(start, 0)?;
                let mut path: Vec<RelId> = Vec::new();
                let mut stack: Vec<Frame> = vec![Frame {
                    node: start,
                    next: if max > 0 && start_passes {
                        candidates(start, &path)?
                    } else {
                        Vec::new()
                    },
                }];
                let accept = |node: NodeId, path: &[RelId]| -> bool {
                    (path.len() as u64) >= *min && may_end_at(snap, labels, *into, node, target)
                };
                if start_passes && accept(start, &path) {
                    found = true;
                    out_rows.push(row as u32);
                    out_rels.push(rel_list(&path));
                    out_nodes.push(start);
                }
                while let Some(frame) = stack.last_mut() {
                    steps = steps.wrapping_add(1);
                    if steps.is_multiple_of(4096) {
                        ctx.yield_point();
                    }
                    match frame.next.pop() {
                        Some((r, n)) => {
                            path.push(r);
                            if !node_passes(n, path.len())? {
                                path.pop();
                                continue;
                            }
                            if accept(n, &path) {
                                found = true;
                                out_rows.push(row as u32);
                                out_rels.push(rel_list(&path));
                                out_nodes.push(n);
                            }
                            let next = if (path.len() as u64) < max {
                                candidates(n, &path)?
                            } else {
                                Vec::new()
                            };
                            stack.push(Frame { node: n, next });
                        }
                        None => {
                            let _ = frame.node;
                            stack.pop();
                            path.pop();
                        }
                    }
                    if out_rows.len() >= CHUNK_SIZE {
                        if ctx.cancelled() {
                            return NEED_MORE;
                        }
                        return_if_finished!(flush(
                            &mut out_rows,
                            &mut out_rels,
                            &mut out_nodes,
                            ctx
                        ));
                    }
                }
            }
            if *optional && !found {
                out_rows.push(row as u32);
                out_rels.push(Value::Null);
                out_nodes.push(if *into { target } else { NULL_ID });
            }
        }
        flush(&mut out_rows, &mut out_rels, &mut out_nodes, ctx)
    }
}

/// One active instance of the loop scope: an input row being expanded.
struct Instance {
    row: usize,
    target: NodeId,
    found: bool,
    excluded: Vec<RelId>,
    /// Prefixes of the row taken so far (for [`PruneEnds::PerRow`]).
    taken: u32,
    /// The row's own produced ends and saturated nodes
    /// ([`PruneEnds::PerRow`], once the row has taken [`PER_ROW_AFTER`]
    /// prefixes).
    ends: Option<Arc<EndPruning>>,
}

/// Prefixes a row takes before a [`PruneEnds::PerRow`] scope gives it
/// sets of its own: a short walk is cheaper without them.
const PER_ROW_AFTER: u32 = 256;

/// Rows of one walk that hold per-row sets at once (the others walk
/// unpruned): each set is a bit per node of the graph.
const PER_ROW_SETS: usize = 4;

/// A loop scope's walk over one input chunk, as data: what a walk paused
/// at a quantum's end hands to the task that resumes it.
struct ScopedWalk {
    input: Chunk,
    walks: Vec<(RelTypeId, Direction)>,
    scope: LoopScope,
    frontier: Frontier,
    active: Vec<Option<Instance>>,
    spare: Vec<Vec<RelId>>,
    next_row: usize,
    out_rows: Vec<u32>,
    out_rels: Vec<Value>,
    out_nodes: Vec<NodeId>,
    taken: u32,
    started: u64,
    finished: u64,
    expanded: u64,
    /// Rows that make the next batch.
    batch: usize,
    /// PROFILE counters and the operator's id, if profiling.
    profile: Option<(Arc<Profile>, usize)>,
    /// The walk ran to its end (else it was stopped).
    completed: bool,
    /// The prefix whose per-hop predicate paused at an expression
    /// subquery (its index, the prefix, the row's evaluation state): the
    /// walk takes it again first when it resumes.
    resume: Option<(u32, Item, SuspendedRow)>,
    /// The scope prunes ends across rows ([`PruneEnds::Shared`]): the ends
    /// produced and the saturated nodes.
    ends: Option<Arc<EndPruning>>,
    /// Saturation may count the per-hop predicate (it reads only the node).
    judge_by_test: bool,
    /// Prefixes not expanded because they were saturated.
    pruned: u64,
}

impl Drop for ScopedWalk {
    /// Counts the walk in PROFILE once it ends, run to its end or stopped
    /// (its consumer finished, the query or its pipeline cancelled, or a
    /// paused walk's task dropped): then its active instances were
    /// cancelled and its pending prefixes dropped.
    fn drop(&mut self) {
        let Some((profile, id)) = &self.profile else {
            return;
        };
        let Some(stats) = profile.operators.get(*id) else {
            return;
        };
        let (cancelled, dropped) = if self.completed {
            (0, 0)
        } else {
            (self.started - self.finished, self.frontier.pending() as u64)
        };
        stats.scope.add(
            self.started,
            self.finished,
            cancelled,
            self.expanded,
            dropped,
        );
        stats.scope.add_pruned(self.pruned);
    }
}

/// True if a scoped walk tests and emits the prefixes one hop below
/// `depth` as it makes them instead of queueing them: they are at the last
/// depth `max` (so they are never expanded), no per-hop predicate tests
/// them (`test_from`: the first hop it tests), and taking them at once
/// keeps the policy's order of results: depth first takes the newest
/// prefixes first anyway, and FIFO and BFS emit every result at that one
/// depth (`min == max`) in the order its prefixes are made.
fn leaves_inline(
    policy: ScopePolicy,
    depth: u64,
    min: u64,
    max: u64,
    test_from: Option<u64>,
) -> bool {
    depth + 1 == max
        && test_from.is_none_or(|from| depth + 1 < from)
        && (policy == ScopePolicy::Dfs || min == max)
}

/// Saturation judged for a walk's prefixes ([`EndPruning::judge`]).
struct Judge<'a> {
    snap: &'a Snapshot,
    walks: Vec<(RelTypeId, Direction)>,
    direction: ExpandDirection,
    labels: &'a [Option<LabelId>],
    min: u64,
    max: u64,
    /// The per-hop predicate (slot, first hop, compiled), if it reads only
    /// the node.
    test: Option<(Slot, u64, &'a CExpr)>,
    /// A memo-only evaluator: an unanswered subquery counts as passing.
    eval: &'a Evaluator<'a>,
}

impl Judge<'_> {
    /// Records `node`, reached at `depth`, as saturated if every end a
    /// prefix there can reach is produced now; true if it is saturated.
    /// `input` and `row` only give the predicate a row (it reads only the
    /// node).
    fn saturate_if_done(
        &self,
        ends: &EndPruning,
        node: NodeId,
        depth: u64,
        input: &Chunk,
        row: usize,
    ) -> bool {
        if depth >= self.max || !ends.tracks(self.max - depth) {
            return false;
        }
        let left = self.max - depth;
        if ends.saturated(left, node) {
            return true;
        }
        let on_path = |c: NodeId| match self.test {
            Some((var, from_hop, test)) if depth + 1 >= from_hop => {
                let locals = [(var, Value::Node(c))];
                let row = Row {
                    chunk: input,
                    row,
                    locals: &locals,
                };
                let passes = self.eval.predicate(test, &row);
                self.eval.missed_subquery();
                // Unknown (not memoised, or an error the walk itself will
                // meet): it may be on a path.
                passes.unwrap_or(true)
            }
            _ => true,
        };
        let (snap, direction) = (self.snap, self.direction);
        let children = self.walks.iter().flat_map(|&(t, d)| {
            let adj = snap.adjacency(node, t, d);
            (0..adj.len())
                .map(move |k| adj.neighbour(k))
                .filter(move |&c| !skip_entry(direction, d, node, c))
        });
        let may_end = |c: NodeId| may_end_at(snap, self.labels, false, c, NULL_ID);
        let done = ends.judge(depth, self.min, self.max, children, on_path, may_end);
        if done {
            ends.saturate(left, node);
        }
        done
    }
}

impl VarExpand {
    /// Counts a prefix taken for the row in `slot` of a
    /// [`PruneEnds::PerRow`] scope and gives the row sets of its own once
    /// it has taken [`PER_ROW_AFTER`], while fewer than [`PER_ROW_SETS`]
    /// rows of the walk hold some. Ends the row produced before go
    /// unrecorded: they may come out again, which the `DISTINCT` drops.
    fn give_row_sets(&self, w: &mut ScopedWalk, slot: usize, ctx: &TaskCtx<'_>) -> Result<()> {
        let Some(inst) = w.active[slot].as_mut() else {
            return Ok(());
        };
        inst.taken = inst.taken.saturating_add(1);
        if inst.taken != PER_ROW_AFTER || inst.ends.is_some() {
            return Ok(());
        }
        let holding = w
            .active
            .iter()
            .filter(|i| i.as_ref().is_some_and(|i| i.ends.is_some()))
            .count();
        if let (Some(inst), true) = (w.active[slot].as_mut(), holding < PER_ROW_SETS) {
            inst.ends = Some(self.new_sets(ctx)?);
        }
        Ok(())
    }
}

/// Items a scoped walk takes between two looks at the clock (a pause
/// between two quanta, [`TaskCtx::quantum_spent`]).
const PAUSE_CHECK: u32 = 64;

impl VarExpand {
    /// The loop scope: up to `MAX_SI` input rows expanded at once, their
    /// pending path prefixes taken in the scope's policy's order
    /// ([`Frontier`]). Emits the same paths as the plain walk, in another
    /// order.
    fn execute_scoped(
        &self,
        input: &Chunk,
        ctx: &mut TaskCtx<'_>,
        walks: &[(RelTypeId, Direction)],
        scope: LoopScope,
    ) -> Result<OperatorResult> {
        let slots = scope.max_si.max(1) as usize;
        let judge_by_test = match &self.node.kind {
            OpKind::VarExpand {
                node_predicate: Some(np),
                ..
            } => expr_reads(&np.predicate).iter().all(|s| *s == np.var),
            _ => true,
        };
        let walk = ScopedWalk {
            input: input.clone(),
            walks: walks.to_vec(),
            scope,
            frontier: Frontier::new(scope.policy, slots),
            active: (0..slots).map(|_| None).collect(),
            spare: Vec::new(),
            next_row: 0,
            out_rows: Vec::new(),
            out_rels: Vec::new(),
            out_nodes: Vec::new(),
            taken: 0,
            started: 0,
            finished: 0,
            expanded: 0,
            // The first rows go out at once and the batches grow to a
            // chunk: a consumer that stops early (an EXISTS, a LIMIT) sees
            // its first rows before a whole chunk of paths is walked.
            batch: 1,
            profile: ctx.q.profile.clone().map(|p| (p, self.node.id)),
            completed: false,
            resume: None,
            ends: self.end_pruning(scope, ctx)?,
            judge_by_test,
            pruned: 0,
        };
        self.walk_scoped(walk, ctx)
    }

    /// Runs (or resumes) a scoped walk. Once the task's quantum is spent
    /// ([`TaskCtx::quantum_spent`]: on the pool, or a step of a branch
    /// scope's instance while others wait) the walk hands its state to a
    /// new task at this stage and returns, so the worker (or the branch
    /// scope) chooses again; the new task goes on where it stopped.
    fn walk_scoped(&self, mut w: ScopedWalk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::VarExpand {
            from,
            rels,
            to,
            direction,
            min,
            max,
            rel_predicate,
            node_predicate,
            into,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("VarExpand built for a VarExpand node");
        };
        let snap = &ctx.q.snapshot;
        let labels = &self.node.c.to_labels;
        let max = max.unwrap_or(u64::MAX);
        let eval = Evaluator::new(ctx.q);
        let memo_eval = Evaluator::memo_only(ctx.q);
        let node_test = node_predicate.as_ref().map(|np| {
            let e = &self.node.c.exprs[usize::from(rel_predicate.is_some())];
            (np.var, np.from_hop, e)
        });
        let policy = w.scope.policy;
        let per_row = w.scope.prune_ends == PruneEnds::PerRow && snap.external().is_none();
        let judge = Judge {
            snap,
            walks: w.walks.clone(),
            direction: *direction,
            labels,
            min: *min,
            max,
            test: node_test.filter(|_| w.judge_by_test),
            eval: &memo_eval,
        };
        // The walk can hand its work to a new task (on the pool, in a
        // branch-scope instance, or in an ordered pipeline's task such as
        // CQ6's, which ends in a LIMIT: there the new task runs before
        // anything after it): its per-hop subqueries may pause.
        let resumable = ctx.can_hand_back();
        let mut path: Vec<RelId> = Vec::new();
        let mut candidates: Vec<(RelId, NodeId)> = Vec::new();
        let flush = |w: &mut ScopedWalk, ctx: &mut TaskCtx<'_>| -> Result<OperatorResult> {
            if w.out_rows.is_empty() {
                return NEED_MORE;
            }
            let mut chunk = w.input.select(std::mem::take(&mut w.out_rows));
            chunk.set_column(
                *rels,
                Column::new(ColumnData::Values(std::mem::take(&mut w.out_rels))),
            );
            chunk.set_column(
                *to,
                Column::new(ColumnData::Nodes(std::mem::take(&mut w.out_nodes))),
            );
            ctx.emit(chunk)
        };
        // Sends the rows made so far and doubles the next batch; `Some` is
        // what the walk returns now (cancelled, or its consumer finished).
        let emit_batch =
            |w: &mut ScopedWalk, ctx: &mut TaskCtx<'_>| -> Result<Option<OperatorResult>> {
                if ctx.cancelled() {
                    return NEED_MORE.map(Some);
                }
                let pushed = flush(w, ctx)?;
                if pushed.is_finished() {
                    return Ok(Some(pushed));
                }
                w.batch = next_batch(w.batch);
                Ok(None)
            };
        loop {
            // A walk that emits nothing for long still sees a cancellation.
            w.taken = w.taken.wrapping_add(1);
            if w.taken.is_multiple_of(PAUSE_CHECK) {
                if w.taken.is_multiple_of(4096) {
                    if ctx.cancelled() {
                        return NEED_MORE;
                    }
                    ctx.yield_point();
                }
                if ctx.quantum_spent()
                    && (w.frontier.pending() > 0
                        || w.next_row < w.input.len()
                        || w.resume.is_some())
                {
                    if flush(&mut w, ctx)?.is_finished() {
                        return Ok(OperatorResult::Finished);
                    }
                    let node = self.node.clone();
                    ctx.spawn(move |ctx| VarExpand::new(node).walk_scoped(w, ctx).map(drop))?;
                    return NEED_MORE;
                }
            }
            // Start instances while slots are free (MAX_SI).
            for (slot, instance) in w.active.iter_mut().enumerate() {
                while instance.is_none() && w.next_row < w.input.len() {
                    let row = w.next_row;
                    w.next_row += 1;
                    let start = w
                        .input
                        .column(*from)
                        .and_then(|c| c.node(row))
                        .unwrap_or(NULL_ID);
                    let target = if *into {
                        w.input
                            .column(*to)
                            .and_then(|c| c.node(row))
                            .unwrap_or(NULL_ID)
                    } else {
                        NULL_ID
                    };
                    if start == NULL_ID || (*into && target == NULL_ID) {
                        if *optional {
                            w.out_rows.push(row as u32);
                            w.out_rels.push(Value::Null);
                            w.out_nodes.push(target);
                        }
                        continue;
                    }
                    let mut excluded = w.spare.pop().unwrap_or_default();
                    excluded_rels(&w.input, row, distinct_from, &mut excluded);
                    *instance = Some(Instance {
                        row,
                        target,
                        found: false,
                        excluded,
                        taken: 0,
                        ends: None,
                    });
                    w.frontier.start(slot as u32, start);
                    w.started += 1;
                }
            }
            let (i, item, state) = match w.resume.take() {
                Some(resumed) => resumed,
                None => {
                    let Some((i, item)) = w.frontier.pop() else {
                        break;
                    };
                    w.expanded += 1;
                    (i, item, SuspendedRow::default())
                }
            };
            let slot = item.instance as usize;
            if per_row {
                self.give_row_sets(&mut w, slot, ctx)?;
            }
            let inst = w.active[slot]
                .as_ref()
                .expect("an item's instance is active");
            let row = inst.row;
            // The item's produced ends and saturated nodes, if its scope
            // prunes: the run's, or its row's own.
            let ends = w.ends.clone().or_else(|| inst.ends.clone());
            let ends = ends.as_deref();
            let depth = item.depth as u64;
            // A prefix with nothing new to give (its node, if an end, was
            // produced, and it is saturated) is dropped untested.
            let spent = ends.is_some_and(|e| e.spent(item.node, depth, *min, max));
            if spent {
                w.pruned += 1;
            }
            let passes = match node_test {
                _ if spent => false,
                Some((var, from_hop, e)) if depth >= from_hop && !resumable => {
                    let locals = [(var, Value::Node(item.node))];
                    eval.predicate(
                        e,
                        &Row {
                            chunk: &w.input,
                            row,
                            locals: &locals,
                        },
                    )?
                }
                Some((var, from_hop, e)) if depth >= from_hop => {
                    // Expression subqueries in the predicate (CQ6's
                    // `all(x IN nodes(path)[1..] WHERE EXISTS { … })`) run
                    // as instances that pause at the task's quantum: the
                    // prefix and its evaluation go to a new task.
                    let locals = [(var, Value::Node(item.node))];
                    let row = Row {
                        chunk: &w.input,
                        row,
                        locals: &locals,
                    };
                    // Most nodes' subqueries were answered before (the
                    // memo): no resumable evaluation to set up for them.
                    let known = if state.is_new() {
                        match memo_eval.predicate(e, &row) {
                            Ok(passes) => Some(passes),
                            Err(_) if memo_eval.missed_subquery() => None,
                            Err(error) => return Err(error),
                        }
                    } else {
                        None
                    };
                    let tested = if let Some(passes) = known {
                        Ok(passes)
                    } else {
                        let c: &TaskCtx<'_> = ctx;
                        let pause = || c.quantum_spent();
                        let stopped = || c.cancelled();
                        let suspension = Suspension::new(&pause, &stopped, None);
                        suspension.begin_row(state);
                        match Evaluator::with_suspension(c.q, &suspension).predicate(e, &row) {
                            Ok(passes) => Ok(passes),
                            Err(error) => Err(suspension.take_suspended().ok_or(error)),
                        }
                    };
                    match tested {
                        Ok(passes) => passes,
                        Err(Ok(suspended)) => {
                            w.resume = Some((i, item, suspended));
                            if flush(&mut w, ctx)?.is_finished() {
                                return Ok(OperatorResult::Finished);
                            }
                            let node = self.node.clone();
                            ctx.spawn(move |ctx| {
                                VarExpand::new(node).walk_scoped(w, ctx).map(drop)
                            })?;
                            return NEED_MORE;
                        }
                        Err(Err(error)) => return Err(error),
                    }
                }
                _ => true,
            };
            let inst = w.active[slot]
                .as_mut()
                .expect("an item's instance is active");
            // A saturated prefix reaches no end that is not produced; one
            // with two hops or more left is judged before it is expanded
            // (its children may all be saturated already).
            let saturated = passes
                && ends.is_some_and(|ends| {
                    ends.saturated(max.saturating_sub(depth), item.node)
                        || (max.saturating_sub(depth) >= 2
                            && judge.saturate_if_done(ends, item.node, depth, &w.input, row))
                });
            if passes {
                w.frontier.path(i, &mut path);
                if depth >= *min
                    && may_end_at(snap, labels, *into, item.node, inst.target)
                    && ends.is_none_or(|e| e.produce(item.node))
                {
                    inst.found = true;
                    w.out_rows.push(row as u32);
                    w.out_rels.push(rel_list(&path));
                    w.out_nodes.push(item.node);
                }
                if saturated {
                    w.pruned += 1;
                } else if depth < max {
                    candidates.clear();
                    for &(t, d) in &w.walks {
                        let adj = snap.adjacency(item.node, t, d);
                        for k in 0..adj.len() {
                            let neighbour = adj.neighbour(k);
                            if skip_entry(*direction, d, item.node, neighbour) {
                                continue;
                            }
                            let r = adj.rel_id(k);
                            if inst.excluded.contains(&r) || path.contains(&r) {
                                continue;
                            }
                            if let Some((rslot, _)) = rel_predicate {
                                let locals = [(*rslot, Value::Relationship(r))];
                                let inner = Row {
                                    chunk: &w.input,
                                    row,
                                    locals: &locals,
                                };
                                if !eval.predicate(&self.node.c.exprs[0], &inner)? {
                                    continue;
                                }
                            }
                            candidates.push((r, neighbour));
                        }
                    }
                    if leaves_inline(policy, depth, *min, max, node_test.map(|t| t.1)) {
                        // Prefixes at the last depth would be queued only
                        // to be taken at once (depth first) or in the
                        // order they were made (every result at that
                        // depth): test and emit them here instead.
                        w.expanded += candidates.len() as u64;
                        let target = inst.target;
                        for &(r, n) in &candidates {
                            if ends.is_some_and(|e| e.produced(n))
                                || !may_end_at(snap, labels, *into, n, target)
                                || ends.is_some_and(|e| !e.produce(n))
                            {
                                continue;
                            }
                            if let Some(instance) = w.active[slot].as_mut() {
                                instance.found = true;
                            }
                            path.push(r);
                            w.out_rows.push(row as u32);
                            w.out_rels.push(rel_list(&path));
                            w.out_nodes.push(n);
                            path.pop();
                            if w.out_rows.len() >= CHUNK_SIZE {
                                if let Some(result) = emit_batch(&mut w, ctx)? {
                                    return Ok(result);
                                }
                            }
                        }
                    } else {
                        // A stack takes the last first: push in reverse so
                        // that depth first visits in adjacency order.
                        if policy == ScopePolicy::Dfs {
                            candidates.reverse();
                        }
                        for &(r, n) in &candidates {
                            if ends.is_some_and(|e| e.spent(n, depth + 1, *min, max)) {
                                w.pruned += 1;
                                continue;
                            }
                            w.frontier.extend(i, r, n);
                        }
                    }
                }
            }
            if let Some(ends) = ends {
                // Each prefix whose subtree is done: is its node saturated
                // now? (Not a prefix that failed the per-hop predicate:
                // it was never a path's.)
                let input = &w.input;
                w.frontier.release_if_done(i, |done, own| {
                    if !own || passes {
                        judge.saturate_if_done(ends, done.node, done.depth as u64, input, row);
                    }
                });
            } else {
                w.frontier.release_if_done(i, |_, _| {});
            }
            if w.frontier.live(slot as u32) == 0 {
                let done = w.active[slot].take().expect("active");
                w.finished += 1;
                if *optional && !done.found {
                    w.out_rows.push(done.row as u32);
                    w.out_rels.push(Value::Null);
                    w.out_nodes.push(if *into { done.target } else { NULL_ID });
                }
                w.spare.push(done.excluded);
            }
            if w.out_rows.len() >= w.batch {
                if let Some(result) = emit_batch(&mut w, ctx)? {
                    return Ok(result);
                }
            }
        }
        w.completed = true;
        flush(&mut w, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::leaves_inline;
    use rhizome_plan::ScopePolicy;

    #[test]
    fn only_last_depth_children_go_out_at_once_and_only_where_the_order_holds() {
        // `*5`: every result at depth 5, each policy emits children of a
        // depth-4 prefix at once, none of a shallower one.
        for policy in [ScopePolicy::Dfs, ScopePolicy::Fifo, ScopePolicy::Bfs] {
            assert!(leaves_inline(policy, 4, 5, 5, None));
            assert!(!leaves_inline(policy, 3, 5, 5, None));
        }
        // `*1..5`: results at every depth; only depth first keeps its
        // order when the last level goes out at once.
        assert!(leaves_inline(ScopePolicy::Dfs, 4, 1, 5, None));
        assert!(!leaves_inline(ScopePolicy::Fifo, 4, 1, 5, None));
        assert!(!leaves_inline(ScopePolicy::Bfs, 4, 1, 5, None));
        // A per-hop predicate that tests the last hop may pause there.
        assert!(!leaves_inline(ScopePolicy::Dfs, 4, 5, 5, Some(1)));
        assert!(!leaves_inline(ScopePolicy::Dfs, 4, 5, 5, Some(5)));
        assert!(leaves_inline(ScopePolicy::Dfs, 4, 5, 5, Some(6)));
    }
}
