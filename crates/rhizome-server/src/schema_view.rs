//! `CALL db.schema.visualization()` as Neo4j answers it: one virtual node
//! per label and one virtual relationship per (start label, type, end
//! label) that occurs in the data, for tools that draw the schema.
//!
//! The entities are virtual (negative ids, as Neo4j's), so they are built
//! as PackStream structures here rather than as Rhizome values, which
//! always name stored entities.

use crate::packstream::{map, PackValue};
use rhizome_storage::GraphRead;

/// True if `query` is a plain call of the procedure.
pub fn is_call(query: &str) -> bool {
    let words: Vec<String> = query
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    matches!(
        words
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        [
            "call",
            "db.schema.visualization()" | "db.schema.visualization"
        ] | ["call", "db.schema.visualization", "()"]
    )
}

/// The columns of the answer.
pub const COLUMNS: [&str; 2] = ["nodes", "relationships"];

/// The answer's one row, from `graph`'s catalog and statistics, with
/// element ids for Bolt 5 (`v5`).
pub fn visualization(graph: &dyn GraphRead, v5: bool) -> Vec<PackValue> {
    let catalog = graph.catalog();
    let stats = graph.statistics();
    let node_id = |label: u32| -(label as i64) - 1;
    let nodes = catalog
        .labels
        .names()
        .iter()
        .enumerate()
        .map(|(label, name)| {
            let indexes: Vec<PackValue> = stats
                .indexes
                .iter()
                .filter(|i| i.label == label as u32)
                .map(|i| catalog.property_key_name(i.key).into())
                .collect();
            let mut fields = vec![
                PackValue::Int(node_id(label as u32)),
                PackValue::List(vec![name.as_str().into()]),
                map([
                    ("name", name.as_str().into()),
                    ("indexes", PackValue::List(indexes)),
                    ("constraints", PackValue::List(vec![])),
                ]),
            ];
            if v5 {
                fields.push(node_id(label as u32).to_string().into());
            }
            PackValue::Struct(0x4E, fields)
        })
        .collect();
    let relationships = stats
        .triples
        .iter()
        .filter(|t| t.count > 0)
        .enumerate()
        .map(|(i, t)| {
            let id = -(i as i64) - 1;
            let name = catalog.rel_type_name(t.rel_type);
            let (start, end) = (node_id(t.source), node_id(t.target));
            let mut fields = vec![
                PackValue::Int(id),
                PackValue::Int(start),
                PackValue::Int(end),
                name.into(),
                map([("name", name.into())]),
            ];
            if v5 {
                fields.extend([
                    id.to_string().into(),
                    start.to_string().into(),
                    end.to_string().into(),
                ]);
            }
            PackValue::Struct(0x52, fields)
        })
        .collect();
    vec![PackValue::List(nodes), PackValue::List(relationships)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_calls_are_recognised() {
        assert!(is_call("CALL db.schema.visualization()"));
        assert!(is_call("call  DB.SCHEMA.VISUALIZATION() ;"));
        assert!(!is_call(
            "CALL db.schema.visualization() YIELD nodes RETURN size(nodes)"
        ));
        assert!(!is_call("CALL db.labels()"));
    }
}
