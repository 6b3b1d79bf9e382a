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

use super::adjacency::{rel_list, skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, CHUNK_SIZE, NULL_ID};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
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

/// Every shortest path (as relationship and node lists) from `parents` back to `start`.
fn unwind_paths(
    parents: &HashMap<NodeId, Vec<(RelId, NodeId)>>,
    start: NodeId,
    end: NodeId,
    limit: usize,
) -> Vec<PathValue> {
    let mut out = Vec::new();
    let mut stack: Vec<(NodeId, Vec<RelId>, Vec<NodeId>)> = vec![(end, Vec::new(), vec![end])];
    while let Some((node, rels, nodes)) = stack.pop() {
        if out.len() >= limit {
            break;
        }
        if node == start {
            let mut path = PathValue { nodes, rels };
            path.nodes.reverse();
            path.rels.reverse();
            out.push(path);
            continue;
        }
        for &(r, p) in parents.get(&node).into_iter().flatten() {
            let (mut rs, mut ns) = (rels.clone(), nodes.clone());
            rs.push(r);
            ns.push(p);
            stack.push((p, rs, ns));
        }
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
}

impl Side {
    fn new(root: NodeId, walks: Vec<(RelTypeId, Direction)>) -> Side {
        Side {
            walks,
            depth: HashMap::from([(root, 0)]),
            parents: HashMap::new(),
            frontier: vec![root],
            level: 0,
        }
    }

    /// Expands the frontier one level; returns the nodes of the new level
    /// the other side has reached. With `first_only`, stops at the first.
    /// Looks for a cancellation every [`CHECK_EVERY`] nodes: then stops
    /// and counts the nodes left in `search`.
    fn expand(
        &mut self,
        snap: &Snapshot,
        direction: ExpandDirection,
        other: &Side,
        first_only: bool,
        ctx: &TaskCtx<'_>,
        search: &mut Search,
    ) -> Vec<NodeId> {
        self.level += 1;
        let level = self.level;
        if snap.external().is_some() {
            // A source fetches the whole level's lists in one round trip
            // per (type, direction), not one per node.
            for &(t, d) in &self.walks {
                snap.prefetch_adjacency(&self.frontier, t, d);
            }
        }
        let mut next = Vec::new();
        let mut meet = Vec::new();
        'nodes: for (k, &n) in self.frontier.iter().enumerate() {
            search.expanded += 1;
            if search.expanded.is_multiple_of(CHECK_EVERY) {
                if ctx.cancelled() {
                    search.cancelled = true;
                    search.dropped += (self.frontier.len() - k) as u64;
                    return Vec::new();
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
        meet
    }
}

/// The opposite direction (the backward side walks relationships against it).
fn reversed(d: Direction) -> Direction {
    match d {
        Direction::Outgoing => Direction::Incoming,
        Direction::Incoming => Direction::Outgoing,
    }
}

/// Shortest paths from `a` to `b` (`a != b`) of at most `max`
/// relationships: every one with `all`, else one. Breadth-first from both
/// ends, a level at a time on the side with the smaller frontier, until
/// the two meet. When a level of one side reaches nodes the other side has
/// reached, those nodes are exactly the ones every shortest path crosses at
/// that distance (an earlier meeting would have been found a level
/// before), so the paths are the shortest ones to each meeting node from
/// both ends, joined.
#[allow(clippy::too_many_arguments)]
fn bidirectional(
    snap: &Snapshot,
    walks: &[(RelTypeId, Direction)],
    direction: ExpandDirection,
    (a, b): (NodeId, NodeId),
    max: u64,
    all: bool,
    ctx: &TaskCtx<'_>,
    search: &mut Search,
) -> Result<Vec<PathValue>> {
    let mut forward = Side::new(a, walks.to_vec());
    let mut backward = Side::new(b, walks.iter().map(|&(t, d)| (t, reversed(d))).collect());
    let meet = loop {
        if forward.level + backward.level >= max
            || forward.frontier.is_empty()
            || backward.frontier.is_empty()
        {
            return Ok(Vec::new());
        }
        if ctx.cancelled() {
            search.cancelled = true;
        }
        let meet = if search.cancelled {
            Vec::new()
        } else if forward.frontier.len() <= backward.frontier.len() {
            forward.expand(snap, direction, &backward, !all, ctx, search)
        } else {
            backward.expand(snap, direction, &forward, !all, ctx, search)
        };
        if search.cancelled {
            // The side not being expanded keeps its frontier too.
            search.dropped += (forward.frontier.len() + backward.frontier.len()) as u64;
            return Ok(Vec::new());
        }
        if !meet.is_empty() {
            break meet;
        }
    };
    let limit = if all { usize::MAX } else { 1 };
    let mut out = Vec::new();
    for m in meet {
        for head in unwind_paths(&forward.parents, a, m, limit) {
            for tail in unwind_paths(&backward.parents, b, m, limit) {
                if out.len() >= limit {
                    return Ok(out);
                }
                let mut path = head.clone();
                path.nodes.extend(tail.nodes.iter().rev().skip(1));
                path.rels.extend(tail.rels.iter().rev());
                out.push(path);
            }
        }
    }
    Ok(out)
}

impl Operator for ShortestPath {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
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
        let (mut rows, mut paths, mut rel_lists) = (Vec::new(), Vec::new(), Vec::new());
        let emit = |rows: &mut Vec<u32>,
                    paths: &mut Vec<Value>,
                    rel_lists: &mut Vec<Value>,
                    ctx: &mut TaskCtx<'_>| {
            if rows.is_empty() {
                return NEED_MORE;
            }
            let mut chunk = input.select(std::mem::take(rows));
            chunk.set_column(
                *path,
                Column::new(ColumnData::Values(std::mem::take(paths))),
            );
            let rel_lists = std::mem::take(rel_lists);
            if let Some(rels) = rels {
                chunk.set_column(*rels, Column::new(ColumnData::Values(rel_lists)));
            }
            ctx.emit(chunk)
        };
        // The loop scope's counters: instances (searches) started,
        // finished and cancelled, frontier nodes expanded and dropped.
        let (mut started, mut finished, mut expanded) = (0u64, 0u64, 0u64);
        let tally = |ctx: &TaskCtx<'_>, started, finished, cancelled, expanded, dropped| {
            if let Some(stats) = ctx.scope_stats() {
                stats.add(started, finished, cancelled, expanded, dropped);
            }
        };
        // The first rows go out at once, then in batches that grow to a
        // chunk: a LIMIT above stops the rows after it from searching.
        let mut batch = 1;
        for row in 0..input.len() {
            if ctx.cancelled() {
                tally(ctx, started, finished, 0, expanded, 0);
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
                    let mut search = Search::default();
                    started += 1;
                    results = bidirectional(
                        snap,
                        &walks,
                        *direction,
                        (a, b),
                        max,
                        all,
                        ctx,
                        &mut search,
                    )?;
                    expanded += search.expanded;
                    if search.cancelled {
                        tally(ctx, started, finished, 1, expanded, search.dropped);
                        return NEED_MORE;
                    }
                    finished += 1;
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
                rows.push(row as u32);
                paths.push(Value::Null);
                rel_lists.push(Value::Null);
            }
            for p in results {
                rows.push(row as u32);
                rel_lists.push(rel_list(&p.rels));
                paths.push(Value::Path(p));
            }
            if rows.len() >= batch {
                batch = (batch * 2).min(CHUNK_SIZE);
                let pushed = emit(&mut rows, &mut paths, &mut rel_lists, ctx);
                if !matches!(pushed, Ok(OperatorResult::NeedMoreInput)) {
                    tally(ctx, started, finished, 0, expanded, 0);
                }
                return_if_finished!(pushed);
            }
        }
        tally(ctx, started, finished, 0, expanded, 0);
        emit(&mut rows, &mut paths, &mut rel_lists, ctx)
    }
}
