//! Records as Rhizome values: PackStream values from a server become
//! [`Value`]s, and the nodes and relationships they carry (labels, type,
//! endpoints, properties) are kept in an [`Entities`] store, so a front end
//! can print them as it prints a local result.
//!
//! Temporal structures go through the server's own parameter decoding
//! ([`crate::values::to_value`]); Node, Relationship, UnboundRelationship
//! and Path structures are read here. Entity ids are the integer ids the
//! server sends.

use crate::packstream::PackValue;
use crate::values::{tag, to_value};
use rhizome_common::{NodeId, PathValue, RelId, Value};
use std::collections::{BTreeMap, HashMap};

/// A node as the server described it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeData {
    /// Its labels.
    pub labels: Vec<String>,
    /// Its properties.
    pub properties: BTreeMap<String, Value>,
}

/// A relationship as the server described it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RelData {
    /// Its type.
    pub rel_type: String,
    /// Its start node.
    pub start: NodeId,
    /// Its end node.
    pub end: NodeId,
    /// Its properties.
    pub properties: BTreeMap<String, Value>,
}

/// The entities seen in the records of a result.
#[derive(Debug, Default)]
pub struct Entities {
    /// Nodes by id.
    pub nodes: HashMap<NodeId, NodeData>,
    /// Relationships by id.
    pub rels: HashMap<RelId, RelData>,
}

impl Entities {
    /// Converts one record's values, remembering the entities in them.
    pub fn record(&mut self, values: Vec<PackValue>) -> Result<Vec<Value>, String> {
        values.into_iter().map(|v| self.value(v)).collect()
    }

    /// Converts one value.
    pub fn value(&mut self, value: PackValue) -> Result<Value, String> {
        Ok(match value {
            PackValue::List(items) => Value::List(
                items
                    .into_iter()
                    .map(|v| self.value(v))
                    .collect::<Result<_, _>>()?,
            ),
            PackValue::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| Ok((k, self.value(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            PackValue::Struct(tag::NODE, fields) => Value::Node(self.node(fields)?),
            PackValue::Struct(tag::RELATIONSHIP, fields) => {
                Value::Relationship(self.relationship(fields)?)
            }
            PackValue::Struct(tag::PATH, fields) => Value::Path(self.path(fields)?),
            PackValue::Struct(tag::UNBOUND_RELATIONSHIP, _) => {
                return Err("an UnboundRelationship outside a Path".into())
            }
            other => to_value(other)?,
        })
    }

    fn properties(&mut self, value: PackValue) -> Result<BTreeMap<String, Value>, String> {
        match self.value(value)? {
            Value::Map(m) => Ok(m),
            other => Err(format!(
                "properties must be a map, not {}",
                other.type_name()
            )),
        }
    }

    fn node(&mut self, fields: Vec<PackValue>) -> Result<NodeId, String> {
        let [id, labels, props, ..] = at_least::<3>(fields, "Node")?;
        let id = entity_id(&id)?;
        let labels = match labels {
            PackValue::List(labels) => labels
                .into_iter()
                .map(|l| match l {
                    PackValue::String(s) => Ok(s),
                    other => Err(format!("a label is a {}, not a String", other.type_name())),
                })
                .collect::<Result<_, _>>()?,
            other => return Err(format!("labels are a {}, not a List", other.type_name())),
        };
        let properties = self.properties(props)?;
        self.nodes.insert(id, NodeData { labels, properties });
        Ok(id)
    }

    fn relationship(&mut self, fields: Vec<PackValue>) -> Result<RelId, String> {
        let [id, start, end, rel_type, props, ..] = at_least::<5>(fields, "Relationship")?;
        let data = RelData {
            rel_type: string(rel_type, "a relationship type")?,
            start: entity_id(&start)?,
            end: entity_id(&end)?,
            properties: self.properties(props)?,
        };
        let id = entity_id(&id)?;
        self.rels.insert(id, data);
        Ok(id)
    }

    fn path(&mut self, fields: Vec<PackValue>) -> Result<PathValue, String> {
        let [nodes, rels, indices] = at_least::<3>(fields, "Path")?;
        let list = |v: PackValue, what: &str| match v {
            PackValue::List(items) => Ok(items),
            other => Err(format!("a path's {what} are a {}", other.type_name())),
        };
        let nodes = list(nodes, "nodes")?
            .into_iter()
            .map(|n| match n {
                PackValue::Struct(tag::NODE, fields) => self.node(fields),
                other => Err(format!("a path node is a {}", other.type_name())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut unbound = Vec::new();
        for rel in list(rels, "relationships")? {
            let PackValue::Struct(tag::UNBOUND_RELATIONSHIP, fields) = rel else {
                return Err(format!("a path relationship is a {}", rel.type_name()));
            };
            let [id, rel_type, props, ..] = at_least::<3>(fields, "UnboundRelationship")?;
            unbound.push((
                entity_id(&id)?,
                string(rel_type, "a relationship type")?,
                self.properties(props)?,
            ));
        }
        let indices = list(indices, "indices")?
            .iter()
            .map(|i| match i {
                PackValue::Int(i) => Ok(*i),
                other => Err(format!("a path index is a {}", other.type_name())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if indices.len() % 2 != 0 {
            return Err("a path has an odd number of indices".into());
        }
        let Some(&first) = nodes.first() else {
            return Err("a path has no nodes".into());
        };
        let mut path = PathValue {
            nodes: vec![first],
            rels: Vec::new(),
        };
        for pair in indices.chunks_exact(2) {
            let (rel, next) = (pair[0], pair[1]);
            let out_of_range = || format!("path index {rel}/{next} is out of range");
            let (id, rel_type, properties) = usize::try_from(rel.unsigned_abs())
                .ok()
                .and_then(|r| unbound.get(r.wrapping_sub(1)))
                .ok_or_else(out_of_range)?
                .clone();
            let next = usize::try_from(next)
                .ok()
                .and_then(|n| nodes.get(n))
                .copied()
                .ok_or_else(out_of_range)?;
            let previous = *path.nodes.last().unwrap_or(&first);
            let (start, end) = if rel > 0 {
                (previous, next)
            } else {
                (next, previous)
            };
            self.rels.insert(
                id,
                RelData {
                    rel_type,
                    start,
                    end,
                    properties,
                },
            );
            path.rels.push(id);
            path.nodes.push(next);
        }
        Ok(path)
    }
}

/// The first `N` fields of a structure (more are allowed: Bolt 5 appends
/// element ids).
fn at_least<const N: usize>(fields: Vec<PackValue>, what: &str) -> Result<[PackValue; N], String> {
    let count = fields.len();
    if count < N {
        return Err(format!("a {what} needs {N} fields, it has {count}"));
    }
    let mut fields = fields.into_iter();
    Ok(std::array::from_fn(|_| {
        fields.next().unwrap_or(PackValue::Null)
    }))
}

fn entity_id(value: &PackValue) -> Result<u64, String> {
    match value {
        PackValue::Int(i) if *i >= 0 => Ok(*i as u64),
        other => Err(format!(
            "an entity id must be a non-negative Integer, not {other:?}"
        )),
    }
}

fn string(value: PackValue, what: &str) -> Result<String, String> {
    match value {
        PackValue::String(s) => Ok(s),
        other => Err(format!("{what} is a {}, not a String", other.type_name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packstream::map;

    fn node(id: i64, label: &str, name: &str) -> PackValue {
        PackValue::Struct(
            tag::NODE,
            vec![
                id.into(),
                PackValue::List(vec![label.into()]),
                map([("name", name.into())]),
                format!("n:{id}").into(),
            ],
        )
    }

    #[test]
    fn nodes_relationships_and_paths_become_values_and_entities() {
        let mut entities = Entities::default();
        let rel = PackValue::Struct(
            tag::RELATIONSHIP,
            vec![
                7.into(),
                1.into(),
                2.into(),
                "KNOWS".into(),
                map([]),
                "r:7".into(),
                "n:1".into(),
                "n:2".into(),
            ],
        );
        // (2)<-[:KNOWS]-(1): walked from node 2 backwards.
        let path = PackValue::Struct(
            tag::PATH,
            vec![
                PackValue::List(vec![node(2, "P", "Bob"), node(1, "P", "Ada")]),
                PackValue::List(vec![PackValue::Struct(
                    tag::UNBOUND_RELATIONSHIP,
                    vec![7.into(), "KNOWS".into(), map([("since", 2020.into())])],
                )]),
                PackValue::List(vec![(-1).into(), 1.into()]),
            ],
        );
        let values = entities
            .record(vec![
                node(1, "P", "Ada"),
                rel,
                path,
                PackValue::Struct(0x44, vec![1.into()]),
            ])
            .unwrap();
        assert_eq!(values[0], Value::Node(1));
        assert_eq!(values[1], Value::Relationship(7));
        assert_eq!(
            values[2],
            Value::Path(PathValue {
                nodes: vec![2, 1],
                rels: vec![7]
            })
        );
        assert!(matches!(values[3], Value::Date(_)));
        assert_eq!(entities.nodes[&2].labels, ["P"]);
        let knows = &entities.rels[&7];
        assert_eq!((knows.start, knows.end), (1, 2));
        assert_eq!(knows.properties["since"], Value::Int(2020));
    }

    #[test]
    fn malformed_entities_say_what_is_wrong() {
        let mut e = Entities::default();
        let short = PackValue::Struct(tag::NODE, vec![1.into()]);
        assert!(e.value(short).unwrap_err().contains("needs 3 fields"));
        let bad_path = PackValue::Struct(
            tag::PATH,
            vec![
                PackValue::List(vec![node(1, "P", "a")]),
                PackValue::List(vec![]),
                PackValue::List(vec![1.into(), 0.into()]),
            ],
        );
        assert!(e.value(bad_path).unwrap_err().contains("out of range"));
        let negative = PackValue::Struct(
            tag::NODE,
            vec![(-1).into(), PackValue::List(vec![]), map([])],
        );
        assert!(e.value(negative).unwrap_err().contains("non-negative"));
    }
}
