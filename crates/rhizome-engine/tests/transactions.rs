//! Explicit transactions: reads inside see own writes, others see nothing
//! until commit, rollback discards, and a second writer waits then fails.

use rhizome_common::{ErrorKind, Value};
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

fn empty_engine(dir: &std::path::Path) -> Engine {
    let db = dir.join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    Engine::open(&db).unwrap()
}

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
