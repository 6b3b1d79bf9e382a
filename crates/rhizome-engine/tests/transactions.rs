//! Explicit transactions: reads inside see own writes, others see nothing
//! until commit, rollback discards, and a second writer waits then fails.

use rhizome_common::{ErrorKind, Value};
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;
use common::empty_engine;

fn count(engine: &Engine) -> Value {
    let r = engine
        .execute(
            "MATCH (n) RETURN count(n) AS c",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    r.rows[0][0].clone()
}

#[test]
fn commit_publishes_and_rollback_discards() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let options = QueryOptions::default();

    let mut tx = engine.begin().unwrap();
    let r = tx
        .execute("CREATE (:T {v: 1})", BTreeMap::new(), &options)
        .unwrap();
    assert_eq!(r.counters.nodes_created, 1);
    let inside = tx
        .execute("MATCH (n:T) RETURN n.v AS v", BTreeMap::new(), &options)
        .unwrap();
    assert_eq!(inside.rows, vec![vec![Value::Int(1)]]);
    assert_eq!(count(&engine), Value::Int(0), "not visible before commit");
    tx.commit().unwrap();
    assert_eq!(count(&engine), Value::Int(1));

    let mut tx = engine.begin().unwrap();
    tx.execute("MATCH (n) DETACH DELETE n", BTreeMap::new(), &options)
        .unwrap();
    tx.rollback();
    assert_eq!(count(&engine), Value::Int(1));
}

#[test]
fn a_failed_statement_poisons_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let options = QueryOptions::default();
    let mut tx = engine.begin().unwrap();
    tx.execute("CREATE (:T)", BTreeMap::new(), &options)
        .unwrap();
    assert!(tx
        .execute("CREATE (:T {bad: [{x: 1}]})", BTreeMap::new(), &options)
        .is_err());
    let err = tx
        .execute("CREATE (:T)", BTreeMap::new(), &options)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransientError);
    assert!(tx.commit().is_err());
    assert_eq!(count(&engine), Value::Int(0));
}

#[test]
fn autocommit_waits_for_an_open_transaction_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let tx = engine.begin().unwrap();
    let err = engine
        .execute("CREATE ()", BTreeMap::new(), &QueryOptions::default())
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransientError);
    tx.rollback();
    engine
        .execute("CREATE ()", BTreeMap::new(), &QueryOptions::default())
        .unwrap();
    assert_eq!(count(&engine), Value::Int(1));
}

#[test]
fn schema_changes_are_transactional() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let options = QueryOptions::default();
    let show = |engine: &Engine| {
        engine
            .execute("SHOW INDEXES", BTreeMap::new(), &options)
            .unwrap()
            .rows
            .len()
    };
    let mut tx = engine.begin().unwrap();
    tx.execute(
        "CREATE INDEX t_v FOR (n:T) ON (n.v)",
        BTreeMap::new(),
        &options,
    )
    .unwrap();
    let inside = tx
        .execute("SHOW INDEXES", BTreeMap::new(), &options)
        .unwrap();
    assert_eq!(inside.rows.len(), 1, "the transaction sees its own index");
    assert_eq!(show(&engine), 0, "others do not before commit");
    // A checkpoint needs the writer lock this transaction holds: it fails
    // at once instead of waiting.
    let err = tx
        .execute("CALL db.checkpoint()", BTreeMap::new(), &options)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ProcedureError, "{err}");
    tx.rollback();
    assert_eq!(show(&engine), 0, "a rolled-back index leaves nothing");

    let mut tx = engine.begin().unwrap();
    tx.execute(
        "CREATE CONSTRAINT t_v FOR (n:T) REQUIRE n.v IS UNIQUE",
        BTreeMap::new(),
        &options,
    )
    .unwrap();
    tx.execute("CREATE (:T {v: 1})", BTreeMap::new(), &options)
        .unwrap();
    tx.commit().unwrap();
    let err = engine
        .execute("CREATE (:T {v: 1})", BTreeMap::new(), &options)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConstraintValidationFailed);
    assert!(err.message.contains("= 1"), "names the value: {err}");
    // Survives reopening (from the log) and a checkpoint.
    drop(engine);
    let engine = Engine::open(&dir.path().join("db")).unwrap();
    assert_eq!(show(&engine), 1);
    let r = engine
        .execute("CALL db.checkpoint()", BTreeMap::new(), &options)
        .unwrap();
    assert_eq!(r.rows[0][0], Value::Bool(true));
    let err = engine
        .execute("CREATE (:T {v: 1})", BTreeMap::new(), &options)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConstraintValidationFailed);
}

#[test]
fn a_transaction_snapshot_holds_its_own_writes() {
    use rhizome_storage::GraphRead;
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let mut tx = engine.begin().unwrap();
    let r = tx
        .execute(
            "CREATE (n:Fresh {v: 7}) RETURN n",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    let Value::Node(id) = r.rows[0][0] else {
        panic!("not a node: {:?}", r.rows[0][0]);
    };
    let inside = tx.snapshot().unwrap();
    assert!(inside.node_exists(id));
    assert!(!engine.database().snapshot().node_exists(id));
    tx.rollback();
}

#[test]
fn describe_tells_writes_from_reads_without_running_them() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let params = BTreeMap::new();
    for (query, writes) in [
        ("MATCH (n) RETURN n", false),
        ("EXPLAIN CREATE (:A)", false),
        ("SHOW INDEXES", false),
        ("CREATE (:A)", true),
        ("MATCH (n) SET n.x = 1", true),
        ("PROFILE CREATE (:A)", true),
        ("CREATE INDEX FOR (a:A) ON (a.x)", true),
    ] {
        assert_eq!(
            engine.describe(query, &params).unwrap().updating,
            writes,
            "{query}"
        );
    }
    assert_eq!(count(&engine), Value::Int(0), "nothing ran");
    let err = engine.describe("CREATE (", &params).unwrap_err();
    assert_eq!(err.kind, ErrorKind::SyntaxError);
}
