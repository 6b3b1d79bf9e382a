//! The storage seam for graphs that live elsewhere: a small in-memory
//! `ExternalGraph` (a ring of ten nodes) behind `Snapshot::over_external`
//! runs read-only Cypher through the same planner and runtime as native
//! storage, asks for adjacency a chunk at a time, and refuses writes.

use rhizome_common::{NodeId, RelId, Value};
use rhizome_engine::{Engine, QueryOptions};
use rhizome_storage::catalog::{LabelId, PropertyKeyId, RelTypeId};
use rhizome_storage::{
    Catalog, Direction, ExternalGraph, GraphBuilder, IndexDef, RelInfo, Snapshot, Statistics,
};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const N: u64 = 10;

/// Nodes 0..N labelled `N` with `id` = their id; relationships `NEXT`
/// i -> i+1 (mod N) with id i and `w` = 10 * i.
struct Ring {
    statistics: Statistics,
    labels: [LabelId; 1],
    out: Vec<[NodeId; 1]>,
    out_rel: Vec<[RelId; 1]>,
    inc: Vec<[NodeId; 1]>,
    inc_rel: Vec<[RelId; 1]>,
    ranges: Vec<Range<NodeId>>,
    adjacency_batches: AtomicUsize,
}

impl Ring {
    #[allow(clippy::single_range_in_vec_init)]
    fn new() -> Ring {
        Ring {
            statistics: Statistics {
                node_count: N,
                relationship_count: N,
                label_counts: vec![N],
                ..Statistics::default()
            },
            labels: [0],
            out: (0..N).map(|i| [(i + 1) % N]).collect(),
            out_rel: (0..N).map(|i| [i]).collect(),
            inc: (0..N).map(|i| [(i + N - 1) % N]).collect(),
            inc_rel: (0..N).map(|i| [(i + N - 1) % N]).collect(),
            ranges: vec![0..N],
            adjacency_batches: AtomicUsize::new(0),
        }
    }
}

impl ExternalGraph for Ring {
    fn describe(&self) -> String {
        "the ring".into()
    }
    fn statistics(&self) -> &Statistics {
        &self.statistics
    }
    fn node_exists(&self, node: NodeId) -> bool {
        node < N
    }
    fn label_ranges(&self, label: LabelId) -> &[Range<NodeId>] {
        if label == 0 {
            &self.ranges
        } else {
            &[]
        }
    }
    fn node_labels(&self, node: NodeId) -> &[LabelId] {
        if node < N {
            &self.labels
        } else {
            &[]
        }
    }
    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value {
        match (node < N, key) {
            (true, 0) => Value::Int(node as i64),
            _ => Value::Null,
        }
    }
    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>) {
        if node < N {
            out.push((0, Value::Int(node as i64)));
        }
    }
    fn adjacency(
        &self,
        node: NodeId,
        rel_type: RelTypeId,
        dir: Direction,
    ) -> (&[NodeId], &[RelId]) {
        if node >= N || rel_type != 0 {
            return (&[], &[]);
        }
        let i = node as usize;
        match dir {
            Direction::Outgoing => (&self.out[i], &self.out_rel[i]),
            Direction::Incoming => (&self.inc[i], &self.inc_rel[i]),
        }
    }
    fn relationship(&self, rel: RelId) -> Option<RelInfo> {
        (rel < N).then(|| RelInfo {
            rel_type: 0,
            start: rel,
            end: (rel + 1) % N,
        })
    }
    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value {
        match (rel < N, key) {
            (true, 1) => Value::Int(10 * rel as i64),
            _ => Value::Null,
        }
    }
    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>) {
        if rel < N {
            out.push((1, Value::Int(10 * rel as i64)));
        }
    }
    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>> {
        if (label, key) != (0, 0) {
            return None;
        }
        Some(match value {
            Value::Int(i) if (0..N as i64).contains(i) => vec![*i as NodeId],
            _ => Vec::new(),
        })
    }
    fn prefetch_nodes(&self, _nodes: &[NodeId]) {}
    fn prefetch_adjacency(&self, _nodes: &[NodeId], _rel_type: RelTypeId, _dir: Direction) {
        self.adjacency_batches.fetch_add(1, Ordering::Relaxed);
    }
}

fn setup() -> (tempfile::TempDir, Engine, Snapshot, Arc<Ring>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty");
    GraphBuilder::new().write(&path).unwrap();
    let engine = Engine::open(&path).unwrap();
    let mut catalog = Catalog::default();
    catalog.labels.intern("N");
    catalog.rel_types.intern("NEXT");
    catalog.property_keys.intern("id");
    catalog.property_keys.intern("w");
    let ring = Arc::new(Ring::new());
    let snapshot = Snapshot::over_external(
        &engine.database().snapshot(),
        catalog,
        vec![IndexDef { label: 0, key: 0 }],
        ring.clone(),
    );
    (dir, engine, snapshot, ring)
}

fn rows(engine: &Engine, snapshot: &Snapshot, query: &str) -> Vec<Vec<Value>> {
    engine
        .execute_read_only_on(
            snapshot.clone(),
            query,
            BTreeMap::new(),
            &QueryOptions::default(),
            None,
            "the ring",
        )
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows
        .to_vecs()
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

#[test]
fn read_cypher_runs_over_an_external_graph() {
    let (_dir, engine, snap, ring) = setup();
    assert_eq!(
        rows(
            &engine,
            &snap,
            "MATCH (a:N {id: 3})-[r:NEXT]->(b) RETURN b.id, r.w"
        ),
        vec![vec![int(4), int(30)]]
    );
    assert!(
        ring.adjacency_batches.load(Ordering::Relaxed) > 0,
        "expand announces its chunk"
    );
    assert_eq!(
        rows(
            &engine,
            &snap,
            "MATCH (a:N {id: 0})<-[:NEXT]-(b) RETURN b.id"
        ),
        vec![vec![int(9)]]
    );
    assert_eq!(
        rows(
            &engine,
            &snap,
            "MATCH (a:N) WHERE a.id % 2 = 0 RETURN count(*), sum(a.id)"
        ),
        vec![vec![int(5), int(20)]]
    );
    assert_eq!(
        rows(
            &engine,
            &snap,
            "MATCH (a:N {id: 8})-[:NEXT*1..3]->(b) RETURN b.id ORDER BY b.id"
        ),
        vec![vec![int(0)], vec![int(1)], vec![int(9)]]
    );
    assert_eq!(
        rows(
            &engine,
            &snap,
            "MATCH p = (a:N {id: 1})-[:NEXT*2]->() RETURN [n IN nodes(p) | n.id], [r IN relationships(p) | r.w]"
        ),
        vec![vec![
            Value::List(vec![int(1), int(2), int(3)]),
            Value::List(vec![int(10), int(20)])
        ]]
    );
    assert_eq!(
        rows(
            &engine,
            &snap,
            "MATCH (a:N {id: 5}) RETURN labels(a), properties(a)"
        ),
        vec![vec![
            Value::List(vec![Value::String("N".into())]),
            Value::Map([("id".to_string(), int(5))].into_iter().collect())
        ]]
    );
    assert_eq!(
        rows(&engine, &snap, "MATCH (a:N {id: 42}) RETURN a"),
        Vec::<Vec<Value>>::new()
    );
}

#[test]
fn writes_over_an_external_graph_are_refused() {
    let (_dir, engine, snap, _) = setup();
    for query in [
        "CREATE (:N {id: 11})",
        "MATCH (a:N) SET a.x = 1",
        "CREATE INDEX FOR (a:N) ON (a.w)",
    ] {
        let e = engine
            .execute_read_only_on(
                snap.clone(),
                query,
                BTreeMap::new(),
                &QueryOptions::default(),
                None,
                "the ring",
            )
            .unwrap_err();
        assert_eq!(e.code, Some("ReadOnlySource"), "{query}: {e}");
        assert!(e.message.contains("the ring is read-only"), "{e}");
    }
    // The empty native base under the snapshot was not written.
    assert_eq!(
        engine
            .execute(
                "MATCH (n) RETURN count(n)",
                BTreeMap::new(),
                &QueryOptions::default()
            )
            .unwrap()
            .rows
            .to_vecs(),
        vec![vec![int(0)]]
    );
}
