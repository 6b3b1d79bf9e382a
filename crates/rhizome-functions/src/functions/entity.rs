//! Graph entity functions through [`EntityAccess`]: `id, elementId,
//! labels, type, properties, keys, startNode, endNode, nodes,
//! relationships, length`.
//!
//! Null gives null. A value of the wrong kind (e.g. `labels(1)`) is
//! `TypeError: InvalidArgumentValue`, as the TCK expects at runtime.

use crate::entity::EntityAccess;
use crate::errors::invalid_value;
use rhizome_common::{Result, Value};

fn wrong(name: &str, v: &Value) -> rhizome_common::Error {
    invalid_value(format!(
        "{name}() does not accept a value of type {}",
        v.type_name()
    ))
}

/// `id(x)` for nodes and relationships.
pub fn id(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) | Value::Relationship(id) => Value::Int(*id as i64),
        _ => return Err(wrong("id", v)),
    })
}

/// `elementId(x)`: the id as a string.
pub fn element_id(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => Value::String(format!("n:{id}")),
        Value::Relationship(id) => Value::String(format!("r:{id}")),
        _ => return Err(wrong("elementId", v)),
    })
}

/// `labels(node)`.
pub fn labels(v: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => Value::List(
            graph
                .node_labels(*id)?
                .into_iter()
                .map(Value::String)
                .collect(),
        ),
        _ => return Err(wrong("labels", v)),
    })
}

/// `type(relationship)`.
pub fn rel_type(v: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Relationship(id) => Value::String(graph.rel_type(*id)?),
        _ => return Err(wrong("type", v)),
    })
}

/// `properties(x)` for nodes, relationships and maps.
pub fn properties(v: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => Value::Map(graph.node_properties(*id)?),
        Value::Relationship(id) => Value::Map(graph.rel_properties(*id)?),
        Value::Map(m) => Value::Map(m.clone()),
        _ => return Err(wrong("properties", v)),
    })
}

/// `keys(x)` for nodes, relationships and maps (nodes and relationships
/// list only keys with non-null values).
pub fn keys(v: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    let strings = |keys: Vec<String>| Value::List(keys.into_iter().map(Value::String).collect());
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => strings(graph.node_properties(*id)?.into_keys().collect()),
        Value::Relationship(id) => strings(graph.rel_properties(*id)?.into_keys().collect()),
        Value::Map(m) => strings(m.keys().cloned().collect()),
        _ => return Err(wrong("keys", v)),
    })
}

/// `startNode(r)`.
pub fn start_node(v: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Relationship(id) => Value::Node(graph.rel_endpoints(*id)?.0),
        _ => return Err(wrong("startNode", v)),
    })
}

/// `endNode(r)`.
pub fn end_node(v: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Relationship(id) => Value::Node(graph.rel_endpoints(*id)?.1),
        _ => return Err(wrong("endNode", v)),
    })
}

/// `nodes(path)`.
pub fn nodes(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Path(p) => Value::List(p.nodes.iter().map(|n| Value::Node(*n)).collect()),
        _ => return Err(wrong("nodes", v)),
    })
}

/// `relationships(path)`.
pub fn relationships(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Path(p) => Value::List(p.rels.iter().map(|r| Value::Relationship(*r)).collect()),
        _ => return Err(wrong("relationships", v)),
    })
}

/// `length(path)`: the number of relationships (also accepts strings and
/// lists, as older Cypher did).
pub fn length(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Path(p) => Value::Int(p.rels.len() as i64),
        Value::String(s) => Value::Int(s.chars().count() as i64),
        Value::List(items) => Value::Int(items.len() as i64),
        _ => return Err(wrong("length", v)),
    })
}
