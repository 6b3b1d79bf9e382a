//! Integrity checks over a whole database (behind `rhizome check`).

use crate::index::index_order;
use crate::snapshot::{Direction, GraphRead, Snapshot};
use std::cmp::Ordering;

/// Checks every structure reachable from `snap`; returns the problems found.
pub fn check(snap: &Snapshot) -> Vec<String> {
    let mut problems = Vec::new();
    let bound = snap.node_bound();
    let catalog = snap.catalog();
    for (rel_type, _, count) in snap.rel_type_ranges().collect::<Vec<_>>() {
        let name = catalog.rel_type_name(rel_type).to_string();
        let (Some(out), Some(inc)) = (
            snap.csr(rel_type, Direction::Outgoing),
            snap.csr(rel_type, Direction::Incoming),
        ) else {
            continue;
        };
        if out.len() as u64 != count || inc.len() as u64 != count {
            problems.push(format!(
                "type {name}: adjacency sizes differ from the relationship count"
            ));
        }
        if let Err(e) = out.validate(bound, out.len()) {
            problems.push(format!("type {name}, outgoing: {e}"));
            continue;
        }
        if let Err(e) = inc.validate(bound, out.len()) {
            problems.push(format!("type {name}, incoming: {e}"));
            continue;
        }
        // Both directions must describe the same relationships.
        let mut seen = vec![false; out.len()];
        'nodes: for target in inc.node_range() {
            for q in inc.positions(target) {
                let p = inc.perm().expect("validated")[q] as usize;
                if seen[p]
                    || out.all_neighbours()[p] != target
                    || out.owner_of(p) != Some(inc.all_neighbours()[q])
                {
                    problems.push(format!(
                        "type {name}: incoming entry {q} does not match outgoing entry {p}"
                    ));
                    break 'nodes;
                }
                seen[p] = true;
            }
        }
        if seen.iter().any(|s| !s) {
            problems.push(format!(
                "type {name}: some outgoing relationships have no incoming entry"
            ));
        }
    }
    for index in snap.indexes() {
        let label = catalog.label_name(index.label);
        let key = catalog.property_key_name(index.key);
        let nodes = index.sorted_nodes();
        let values: Vec<_> = nodes
            .iter()
            .map(|&n| snap.node_property(n, index.key))
            .collect();
        if values
            .windows(2)
            .any(|w| index_order(&w[0], &w[1]) == Ordering::Greater)
        {
            problems.push(format!("index :{label}({key}) is not sorted"));
        }
        if nodes
            .iter()
            .zip(&values)
            .any(|(&n, v)| v.is_null() || !snap.has_label(n, index.label))
        {
            problems.push(format!(
                "index :{label}({key}) lists a node without the label or key"
            ));
        }
        let expected: u64 = snap
            .label_range_slice(index.label)
            .iter()
            .flat_map(|r| r.clone())
            .filter(|&n| !snap.node_property(n, index.key).is_null())
            .count() as u64;
        if expected != nodes.len() as u64 {
            problems.push(format!(
                "index :{label}({key}) has {} entries, the data {expected}",
                nodes.len()
            ));
        }
    }
    problems
}
