//! Side effects as the TCK defines them: differences in the sets of nodes,
//! relationships, property triples (entity, key, value) and distinct labels
//! observable before and after a query.
//!
//! [`GraphState::capture`] reads those sets from a snapshot and
//! [`SideEffects::between`] diffs two of them; that diff is the TCK's
//! definition and stays the authority. When the engine reports update
//! counters with a result, build a [`SideEffects`] from them field by field
//! and check it against the same expectation as a second opinion — but note
//! that storage's `WriteCounters` count operations (`labels_added` per node,
//! `properties_set` per assignment, creation included), while the TCK counts
//! observable differences (distinct labels, changed property triples), so the
//! two agree only for simple statements.

use rhizome_common::{NodeId, RelId, Value};
use rhizome_functions::display::format_value;
use rhizome_functions::EntityAccess;
use rhizome_storage::{GraphRead, Snapshot};
use std::collections::HashSet;
use std::fmt;

/// The observable contents of a graph, as the TCK's side-effect queries see them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphState {
    /// Existing nodes.
    pub nodes: HashSet<NodeId>,
    /// Existing relationships.
    pub relationships: HashSet<RelId>,
    /// Property triples: (entity, key, value printed in TCK syntax).
    pub properties: HashSet<(Entity, String, String)>,
    /// Distinct labels carried by at least one node.
    pub labels: HashSet<String>,
}

/// A node or a relationship, as the owner of a property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    /// A node.
    Node(NodeId),
    /// A relationship.
    Relationship(RelId),
}

impl GraphState {
    /// Reads the state visible in `snapshot`.
    pub fn capture(snapshot: &Snapshot) -> GraphState {
        let graph = rhizome_exec::context::GraphAccess(snapshot);
        let mut state = GraphState::default();
        for range in snapshot.node_ranges().iter() {
            for node in range.clone() {
                if !snapshot.node_exists(node) {
                    continue;
                }
                state.nodes.insert(node);
                if let Ok(labels) = graph.node_labels(node) {
                    state.labels.extend(labels);
                }
                if let Ok(props) = graph.node_properties(node) {
                    for (k, v) in props {
                        if v != Value::Null {
                            state.properties.insert((
                                Entity::Node(node),
                                k,
                                format_value(&v, &graph),
                            ));
                        }
                    }
                }
            }
        }
        for (_, first, count) in snapshot.rel_type_ranges() {
            for rel in first..first + count {
                if snapshot.relationship(rel).is_none() {
                    continue;
                }
                state.relationships.insert(rel);
                if let Ok(props) = graph.rel_properties(rel) {
                    for (k, v) in props {
                        if v != Value::Null {
                            state.properties.insert((
                                Entity::Relationship(rel),
                                k,
                                format_value(&v, &graph),
                            ));
                        }
                    }
                }
            }
        }
        state
    }
}

/// The TCK's side-effect quantities.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideEffects {
    /// `+nodes`
    pub nodes_created: u64,
    /// `-nodes`
    pub nodes_deleted: u64,
    /// `+relationships`
    pub relationships_created: u64,
    /// `-relationships`
    pub relationships_deleted: u64,
    /// `+properties`
    pub properties_set: u64,
    /// `-properties`
    pub properties_removed: u64,
    /// `+labels`
    pub labels_added: u64,
    /// `-labels`
    pub labels_removed: u64,
}

fn diff<T: Eq + std::hash::Hash>(a: &HashSet<T>, b: &HashSet<T>) -> u64 {
    a.difference(b).count() as u64
}

impl SideEffects {
    /// The side effects that turned `before` into `after`.
    pub fn between(before: &GraphState, after: &GraphState) -> SideEffects {
        SideEffects {
            nodes_created: diff(&after.nodes, &before.nodes),
            nodes_deleted: diff(&before.nodes, &after.nodes),
            relationships_created: diff(&after.relationships, &before.relationships),
            relationships_deleted: diff(&before.relationships, &after.relationships),
            properties_set: diff(&after.properties, &before.properties),
            properties_removed: diff(&before.properties, &after.properties),
            labels_added: diff(&after.labels, &before.labels),
            labels_removed: diff(&before.labels, &after.labels),
        }
    }

    /// Reads the expected side effects from a `the side effects should be:`
    /// table (`| +nodes | 1 |` rows; unnamed quantities are zero).
    pub fn from_table(table: &[Vec<String>]) -> Result<SideEffects, String> {
        let mut s = SideEffects::default();
        for row in table {
            let [name, count] = row.as_slice() else {
                return Err(format!("side effect row {row:?} is not `| name | count |`"));
            };
            let n: u64 = count
                .trim()
                .parse()
                .map_err(|_| format!("side effect count `{count}` is not a number"))?;
            let field = match name.trim() {
                "+nodes" => &mut s.nodes_created,
                "-nodes" => &mut s.nodes_deleted,
                "+relationships" => &mut s.relationships_created,
                "-relationships" => &mut s.relationships_deleted,
                "+properties" => &mut s.properties_set,
                "-properties" => &mut s.properties_removed,
                "+labels" => &mut s.labels_added,
                "-labels" => &mut s.labels_removed,
                other => return Err(format!("unknown side effect `{other}`")),
            };
            *field = n;
        }
        Ok(s)
    }

    fn entries(&self) -> [(&'static str, u64); 8] {
        [
            ("+nodes", self.nodes_created),
            ("-nodes", self.nodes_deleted),
            ("+relationships", self.relationships_created),
            ("-relationships", self.relationships_deleted),
            ("+properties", self.properties_set),
            ("-properties", self.properties_removed),
            ("+labels", self.labels_added),
            ("-labels", self.labels_removed),
        ]
    }
}

impl fmt::Display for SideEffects {
    /// Non-zero quantities, e.g. `+nodes 1, +properties 2`, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .entries()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_and_diffs_count_both_ways() {
        let table = vec![
            vec!["+nodes".to_string(), "2".to_string()],
            vec!["-labels".to_string(), "1".to_string()],
        ];
        let s = SideEffects::from_table(&table).unwrap();
        assert_eq!(s.to_string(), "+nodes 2, -labels 1");
        let mut before = GraphState::default();
        before.nodes.extend([1, 2]);
        before.labels.insert("A".into());
        let mut after = GraphState::default();
        after.nodes.extend([2, 3, 4]);
        let d = SideEffects::between(&before, &after);
        assert_eq!(d.nodes_created, 2);
        assert_eq!(d.nodes_deleted, 1);
        assert_eq!(d.labels_removed, 1);
        assert!(SideEffects::from_table(&[vec!["+x".into(), "1".into()]]).is_err());
    }
}
