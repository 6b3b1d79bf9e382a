//! What the output formats need to know about graph entities.
//!
//! A [`Value`] refers to nodes and relationships by id only; printing one
//! needs its labels, type, endpoints and properties. [`GraphView`] is that
//! lookup, implemented over a storage snapshot (the one the query ran on) and,
//! in tests, over a small in-memory graph.

use rhizome_common::{NodeId, RelId, Result, Value};
use std::collections::BTreeMap;

/// Properties of an entity, ordered by key.
pub type Properties = BTreeMap<String, Value>;

/// Read access to the entities a result refers to.
pub trait GraphView {
    /// The labels of node `id`.
    fn node_labels(&self, id: NodeId) -> Result<Vec<String>>;
    /// The properties of node `id`.
    fn node_properties(&self, id: NodeId) -> Result<Properties>;
    /// The type of relationship `id`.
    fn rel_type(&self, id: RelId) -> Result<String>;
    /// The start and end node of relationship `id`.
    fn rel_endpoints(&self, id: RelId) -> Result<(NodeId, NodeId)>;
    /// The properties of relationship `id`.
    fn rel_properties(&self, id: RelId) -> Result<Properties>;
}

/// A view of no graph, for results that hold no entities: looking an entity
/// up through it is an internal error.
#[cfg(test)]
pub struct NoGraph;

#[cfg(test)]
impl NoGraph {
    fn missing<T>(what: &str, id: u64) -> Result<T> {
        Err(rhizome_common::Error::internal(format!(
            "{what} {id} appears in a result that has no graph to resolve it"
        )))
    }
}

#[cfg(test)]
impl GraphView for NoGraph {
    fn node_labels(&self, id: NodeId) -> Result<Vec<String>> {
        NoGraph::missing("node", id)
    }
    fn node_properties(&self, id: NodeId) -> Result<Properties> {
        NoGraph::missing("node", id)
    }
    fn rel_type(&self, id: RelId) -> Result<String> {
        NoGraph::missing("relationship", id)
    }
    fn rel_endpoints(&self, id: RelId) -> Result<(NodeId, NodeId)> {
        NoGraph::missing("relationship", id)
    }
    fn rel_properties(&self, id: RelId) -> Result<Properties> {
        NoGraph::missing("relationship", id)
    }
}

/// A small in-memory graph for formatting tests.
#[cfg(test)]
pub mod test_graph {
    use super::*;
    use rhizome_common::Error;

    /// Nodes `(labels, properties)` indexed by id; relationships
    /// `(type, start, end, properties)` indexed by id.
    #[derive(Default)]
    pub struct TestGraph {
        pub nodes: Vec<(Vec<String>, Properties)>,
        pub rels: Vec<(String, NodeId, NodeId, Properties)>,
    }

    /// Builds a property map from `(key, value)` pairs.
    pub fn props(pairs: &[(&str, Value)]) -> Properties {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    impl TestGraph {
        fn node(&self, id: NodeId) -> Result<&(Vec<String>, Properties)> {
            self.nodes
                .get(id as usize)
                .ok_or_else(|| Error::internal(format!("no node {id}")))
        }
        fn rel(&self, id: RelId) -> Result<&(String, NodeId, NodeId, Properties)> {
            self.rels
                .get(id as usize)
                .ok_or_else(|| Error::internal(format!("no relationship {id}")))
        }
    }

    impl GraphView for TestGraph {
        fn node_labels(&self, id: NodeId) -> Result<Vec<String>> {
            Ok(self.node(id)?.0.clone())
        }
        fn node_properties(&self, id: NodeId) -> Result<Properties> {
            Ok(self.node(id)?.1.clone())
        }
        fn rel_type(&self, id: RelId) -> Result<String> {
            Ok(self.rel(id)?.0.clone())
        }
        fn rel_endpoints(&self, id: RelId) -> Result<(NodeId, NodeId)> {
            let r = self.rel(id)?;
            Ok((r.1, r.2))
        }
        fn rel_properties(&self, id: RelId) -> Result<Properties> {
            Ok(self.rel(id)?.3.clone())
        }
    }
}
