//! Integrity checks over a whole database (behind `rhizome check`).

use crate::index::index_order;
use crate::nodelist::NodeList;
use crate::snapshot::{Direction, GraphRead, Snapshot};
use rhizome_common::NodeId;
use std::cmp::Ordering;
use std::ops::Bound;

/// Checks every structure reachable from `snap`; returns the problems found.
pub fn check(snap: &Snapshot) -> Vec<String> {
    let mut problems = if snap.is_base_only() {
        check_base(snap)
    } else {
        check_overlay(snap)
    };
    check_constraints(snap, &mut problems);
    problems
}

/// Checks through the read interface (base + delta): both directions of
/// every relationship agree with each other and with `relationship`, and
/// every index lists exactly the nodes whose data it covers, in value order.
fn is_sorted(list: NodeList<'_>) -> bool {
    list.iter().zip(list.iter().skip(1)).all(|(a, b)| a <= b)
}

fn check_overlay(snap: &Snapshot) -> Vec<String> {
    let mut problems = Vec::new();
    let catalog = snap.catalog();
    let types = catalog.rel_types.len() as u32;
    let (mut outs, mut ins) = (0u64, 0u64);
    for range in snap.node_ranges().iter() {
        for node in range.clone() {
            for t in 0..types {
                let name = catalog.rel_type_name(t);
                let inc = snap.adjacency(node, t, Direction::Incoming);
                ins += inc.len() as u64;
                if !is_sorted(inc.neighbours()) {
                    problems.push(format!(
                        "type {name}: incoming list of node {node} is not sorted"
                    ));
                }
                let out = snap.adjacency(node, t, Direction::Outgoing);
                outs += out.len() as u64;
                if !is_sorted(out.neighbours()) {
                    problems.push(format!(
                        "type {name}: outgoing list of node {node} is not sorted"
                    ));
                }
                for i in 0..out.len() {
                    let (m, r) = (out.neighbour(i), out.rel_id(i));
                    let info = snap.relationship(r);
                    if info.is_none_or(|x| x.rel_type != t || x.start != node || x.end != m) {
                        problems.push(format!(
                            "type {name}: relationship {r} in the list of node {node} disagrees with its record"
                        ));
                    }
                    if !snap.node_exists(m) {
                        problems.push(format!(
                            "type {name}: relationship {r} ends at a missing node {m}"
                        ));
                    }
                    let back = snap.adjacency(m, t, Direction::Incoming);
                    if !(0..back.len()).any(|j| back.neighbour(j) == node && back.rel_id(j) == r) {
                        problems.push(format!(
                            "type {name}: relationship {r} has no incoming entry at node {m}"
                        ));
                    }
                }
            }
            if problems.len() > 100 {
                return problems;
            }
        }
    }
    if outs != ins {
        problems.push(format!(
            "{outs} outgoing and {ins} incoming adjacency entries"
        ));
    }
    for def in &snap.schema().indexes {
        let (label, key) = (def.label, def.key);
        let name = def.describe(catalog);
        let Some(listed) = snap.index_range(label, key, Bound::Unbounded, Bound::Unbounded) else {
            problems.push(format!("index {name} cannot be read"));
            continue;
        };
        let values: Vec<_> = listed.iter().map(|&n| snap.node_property(n, key)).collect();
        if values
            .windows(2)
            .any(|w| index_order(&w[0], &w[1]) == Ordering::Greater)
        {
            problems.push(format!("index {name} is not in value order"));
        }
        let mut listed = listed.to_vec();
        listed.sort_unstable();
        let expected: Vec<_> = snap
            .label_range_slice(label)
            .iter()
            .flat_map(|r| r.clone())
            .filter(|&n| snap.node_exists(n) && !snap.node_property(n, key).is_null())
            .collect();
        if listed != expected {
            problems.push(format!(
                "index {name} lists {} nodes, the data has {}",
                listed.len(),
                expected.len()
            ));
        }
    }
    problems
}

/// Uniqueness constraints hold.
fn check_constraints(snap: &Snapshot, problems: &mut Vec<String>) {
    for def in &snap.schema().constraints {
        let mut values: Vec<_> = snap
            .label_range_slice(def.label)
            .iter()
            .flat_map(|r| r.clone())
            .map(|n| snap.node_property(n, def.key))
            .filter(|v| !v.is_null())
            .collect();
        values.sort_by(index_order);
        if let Some(w) = values
            .windows(2)
            .find(|w| index_order(&w[0], &w[1]).is_eq())
        {
            problems.push(format!(
                "uniqueness constraint {} is violated: value {} occurs more than once",
                def.describe(snap.catalog()),
                w[0]
            ));
        }
    }
}

fn check_base(snap: &Snapshot) -> Vec<String> {
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
                let p = inc.out_position(q) as usize;
                if seen[p]
                    || out.all_neighbours()[p] as NodeId != target
                    || out.owner_of(p) != Some(inc.all_neighbours()[q] as NodeId)
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
