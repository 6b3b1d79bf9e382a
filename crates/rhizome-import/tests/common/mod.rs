//! Helpers shared by the integration tests: writing CSV files and reading
//! an imported database back as plain values.

#![allow(dead_code)]

use rhizome_common::{NodeId, Value};
use rhizome_storage::{Database, GraphRead, Snapshot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A node as read back: sorted label names and properties by key name.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    pub labels: Vec<String>,
    pub props: BTreeMap<String, Value>,
}

/// Opens the database.
pub fn open(dir: &Path) -> Snapshot {
    Database::open(dir).unwrap().snapshot()
}

/// Every node of the database.
pub fn nodes(snapshot: &Snapshot) -> Vec<(NodeId, NodeRow)> {
    let catalog = snapshot.catalog();
    (0..snapshot.node_bound())
        .filter(|&n| snapshot.node_exists(n))
        .map(|n| {
            let mut labels: Vec<String> = snapshot
                .node_labels(n)
                .iter()
                .map(|&l| catalog.label_name(l).to_string())
                .collect();
            labels.sort();
            let mut props = Vec::new();
            snapshot.node_properties(n, &mut props);
            let props = props
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (catalog.property_key_name(k).to_string(), v))
                .collect();
            (n, NodeRow { labels, props })
        })
        .collect()
}

/// The node whose property `key` is `value`.
pub fn node_by(snapshot: &Snapshot, key: &str, value: Value) -> NodeRow {
    nodes(snapshot)
        .into_iter()
        .find(|(_, row)| row.props.get(key) == Some(&value))
        .map(|(_, row)| row)
        .unwrap_or_else(|| panic!("no node with {key} = {value:?}"))
}

/// Every relationship: (type, start props[key], end props[key], properties).
pub fn relationships(
    snapshot: &Snapshot,
    key: &str,
) -> Vec<(String, Value, Value, BTreeMap<String, Value>)> {
    let catalog = snapshot.catalog();
    let key_id = catalog.property_key_id(key).unwrap();
    let mut out = Vec::new();
    let ranges: Vec<_> = snapshot.rel_type_ranges().collect();
    for (_, base, count) in ranges {
        for rel in base..base + count {
            let info = snapshot.relationship(rel).unwrap();
            let mut props = Vec::new();
            snapshot.rel_properties(rel, &mut props);
            let props = props
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (catalog.property_key_name(k).to_string(), v))
                .collect();
            out.push((
                catalog.rel_type_name(info.rel_type).to_string(),
                snapshot.node_property(info.start, key_id),
                snapshot.node_property(info.end, key_id),
                props,
            ));
        }
    }
    out.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    out
}

pub fn s(text: &str) -> Value {
    Value::String(text.to_string())
}
