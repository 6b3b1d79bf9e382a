//! [`RouteGraph`] over a native storage [`Snapshot`]: adjacency lists of the
//! chosen types and directions, the weight read as a float column, and two
//! node properties as coordinates.

use crate::expand::{ExpandSpec, TypeDirection};
use crate::graph::{RouteGraph, WeightedBatch};
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_storage::{Direction, GraphRead, PropertyKeyId, RelFloats, RelTypeId, Snapshot};

/// One adjacency to follow: a type, a direction and its weight column.
struct Lists<'a> {
    rel_type: RelTypeId,
    direction: Direction,
    weights: Option<RelFloats<'a>>,
}

/// A snapshot seen as a weighted graph for route searches.
pub struct NativeGraph<'a> {
    snapshot: &'a Snapshot,
    lists: Vec<Lists<'a>>,
    coordinates: Option<(PropertyKeyId, PropertyKeyId)>,
    cancelled: Option<&'a (dyn Fn() -> Result<()> + 'a)>,
}

impl<'a> NativeGraph<'a> {
    /// Follows `specs`, weighs relationships by property `weight` and reads
    /// coordinates from the node properties `(lat, lon)` when given. Types
    /// and keys the database does not know have no relationships and no
    /// values (like an empty graph), not errors.
    pub fn new(
        snapshot: &'a Snapshot,
        specs: &[ExpandSpec],
        weight: &str,
        coordinates: Option<(&str, &str)>,
    ) -> NativeGraph<'a> {
        let catalog = snapshot.catalog();
        let weight_key = catalog.property_keys.id(weight);
        let mut lists = Vec::new();
        for spec in specs {
            let types: Vec<RelTypeId> = match &spec.rel_type {
                Some(name) => catalog.rel_types.id(name).into_iter().collect(),
                None => (0..catalog.rel_types.len() as RelTypeId).collect(),
            };
            let directions: &[Direction] = match spec.direction {
                TypeDirection::Outgoing => &[Direction::Outgoing],
                TypeDirection::Incoming => &[Direction::Incoming],
                TypeDirection::Both => &[Direction::Outgoing, Direction::Incoming],
            };
            for &rel_type in &types {
                for &direction in directions {
                    let exists = lists
                        .iter()
                        .any(|l: &Lists<'_>| l.rel_type == rel_type && l.direction == direction);
                    if !exists {
                        lists.push(Lists {
                            rel_type,
                            direction,
                            weights: weight_key.map(|k| snapshot.rel_floats(rel_type, k)),
                        });
                    }
                }
            }
        }
        let coordinates = coordinates.and_then(|(lat, lon)| {
            Some((
                catalog.property_keys.id(lat)?,
                catalog.property_keys.id(lon)?,
            ))
        });
        NativeGraph {
            snapshot,
            lists,
            coordinates,
            cancelled: None,
        }
    }

    /// Asks `check` every few hundred settled nodes whether to stop.
    pub fn with_cancel(mut self, check: &'a (dyn Fn() -> Result<()> + 'a)) -> NativeGraph<'a> {
        self.cancelled = Some(check);
        self
    }
}

fn number(value: Value) -> Option<f64> {
    match value {
        Value::Float(x) if x.is_finite() => Some(x),
        Value::Int(i) => Some(i as f64),
        _ => None,
    }
}

impl RouteGraph for NativeGraph<'_> {
    fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
        out.clear();
        for &node in nodes {
            for lists in &self.lists {
                let adjacency = self
                    .snapshot
                    .adjacency(node, lists.rel_type, lists.direction);
                for (i, neighbour) in adjacency.neighbours().iter().enumerate() {
                    let rel = adjacency.rel_id(i);
                    let weight = lists
                        .weights
                        .as_ref()
                        .and_then(|w| w.get(rel))
                        .unwrap_or(f64::NAN);
                    out.push(neighbour, rel, weight);
                }
            }
            out.end_node();
        }
        Ok(())
    }

    fn coordinates(&self, nodes: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
        for &node in nodes {
            out.push(self.coordinates.and_then(|(lat, lon)| {
                Some((
                    number(self.snapshot.node_property(node, lat))?,
                    number(self.snapshot.node_property(node, lon))?,
                ))
            }));
        }
        Ok(())
    }

    fn check_cancelled(&self) -> Result<()> {
        self.cancelled.map_or(Ok(()), |check| check())
    }

    fn describe_rel(&self, rel: RelId) -> String {
        match self.snapshot.relationship(rel) {
            Some(info) => format!(
                "relationship {rel} (:{} from node {} to node {})",
                self.snapshot.catalog().rel_types.name(info.rel_type),
                info.start,
                info.end
            ),
            None => format!("relationship {rel}"),
        }
    }
}
