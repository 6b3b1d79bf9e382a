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
