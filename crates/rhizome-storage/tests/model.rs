//! Randomized differential test: random write operations applied to a
//! database and to a simple in-memory model, with commits, rollbacks,
//! checkpoints and reopens in between; the two must always agree (compared
//! through a `uid` property, since checkpoints renumber ids), and the
//! integrity check must pass.

use rhizome_common::Value;
use rhizome_storage::builder::GraphBuilder;
use rhizome_storage::{Database, DatabaseOptions, Direction, GraphRead, Snapshot};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    /// uid -> (labels, props)
    nodes: BTreeMap<i64, (BTreeSet<String>, BTreeMap<String, Value>)>,
    /// uid -> (type, start uid, end uid, props)
    rels: BTreeMap<i64, (String, i64, i64, BTreeMap<String, Value>)>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const LABELS: [&str; 3] = ["A", "B", "C"];
const TYPES: [&str; 2] = ["R", "S"];
const KEYS: [&str; 3] = ["x", "y", "z"];

fn uid(s: &impl GraphRead, node: bool, id: u64) -> i64 {
    let k = s.catalog().property_key_id("uid").unwrap();
    let v = if node {
        s.node_property(id, k)
    } else {
        s.rel_property(id, k)
    };
    match v {
        Value::Int(u) => u,
        other => panic!("entity {id} has uid {other:?}"),
    }
}

/// The database as a model.
fn observe(s: &Snapshot) -> Model {
    let c = s.catalog();
    let mut m = Model::default();
    for r in s.node_ranges().iter() {
        for n in r.clone() {
            let mut props = Vec::new();
            s.node_properties(n, &mut props);
            let props: BTreeMap<String, Value> = props
                .into_iter()
                .map(|(k, v)| (c.property_key_name(k).to_string(), v))
                .filter(|(k, _)| k != "uid")
                .collect();
            let labels = s
                .node_labels(n)
                .iter()
                .map(|&l| c.label_name(l).to_string())
                .collect();
            m.nodes.insert(uid(s, true, n), (labels, props));
            for t in 0..c.rel_types.len() as u32 {
                let adj = s.adjacency(n, t, Direction::Outgoing);
                for i in 0..adj.len() {
                    let r = adj.rel_id(i);
                    let mut props = Vec::new();
                    s.rel_properties(r, &mut props);
                    let props = props
                        .into_iter()
                        .map(|(k, v)| (c.property_key_name(k).to_string(), v))
                        .filter(|(k, _)| k != "uid")
                        .collect();
                    m.rels.insert(
                        uid(s, false, r),
                        (
                            c.rel_type_name(t).to_string(),
                            uid(s, true, n),
                            uid(s, true, adj.neighbour(i)),
                            props,
                        ),
                    );
                }
            }
        }
    }
    m
}

fn live_nodes(s: &impl GraphRead) -> Vec<u64> {
    (0..s.node_bound()).filter(|&n| s.node_exists(n)).collect()
}

fn live_rels(s: &Snapshot) -> Vec<u64> {
    let mut out = Vec::new();
    for n in live_nodes(s) {
        for t in 0..s.catalog().rel_types.len() as u32 {
            let adj = s.adjacency(n, t, Direction::Outgoing);
            out.extend((0..adj.len()).map(|i| adj.rel_id(i)));
        }
    }
    out
}

#[test]
fn random_operations_agree_with_a_model() {
    for seed in [0x1234_5678_9abc_def1, 7, 0xdead_beef, 42_424_242] {
        run(seed);
    }
}

fn run(seed: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    // Odd seeds checkpoint incrementally (delta files) until a full one.
    // Seeds 7 and 42424242 checkpoint inline (in the commit that makes one
    // due, at exactly reproducible points); the others on the background
    // thread. Both also checkpoint when the delta outgrows a small size.
    let background = !seed.is_multiple_of(7) && !seed.is_multiple_of(42);
    let options = DatabaseOptions {
        checkpoint_wal_bytes: 6000,
        checkpoint_delta_bytes: 24 << 10,
        background_checkpoints: background,
        checkpoint_on_close: false,
        delta_checkpoint_ratio: if seed % 2 == 1 { 1e6 } else { 0.25 },
        ..DatabaseOptions::default()
    };
    let mut db = Database::open_with(&dir, options.clone()).unwrap();
    let mut model = Model::default();
    let mut rng = Rng(seed);
    let mut next_uid = 0i64;
    let mut automatic = 0;
    for round in 0..60 {
        let mut txn = db.begin_write().unwrap();
        let mut m = model.clone();
        if round == 5 {
            txn.create_index("A", "x", None).unwrap();
        }
        for _ in 0..rng.below(12) + 1 {
            let s = txn.snapshot();
            let nodes = live_nodes(&s);
            let rels = live_rels(&s);
            let pick = |rng: &mut Rng, v: &[u64]| v[rng.below(v.len() as u64) as usize];
            match rng.below(8) {
                0 | 1 => {
                    let label = LABELS[rng.below(3) as usize];
                    let x = Value::Int(rng.below(5) as i64);
                    txn.create_node(&[label], &[("uid", Value::Int(next_uid)), ("x", x.clone())])
                        .unwrap();
                    m.nodes.insert(
                        next_uid,
                        ([label.to_string()].into(), [("x".to_string(), x)].into()),
                    );
                    next_uid += 1;
                }
                2 if !nodes.is_empty() => {
                    let (a, b) = (pick(&mut rng, &nodes), pick(&mut rng, &nodes));
                    let t = TYPES[rng.below(2) as usize];
                    txn.create_relationship(a, b, t, &[("uid", Value::Int(next_uid))])
                        .unwrap();
                    m.rels.insert(
                        next_uid,
                        (
                            t.into(),
                            uid(&s, true, a),
                            uid(&s, true, b),
                            BTreeMap::new(),
                        ),
                    );
                    next_uid += 1;
                }
                3 if !nodes.is_empty() => {
                    let n = pick(&mut rng, &nodes);
                    let k = KEYS[rng.below(3) as usize];
                    let v = if rng.below(3) == 0 {
                        Value::Null
                    } else {
                        Value::String(format!("v{}", rng.below(4)))
                    };
                    txn.set_node_property(n, k, v.clone()).unwrap();
                    let props = &mut m.nodes.get_mut(&uid(&s, true, n)).unwrap().1;
                    if v.is_null() {
                        props.remove(k);
                    } else {
                        props.insert(k.into(), v);
                    }
                }
                4 if !rels.is_empty() => {
                    let r = pick(&mut rng, &rels);
                    let v = Value::Int(rng.below(100) as i64);
                    txn.set_rel_property(r, "w", v.clone()).unwrap();
                    m.rels
                        .get_mut(&uid(&s, false, r))
                        .unwrap()
                        .3
                        .insert("w".into(), v);
                }
                5 if !nodes.is_empty() => {
                    let n = pick(&mut rng, &nodes);
                    let l = LABELS[rng.below(3) as usize];
                    let labels = &mut m.nodes.get_mut(&uid(&s, true, n)).unwrap().0;
                    if rng.below(2) == 0 {
                        txn.add_label(n, l).unwrap();
                        labels.insert(l.into());
                    } else {
                        txn.remove_label(n, l).unwrap();
                        labels.remove(l);
                    }
                }
                6 if !rels.is_empty() => {
                    let r = pick(&mut rng, &rels);
                    txn.delete_relationship(r).unwrap();
                    m.rels.remove(&uid(&s, false, r));
                }
                7 if !nodes.is_empty() => {
                    let n = pick(&mut rng, &nodes);
                    let u = uid(&s, true, n);
                    let connected = m.rels.values().any(|r| r.1 == u || r.2 == u);
                    let detach = rng.below(2) == 0;
                    let result = txn.delete_node(n, detach);
                    if connected && !detach {
                        assert!(result.is_err());
                    } else {
                        result.unwrap();
                        m.nodes.remove(&u);
                        m.rels.retain(|_, r| r.1 != u && r.2 != u);
                    }
                }
                _ => {}
            }
        }
        assert_eq!(
            observe(&txn.snapshot()),
            m,
            "round {round}: inside the transaction"
        );
        match rng.below(6) {
            0 => txn.rollback(),
            _ => {
                txn.commit().unwrap();
                model = m;
            }
        }
        assert_eq!(
            observe(&db.snapshot()),
            model,
            "round {round}: after commit"
        );
        match rng.below(9) {
            0 => {
                db.checkpoint().unwrap();
            }
            8 => {
                db.checkpoint_full().unwrap();
            }
            1 => {
                automatic += db.checkpoint_status().automatic_checkpoints;
                drop(db);
                db = Database::open_with(&dir, options.clone()).unwrap();
            }
            _ => {}
        }
        let s = db.snapshot();
        assert_eq!(observe(&s), model, "round {round}: after checkpoint/reopen");
        let problems = db.check();
        assert!(problems.is_empty(), "round {round}: {problems:?}");
        // Label scans agree with the model.
        for label in LABELS {
            let Some(l) = s.catalog().label_id(label) else {
                continue;
            };
            let scanned: BTreeSet<i64> = s
                .label_range_slice(l)
                .iter()
                .flat_map(|r| r.clone())
                .map(|n| uid(&s, true, n))
                .collect();
            let expected: BTreeSet<i64> = model
                .nodes
                .iter()
                .filter(|(_, (labels, _))| labels.contains(label))
                .map(|(u, _)| *u)
                .collect();
            assert_eq!(scanned, expected, "round {round}: label {label}");
            assert_eq!(
                s.statistics().label_counts[l as usize],
                expected.len() as u64,
                "round {round}: count of {label}"
            );
        }
        // The index agrees with a scan.
        if let (Some(a), Some(x)) = (s.catalog().label_id("A"), s.catalog().property_key_id("x")) {
            if s.has_index(a, x) {
                for v in 0..5 {
                    let mut scan: Vec<u64> = s
                        .label_range_slice(a)
                        .iter()
                        .flat_map(|r| r.clone())
                        .filter(|&n| s.node_property(n, x) == Value::Int(v))
                        .collect();
                    scan.sort_unstable();
                    assert_eq!(
                        s.index_seek(a, x, &Value::Int(v)),
                        Some(scan),
                        "round {round}"
                    );
                }
            }
        }
    }
    automatic += db.checkpoint_status().automatic_checkpoints;
    // With a 6000-byte log limit, checkpoints must have run by themselves.
    assert!(automatic > 0, "seed {seed}: no automatic checkpoint");
}
