//! Write transactions, snapshot isolation, schema, WAL recovery and checkpoints.

use rhizome_common::{ErrorKind, Value};
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput, RelGroupInput};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{Database, DatabaseOptions, Direction, FaultyIo, GraphRead, Snapshot};
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn ints(values: impl IntoIterator<Item = i64>) -> rhizome_storage::column::ColumnData {
    let mut b = ColumnBuilder::new();
    values.into_iter().for_each(|v| b.push_i64(v));
    b.finish()
}

/// Persons 0..4 with `id` 10..14 (indexed), KNOWS 0->1, 1->2, 2->3.
fn base(dir: &Path) {
    let mut b = GraphBuilder::new();
    let p = b
        .add_nodes(NodeGroupInput {
            rows: 4,
            labels: vec!["Person".into()],
            row_labels: None,
            properties: vec![("id".into(), ints([10, 11, 12, 13]))],
        })
        .unwrap();
    b.add_relationships(
        "KNOWS",
        RelGroupInput {
            sources: vec![p[0], p[1], p[2]],
            targets: vec![p[1], p[2], p[3]],
            properties: vec![("w".into(), ints([1, 2, 3]))],
        },
    )
    .unwrap();
    b.add_index("Person", "id");
    b.write(dir).unwrap();
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    base(&dir);
    (tmp, dir)
}

fn ids(s: &Snapshot, label: &str) -> Vec<u64> {
    let l = s.catalog().label_id(label).unwrap();
    s.label_range_slice(l)
        .iter()
        .flat_map(|r| r.clone())
        .collect()
}

fn key(s: &impl GraphRead, k: &str) -> u32 {
    s.catalog().property_key_id(k).unwrap()
}

fn out(s: &Snapshot, node: u64, t: &str) -> Vec<u64> {
    let t = s.catalog().rel_type_id(t).unwrap();
    s.adjacency(node, t, Direction::Outgoing)
        .neighbours()
        .to_vec()
}

fn inc(s: &Snapshot, node: u64, t: &str) -> Vec<u64> {
    let t = s.catalog().rel_type_id(t).unwrap();
    s.adjacency(node, t, Direction::Incoming)
        .neighbours()
        .to_vec()
}

#[test]
fn snapshot_isolation_and_own_writes() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let before = db.snapshot();
    let mut txn = db.begin_write().unwrap();
    let n = txn
        .create_node(&["Person", "New"], &[("id", Value::Int(99))])
        .unwrap();
    assert_eq!(n, 4);
    let r = txn.create_relationship(0, n, "KNOWS", &[]).unwrap();
    assert_eq!(r, 3);
    // The transaction reads its own writes.
    let own = txn.snapshot();
    assert_eq!(ids(&own, "Person"), vec![0, 1, 2, 3, 4]);
    assert_eq!(out(&own, 0, "KNOWS"), vec![1, 4]);
    assert_eq!(inc(&own, 4, "KNOWS"), vec![0]);
    assert_eq!(txn.node_property(n, key(&txn, "id")), Value::Int(99));
    // Others do not.
    assert_eq!(db.snapshot().node_bound(), 4);
    assert!(db.snapshot().is_base_only());
    let info = txn.commit().unwrap();
    assert_eq!(info.counters.nodes_created, 1);
    assert_eq!(info.counters.relationships_created, 1);
    assert_eq!(info.counters.labels_added, 2);
    assert_eq!(info.counters.properties_set, 1);
    assert_eq!(info.commit, 1);
    // Old snapshot unchanged; a new one sees everything.
    assert_eq!(before.node_bound(), 4);
    assert_eq!(out(&before, 0, "KNOWS"), vec![1]);
    let after = db.snapshot();
    assert_eq!(out(&after, 0, "KNOWS"), vec![1, 4]);
    assert_eq!(
        after.index_seek(0, key(&after, "id"), &Value::Int(99)),
        Some(vec![4])
    );
    assert_eq!(after.statistics().node_count, 5);
    assert_eq!(after.relationship(3).unwrap().end, 4);

    // Rollback and drop leave nothing.
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["Person"], &[]).unwrap();
    txn.delete_node(4, true).unwrap();
    txn.rollback();
    let mut txn = db.begin_write().unwrap();
    txn.set_node_property(0, "id", Value::Int(-1)).unwrap();
    drop(txn);
    let s = db.snapshot();
    assert_eq!(s.node_bound(), 5);
    assert!(s.node_exists(4));
    assert_eq!(s.node_property(0, key(&s, "id")), Value::Int(10));
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn every_write_operation() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let mut txn = db.begin_write().unwrap();
    // Properties: set, overwrite, remove, on base and new entities.
    txn.set_node_property(1, "name", Value::from("bob"))
        .unwrap();
    txn.set_node_property(1, "id", Value::Null).unwrap();
    txn.set_rel_property(0, "w", Value::Int(100)).unwrap();
    txn.set_rel_property(1, "w", Value::Null).unwrap();
    assert!(txn.add_label(2, "Admin").unwrap());
    assert!(!txn.add_label(2, "Admin").unwrap());
    assert!(txn.remove_label(3, "Person").unwrap());
    assert!(!txn.remove_label(3, "Nope").unwrap());
    // Type checks.
    let err = txn
        .set_node_property(0, "m", Value::Map(Default::default()))
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::TypeError);
    assert_eq!(
        txn.create_node(&[], &[("n", Value::Node(1))])
            .unwrap_err()
            .kind,
        ErrorKind::TypeError
    );
    // Delete without detach on a connected node fails; with detach works.
    let err = txn.delete_node(1, false).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConstraintVerificationFailed);
    assert_eq!(err.code, Some("DeleteConnectedNode"));
    txn.delete_node(1, true).unwrap();
    assert_eq!(
        txn.delete_node(1, true).unwrap_err().kind,
        ErrorKind::EntityNotFound
    );
    assert_eq!(
        txn.delete_relationship(0).unwrap_err().kind,
        ErrorKind::EntityNotFound
    );
    txn.delete_relationship(2).unwrap();
    let lonely = txn.create_node(&["Person"], &[]).unwrap();
    txn.delete_node(lonely, false).unwrap();
    assert_eq!(
        txn.create_relationship(0, lonely, "KNOWS", &[])
            .unwrap_err()
            .kind,
        ErrorKind::EntityNotFound
    );
    let c = txn.counters();
    assert_eq!(c.nodes_deleted, 2);
    assert_eq!(c.relationships_deleted, 3);
    assert_eq!(c.labels_added, 2);
    assert_eq!(c.labels_removed, 1);
    txn.commit().unwrap();

    let s = db.snapshot();
    let (id, name, w) = (key(&s, "id"), key(&s, "name"), key(&s, "w"));
    assert!(!s.node_exists(1));
    assert!(s.node_exists(0));
    assert!(!s.node_exists(5) && !s.node_exists(4));
    assert_eq!(s.node_property(1, name), Value::Null);
    assert_eq!(ids(&s, "Person"), vec![0, 2]);
    assert_eq!(ids(&s, "Admin"), vec![2]);
    assert_eq!(out(&s, 0, "KNOWS"), Vec::<u64>::new());
    assert_eq!(inc(&s, 3, "KNOWS"), Vec::<u64>::new());
    assert!(s.relationship(0).is_none() && s.relationship(2).is_none());
    assert_eq!(s.rel_property(0, w), Value::Null);
    let knows = s.catalog().rel_type_id("KNOWS").unwrap();
    assert!(s.rel_column(knows, w).is_none() && s.csr(knows, Direction::Outgoing).is_none());
    assert_eq!(s.node_ranges().to_vec(), vec![0..1, 2..4]);
    assert_eq!(
        s.index_seek(0, id, &Value::Int(11)),
        Some(vec![]),
        "deleted node left the index"
    );
    assert_eq!(s.index_seek(0, id, &Value::Int(13)), Some(vec![]));
    assert_eq!(s.index_seek(0, id, &Value::Int(12)), Some(vec![2]));
    let mut props = Vec::new();
    s.node_properties(2, &mut props);
    assert_eq!(props, vec![(id, Value::Int(12))]);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn indexes_and_constraints() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let mut txn = db.begin_write().unwrap();
    assert!(txn.create_unique_constraint("Person", "id", None).unwrap());
    let err = txn
        .create_node(&["Person"], &[("id", Value::Int(12))])
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConstraintValidationFailed);
    assert!(
        err.message.contains("Person") && err.message.contains("12"),
        "{err}"
    );
    txn.create_node(&["Person"], &[("id", Value::Int(14))])
        .unwrap();
    assert_eq!(
        txn.set_node_property(0, "id", Value::Int(14))
            .unwrap_err()
            .kind,
        ErrorKind::ConstraintValidationFailed
    );
    // Moving a value away frees it.
    txn.set_node_property(0, "id", Value::Int(20)).unwrap();
    txn.set_node_property(1, "id", Value::Int(10)).unwrap();
    let x = txn
        .create_node(&["Other"], &[("id", Value::Int(12))])
        .unwrap();
    assert_eq!(
        txn.add_label(x, "Person").unwrap_err().kind,
        ErrorKind::ConstraintValidationFailed
    );
    // A runtime index over existing data.
    txn.create_node(&["City"], &[("name", Value::from("b"))])
        .unwrap();
    assert!(txn.create_index("City", "name", None).unwrap());
    let c = txn
        .create_node(&["City"], &[("name", Value::from("a"))])
        .unwrap();
    let s = txn.snapshot();
    let city = s.catalog().label_id("City").unwrap();
    let name = key(&s, "name");
    assert!(s.has_index(city, name));
    assert_eq!(s.index_seek(city, name, &Value::from("a")), Some(vec![c]));
    let all = s
        .index_range(city, name, Bound::Unbounded, Bound::Unbounded)
        .unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0], c, "value order");
    let id = key(&s, "id");
    let r = s
        .index_range(
            0,
            id,
            Bound::Included(&Value::Int(12)),
            Bound::Excluded(&Value::Int(20)),
        )
        .unwrap();
    assert_eq!(r.to_vec(), vec![2, 3, 4]);
    assert_eq!(s.schema().constraints.len(), 1);
    // Verification of existing data.
    txn.create_node(&["Dup"], &[("k", Value::Int(1))]).unwrap();
    txn.create_node(&["Dup"], &[("k", Value::Float(1.0))])
        .unwrap();
    let err = txn.create_unique_constraint("Dup", "k", None).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConstraintVerificationFailed);
    assert_eq!(
        txn.drop_index("Person", "id").unwrap_err().kind,
        ErrorKind::SchemaError
    );
    assert!(txn.drop_constraint("Person", "id").unwrap());
    assert!(txn.drop_index("Person", "id").unwrap());
    assert!(txn.create_unique_constraint("City", "name", None).unwrap());
    txn.commit().unwrap();
    assert!(db.check().is_empty(), "{:?}", db.check());
    let s = db.snapshot();
    assert!(!s.has_index(0, id));
    assert_eq!(s.index_seek(0, id, &Value::Int(10)), None);
    drop(s);
    // Schema survives recovery and checkpoint.
    drop(db);
    let db = Database::open(&dir).unwrap();
    let s = db.snapshot();
    let city = s.catalog().label_id("City").unwrap();
    assert!(s.schema().is_unique(city, name));
    assert_eq!(
        s.index_seek(city, name, &Value::from("a")).unwrap().len(),
        1
    );
    let mut txn = db.begin_write().unwrap();
    assert_eq!(
        txn.create_node(&["City"], &[("name", Value::from("a"))])
            .unwrap_err()
            .kind,
        ErrorKind::ConstraintValidationFailed
    );
    drop(txn);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn schema_names_survive_recovery_and_checkpoint() {
    use rhizome_storage::SchemaObjectKind::{Constraint, Index};
    let (_tmp, dir) = setup();
    let keep_log = DatabaseOptions {
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, keep_log.clone()).unwrap();
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["City"], &[("name", Value::from("a"))])
        .unwrap();
    assert!(txn.create_index("City", "name", Some("city_name")).unwrap());
    let err = txn
        .create_unique_constraint("City", "zip", Some("city_name"))
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::SchemaError, "{err}");
    assert!(txn
        .create_unique_constraint("City", "zip", Some("unique_zip"))
        .unwrap());
    txn.commit().unwrap();
    let names = |db: &Database| {
        let s = db.snapshot();
        let schema = s.schema();
        let mut found: Vec<_> = [Index, Constraint]
            .into_iter()
            .flat_map(|kind| {
                schema
                    .objects(kind)
                    .iter()
                    .map(|d| schema.name_of(kind, *d, s.catalog()))
                    .collect::<Vec<_>>()
            })
            .collect();
        found.sort();
        found
    };
    let expected = vec![
        "city_name".to_string(),
        "index_City_zip".to_string(),
        "index_Person_id".to_string(),
        "unique_zip".to_string(),
    ];
    assert_eq!(names(&db), expected);
    // From the log ...
    drop(db);
    let db = Database::open_with(&dir, keep_log).unwrap();
    assert_eq!(names(&db), expected);
    // ... and from the manifest after a checkpoint.
    assert!(db.checkpoint().unwrap());
    drop(db);
    let db = Database::open(&dir).unwrap();
    assert_eq!(names(&db), expected);
    let mut txn = db.begin_write().unwrap();
    assert!(txn.drop_constraint("City", "zip").unwrap());
    txn.commit().unwrap();
    let s = db.snapshot();
    assert_eq!(s.schema().find("unique_zip", s.catalog()), None);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn one_writer_at_a_time() {
    let (_tmp, dir) = setup();
    let options = DatabaseOptions {
        lock_timeout: Duration::from_millis(50),
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options).unwrap();
    let txn = db.begin_write().unwrap();
    let err = db.begin_write().err().unwrap();
    assert_eq!(err.kind, ErrorKind::TransientError);
    assert_eq!(err.code, Some("LockAcquisitionTimeout"));
    let db2 = db.clone();
    let waiter = std::thread::spawn(move || {
        let opts = db2.begin_write();
        opts.map(|_| ())
    });
    std::thread::sleep(Duration::from_millis(10));
    drop(txn);
    waiter.join().unwrap().unwrap();
}

fn wal_path(dir: &Path) -> std::path::PathBuf {
    dir.join("wal.log")
}

/// Opens `dir` so that closing leaves the log as it is (no checkpoint).
fn open_keeping_log(dir: &Path) -> Database {
    let options = DatabaseOptions {
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    Database::open_with(dir, options).unwrap()
}

fn write_commits(dir: &Path, n: i64) {
    let db = open_keeping_log(dir);
    for i in 0..n {
        let mut txn = db.begin_write().unwrap();
        let a = txn.create_node(&["T"], &[("i", Value::Int(i))]).unwrap();
        txn.create_relationship(a, 0, "TO", &[("i", Value::Int(i))])
            .unwrap();
        txn.commit().unwrap();
    }
}

fn count_t(db: &Database) -> usize {
    let s = db.snapshot();
    s.catalog().label_id("T").map_or(0, |_| ids(&s, "T").len())
}

#[test]
fn recovery_replays_and_cuts_torn_or_corrupt_tails() {
    let (_tmp, dir) = setup();
    write_commits(&dir, 5);
    let db = Database::open(&dir).unwrap();
    assert_eq!(count_t(&db), 5);
    assert_eq!(db.last_commit(), 5);
    assert!(db.check().is_empty(), "{:?}", db.check());
    drop(db);
    // (checkpoint on close merged everything; write more and tear the log.)
    write_commits(&dir, 3);
    // Each damage of the last record leaves the 7 commits before it, and
    // writing afterwards works (the next damage hits that new record).
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 3] = [
        (
            "torn in the reserved space (its last bytes stayed zeros)",
            |b| {
                let end = log_end(b);
                assert!(b.len() > end, "space is reserved past the records");
                b[end - 3..end].fill(0);
            },
        ),
        ("a flipped byte", |b| {
            let end = log_end(b);
            b[end - 2] ^= 0xff;
        }),
        ("the file cut inside it", |b| b.truncate(log_end(b) - 3)),
    ];
    for (what, damage) in damages {
        let mut bytes = std::fs::read(wal_path(&dir)).unwrap();
        damage(&mut bytes);
        std::fs::write(wal_path(&dir), &bytes).unwrap();
        let db = open_keeping_log(&dir);
        assert_eq!(count_t(&db), 7, "{what}");
        assert!(db.check().is_empty(), "{what}: {:?}", db.check());
        let mut txn = db.begin_write().unwrap();
        txn.create_node(&["T"], &[]).unwrap();
        txn.commit().unwrap();
    }
}

/// Where the records of log file `bytes` end (reserved zeros follow).
fn log_end(bytes: &[u8]) -> usize {
    let parsed = rhizome_storage::wal::parse(bytes);
    assert_eq!(parsed.damage, None);
    parsed.valid_len as usize
}

#[test]
fn out_of_disk_fails_the_commit_cleanly() {
    let (_tmp, dir) = setup();
    let io = FaultyIo::new();
    let options = DatabaseOptions {
        io: Arc::new(io.clone()),
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options.clone()).unwrap();
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["T"], &[]).unwrap();
    txn.commit().unwrap();
    io.set_space(10);
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["T"], &[("big", Value::from("x".repeat(100)))])
        .unwrap();
    let err = txn.commit().unwrap_err();
    assert_eq!(err.kind, ErrorKind::IoError);
    assert!(err.message.contains("No space left"), "{err}");
    assert_eq!(count_t(&db), 1);
    // Usable again once there is space.
    io.set_space(u64::MAX);
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["T"], &[]).unwrap();
    txn.commit().unwrap();
    assert_eq!(count_t(&db), 2);
    // A failed sync poisons writes until reopen.
    io.set_fail_sync(true);
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["T"], &[]).unwrap();
    assert_eq!(txn.commit().unwrap_err().kind, ErrorKind::IoError);
    io.set_fail_sync(false);
    drop(db);
    let db = Database::open_with(&dir, options).unwrap();
    assert_eq!(count_t(&db), 2);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

/// Everything observable, independent of ids: (labels, props) per node and
/// (type, start props, end props, props) per relationship.
fn dump(s: &Snapshot) -> (Vec<String>, Vec<String>) {
    let c = s.catalog();
    let node_text = |n: u64| {
        let mut props = Vec::new();
        s.node_properties(n, &mut props);
        let labels: Vec<&str> = s.node_labels(n).iter().map(|&l| c.label_name(l)).collect();
        let props: Vec<String> = props
            .iter()
            .map(|(k, v)| format!("{}={v}", c.property_key_name(*k)))
            .collect();
        format!("{labels:?}{props:?}")
    };
    let mut nodes = Vec::new();
    let mut rels = Vec::new();
    for r in s.node_ranges().iter() {
        for n in r.clone() {
            nodes.push(node_text(n));
            for t in 0..c.rel_types.len() as u32 {
                let adj = s.adjacency(n, t, Direction::Outgoing);
                for i in 0..adj.len() {
                    let mut props = Vec::new();
                    s.rel_properties(adj.rel_id(i), &mut props);
                    rels.push(format!(
                        "{} {} {} {props:?}",
                        c.rel_type_name(t),
                        node_text(n),
                        node_text(adj.neighbour(i))
                    ));
                }
            }
        }
    }
    nodes.sort();
    rels.sort();
    (nodes, rels)
}

#[test]
fn checkpoint_and_reopen_keep_the_graph() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let mut txn = db.begin_write().unwrap();
    let a = txn
        .create_node(
            &["Person", "X"],
            &[("id", Value::Int(50)), ("s", Value::from("a"))],
        )
        .unwrap();
    txn.create_relationship(a, 2, "LIKES", &[("since", Value::Int(2020))])
        .unwrap();
    txn.delete_node(0, true).unwrap();
    txn.set_rel_property(1, "w", Value::Int(7)).unwrap();
    txn.create_unique_constraint("X", "s", None).unwrap();
    txn.commit().unwrap();
    let before = dump(&db.snapshot());
    let old = db.snapshot();
    assert!(db.checkpoint_full().unwrap());
    assert!(!db.checkpoint().unwrap());
    assert!(!db.checkpoint_full().unwrap());
    let s = db.snapshot();
    assert!(s.is_base_only());
    assert_eq!(dump(&s), before);
    // A snapshot from before the checkpoint still reads its state.
    assert_eq!(dump(&old), before);
    assert!(db.check().is_empty(), "{:?}", db.check());
    let x = s.catalog().label_id("X").unwrap();
    assert!(s.schema().is_unique(x, key(&s, "s")));
    // The old segment was still mapped (by `old`), so it stayed.
    assert_eq!(segments(&dir), 2);
    drop((s, old, db));
    let db = Database::open(&dir).unwrap();
    assert_eq!(dump(&db.snapshot()), before);
    // The WAL is empty after the checkpoint; new writes go on top, and the
    // first write collects the segment nobody maps any more.
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["X"], &[("s", Value::from("b"))]).unwrap();
    txn.commit().unwrap();
    assert_eq!(segments(&dir), 1);
    drop(db);
    let db = Database::open(&dir).unwrap();
    assert_eq!(ids(&db.snapshot(), "X").len(), 2);
}

#[test]
fn wal_size_triggers_a_checkpoint() {
    let (_tmp, dir) = setup();
    let options = DatabaseOptions {
        checkpoint_wal_bytes: 2000,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options).unwrap();
    for i in 0..100 {
        let mut txn = db.begin_write().unwrap();
        txn.create_node(&["T"], &[("i", Value::Int(i))]).unwrap();
        txn.commit().unwrap();
    }
    // The checkpoint runs on the database's background thread: the log
    // must be cut back soon after the commit that made it due.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(wal_path(&dir)).unwrap().len() > 2000 {
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint within 20 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(count_t(&db), 100);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

/// A writable process that opens a database whose log is longer than the
/// checkpoint threshold checkpoints it; a read-only one leaves it alone.
#[test]
fn opening_a_long_log_checkpoints_it() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    for i in 0..50 {
        let mut txn = db.begin_write().unwrap();
        txn.create_node(&["T"], &[("i", Value::Int(i))]).unwrap();
        txn.commit().unwrap();
    }
    drop(db);
    let long = std::fs::metadata(wal_path(&dir)).unwrap().len();
    assert!(long > 1000, "{long}");
    let small = |read_only| DatabaseOptions {
        checkpoint_wal_bytes: 1000,
        read_only,
        ..DatabaseOptions::default()
    };
    let reader = Database::open_with(&dir, small(true)).unwrap();
    assert_eq!(std::fs::metadata(wal_path(&dir)).unwrap().len(), long);
    assert_eq!(count_t(&reader), 50);
    // Another handle holds the writer lock: opening does not wait for it.
    let holder = Database::open(&dir).unwrap();
    let txn = holder.begin_write().unwrap();
    let t0 = std::time::Instant::now();
    let db = Database::open_with(&dir, small(false)).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(std::fs::metadata(wal_path(&dir)).unwrap().len(), long);
    drop((db, txn));
    let db = Database::open_with(&dir, small(false)).unwrap();
    assert!(std::fs::metadata(wal_path(&dir)).unwrap().len() < long);
    assert_eq!(count_t(&db), 50);
    assert_eq!(count_t(&reader), 50);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn statistics_stay_safe_for_the_planner() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let s = db.snapshot();
    let (person, knows) = (
        s.catalog().label_id("Person").unwrap(),
        s.catalog().rel_type_id("KNOWS").unwrap(),
    );
    assert_eq!(s.statistics().triple_count(person, knows, person), 3);
    let mut txn = db.begin_write().unwrap();
    txn.remove_label(3, "Person").unwrap();
    txn.commit().unwrap();
    let s = db.snapshot();
    // Node 3 is no longer a Person: "every KNOWS ends at a Person" is false now.
    assert_eq!(s.statistics().triple_count(person, knows, person), 0);
    assert_eq!(s.statistics().label_counts[person as usize], 3);
    let mut txn = db.begin_write().unwrap();
    txn.add_label(3, "Person").unwrap();
    let c = txn.create_node(&["City"], &[]).unwrap();
    txn.delete_relationship(2).unwrap();
    txn.create_relationship(2, c, "KNOWS", &[]).unwrap();
    txn.commit().unwrap();
    let stats = db.snapshot().statistics().clone();
    assert_eq!(stats.rel_types[knows as usize].count, 3);
    assert!(stats.triples.iter().all(|t| t.rel_type != knows));
    db.checkpoint().unwrap();
    let s = db.snapshot();
    let city = s.catalog().label_id("City").unwrap();
    assert_eq!(s.statistics().triple_count(person, knows, city), 1);
    assert_eq!(s.statistics().triple_count(person, knows, person), 2);
}

#[test]
fn interrupted_checkpoints_recover() {
    let (_tmp, dir) = setup();
    write_commits(&dir, 4);
    let stale_wal = std::fs::read(wal_path(&dir)).unwrap();
    // Crash after the manifest switch, before the log reset: the old log
    // (older generation) must not be replayed a second time.
    let db = Database::open(&dir).unwrap();
    assert!(db.checkpoint().unwrap());
    drop(db);
    std::fs::write(wal_path(&dir), &stale_wal).unwrap();
    let db = Database::open(&dir).unwrap();
    assert_eq!(count_t(&db), 4);
    assert!(db.check().is_empty(), "{:?}", db.check());
    drop(db);
    // Crash before the manifest switch: a half-written segment and manifest
    // are debris; the log is replayed on top of the old segment.
    write_commits(&dir, 2);
    std::fs::write(dir.join("segment-000099.rhz"), b"half").unwrap();
    std::fs::write(dir.join("manifest.json.tmp"), b"{").unwrap();
    let db = Database::open(&dir).unwrap();
    assert_eq!(count_t(&db), 6);
    // Opening writes nothing; the first writer collects the debris.
    assert!(dir.join("segment-000099.rhz").exists());
    drop(db.begin_write().unwrap());
    assert!(!dir.join("segment-000099.rhz").exists());
    assert!(!dir.join("manifest.json.tmp").exists());
    assert!(db.check().is_empty(), "{:?}", db.check());
}

/// Number of segment files in `dir`.
fn segments(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".rhz")
        })
        .count()
}

#[test]
fn closing_keeps_the_log_unless_asked_to_checkpoint() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["T"], &[]).unwrap();
    txn.commit().unwrap();
    let len = std::fs::metadata(wal_path(&dir)).unwrap().len();
    db.close().unwrap();
    assert_eq!(std::fs::metadata(wal_path(&dir)).unwrap().len(), len);
    assert_eq!(segments(&dir), 1, "nothing was rewritten");
    let options = DatabaseOptions {
        checkpoint_on_close: true,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options).unwrap();
    assert!(!db.snapshot().is_base_only(), "the log was replayed");
    let clone = db.clone();
    drop(db);
    assert!(!clone.snapshot().is_base_only(), "a handle is still open");
    drop(clone);
    let len = std::fs::metadata(wal_path(&dir)).unwrap().len();
    assert_eq!(len, 16, "the log was reset to its header");
    // One small node: the checkpoint was incremental (a delta file).
    assert_eq!(files_ending(&dir, ".rhd").len(), 1);
    let db = Database::open(&dir).unwrap();
    assert_eq!(count_t(&db), 1);
}

#[test]
fn readers_always_see_whole_commits() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let s = db.snapshot();
                    let Some(count) = s.catalog().property_key_id("count") else {
                        continue;
                    };
                    // Node 0's `count` is the number of T nodes, in every state.
                    let expected = match s.node_property(0, count) {
                        Value::Int(c) => c as usize,
                        _ => 0,
                    };
                    assert_eq!(count_t_in(&s), expected);
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for i in 1..=60 {
        let mut txn = db.begin_write().unwrap();
        txn.create_node(&["T"], &[]).unwrap();
        txn.set_node_property(0, "count", Value::Int(i)).unwrap();
        txn.commit().unwrap();
        if i % 20 == 0 {
            db.checkpoint().unwrap();
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
}

fn count_t_in(s: &Snapshot) -> usize {
    s.catalog().label_id("T").map_or(0, |_| ids(s, "T").len())
}

fn files_ending(dir: &Path, ext: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(ext))
        .collect();
    names.sort();
    names
}

fn manifest_json(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

/// Options whose checkpoints are incremental whatever the delta's size.
fn incremental() -> DatabaseOptions {
    DatabaseOptions {
        delta_checkpoint_ratio: 1e6,
        ..DatabaseOptions::default()
    }
}

#[test]
fn incremental_checkpoints_write_a_delta_file_and_keep_ids() {
    let (_tmp, dir) = setup();
    let segment = files_ending(&dir, ".rhz");
    let db = Database::open_with(&dir, incremental()).unwrap();
    let mut txn = db.begin_write().unwrap();
    let a = txn
        .create_node(
            &["Person", "X"],
            &[("id", Value::Int(50)), ("s", Value::from("a"))],
        )
        .unwrap();
    let r = txn
        .create_relationship(
            a,
            2,
            "LIKES",
            &[("since", Value::Int(2020)), ("f", Value::Float(0.5))],
        )
        .unwrap();
    txn.delete_node(0, true).unwrap();
    txn.set_rel_property(1, "w", Value::Int(7)).unwrap();
    txn.remove_label(3, "Person").unwrap();
    txn.create_unique_constraint("X", "s", None).unwrap();
    txn.commit().unwrap();
    let before = dump(&db.snapshot());
    assert!(db.checkpoint().unwrap());
    assert!(!db.checkpoint().unwrap(), "nothing new since");
    // The segment was not rewritten; the manifest names a delta file and
    // says format 4; the log is empty.
    assert_eq!(files_ending(&dir, ".rhz"), segment);
    assert_eq!(files_ending(&dir, ".rhd"), vec!["delta-000002.rhd"]);
    let m = manifest_json(&dir);
    assert_eq!(m["version"], 4);
    assert_eq!(m["delta"]["file"], "delta-000002.rhd");
    assert_eq!(std::fs::metadata(wal_path(&dir)).unwrap().len(), 16);
    // Same ids, same graph, in this handle and after reopening.
    let s = db.snapshot();
    assert_eq!(dump(&s), before);
    assert_eq!(s.relationship(r).unwrap().start, a);
    assert!(db.check().is_empty(), "{:?}", db.check());
    drop((s, db));
    let db = Database::open_with(&dir, incremental()).unwrap();
    let s = db.snapshot();
    assert_eq!(dump(&s), before);
    assert_eq!(s.relationship(r).unwrap().end, 2);
    assert_eq!(s.rel_property(r, key(&s, "f")), Value::Float(0.5));
    let x = s.catalog().label_id("X").unwrap();
    assert!(s.schema().is_unique(x, key(&s, "s")));
    assert!(db.check().is_empty(), "{:?}", db.check());
    // The constraint holds over the saved delta.
    let mut txn = db.begin_write().unwrap();
    let err = txn
        .create_node(&["X"], &[("s", Value::from("a"))])
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConstraintValidationFailed);
    drop(txn);
    // More changes: the next delta file replaces the first.
    let mut txn = db.begin_write().unwrap();
    let b = txn.create_node(&["X"], &[("s", Value::from("b"))]).unwrap();
    txn.create_relationship(b, a, "LIKES", &[]).unwrap();
    txn.commit().unwrap();
    let before = dump(&db.snapshot());
    assert!(db.checkpoint().unwrap());
    assert_eq!(files_ending(&dir, ".rhd"), vec!["delta-000003.rhd"]);
    assert_eq!(out(&db.snapshot(), b, "LIKES"), vec![a]);
    // A backup copies the delta file.
    let copy = dir.with_file_name("copy");
    db.backup(&copy).unwrap();
    assert_eq!(dump(&Database::open(&copy).unwrap().snapshot()), before);
    // A full checkpoint merges it into a new segment (format 3 again).
    assert!(db.checkpoint_full().unwrap());
    assert!(files_ending(&dir, ".rhd").is_empty());
    assert_eq!(manifest_json(&dir)["version"], 3);
    assert!(manifest_json(&dir).get("delta").is_none());
    assert_eq!(dump(&db.snapshot()), before);
    drop(db);
    assert_eq!(dump(&Database::open(&dir).unwrap().snapshot()), before);
}

#[test]
fn a_large_delta_makes_the_checkpoint_full() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let mut txn = db.begin_write().unwrap();
    for i in 0..2000 {
        txn.create_node(&["T"], &[("i", Value::Int(i))]).unwrap();
    }
    txn.commit().unwrap();
    // 2,000 new nodes are more than a quarter of the 4-node segment.
    assert!(db.checkpoint().unwrap());
    assert!(files_ending(&dir, ".rhd").is_empty());
    assert!(db.snapshot().is_base_only());
    assert_eq!(count_t(&db), 2000);
}

#[test]
fn a_damaged_delta_file_is_refused_with_its_name() {
    let (_tmp, dir) = setup();
    let db = Database::open_with(&dir, incremental()).unwrap();
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["T"], &[("i", Value::Int(1))]).unwrap();
    txn.commit().unwrap();
    assert!(db.checkpoint().unwrap());
    drop(db);
    let path = dir.join("delta-000002.rhd");
    let good = std::fs::read(&path).unwrap();
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("checksum", {
            let mut b = good.clone();
            let last = b.len() - 1;
            b[last] ^= 1;
            b
        }),
        ("truncated", good[..good.len() - 3].to_vec()),
        ("magic", {
            let mut b = good.clone();
            b[0] = b'X';
            b
        }),
        ("delta file format 9", {
            let mut b = good.clone();
            b[8] = 9;
            b
        }),
    ];
    for (why, bytes) in damaged {
        std::fs::write(&path, &bytes).unwrap();
        let err = Database::open(&dir).err().expect("refused");
        assert_eq!(err.kind, ErrorKind::CorruptDatabase, "{why}");
        assert!(
            err.message.contains("delta-000002.rhd"),
            "{why}: {}",
            err.message
        );
    }
    std::fs::remove_file(&path).unwrap();
    let err = Database::open(&dir).err().expect("refused");
    assert!(err.message.contains("delta-000002.rhd"), "{}", err.message);
    std::fs::write(&path, &good).unwrap();
    assert_eq!(count_t(&Database::open(&dir).unwrap()), 1);
}

#[test]
fn format_versions_three_and_four_open_older_and_newer_ones_are_refused() {
    let (_tmp, dir) = setup();
    assert_eq!(manifest_json(&dir)["version"], 3);
    let mut m = manifest_json(&dir);
    m["version"] = 5.into();
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    let err = Database::open(&dir).err().expect("refused");
    assert_eq!(err.kind, ErrorKind::CorruptDatabase);
    assert!(
        err.message.contains("format version 5") && err.message.contains("newer Rhizome"),
        "{}",
        err.message
    );
    // Versions 1 and 2 (8-byte adjacency) are refused, naming the command
    // that converts them (tests/upgrade.rs).
    for old in [1, 2] {
        m["version"] = old.into();
        std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
        let err = Database::open(&dir).err().expect("refused");
        assert_eq!(err.kind, ErrorKind::CorruptDatabase);
        assert!(
            err.message.contains(&format!("format version {old}"))
                && err.message.contains("older Rhizome")
                && err.message.contains("rhizome upgrade"),
            "{}",
            err.message
        );
    }
    // A segment of the old layout is refused by its header, too.
    m["version"] = 3.into();
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    let segment = dir.join(m["segment"].as_str().unwrap());
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[7] = 1;
    std::fs::write(&segment, &bytes).unwrap();
    let err = Database::open(&dir).err().expect("refused");
    assert!(
        err.message.contains("segment layout version 1"),
        "{}",
        err.message
    );
    bytes[7] = 2;
    std::fs::write(&segment, &bytes).unwrap();
    m["version"] = 4.into();
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    assert_eq!(
        ids(&Database::open(&dir).unwrap().snapshot(), "Person").len(),
        4
    );
}

#[test]
fn interrupted_incremental_checkpoints_recover() {
    let (_tmp, dir) = setup();
    write_commits(&dir, 4);
    let stale_wal = std::fs::read(wal_path(&dir)).unwrap();
    // Crash after the manifest switch, before the log reset.
    let db = Database::open_with(&dir, incremental()).unwrap();
    assert!(db.checkpoint().unwrap());
    assert_eq!(files_ending(&dir, ".rhd").len(), 1);
    drop(db);
    std::fs::write(wal_path(&dir), &stale_wal).unwrap();
    let db = Database::open_with(&dir, incremental()).unwrap();
    assert_eq!(count_t(&db), 4);
    assert!(db.check().is_empty(), "{:?}", db.check());
    drop(db);
    // Crash before the manifest switch (a delta file nobody names) and
    // after it, before the old delta file was removed: both are debris.
    write_commits(&dir, 2);
    std::fs::write(dir.join("delta-000099.rhd"), b"half").unwrap();
    std::fs::write(dir.join("delta-000001.rhd"), b"old").unwrap();
    let db = Database::open_with(&dir, incremental()).unwrap();
    assert_eq!(count_t(&db), 6);
    drop(db.begin_write().unwrap());
    assert_eq!(files_ending(&dir, ".rhd"), vec!["delta-000002.rhd"]);
    // The next incremental checkpoint replaces the delta file; ids of the
    // first four stay what they were.
    let ids_before = ids(&db.snapshot(), "T");
    assert!(db.checkpoint().unwrap());
    assert_eq!(files_ending(&dir, ".rhd"), vec!["delta-000003.rhd"]);
    assert_eq!(ids(&db.snapshot(), "T"), ids_before);
    drop(db);
    let db = Database::open(&dir).unwrap();
    assert_eq!(ids(&db.snapshot(), "T"), ids_before);
    assert!(db.check().is_empty(), "{:?}", db.check());
}
