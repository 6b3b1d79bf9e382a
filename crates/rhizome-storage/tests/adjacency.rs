//! `Adjacency::try_for_each` reads every way a list is stored (outgoing
//! base lists, incoming base lists with one- and two-byte ranks, lists of
//! the delta layer) exactly as `neighbour(i)` and `rel_id(i)` do.

use rhizome_storage::builder::{GraphBuilder, RelGroupInput};
use rhizome_storage::{Database, Direction, GraphRead, Snapshot};
use std::ops::ControlFlow;

/// Every entry of every list, read one at a time.
fn by_index(s: &Snapshot, node: u64, t: u32, d: Direction) -> Vec<(usize, u64, u64)> {
    let adj = s.adjacency(node, t, d);
    (0..adj.len())
        .map(|i| (i, adj.neighbour(i), adj.rel_id(i)))
        .collect()
}

/// The same entries, read by `try_for_each`.
fn by_loop(s: &Snapshot, node: u64, t: u32, d: Direction) -> Vec<(usize, u64, u64)> {
    let mut seen = Vec::new();
    let flow: ControlFlow<()> = s.adjacency(node, t, d).try_for_each(|i, n, r| {
        seen.push((i, n, r));
        ControlFlow::Continue(())
    });
    assert_eq!(flow, ControlFlow::Continue(()));
    seen
}

fn check_all(s: &Snapshot, types: &[u32]) -> usize {
    let mut entries = 0;
    for node in 0..s.node_bound() {
        for &t in types {
            for d in [Direction::Outgoing, Direction::Incoming] {
                let expected = by_index(s, node, t, d);
                assert_eq!(
                    by_loop(s, node, t, d),
                    expected,
                    "node {node} type {t} {d:?}"
                );
                entries += expected.len();
                // Every relationship leads back to this node and its neighbour.
                for &(_, n, r) in &expected {
                    let info = s.relationship(r).expect("relationship exists");
                    let (start, end) = match d {
                        Direction::Outgoing => (node, n),
                        Direction::Incoming => (n, node),
                    };
                    assert_eq!((info.rel_type, info.start, info.end), (t, start, end));
                }
            }
        }
    }
    entries
}

#[test]
fn the_loop_reads_every_list_as_indexing_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut b = GraphBuilder::new();
    b.add_nodes(rhizome_storage::NodeGroupInput {
        rows: 400,
        labels: vec!["N".into()],
        row_labels: None,
        properties: vec![],
    })
    .unwrap();
    // A hub with 300 relationships (two-byte ranks) plus a sparse type
    // (one-byte ranks), with parallel relationships and self-loops.
    let mut sources: Vec<u64> = vec![0; 300];
    let mut targets: Vec<u64> = (1..=300).collect();
    for i in 0..400u64 {
        sources.extend([i, i]);
        targets.extend([(i * 7 + 3) % 400, (i * 7 + 3) % 400]);
    }
    sources.push(5);
    targets.push(5);
    b.add_relationships(
        "HUB",
        RelGroupInput {
            sources,
            targets,
            properties: vec![],
        },
    )
    .unwrap();
    b.add_relationships(
        "FEW",
        RelGroupInput {
            sources: (0..400).step_by(3).collect(),
            targets: (0..400).step_by(3).map(|i| (i * 11) % 400).collect(),
            properties: vec![],
        },
    )
    .unwrap();
    b.write(&dir).unwrap();
    let db = Database::open(&dir).unwrap();
    let types: Vec<u32> = ["HUB", "FEW"]
        .iter()
        .map(|t| db.snapshot().catalog().rel_type_id(t).unwrap())
        .collect();
    let base_entries = check_all(&db.snapshot(), &types);
    assert_eq!(base_entries, 2 * (300 + 800 + 1 + 134));

    // Lists changed since the checkpoint are read from the delta layer.
    let mut txn = db.begin_write().unwrap();
    for i in (0..400).step_by(13) {
        txn.create_relationship(i, 0, "HUB", &[]).unwrap();
        txn.create_relationship(i, i, "FEW", &[]).unwrap();
    }
    txn.commit().unwrap();
    let s = db.snapshot();
    assert_eq!(check_all(&s, &types), base_entries + 4 * 31);

    // A break stops the loop where it was asked to.
    let adj = s.adjacency(0, types[0], Direction::Outgoing);
    let mut visited = 0;
    let flow = adj.try_for_each(|i, _, r| {
        visited += 1;
        if i == 5 {
            ControlFlow::Break(r)
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!(flow, ControlFlow::Break(adj.rel_id(5)));
    assert_eq!(visited, 6);
}

/// A changed list's created entries, for every node and direction, are the
/// entries whose ids lie past the type's base ids, ascending; the list
/// keeps its base list exactly when its other entries number the base
/// degree; and counting the created entries' written numbers agrees with
/// reading them one at a time. Relationships created in one transaction
/// (consecutive ids, read as one slice of the written values), in several
/// (gaps), with numbers rewritten, removed or replaced by strings, and
/// base relationships deleted.
#[test]
fn changed_lists_know_their_created_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut b = GraphBuilder::new();
    b.add_nodes(rhizome_storage::NodeGroupInput {
        rows: 60,
        labels: vec!["N".into()],
        row_labels: None,
        properties: vec![],
    })
    .unwrap();
    let mut w = rhizome_storage::column::ColumnBuilder::new();
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    for i in 0..60u64 {
        for k in 1..4 {
            sources.push(i);
            targets.push((i * k + 7) % 60);
            w.push_f64((i + k) as f64 / 10.0);
        }
    }
    b.add_relationships(
        "T",
        RelGroupInput {
            sources,
            targets,
            properties: vec![("w".into(), w.finish())],
        },
    )
    .unwrap();
    b.write(&dir).unwrap();
    // Checkpoints write delta files (not a full merge) however small the segment.
    let options = || rhizome_storage::DatabaseOptions {
        delta_checkpoint_ratio: 1e6,
        ..Default::default()
    };
    let db = Database::open_with(&dir, options()).unwrap();
    let num = |x: f64| vec![("w", rhizome_common::Value::Float(x))];
    let base_rel = {
        let s = db.snapshot();
        let adj = s.adjacency(10, 0, Direction::Outgoing);
        adj.rel_id(0)
    };
    // One transaction: a run of consecutive ids per node.
    let mut txn = db.begin_write().unwrap();
    for n in [3u64, 4, 10] {
        for k in 0..20u64 {
            txn.create_relationship(n, (n + k) % 60, "T", &num(k as f64 / 4.0))
                .unwrap();
        }
    }
    txn.commit().unwrap();
    // Several: interleaved ids, a base relationship deleted, values changed.
    for round in 0..3u64 {
        let mut txn = db.begin_write().unwrap();
        for n in [4u64, 20, 21] {
            txn.create_relationship(n, round, "T", &num(round as f64))
                .unwrap();
            txn.create_relationship(round + 30, n, "T", &[]).unwrap();
        }
        if round == 1 {
            txn.delete_relationship(base_rel).unwrap();
            let s = db.snapshot();
            let r = s.adjacency(3, 0, Direction::Outgoing);
            let created: Vec<u64> = (0..r.len()).map(|i| r.rel_id(i)).collect();
            let last = *created.iter().max().unwrap();
            txn.set_rel_property(last, "w", rhizome_common::Value::String("x".into()))
                .unwrap();
            txn.set_rel_property(last - 1, "w", rhizome_common::Value::Null)
                .unwrap();
            txn.set_rel_property(last - 2, "w", rhizome_common::Value::Float(-1.0))
                .unwrap();
        }
        txn.commit().unwrap();
    }
    // (created entries seen, lists whose created entries are not apart,
    // lists that lost a base entry)
    let check = |s: &Snapshot| {
        let key = s.catalog().property_key_id("w").unwrap();
        let floats = s.rel_floats(0, key);
        let (mut seen, mut loose, mut lost) = (0, 0, 0);
        for d in [Direction::Outgoing, Direction::Incoming] {
            let lists = s.type_lists(0, d).unwrap();
            for node in 0..s.node_bound() {
                let Some(list) = lists.changed(node) else {
                    continue;
                };
                let Some(created) = list.created else {
                    loose += 1;
                    continue;
                };
                let mut expected: Vec<u64> = list
                    .rels
                    .iter()
                    .copied()
                    .filter(|r| !lists.base_ids().contains(r))
                    .collect();
                expected.sort_unstable();
                assert_eq!(created, &expected[..], "node {node} {d:?}");
                let base = (list.rels.len() - created.len()) as u64;
                let degree = lists.csr().degree(node);
                assert_eq!(list.keeps_base(degree), base == degree, "node {node} {d:?}");
                lost += usize::from(base != degree);
                for threshold in [-2.0, 0.0, 1.0, 2.5, 100.0] {
                    let test = |x: f64| x > threshold;
                    let one_by_one = created
                        .iter()
                        .filter(|&&r| floats.get(r).is_some_and(test))
                        .count() as u64;
                    assert_eq!(
                        floats.count_written(created, test),
                        one_by_one,
                        "node {node} {d:?} > {threshold}"
                    );
                }
                seen += created.len();
            }
        }
        (seen, loose, lost)
    };
    // Every created relationship is in two changed lists; the deleted one
    // left two lists without a base entry.
    assert_eq!(check(&db.snapshot()), (2 * (60 + 18), 0, 2));
    // A transaction's own view reads the pages it wrote loose: there the
    // created entries are not told apart (one list in each direction).
    let mut txn = db.begin_write().unwrap();
    txn.create_relationship(3, 3, "T", &num(9.0)).unwrap();
    let (_, loose, _) = check(&txn.view());
    assert!(loose >= 2, "{loose}");
    assert_eq!(check(&txn.snapshot()), (2 * (60 + 18 + 1), 0, 2));
    drop(txn);
    // After an incremental checkpoint and a reopen (lists decoded from
    // the delta file) the same holds.
    assert!(db.checkpoint().unwrap());
    assert!(dir.read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".rhd")));
    drop(db);
    let db = Database::open_with(&dir, options()).unwrap();
    assert_eq!(check(&db.snapshot()), (2 * (60 + 18), 0, 2));
}
