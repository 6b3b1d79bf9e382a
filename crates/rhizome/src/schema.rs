//! The shell's `:schema` and `:stats` reports, read from the catalog and the
//! statistics storage recorded when the database was written.

use crate::format::{render_grid, Cell};
use rhizome_storage::{Database, GraphRead, Snapshot};
use std::fmt::Write;

/// Property-key counts are computed by a scan of every entity; above this
/// many entities `:schema` lists the keys without counts.
const PROPERTY_SCAN_LIMIT: u64 = 2_000_000;

fn text(s: impl Into<String>) -> Cell {
    Cell::new(s.into(), false)
}

fn number(n: impl ToString) -> Cell {
    Cell::new(n.to_string(), true)
}

/// Labels, relationship types (with the label patterns they connect) and
/// property keys, each with counts.
pub fn render_schema(db: &Database) -> String {
    let snapshot = db.snapshot();
    let catalog = db.catalog();
    let stats = db.statistics();
    let mut out = String::new();

    let labels: Vec<Vec<Cell>> = catalog
        .labels
        .names()
        .iter()
        .enumerate()
        .map(|(id, name)| {
            let count = stats.label_counts.get(id).copied().unwrap_or(0);
            vec![text(format!(":{name}")), number(count)]
        })
        .collect();
    let _ = writeln!(out, "Node labels ({}):", labels.len());
    out.push_str(&render_grid(&["label".into(), "nodes".into()], &labels));

    let mut types = Vec::new();
    for (id, name) in catalog.rel_types.names().iter().enumerate() {
        let count = stats.rel_types.get(id).map_or(0, |s| s.count);
        let patterns: Vec<String> = stats
            .triples
            .iter()
            .filter(|t| t.rel_type as usize == id)
            .map(|t| {
                format!(
                    "(:{})-[:{name}]->(:{}) {}",
                    catalog.label_name(t.source),
                    catalog.label_name(t.target),
                    t.count
                )
            })
            .collect();
        types.push(vec![
            text(format!(":{name}")),
            number(count),
            text(patterns.join(", ")),
        ]);
    }
    let _ = writeln!(out, "Relationship types ({}):", types.len());
    out.push_str(&render_grid(
        &["type".into(), "relationships".into(), "patterns".into()],
        &types,
    ));

    let keys = catalog.property_keys.names();
    let _ = writeln!(out, "Property keys ({}):", keys.len());
    match property_key_counts(&snapshot) {
        Some((nodes, rels)) => {
            let rows: Vec<Vec<Cell>> = keys
                .iter()
                .enumerate()
                .map(|(id, key)| vec![text(key.clone()), number(nodes[id]), number(rels[id])])
                .collect();
            out.push_str(&render_grid(
                &["key".into(), "nodes".into(), "relationships".into()],
                &rows,
            ));
        }
        None => {
            let rows: Vec<Vec<Cell>> = keys.iter().map(|k| vec![text(k.clone())]).collect();
            out.push_str(&render_grid(&["key".into()], &rows));
            out.push_str("(counts are not computed for graphs this large)\n");
        }
    }
    out
}

/// For each property key, how many nodes and relationships have it; `None`
/// for graphs too large to scan interactively.
fn property_key_counts(snapshot: &Snapshot) -> Option<(Vec<u64>, Vec<u64>)> {
    let stats = snapshot.statistics();
    if stats.node_count + stats.relationship_count > PROPERTY_SCAN_LIMIT {
        return None;
    }
    let keys = snapshot.catalog().property_keys.len();
    let (mut nodes, mut rels) = (vec![0u64; keys], vec![0u64; keys]);
    let mut props = Vec::new();
    for node in 0..snapshot.node_bound() {
        props.clear();
        snapshot.node_properties(node, &mut props);
        for (key, _) in &props {
            nodes[*key as usize] += 1;
        }
    }
    for (_, first, count) in snapshot.rel_type_ranges() {
        for rel in first..first + count {
            props.clear();
            snapshot.rel_properties(rel, &mut props);
            for (key, _) in &props {
                rels[*key as usize] += 1;
            }
        }
    }
    Some((nodes, rels))
}

/// Totals, per-type degree summaries and where the database lives.
pub fn render_stats(db: &Database) -> String {
    let catalog = db.catalog();
    let stats = db.statistics();
    let mut out = String::new();
    let _ = writeln!(out, "database:       {}", db.path().display());
    let _ = writeln!(out, "nodes:          {}", stats.node_count);
    let _ = writeln!(out, "relationships:  {}", stats.relationship_count);
    let _ = writeln!(out, "labels:         {}", catalog.labels.len());
    let _ = writeln!(out, "rel. types:     {}", catalog.rel_types.len());
    let _ = writeln!(out, "property keys:  {}", catalog.property_keys.len());
    let _ = writeln!(out, "indexes:        {}", stats.indexes.len());
    let rows: Vec<Vec<Cell>> = catalog
        .rel_types
        .names()
        .iter()
        .zip(&stats.rel_types)
        .map(|(name, s)| {
            vec![
                text(format!(":{name}")),
                number(s.count),
                number(format!("{:.1}", s.outgoing.mean)),
                number(s.outgoing.max),
                number(format!("{:.1}", s.incoming.mean)),
                number(s.incoming.max),
            ]
        })
        .collect();
    if !rows.is_empty() {
        out.push_str("Degrees (over nodes with at least one relationship of the type):\n");
        out.push_str(&render_grid(
            &[
                "type".into(),
                "relationships".into(),
                "out mean".into(),
                "out max".into(),
                "in mean".into(),
                "in max".into(),
            ],
            &rows,
        ));
    }
    out
}
