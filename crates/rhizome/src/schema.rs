//! The shell's `:schema` and `:stats` reports. Each is gathered into a
//! neutral report ([`SchemaReport`], [`StatsReport`]) and printed by one
//! renderer, whichever backend gathered it: a local database fills it from
//! its catalog and the statistics storage recorded when it was written
//! ([`local_schema`], [`local_stats`]); the Bolt client with Cypher over the
//! connection (`shell::remote`). Indexes and constraints come from `SHOW
//! INDEXES` / `SHOW CONSTRAINTS` for both.

use crate::engine::{QueryOptions, QueryResult};
use crate::format::{render_grid, Cell};
use rhizome_common::Value;
use rhizome_storage::{Database, GraphRead, Snapshot};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Property-key counts are computed by a scan of every entity; above this
/// many entities `:schema` lists the keys without counts.
pub const PROPERTY_SCAN_LIMIT: u64 = 2_000_000;

/// The statement listing indexes, and the columns `:schema` shows of it.
pub const SHOW_INDEXES: (&str, [&str; 6]) = (
    "SHOW INDEXES",
    [
        "name",
        "type",
        "entityType",
        "labelsOrTypes",
        "properties",
        "state",
    ],
);

/// The statement listing constraints, and the columns `:schema` shows of it.
pub const SHOW_CONSTRAINTS: (&str, [&str; 6]) = (
    "SHOW CONSTRAINTS",
    [
        "name",
        "type",
        "entityType",
        "labelsOrTypes",
        "properties",
        "ownedIndex",
    ],
);

/// Rows of `SHOW INDEXES` or `SHOW CONSTRAINTS` (the columns `:schema`
/// shows, in its order), or why they could not be listed.
pub type Listing = Result<Vec<Vec<Value>>, String>;

/// A relationship type in `:schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct RelTypeReport {
    /// The type's name.
    pub name: String,
    /// How many relationships have it.
    pub count: u64,
    /// `(start label, end label, count)` of the relationships it connects.
    pub patterns: Vec<(String, String, u64)>,
}

/// What `:schema` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaReport {
    /// Labels and how many nodes carry each.
    pub labels: Vec<(String, u64)>,
    /// Relationship types.
    pub rel_types: Vec<RelTypeReport>,
    /// Property keys.
    pub property_keys: Vec<String>,
    /// Per key (same order), how many nodes and how many relationships
    /// have it; `None` when the graph is too large to count them.
    pub key_counts: Option<(Vec<u64>, Vec<u64>)>,
    /// The indexes.
    pub indexes: Listing,
    /// The constraints.
    pub constraints: Listing,
}

/// Degree summary of one relationship type in `:stats`.
#[derive(Debug, Clone, PartialEq)]
pub struct DegreeReport {
    /// The type's name.
    pub name: String,
    /// How many relationships have it.
    pub count: u64,
    /// Mean and largest out-degree over nodes with at least one.
    pub out_mean: f64,
    /// Largest out-degree.
    pub out_max: u64,
    /// Mean in-degree over nodes with at least one.
    pub in_mean: f64,
    /// Largest in-degree.
    pub in_max: u64,
}

/// What `:stats` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsReport {
    /// Where the database is (a directory, or a server's URI).
    pub database: String,
    /// Node count.
    pub nodes: u64,
    /// Relationship count.
    pub relationships: u64,
    /// Number of labels.
    pub labels: usize,
    /// Number of relationship types.
    pub rel_types: usize,
    /// Number of property keys.
    pub property_keys: usize,
    /// Number of indexes (`None`: could not be listed).
    pub indexes: Option<usize>,
    /// Per relationship type.
    pub degrees: Vec<DegreeReport>,
}

fn text(s: impl Into<String>) -> Cell {
    Cell::new(s.into(), false)
}

fn number(n: impl ToString) -> Cell {
    Cell::new(n.to_string(), true)
}

/// A value in a report cell: strings bare, lists joined with `, `.
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::List(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The `columns` of `result` (missing ones empty), row by row.
pub fn listing(result: &QueryResult, columns: &[&str]) -> Vec<Vec<Value>> {
    let at: Vec<Option<usize>> = columns
        .iter()
        .map(|c| result.columns.iter().position(|have| have == c))
        .collect();
    (&result.rows)
        .into_iter()
        .map(|row| {
            at.iter()
                .map(|i| i.and_then(|i| row.get(i)).cloned().unwrap_or(Value::Null))
                .collect()
        })
        .collect()
}

/// Renders `:schema`.
pub fn render_schema_report(report: &SchemaReport) -> String {
    let mut out = String::new();
    let labels: Vec<Vec<Cell>> = report
        .labels
        .iter()
        .map(|(name, count)| vec![text(format!(":{name}")), number(count)])
        .collect();
    let _ = writeln!(out, "Node labels ({}):", labels.len());
    out.push_str(&render_grid(&["label".into(), "nodes".into()], &labels));

    let types: Vec<Vec<Cell>> = report
        .rel_types
        .iter()
        .map(|t| {
            let patterns: Vec<String> = t
                .patterns
                .iter()
                .map(|(from, to, n)| format!("(:{from})-[:{}]->(:{to}) {n}", t.name))
                .collect();
            vec![
                text(format!(":{}", t.name)),
                number(t.count),
                text(patterns.join(", ")),
            ]
        })
        .collect();
    let _ = writeln!(out, "Relationship types ({}):", types.len());
    out.push_str(&render_grid(
        &["type".into(), "relationships".into(), "patterns".into()],
        &types,
    ));

    let keys = &report.property_keys;
    let _ = writeln!(out, "Property keys ({}):", keys.len());
    match &report.key_counts {
        Some((nodes, rels)) => {
            let rows: Vec<Vec<Cell>> = keys
                .iter()
                .enumerate()
                .map(|(i, key)| {
                    let count = |counts: &Vec<u64>| counts.get(i).copied().unwrap_or(0);
                    vec![text(key.clone()), number(count(nodes)), number(count(rels))]
                })
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
    render_listing(&mut out, "Indexes", &SHOW_INDEXES.1, &report.indexes);
    render_listing(
        &mut out,
        "Constraints",
        &SHOW_CONSTRAINTS.1,
        &report.constraints,
    );
    out
}

fn render_listing(out: &mut String, title: &str, columns: &[&str], listing: &Listing) {
    match listing {
        Ok(rows) => {
            let _ = writeln!(out, "{title} ({}):", rows.len());
            if rows.is_empty() {
                return;
            }
            let cells: Vec<Vec<Cell>> = rows
                .iter()
                .map(|row| row.iter().map(|v| text(value_text(v))).collect())
                .collect();
            let header: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
            out.push_str(&render_grid(&header, &cells));
        }
        Err(why) => {
            let _ = writeln!(out, "{title}: not listed ({why})");
        }
    }
}

/// Renders `:stats`.
pub fn render_stats_report(report: &StatsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "database:       {}", report.database);
    let _ = writeln!(out, "nodes:          {}", report.nodes);
    let _ = writeln!(out, "relationships:  {}", report.relationships);
    let _ = writeln!(out, "labels:         {}", report.labels);
    let _ = writeln!(out, "rel. types:     {}", report.rel_types);
    let _ = writeln!(out, "property keys:  {}", report.property_keys);
    match report.indexes {
        Some(n) => {
            let _ = writeln!(out, "indexes:        {n}");
        }
        None => out.push_str("indexes:        (not listed)\n"),
    }
    let rows: Vec<Vec<Cell>> = report
        .degrees
        .iter()
        .map(|d| {
            vec![
                text(format!(":{}", d.name)),
                number(d.count),
                number(format!("{:.1}", d.out_mean)),
                number(d.out_max),
                number(format!("{:.1}", d.in_mean)),
                number(d.in_max),
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

/// Runs a `SHOW` statement on `db` and keeps `columns` of it.
fn local_listing(db: &Database, (statement, columns): &(&str, [&str; 6])) -> Listing {
    crate::engine::execute(db, statement, &BTreeMap::new(), &QueryOptions::default())
        .map(|(result, _)| listing(&result, columns))
        .map_err(|e| e.to_string())
}

/// `:schema` of a local database: labels, relationship types (with the
/// label patterns they connect) and property keys with counts, from the
/// catalog and statistics; indexes and constraints.
pub fn local_schema(db: &Database) -> SchemaReport {
    let snapshot = db.snapshot();
    let catalog = db.catalog();
    let stats = db.statistics();
    let labels = catalog
        .labels
        .names()
        .iter()
        .enumerate()
        .map(|(id, name)| {
            let count = stats.label_counts.get(id).copied().unwrap_or(0);
            (name.clone(), count)
        })
        .collect();
    let rel_types = catalog
        .rel_types
        .names()
        .iter()
        .enumerate()
        .map(|(id, name)| RelTypeReport {
            name: name.clone(),
            count: stats.rel_types.get(id).map_or(0, |s| s.count),
            patterns: stats
                .triples
                .iter()
                .filter(|t| t.rel_type as usize == id)
                .map(|t| {
                    (
                        catalog.label_name(t.source).to_string(),
                        catalog.label_name(t.target).to_string(),
                        t.count,
                    )
                })
                .collect(),
        })
        .collect();
    SchemaReport {
        labels,
        rel_types,
        property_keys: catalog.property_keys.names().to_vec(),
        key_counts: property_key_counts(&snapshot),
        indexes: local_listing(db, &SHOW_INDEXES),
        constraints: local_listing(db, &SHOW_CONSTRAINTS),
    }
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

/// `:stats` of a local database: totals, per-type degree summaries and
/// where the database lives.
pub fn local_stats(db: &Database) -> StatsReport {
    let catalog = db.catalog();
    let stats = db.statistics();
    let degrees = catalog
        .rel_types
        .names()
        .iter()
        .zip(&stats.rel_types)
        .map(|(name, s)| DegreeReport {
            name: name.clone(),
            count: s.count,
            out_mean: s.outgoing.mean,
            out_max: s.outgoing.max,
            in_mean: s.incoming.mean,
            in_max: s.incoming.max,
        })
        .collect();
    StatsReport {
        database: db.path().display().to_string(),
        nodes: stats.node_count,
        relationships: stats.relationship_count,
        labels: catalog.labels.len(),
        rel_types: catalog.rel_types.len(),
        property_keys: catalog.property_keys.len(),
        indexes: local_listing(db, &SHOW_INDEXES).ok().map(|rows| rows.len()),
        degrees,
    }
}
