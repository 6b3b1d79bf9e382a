//! The graph a route search reads: weighted neighbours of a batch of nodes
//! and node coordinates.
//!
//! The shape follows `rhizome_storage::GraphRead::neighbours_batch` (a batch
//! of nodes in, flat neighbour arrays with offsets out), so an implementation
//! over an external source can serve a whole batch in one round trip, and so
//! the trait can later be implemented once over any `GraphRead`.

use rhizome_common::{NodeId, RelId, Result};

/// Neighbours of a batch of nodes, flattened: the relationships of
/// `nodes[i]` are entries `offsets[i]..offsets[i + 1]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WeightedBatch {
    /// `nodes.len() + 1` offsets.
    pub offsets: Vec<usize>,
    /// Neighbour ids.
    pub neighbours: Vec<NodeId>,
    /// Relationship ids, parallel to `neighbours`.
    pub rels: Vec<RelId>,
    /// The weight property of each relationship as a float; NaN when the
    /// relationship has none or it is not a number (the search applies the
    /// default weight or fails).
    pub weights: Vec<f64>,
}

impl WeightedBatch {
    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        self.offsets.clear();
        self.neighbours.clear();
        self.rels.clear();
        self.weights.clear();
    }

    /// Appends one relationship of the current node.
    #[inline]
    pub fn push(&mut self, neighbour: NodeId, rel: RelId, weight: f64) {
        self.neighbours.push(neighbour);
        self.rels.push(rel);
        self.weights.push(weight);
    }

    /// Ends the current node's list (call once per node, after its pushes;
    /// the first call also writes the leading 0 offset).
    #[inline]
    pub fn end_node(&mut self) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.offsets.push(self.neighbours.len());
    }

    /// The entries of the `i`-th node of the batch.
    #[inline]
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }
}

/// A graph route searches run over. Implementations decide which
/// relationships are followed (types and directions) and which property is
/// the weight; the search only sees numbers.
///
/// Contract: for the same arguments the answers do not change during one
/// search; errors (a backend that went away, a cancelled query) stop the
/// search and are returned as they are.
pub trait RouteGraph {
    /// Appends the followed relationships of each of `nodes`, in order, to
    /// `out` (see [`WeightedBatch::end_node`]); `out` is cleared first.
    fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()>;

    /// Appends the (latitude, longitude) in degrees of each of `nodes` to
    /// `out`, `None` where a node has no numeric coordinates.
    fn coordinates(&self, nodes: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()>;

    /// [`RouteGraph::expand`], and the coordinates of every neighbour found
    /// in `places` (cleared first; parallel to `out.neighbours`), as
    /// [`RouteGraph::coordinates`] gives them: what A* reads per expanded
    /// node. The default calls the two; a graph that keeps neighbours'
    /// coordinates beside its adjacency lists answers both at once.
    fn expand_located(
        &self,
        nodes: &[NodeId],
        out: &mut WeightedBatch,
        places: &mut Vec<Option<(f64, f64)>>,
    ) -> Result<()> {
        self.expand(nodes, out)?;
        places.clear();
        self.coordinates(&out.neighbours, places)
    }

    /// Called once before a search from `start` to `end` (Dijkstra, A*, or
    /// the first of Yen's searches) reads anything else: a graph that
    /// fetches from elsewhere may fetch ahead the part of the graph such a
    /// route is likely to cross (a source's `ellipse` prefetcher). The
    /// default does nothing; answers must not depend on it.
    fn prepare_route(&self, start: NodeId, end: NodeId) -> Result<()> {
        let _ = (start, end);
        Ok(())
    }

    /// Called every few hundred settled nodes; an error (timeout,
    /// cancellation) stops the search.
    fn check_cancelled(&self) -> Result<()> {
        Ok(())
    }

    /// How a relationship is named in errors (e.g. its id, or its key in a source).
    fn describe_rel(&self, rel: RelId) -> String {
        format!("relationship {rel}")
    }

    /// How a node is named in errors.
    fn describe_node(&self, node: NodeId) -> String {
        format!("node {node}")
    }
}
