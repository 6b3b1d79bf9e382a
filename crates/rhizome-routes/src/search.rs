//! Dijkstra and A* (one shortest path) and Yen's algorithm (the k shortest
//! loopless paths) over any [`RouteGraph`].
//!
//! The search keeps a binary heap with lazy deletion and one hash map entry
//! per reached node. Weights come from the graph as floats: NaN (missing)
//! takes the default weight if one is given and fails otherwise; negative
//! or infinite weights fail (Dijkstra needs non-negative costs). A* adds the
//! great-circle distance to the end node, which is admissible when every
//! weight is at least the distance between its end points (true of the
//! DIMACS road networks in metres); it is scaled by `1 - 1e-9` so rounding
//! in the trigonometry can never make it overestimate. Ties in the heap are
//! broken by the larger cost so far, then by the smaller node id, so results
//! are deterministic.

use crate::geo::great_circle_m;
use crate::graph::{RouteGraph, WeightedBatch};
use rhizome_common::hash::IdBuildHasher;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// Which search runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// Dijkstra: no heuristic.
    Dijkstra,
    /// A* with the great-circle distance to the end node as heuristic.
    AStar,
}

/// How a search reads weights.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// Dijkstra or A*.
    pub goal: Goal,
    /// The weight of a relationship without a numeric weight property;
    /// `None` makes such a relationship an error.
    pub default_weight: Option<f64>,
    /// The weight property's name, for error messages.
    pub weight_name: String,
}

/// A path found: `nodes.len() == rels.len() + 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Nodes from start to end.
    pub nodes: Vec<NodeId>,
    /// Relationships in path order.
    pub rels: Vec<RelId>,
    /// Weight of each relationship, parallel to `rels`.
    pub weights: Vec<f64>,
    /// Total weight.
    pub cost: f64,
}

/// What searches did, summed over calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Nodes taken from the heap and expanded.
    pub settled: u64,
    /// Relationships looked at.
    pub relationships: u64,
    /// Searches run (Yen runs one per spur node).
    pub searches: u64,
}

/// Nodes and relationships a search must not use (Yen's spur searches).
#[derive(Default)]
struct Banned {
    nodes: HashSet<NodeId, IdBuildHasher>,
    rels: HashSet<RelId, IdBuildHasher>,
}

#[derive(Clone, Copy)]
struct Reached {
    cost: f64,
    pred: Option<(NodeId, RelId, f64)>,
    settled: bool,
}

#[derive(Clone, Copy, PartialEq)]
struct Queued {
    estimate: f64,
    cost: f64,
    node: NodeId,
}

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: smallest estimate first, then the
        // largest cost so far (closest to the end), then the smallest id.
        other
            .estimate
            .total_cmp(&self.estimate)
            .then(self.cost.total_cmp(&other.cost))
            .then(other.node.cmp(&self.node))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How often (in settled nodes) the search asks whether it was cancelled.
const CANCEL_CHECK_EVERY: u64 = 256;

/// Scale of the A* heuristic, so rounding never makes it overestimate.
const HEURISTIC_SCALE: f64 = 1.0 - 1e-9;

/// The cheapest path from `start` to `end`, `None` if `end` is unreachable.
pub fn shortest_path(
    graph: &dyn RouteGraph,
    start: NodeId,
    end: NodeId,
    options: &SearchOptions,
    stats: &mut SearchStats,
) -> Result<Option<Route>> {
    graph.prepare_route(start, end)?;
    Search::new(graph, end, options)?.run(start, &Banned::default(), stats)
}

/// Up to `k` cheapest loopless paths from `start` to `end`, cheapest first
/// (Yen's algorithm; paths of equal cost in a deterministic order).
pub fn k_shortest_paths(
    graph: &dyn RouteGraph,
    start: NodeId,
    end: NodeId,
    k: usize,
    options: &SearchOptions,
    stats: &mut SearchStats,
) -> Result<Vec<Route>> {
    graph.prepare_route(start, end)?;
    let search = Search::new(graph, end, options)?;
    let mut found: Vec<Route> = Vec::new();
    if k == 0 {
        return Ok(found);
    }
    match search.run(start, &Banned::default(), stats)? {
        Some(first) => found.push(first),
        None => return Ok(found),
    }
    let mut candidates: Vec<Route> = Vec::new();
    while found.len() < k {
        let previous = found.last().expect("one path found").clone();
        for i in 0..previous.rels.len() {
            let spur = previous.nodes[i];
            let mut banned = Banned::default();
            for path in &found {
                if path.nodes.len() > i + 1
                    && path.nodes[..=i] == previous.nodes[..=i]
                    && path.rels[..i] == previous.rels[..i]
                {
                    banned.rels.insert(path.rels[i]);
                }
            }
            banned.nodes.extend(previous.nodes[..i].iter().copied());
            let Some(tail) = search.run(spur, &banned, stats)? else {
                continue;
            };
            let mut route = Route {
                nodes: previous.nodes[..i].to_vec(),
                rels: previous.rels[..i].to_vec(),
                weights: previous.weights[..i].to_vec(),
                cost: 0.0,
            };
            route.nodes.extend(tail.nodes);
            route.rels.extend(tail.rels);
            route.weights.extend(tail.weights);
            route.cost = route.weights.iter().sum();
            if !candidates
                .iter()
                .chain(&found)
                .any(|c| c.rels == route.rels)
            {
                candidates.push(route);
            }
        }
        if candidates.is_empty() {
            break;
        }
        let best = (0..candidates.len())
            .min_by(|&a, &b| {
                let (a, b) = (&candidates[a], &candidates[b]);
                a.cost
                    .total_cmp(&b.cost)
                    .then(a.rels.len().cmp(&b.rels.len()))
                    .then(a.rels.cmp(&b.rels))
            })
            .expect("candidates is not empty");
        found.push(candidates.swap_remove(best));
    }
    Ok(found)
}

/// One search configuration: the graph, the end node and its coordinates.
struct Search<'a> {
    graph: &'a dyn RouteGraph,
    end: NodeId,
    end_at: Option<(f64, f64)>,
    options: &'a SearchOptions,
}

impl<'a> Search<'a> {
    fn new(
        graph: &'a dyn RouteGraph,
        end: NodeId,
        options: &'a SearchOptions,
    ) -> Result<Search<'a>> {
        let end_at = match options.goal {
            Goal::Dijkstra => None,
            Goal::AStar => Some(coordinates_of(graph, end)?),
        };
        Ok(Search {
            graph,
            end,
            end_at,
            options,
        })
    }

    /// The weight to use for relationship `rel` whose property read `raw`.
    fn weight(&self, rel: RelId, raw: f64) -> Result<f64> {
        let weight = if raw.is_nan() {
            self.options.default_weight.ok_or_else(|| {
                Error::new(
                    ErrorKind::ProcedureError,
                    format!(
                        "{} has no numeric `{}` property and no default weight was given",
                        self.graph.describe_rel(rel),
                        self.options.weight_name
                    ),
                )
            })?
        } else {
            raw
        };
        if !(weight >= 0.0 && weight.is_finite()) {
            return Err(Error::new(
                ErrorKind::ProcedureError,
                format!(
                    "{} has weight {weight} (`{}`): weights must be finite and not negative",
                    self.graph.describe_rel(rel),
                    self.options.weight_name
                ),
            ));
        }
        Ok(weight)
    }

    fn run(
        &self,
        start: NodeId,
        banned: &Banned,
        stats: &mut SearchStats,
    ) -> Result<Option<Route>> {
        stats.searches += 1;
        let mut reached: HashMap<NodeId, Reached, IdBuildHasher> = HashMap::default();
        let mut heap = BinaryHeap::new();
        let mut batch = WeightedBatch::default();
        let mut places: Vec<Option<(f64, f64)>> = Vec::new();
        let start_h = match self.end_at {
            Some(end_at) => heuristic(coordinates_of(self.graph, start)?, end_at),
            None => 0.0,
        };
        reached.insert(
            start,
            Reached {
                cost: 0.0,
                pred: None,
                settled: false,
            },
        );
        heap.push(Queued {
            estimate: start_h,
            cost: 0.0,
            node: start,
        });
        let mut settled_here = 0u64;
        while let Some(Queued { cost, node, .. }) = heap.pop() {
            let entry = reached.get_mut(&node).expect("queued nodes are reached");
            if entry.settled || cost > entry.cost {
                continue;
            }
            entry.settled = true;
            if node == self.end {
                return Ok(Some(path_to(&reached, node)));
            }
            settled_here += 1;
            stats.settled += 1;
            if settled_here.is_multiple_of(CANCEL_CHECK_EVERY) {
                self.graph.check_cancelled()?;
            }
            if self.end_at.is_some() {
                self.graph
                    .expand_located(&[node], &mut batch, &mut places)?;
            } else {
                self.graph.expand(&[node], &mut batch)?;
            }
            let range = batch.range(0);
            stats.relationships += range.len() as u64;
            for (k, i) in range.enumerate() {
                let (next, rel) = (batch.neighbours[i], batch.rels[i]);
                if banned.nodes.contains(&next) || banned.rels.contains(&rel) {
                    continue;
                }
                let w = self.weight(rel, batch.weights[i])?;
                let next_cost = cost + w;
                let improves = match reached.get(&next) {
                    Some(r) => !r.settled && next_cost < r.cost,
                    None => true,
                };
                if !improves {
                    continue;
                }
                let h = match self.end_at {
                    Some(end_at) => {
                        let at = places
                            .get(k)
                            .copied()
                            .flatten()
                            .ok_or_else(|| no_coordinates(self.graph, next))?;
                        heuristic(at, end_at)
                    }
                    None => 0.0,
                };
                reached.insert(
                    next,
                    Reached {
                        cost: next_cost,
                        pred: Some((node, rel, w)),
                        settled: false,
                    },
                );
                heap.push(Queued {
                    estimate: next_cost + h,
                    cost: next_cost,
                    node: next,
                });
            }
        }
        Ok(None)
    }
}

#[inline]
fn heuristic(at: (f64, f64), end: (f64, f64)) -> f64 {
    great_circle_m(at, end) * HEURISTIC_SCALE
}

fn no_coordinates(graph: &dyn RouteGraph, node: NodeId) -> Error {
    Error::new(
        ErrorKind::ProcedureError,
        format!(
            "{} has no numeric latitude and longitude, which A* needs",
            graph.describe_node(node)
        ),
    )
}

fn coordinates_of(graph: &dyn RouteGraph, node: NodeId) -> Result<(f64, f64)> {
    let mut out = Vec::with_capacity(1);
    graph.coordinates(&[node], &mut out)?;
    out.first()
        .copied()
        .flatten()
        .ok_or_else(|| no_coordinates(graph, node))
}

/// Follows predecessors back from `end`.
fn path_to(reached: &HashMap<NodeId, Reached, IdBuildHasher>, end: NodeId) -> Route {
    let mut nodes = vec![end];
    let mut rels = Vec::new();
    let mut weights = Vec::new();
    let mut at = end;
    while let Some((pred, rel, w)) = reached[&at].pred {
        nodes.push(pred);
        rels.push(rel);
        weights.push(w);
        at = pred;
    }
    nodes.reverse();
    rels.reverse();
    weights.reverse();
    Route {
        cost: reached[&end].cost,
        nodes,
        rels,
        weights,
    }
}

#[cfg(test)]
mod tests;
