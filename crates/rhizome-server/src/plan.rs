//! `EXPLAIN` and `PROFILE` plans as the structured trees Neo4j clients
//! read: the `plan` and `profile` entries of a Bolt summary (drivers show
//! them as `summary.plan` / `summary.profile`), which the HTTP API turns
//! into `queryPlan` / `profiledQueryPlan`.
//!
//! The tree is the engine's own ([`PlanDescription`], from the plan the
//! statement ran): operators with their details, estimates, optimizer
//! rules and the variables bound at their output; `children` are an
//! operator's inputs, then the plans nested in its expressions (`EXISTS`,
//! `COUNT`, `COLLECT` subqueries, marked by a `Subquery` argument). A
//! profile adds each operator's rows and time from the runtime's counters
//! (by the operator's id). The runtime does not count store accesses, so
//! `dbHits` is 0. Over a graph source the root operator's arguments add
//! `SourceReads` (where the plan reads the source) and, for a profile,
//! `SourceCounters` (what the statement cost the source).

use crate::packstream::PackValue;
use rhizome_engine::{PlanDescription, QueryResult};
use rhizome_exec::query::ProfileReport;

/// The `plan` (EXPLAIN) or `profile` (PROFILE) entry of a Bolt summary for
/// `outcome`, whose plan is `plan`, in Bolt's shape: `operatorType`,
/// `args`, `identifiers`, `children`, and for a profile also `rows`,
/// `dbHits`, `time` (ns) and page-cache fields.
/// `over_source` says the statement ran over a graph source.
pub fn summary_entries(
    outcome: &QueryResult,
    plan: Option<&PlanDescription>,
    over_source: bool,
) -> Vec<(String, PackValue)> {
    let Some(plan) = plan else {
        return Vec::new();
    };
    let (key, mut tree, text) = match (&outcome.profile, &outcome.plan) {
        (Some(profile), _) => ("profile", to_pack(plan, Some(profile)), &profile.text),
        (None, Some(text)) => ("plan", to_pack(plan, None), text),
        (None, None) => return Vec::new(),
    };
    if over_source {
        add_source_args(&mut tree, text);
    }
    vec![(key.to_string(), tree)]
}

/// Adds the source lines of a plan or profile text to the root operator's
/// arguments.
fn add_source_args(tree: &mut PackValue, text: &str) {
    let PackValue::Map(entries) = tree else {
        return;
    };
    let Some((_, PackValue::Map(args))) = entries.iter_mut().find(|(k, _)| k == "args") else {
        return;
    };
    for line in rhizome_sources::cypher::source_lines(text) {
        let key = if line.starts_with(rhizome_sources::cypher::READS_PREFIX) {
            "SourceReads"
        } else {
            "SourceCounters"
        };
        args.push((key.to_string(), line.into()));
    }
}

/// One operator (and its children) in Bolt's plan shape.
pub fn to_pack(node: &PlanDescription, profile: Option<&ProfileReport>) -> PackValue {
    let mut args = vec![
        (
            "Details".to_string(),
            PackValue::from(node.details.as_str()),
        ),
        (
            "EstimatedRows".to_string(),
            PackValue::Float(node.estimated_rows),
        ),
    ];
    if let Some(rule) = node.rule {
        args.push(("Rule".to_string(), rule.into()));
    }
    if let Some(kind) = node.subquery {
        args.push(("Subquery".to_string(), kind.into()));
    }
    let stats = profile
        .zip(node.id)
        .and_then(|(p, id)| p.operators.iter().find(|o| o.id == id));
    if let Some(stats) = stats {
        args.push(("Morsels".to_string(), PackValue::Int(stats.morsels as i64)));
        args.push(("Workers".to_string(), PackValue::Int(stats.workers as i64)));
    }
    let mut entries = vec![
        ("operatorType".to_string(), PackValue::from(node.name)),
        ("args".to_string(), PackValue::Map(args)),
        (
            "identifiers".to_string(),
            PackValue::List(
                node.identifiers
                    .iter()
                    .map(|i| PackValue::from(i.as_str()))
                    .collect(),
            ),
        ),
    ];
    if profile.is_some() {
        let (rows, time) = stats
            .map(|s| (s.rows as i64, s.time.as_nanos() as i64))
            .unwrap_or((0, 0));
        entries.extend([
            ("rows".to_string(), PackValue::Int(rows)),
            ("dbHits".to_string(), PackValue::Int(0)),
            ("time".to_string(), PackValue::Int(time)),
            ("pageCacheHits".to_string(), PackValue::Int(0)),
            ("pageCacheMisses".to_string(), PackValue::Int(0)),
            ("pageCacheHitRatio".to_string(), PackValue::Float(0.0)),
        ]);
    }
    let children = node.children.iter().map(|c| to_pack(c, profile)).collect();
    entries.push(("children".to_string(), PackValue::List(children)));
    PackValue::Map(entries)
}
