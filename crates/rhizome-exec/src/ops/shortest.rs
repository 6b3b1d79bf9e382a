//! `shortestPath` and `allShortestPaths` between two bound nodes, by
//! breadth-first search recording every shortest-path parent.

use super::adjacency::{skip_entry, walks};
use crate::chunk::{Chunk, Column, ColumnData, NULL_ID};
use crate::compile::CNode;
use crate::expr::{Evaluator, Row};
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::{NodeId, PathValue, RelId, Result, Value};
use rhizome_plan::{OpKind, ShortestPathKind};
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
        for row in 0..input.len() {
            if ctx.cancelled() {
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
                    // Breadth-first search with all shortest-path parents per node.
                    let mut depth: HashMap<NodeId, u64> = HashMap::from([(a, 0)]);
                    let mut parents: HashMap<NodeId, Vec<(RelId, NodeId)>> = HashMap::new();
                    let mut frontier = vec![a];
                    let mut level = 0u64;
                    let mut reached = false;
                    while !frontier.is_empty() && level < max && !reached {
                        level += 1;
                        let mut next = Vec::new();
                        for &n in &frontier {
                            for &(t, d) in &walks {
                                let adj = snap.adjacency(n, t, d);
                                for i in 0..adj.len() {
                                    let m = adj.neighbours[i];
                                    if skip_entry(*direction, d, n, m) {
                                        continue;
                                    }
                                    let seen = depth.get(&m).copied();
                                    if seen.is_none() {
                                        depth.insert(m, level);
                                        next.push(m);
                                    }
                                    if seen.is_none() || seen == Some(level) {
                                        parents.entry(m).or_default().push((adj.rel_id(i), n));
                                    }
                                    if m == b {
                                        reached = true;
                                    }
                                }
                            }
                        }
                        frontier = next;
                    }
                    if reached {
                        let limit = if path_predicate.is_some() || *kind == ShortestPathKind::All {
                            usize::MAX
                        } else {
                            1
                        };
                        results = unwind_paths(&parents, a, b, limit);
                        // A path that uses a relationship twice is not a path (undirected loops).
                        results.retain(|p| {
                            let mut r = p.rels.clone();
                            r.sort_unstable();
                            r.windows(2).all(|w| w[0] != w[1])
                        });
                    }
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
                rel_lists.push(Value::List(
                    p.rels.iter().map(|&r| Value::Relationship(r)).collect(),
                ));
                paths.push(Value::Path(p));
            }
        }
        if rows.is_empty() {
            return NEED_MORE;
        }
        let mut chunk = input.select(rows);
        chunk.set_column(*path, Column::new(ColumnData::Values(paths)));
        if let Some(rels) = rels {
            chunk.set_column(*rels, Column::new(ColumnData::Values(rel_lists)));
        }
        ctx.emit(chunk)
    }
}
