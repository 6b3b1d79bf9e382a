//! `RelFloats` (a numeric relationship property read by traversal filters)
//! answers like the property itself over base + delta: values written since
//! the checkpoint on base and created relationships, removed values and
//! values that are not numbers, deleted relationships; and
//! `RelFloats::count_created` splits a changed list into its base entries
//! and its created entries that pass, as a per-entry count does. Checked
//! over a delta, after an incremental checkpoint with a new delta on top,
//! and after a full checkpoint.

use rhizome_common::Value;
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput, RelGroupInput};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{Database, Direction, GraphRead, Snapshot};

const NODES: u64 = 60;

/// 60 nodes; `R` from every node to four others, `w` = a float per
/// relationship (some integers stored as floats, one string-free column).
fn build(dir: &std::path::Path) {
    let mut b = GraphBuilder::new();
    b.add_nodes(NodeGroupInput {
        rows: NODES,
        labels: vec!["N".into()],
        row_labels: None,
        properties: vec![],
    })
    .unwrap();
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    let mut w = ColumnBuilder::new();
    for n in 0..NODES {
        for k in 1..=4u64 {
            sources.push(n);
            targets.push((n * 7 + k * 13) % NODES);
            w.push_f64(((n * 31 + k * 17) % 10) as f64 - 2.5);
        }
    }
    b.add_relationships(
        "R",
        RelGroupInput {
            sources,
            targets,
            properties: vec![("w".into(), w.finish())],
        },
    )
    .unwrap();
    b.write(dir).unwrap();
}

/// The filter the checks count with.
fn passes(x: f64) -> bool {
    x > 0.5
}

/// A filter every NaN passes.
fn not_one(x: f64) -> bool {
    x != 1.0
}

/// The property as a float, as a filter sees it.
fn number(value: Value) -> Option<f64> {
    match value {
        Value::Float(x) => Some(x),
        Value::Int(i) => Some(i as f64),
        _ => None,
    }
}

/// Every live relationship's value through `RelFloats` equals the
/// property's, and every changed list splits as a per-entry count says.
/// Returns how many changed lists kept their whole base list and how many
/// did not.
fn check(s: &Snapshot, what: &str) -> (usize, usize) {
    let t = s.catalog().rel_type_id("R").unwrap();
    let key = s.catalog().property_key_id("w").unwrap();
    let floats = s.rel_floats(t, key);
    let (mut kept, mut lost) = (0, 0);
    for d in [Direction::Outgoing, Direction::Incoming] {
        let lists = s.type_lists(t, d).expect("R has base relationships");
        let base_ids = lists.base_ids();
        for node in 0..s.node_bound() {
            let adj = s.adjacency(node, t, d);
            for i in 0..adj.len() {
                let r = adj.rel_id(i);
                floats.prefetch(r);
                assert_eq!(
                    floats.get(r),
                    number(s.rel_property(r, key)),
                    "{what}: relationship {r}"
                );
            }
            let Some((_, rels)) = lists.changed_list(node) else {
                continue;
            };
            let base = rels.iter().filter(|r| base_ids.contains(r)).count() as u64;
            let created_passing = |test: fn(f64) -> bool| {
                rels.iter()
                    .filter(|r| !base_ids.contains(r))
                    .filter(|&&r| floats.get(r).is_some_and(test))
                    .count() as u64
            };
            let created = created_passing(passes);
            assert_eq!(
                floats.count_created(rels, passes),
                (base, created),
                "{what}: node {node} {d:?}"
            );
            // A test that NaN passes: relationships without a number must
            // still not count.
            assert_eq!(
                floats.count_created(rels, not_one),
                (base, created_passing(not_one)),
                "{what}: node {node} {d:?}, <> 1"
            );
            let degree = lists.csr().degree(node);
            if base == degree {
                kept += 1;
                // The whole list is the base list plus the created entries.
                let all = rels
                    .iter()
                    .filter(|&&r| floats.get(r).is_some_and(passes))
                    .count() as u64;
                let base_passing = lists
                    .csr()
                    .positions(node)
                    .map(|p| match d {
                        Direction::Outgoing => lists.first() + p as u64,
                        Direction::Incoming => lists.first() + lists.csr().out_position(p),
                    })
                    .filter(|&r| floats.get(r).is_some_and(passes))
                    .count() as u64;
                assert_eq!(base_passing + created, all, "{what}: node {node} {d:?}");
            } else {
                lost += 1;
            }
        }
    }
    // Ids past every page and every column read as nothing.
    for r in [100_000, 1 << 40, u64::MAX - 1] {
        floats.prefetch(r);
        assert_eq!(floats.get(r), None, "{what}: id {r}");
    }
    (kept, lost)
}

/// Writes one round of changes: created nodes and relationships (numbers,
/// integers, strings, no value), base and created values rewritten or
/// removed, base and created relationships deleted.
fn write_round(db: &Database, round: u64) {
    let mut tx = db.begin_write().unwrap();
    let mut created = Vec::new();
    for n in (round..NODES).step_by(5) {
        let value = match n % 4 {
            0 => vec![("w", Value::Float(n as f64 / 7.0))],
            1 => vec![("w", Value::Int(n as i64 % 3))],
            2 => vec![("w", Value::String("high".into()))],
            _ => vec![],
        };
        created.push(
            tx.create_relationship(n, (n * 3 + round) % NODES, "R", &value)
                .unwrap(),
        );
    }
    let fresh = tx.create_node(&["N"], &[]).unwrap();
    for k in 0..3 {
        let w = [("w", Value::Float(k as f64))];
        created.push(tx.create_relationship(fresh, k, "R", &w).unwrap());
    }
    let s = tx.snapshot();
    let t = s.catalog().rel_type_id("R").unwrap();
    let mut base_rels = Vec::new();
    for n in (round * 3..NODES).step_by(11) {
        let adj = s.adjacency(n, t, Direction::Outgoing);
        base_rels.extend((0..adj.len()).map(|i| adj.rel_id(i)));
    }
    drop(s);
    for (i, &r) in base_rels.iter().enumerate() {
        match i % 4 {
            0 => tx.set_rel_property(r, "w", Value::Float(9.0)).unwrap(),
            1 => tx.set_rel_property(r, "w", Value::Null).unwrap(),
            2 => tx
                .set_rel_property(r, "w", Value::String("x".into()))
                .unwrap(),
            _ => tx.delete_relationship(r).unwrap(),
        }
    }
    tx.set_rel_property(created[0], "w", Value::Null).unwrap();
    tx.set_rel_property(created[1], "w", Value::Float(-4.0))
        .unwrap();
    tx.delete_relationship(created[2]).unwrap();
    tx.commit().unwrap();
}

#[test]
fn numeric_reads_over_a_delta_equal_the_properties() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    build(&dir);
    let db = Database::open(&dir).unwrap();
    assert_eq!(check(&db.snapshot(), "base"), (0, 0));

    write_round(&db, 0);
    let (kept, lost) = check(&db.snapshot(), "base + delta");
    assert!(kept > 0 && lost > 0, "both kinds of list: {kept} {lost}");

    // An incremental checkpoint keeps the delta (now read from its file
    // on reopen); a second round of changes lies on top of it.
    db.checkpoint().unwrap();
    check(&db.snapshot(), "after an incremental checkpoint");
    write_round(&db, 1);
    let expected = check(&db.snapshot(), "a second delta");
    drop(db);
    let db = Database::open(&dir).unwrap();
    assert_eq!(check(&db.snapshot(), "reopened"), expected);

    db.checkpoint_full().unwrap();
    assert_eq!(check(&db.snapshot(), "after a full checkpoint"), (0, 0));
    write_round(&db, 2);
    let (kept, lost) = check(&db.snapshot(), "a delta over the merged base");
    assert!(kept > 0 && lost > 0, "both kinds of list: {kept} {lost}");
}
