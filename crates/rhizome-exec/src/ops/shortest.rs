//! `shortestPath` and `allShortestPaths` between two bound nodes, by
//! bidirectional breadth-first search recording every shortest-path parent
//! on both sides, stopping at the level where the two sides meet.
//!
//! The search is a loop scope (docs/scheduling.md, "Scopes"): each input
//! row is an instance and its levels are the scope's iterations, whose
//! pending work is the frontier. The policy is the algorithm's own (level
//! by level). An instance looks for a cancellation every
//! [`CHECK_EVERY`] frontier nodes, not only between levels, and then
//! drops the frontier nodes it has not expanded; rows go out in batches
//! that grow from one row, so a `LIMIT` above ends the scope before the
//! next rows' searches start. PROFILE counts instances started, finished
//! and cancelled, frontier nodes expanded and dropped.
//!
//! Where the task can hand its work back, a search looks at the task's
//! quantum at the same points: once it is spent, the search (both sides,
//! the level being expanded and where in it), the rows not searched yet
//! and the paths found but not sent go to a new task at this stage, which
//! goes on from there ([`Progress`]). So one long search does not hold a
//! worker to its end.

use super::adjacency::{rel_list, skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, NULL_ID};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{
    next_batch, return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE,
};
use rhizome_common::{NodeId, PathValue, RelId, Result, Value};
use rhizome_plan::{ExpandDirection, OpKind, ShortestPathKind};
use rhizome_storage::{Direction, RelTypeId, Snapshot};
use std::collections::HashMap;
use std::sync::Arc;

/// Shortest paths.
pub struct ShortestPath {
    node: Arc<CNode>,
}

impl ShortestPath {
    /// The operator for a `ShortestPath` node.
    pub fn new(node: Arc<CNode>) -> ShortestPath {
        ShortestPath { node }
    }
}

/// Every shortest path (as relationship and node lists) from `parents` back
/// to `start`, at most `limit`: depth first along one stack of the path so
/// far (last parent first), so a path of length L costs O(L) to find, not
/// a copy of the path at every step.
fn unwind_paths(
    parents: &HashMap<NodeId, Vec<(RelId, NodeId)>>,
    start: NodeId,
    end: NodeId,
    limit: usize,
) -> Vec<PathValue> {
    let parents_of = |n: NodeId| parents.get(&n).map_or(&[][..], Vec::as_slice);
    let mut out = Vec::new();
    if limit == 0 {
        return out;
    }
    // The path from `end` so far; per node on it, its parents not tried yet.
    let mut nodes = vec![end];
    let mut rels: Vec<RelId> = Vec::new();
    let mut untried = vec![parents_of(end).len()];
    while let (Some(&node), Some(left)) = (nodes.last(), untried.last_mut()) {
        if node == start || *left == 0 {
            if node == start {
                out.push(PathValue {
                    nodes: nodes.iter().rev().copied().collect(),
                    rels: rels.iter().rev().copied().collect(),
                });
                if out.len() >= limit {
                    break;
                }
            }
            nodes.pop();
            untried.pop();
            rels.pop();
            continue;
        }
        *left -= 1;
        let (r, p) = parents_of(node)[*left];
        nodes.push(p);
        rels.push(r);
        untried.push(parents_of(p).len());
    }
    out
}

/// Frontier nodes a search expands between two looks for a cancellation
/// (and two yield points).
pub const CHECK_EVERY: u64 = 256;

/// What one search did (PROFILE).
#[derive(Default)]
struct Search {
    /// Frontier nodes expanded.
    expanded: u64,
    /// Frontier nodes left when the search was cancelled.
    dropped: u64,
    /// The search was cancelled.
    cancelled: bool,
    /// `expanded` when the current task took the search up (a task
    /// expands at least one node before it pauses).
    task_start: u64,
}

/// One side of a bidirectional breadth-first search: the depth of every
/// node it reached and, per node, every (relationship, node one level
/// nearer the side's root) on a shortest path to it.
struct Side {
    walks: Vec<(RelTypeId, Direction)>,
    depth: HashMap<NodeId, u64>,
    parents: HashMap<NodeId, Vec<(RelId, NodeId)>>,
    frontier: Vec<NodeId>,
    level: u64,
    /// A level is being expanded (it paused at `pos`).
    expanding: bool,
    /// The next frontier node to expand in the level being expanded.
    pos: usize,
    /// The level being expanded so far: its new nodes, and those of them
    /// the other side has reached.
    next: Vec<NodeId>,
    meet: Vec<NodeId>,
}

/// How a side's [`Side::expand`] ended.
enum Level {
    /// The level is done; the nodes of it the other side has reached.
    Done(Vec<NodeId>),
    /// The task's quantum was spent: the level goes on from where it stopped.
    Paused,
    /// The search was cancelled (its dropped nodes counted).
    Cancelled,
}

impl Side {
    fn new(root: NodeId, walks: Vec<(RelTypeId, Direction)>) -> Side {
        Side {
            walks,
            depth: HashMap::from([(root, 0)]),
            parents: HashMap::new(),
            frontier: vec![root],
            level: 0,
            expanding: false,
            pos: 0,
            next: Vec::new(),
            meet: Vec::new(),
        }
    }

    /// Expands the frontier one level (or goes on with the level that
    /// paused); ends with the nodes of the new level the other side has
    /// reached. With `first_only`, stops at the first. Looks for a
    /// cancellation every [`CHECK_EVERY`] nodes (then stops and counts
    /// the nodes left in `search`) and, with `may_pause`, at the task's
    /// quantum.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        snap: &Snapshot,
        direction: ExpandDirection,
        other: &Side,
        first_only: bool,
        ctx: &TaskCtx<'_>,
        may_pause: bool,
        search: &mut Search,
    ) -> Level {
        if !self.expanding {
            self.expanding = true;
            self.level += 1;
            self.pos = 0;
            if snap.external().is_some() {
                // A source fetches the whole level's lists in one round
                // trip per (type, direction), not one per node.
                for &(t, d) in &self.walks {
                    snap.prefetch_adjacency(&self.frontier, t, d);
                }
            }
        }
        let level = self.level;
        let (mut next, mut meet) = (
            std::mem::take(&mut self.next),
            std::mem::take(&mut self.meet),
        );
        'nodes: for k in self.pos..self.frontier.len() {
            let n = self.frontier[k];
            search.expanded += 1;
            if search.expanded.is_multiple_of(CHECK_EVERY) {
                if ctx.cancelled() {
                    search.cancelled = true;
                    search.dropped += (self.frontier.len() - k) as u64;
                    self.expanding = false;
                    return Level::Cancelled;
                }
                if may_pause && search.expanded > search.task_start + 1 && ctx.quantum_spent() {
                    // Node k is expanded by the task that goes on.
                    search.expanded -= 1;
                    self.pos = k;
                    self.next = next;
                    self.meet = meet;
                    return Level::Paused;
                }
                ctx.yield_point();
            }
            for &(t, d) in &self.walks {
                let adj = snap.adjacency(n, t, d);
                for i in 0..adj.len() {
                    let m = adj.neighbour(i);
                    if skip_entry(direction, d, n, m) {
                        continue;
                    }
                    let seen = self.depth.get(&m).copied();
                    if seen.is_none() {
                        self.depth.insert(m, level);
                        next.push(m);
                        if other.depth.contains_key(&m) {
                            meet.push(m);
                        }
                    }
                    if seen.is_none() || seen == Some(level) {
                        self.parents.entry(m).or_default().push((adj.rel_id(i), n));
                    }
                    if first_only && !meet.is_empty() {
                        break 'nodes;
                    }
                }
            }
        }
        self.frontier = next;
        self.expanding = false;
        Level::Done(meet)
    }
}

/// The opposite direction (the backward side walks relationships against it).
fn reversed(d: Direction) -> Direction {
    match d {
        Direction::Outgoing => Direction::Incoming,
        Direction::Incoming => Direction::Outgoing,
    }
}

/// A bidirectional search between two nodes, resumable between tasks.
struct Bidirectional {
    a: NodeId,
    b: NodeId,
    forward: Side,
    backward: Side,
    search: Search,
}

impl Bidirectional {
    /// A search from `a` to `b` over `walks` (the backward side walks them
    /// reversed).
    fn new(a: NodeId, b: NodeId, walks: &[(RelTypeId, Direction)]) -> Bidirectional {
        Bidirectional {
            a,
            b,
            forward: Side::new(a, walks.to_vec()),
            backward: Side::new(b, walks.iter().map(|&(t, d)| (t, reversed(d))).collect()),
            search: Search::default(),
        }
    }

    /// Shortest paths from `a` to `b` (`a != b`) of at most `max`
    /// relationships: every one with `all`, else one; `None` if the task's
    /// quantum was spent first (with `may_pause`, looked at with the
    /// cancellation every [`CHECK_EVERY`] nodes; run it again to go on).
    /// Breadth-first from both ends, a level at a time on the side with
    /// the smaller frontier, until the two meet. When a level of one side
    /// reaches nodes the other side has reached, those nodes are exactly
    /// the ones every shortest path crosses at that distance (an earlier
    /// meeting would have been found a level before), so the paths are
    /// the shortest ones to each meeting node from both ends, joined.
    fn run(
        &mut self,
        snap: &Snapshot,
        direction: ExpandDirection,
        (max, all): (u64, bool),
        ctx: &TaskCtx<'_>,
        may_pause: bool,
    ) -> Option<Vec<PathValue>> {
        let Bidirectional {
            a,
            b,
            forward,
            backward,
            search,
        } = self;
        search.task_start = search.expanded;
        let meet = loop {
            let expanding = forward.expanding || backward.expanding;
            if !expanding
                && (forward.level + backward.level >= max
                    || forward.frontier.is_empty()
                    || backward.frontier.is_empty())
            {
                return Some(Vec::new());
            }
            if ctx.cancelled() {
                search.cancelled = true;
            }
            // A level that paused goes on on its side.
            let level = if search.cancelled {
                Level::Cancelled
            } else if backward.expanding
                || (!forward.expanding && forward.frontier.len() > backward.frontier.len())
            {
                backward.expand(snap, direction, forward, !all, ctx, may_pause, search)
            } else {
                forward.expand(snap, direction, backward, !all, ctx, may_pause, search)
            };
            match level {
                Level::Paused => return None,
                Level::Cancelled => {
                    // The side not being expanded keeps its frontier too.
                    search.cancelled = true;
                    search.dropped += (forward.frontier.len() + backward.frontier.len()) as u64;
                    return Some(Vec::new());
                }
                Level::Done(meet) if !meet.is_empty() => break meet,
                Level::Done(_) => {}
            }
        };
        let limit = if all { usize::MAX } else { 1 };
        let mut out = Vec::new();
        for m in meet {
            for head in unwind_paths(&forward.parents, *a, m, limit) {
                for tail in unwind_paths(&backward.parents, *b, m, limit) {
                    if out.len() >= limit {
                        return Some(out);
                    }
                    let mut path = head.clone();
                    path.nodes.extend(tail.nodes.iter().rev().skip(1));
                    path.rels.extend(tail.rels.iter().rev());
                    out.push(path);
                }
            }
        }
        Some(out)
    }
}

/// Where an operator's run over one input chunk stands, handed to the
/// task that goes on when a search pauses: the next row, its search in
/// progress, the rows found but not sent, and the counters not yet added
/// to PROFILE.
#[derive(Default)]
struct Progress {
    row: usize,
    search: Option<Bidirectional>,
    batch: usize,
    rows: Vec<u32>,
    paths: Vec<Value>,
    rel_lists: Vec<Value>,
    started: u64,
    finished: u64,
    expanded: u64,
}

impl ShortestPath {
    /// Searches the rows of `input` from `progress` on; when a search
    /// pauses at the task's quantum, sends the rows found so far and hands
    /// the rest to a new task at this stage.
    fn run(
        &self,
        input: Chunk,
        ctx: &mut TaskCtx<'_>,
        mut progress: Progress,
    ) -> Result<OperatorResult> {
        let OpKind::ShortestPath {
            from,
            to,
            path,
            rels,
            direction,
            min,
            max,
            kind,
            optional,
            path_predicate,
            ..
        } = &self.node.kind
        else {
            unreachable!("ShortestPath built for a ShortestPath node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let walks = walks(snap, types, *direction);
        let eval = Evaluator::new(ctx.q);
        let max = max.unwrap_or(u64::MAX);
        let may_pause = ctx.can_hand_back_in_order();
        let emit = |progress: &mut Progress, ctx: &mut TaskCtx<'_>| {
            if progress.rows.is_empty() {
                return NEED_MORE;
            }
            let mut chunk = input.select(std::mem::take(&mut progress.rows));
            chunk.set_column(
                *path,
                Column::new(ColumnData::Values(std::mem::take(&mut progress.paths))),
            );
            let rel_lists = std::mem::take(&mut progress.rel_lists);
            if let Some(rels) = rels {
                chunk.set_column(*rels, Column::new(ColumnData::Values(rel_lists)));
            }
            ctx.emit(chunk)
        };
        // The loop scope's counters: instances (searches) started,
        // finished and cancelled, frontier nodes expanded and dropped.
        let tally = |ctx: &TaskCtx<'_>, progress: &mut Progress, cancelled, dropped| {
            if let Some(stats) = ctx.scope_stats() {
                stats.add(
                    std::mem::take(&mut progress.started),
                    std::mem::take(&mut progress.finished),
                    cancelled,
                    std::mem::take(&mut progress.expanded),
                    dropped,
                );
            }
        };
        // The first rows go out at once, then in batches that grow to a
        // chunk: a LIMIT above stops the rows after it from searching.
        progress.batch = progress.batch.max(1);
        while progress.row < input.len() {
            let row = progress.row;
            if ctx.cancelled() {
                tally(ctx, &mut progress, 0, 0);
                return NEED_MORE;
            }
            let a = input
                .column(*from)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let b = input
                .column(*to)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut results: Vec<PathValue> = Vec::new();
            if a != NULL_ID && b != NULL_ID {
                if a == b && *min == 0 {
                    results.push(PathValue {
                        nodes: vec![a],
                        rels: vec![],
                    });
                } else {
                    let all = path_predicate.is_some() || *kind == ShortestPathKind::All;
                    if progress.search.is_none() {
                        progress.started += 1;
                    }
                    let search = progress
                        .search
                        .get_or_insert_with(|| Bidirectional::new(a, b, &walks));
                    let Some(found) = search.run(snap, *direction, (max, all), ctx, may_pause)
                    else {
                        // Paused: the rows found go out, the rest to a new task.
                        tally(ctx, &mut progress, 0, 0);
                        return_if_finished!(emit(&mut progress, ctx));
                        let node = self.node.clone();
                        ctx.spawn(move |ctx| {
                            ShortestPath { node }.run(input, ctx, progress).map(drop)
                        })?;
                        return NEED_MORE;
                    };
                    let search = progress.search.take().expect("the search just run");
                    progress.expanded += search.search.expanded;
                    if search.search.cancelled {
                        tally(ctx, &mut progress, 1, search.search.dropped);
                        return NEED_MORE;
                    }
                    progress.finished += 1;
                    results = found;
                    // A path that uses a relationship twice is not a path (undirected loops).
                    results.retain(|p| {
                        let mut r = p.rels.clone();
                        r.sort_unstable();
                        r.windows(2).all(|w| w[0] != w[1])
                    });
                }
            }
            if let Some(_predicate) = path_predicate {
                let mut kept = Vec::new();
                for p in results {
                    let locals = [(*path, Value::Path(p.clone()))];
                    let inner = Row {
                        chunk: &input,
                        row,
                        locals: &locals,
                    };
                    if eval.predicate(&self.node.c.exprs[0], &inner)? {
                        kept.push(p);
                    }
                }
                results = kept;
            }
            if *kind == ShortestPathKind::Single {
                results.truncate(1);
            }
            if results.is_empty() && *optional {
                progress.rows.push(row as u32);
                progress.paths.push(Value::Null);
                progress.rel_lists.push(Value::Null);
            }
            for p in results {
                progress.rows.push(row as u32);
                progress.rel_lists.push(rel_list(&p.rels));
                progress.paths.push(Value::Path(p));
            }
            progress.row += 1;
            if progress.rows.len() >= progress.batch {
                progress.batch = next_batch(progress.batch);
                let pushed = emit(&mut progress, ctx);
                if !matches!(pushed, Ok(OperatorResult::NeedMoreInput)) {
                    tally(ctx, &mut progress, 0, 0);
                }
                return_if_finished!(pushed);
            }
        }
        tally(ctx, &mut progress, 0, 0);
        emit(&mut progress, ctx)
    }
}

impl Operator for ShortestPath {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        self.run(input, ctx, Progress::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_unwind_depth_first_last_parent_first() {
        // 1 -> {2, 3} -> 4 (two shortest paths to 4), and 4 -> 5.
        let parents = HashMap::from([
            (2, vec![(10, 1)]),
            (3, vec![(11, 1)]),
            (4, vec![(12, 2), (13, 3)]),
            (5, vec![(14, 4)]),
        ]);
        let paths = unwind_paths(&parents, 1, 5, usize::MAX);
        let as_lists: Vec<_> = paths
            .iter()
            .map(|p| (p.nodes.clone(), p.rels.clone()))
            .collect();
        assert_eq!(
            as_lists,
            vec![
                (vec![1, 3, 4, 5], vec![11, 13, 14]),
                (vec![1, 2, 4, 5], vec![10, 12, 14]),
            ]
        );
        assert_eq!(unwind_paths(&parents, 1, 5, 1).len(), 1);
        assert_eq!(unwind_paths(&parents, 1, 1, 5)[0].nodes, vec![1]);
        // No way back to the start: no path.
        assert!(unwind_paths(&parents, 9, 5, 5).is_empty());
    }

    #[test]
    fn a_long_path_unwinds_in_linear_time() {
        // A chain of a million: copying the path at every step would move
        // about 10^12 ids.
        let n = 1_000_000u64;
        let parents: HashMap<NodeId, Vec<(RelId, NodeId)>> =
            (1..=n).map(|i| (i, vec![(i, i - 1)])).collect();
        let paths = unwind_paths(&parents, 0, n, 1);
        assert_eq!(paths[0].nodes.len() as u64, n + 1);
        assert_eq!(paths[0].rels.first(), Some(&1));
        assert_eq!(paths[0].nodes.last(), Some(&n));
    }
}
