//! Memoized expression subqueries: a subquery that only reads the graph
//! runs once per distinct value of the variables it uses, as PROFILE's
//! counters of its inner plan show; one that calls `rand()` runs per row.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;
use common::empty_engine;

fn run(engine: &Engine, query: &str) -> rhizome_engine::QueryResult {
    let options = QueryOptions {
        threads: Some(1),
        ..QueryOptions::default()
    };
    engine.execute(query, BTreeMap::new(), &options).unwrap()
}

/// Rows each operator produced, over the whole query (inner plans counted
/// over all their runs).
fn operator_rows(engine: &Engine, query: &str) -> (Vec<Vec<Value>>, Vec<u64>) {
    let r = run(engine, &format!("PROFILE {query}"));
    let profile = r.profile.expect("PROFILE returns counters");
    (
        r.rows.to_vecs(),
        profile.operators.iter().map(|o| o.rows).collect(),
    )
}

fn ten_nodes() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    run(&engine, "UNWIND range(1, 10) AS v CREATE (:P {v: v})");
    (dir, engine)
}

#[test]
fn a_subquery_runs_once_per_distinct_argument() {
    let (_dir, engine) = ten_nodes();
    // 60 rows, 3 distinct values of k: the inner scan of 10 nodes runs 3
    // times (30 rows), not 60 times (600 rows).
    let (rows, counts) = operator_rows(
        &engine,
        "UNWIND range(1, 60) AS i WITH i % 3 AS k \
         RETURN k, count(*) AS n, sum(COUNT { MATCH (p:P) WHERE p.v > k }) AS c ORDER BY k",
    );
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(0), Value::Int(20), Value::Int(200)],
            vec![Value::Int(1), Value::Int(20), Value::Int(180)],
            vec![Value::Int(2), Value::Int(20), Value::Int(160)],
        ]
    );
    assert!(counts.contains(&30), "the inner scan's rows: {counts:?}");
    assert!(counts.iter().all(|&n| n < 600), "{counts:?}");
}

#[test]
fn a_subquery_calling_rand_runs_per_row() {
    let (_dir, engine) = ten_nodes();
    let (rows, counts) = operator_rows(
        &engine,
        "UNWIND range(1, 60) AS i WITH i % 3 AS k \
         RETURN count(*) AS n, sum(COUNT { MATCH (p:P) WHERE p.v > k + rand() * 0 }) AS c",
    );
    assert_eq!(rows, vec![vec![Value::Int(60), Value::Int(540)]]);
    assert!(counts.contains(&600), "the inner scan's rows: {counts:?}");
}

#[test]
fn a_comprehension_variable_keys_the_memo() {
    let (_dir, engine) = ten_nodes();
    // The subquery inside reads `x`, bound per list element: 5
    // distinct elements over 4 rows each.
    let (rows, counts) = operator_rows(
        &engine,
        "UNWIND range(1, 4) AS i \
         RETURN [x IN [1, 2, 3, 4, 5] | COUNT { MATCH (p:P) WHERE p.v <= x }] AS sizes",
    );
    let sizes = Value::List((1..=5).map(Value::Int).collect());
    assert_eq!(rows, vec![vec![sizes]; 4]);
    assert!(counts.contains(&50), "5 runs of a 10-node scan: {counts:?}");
    assert!(counts.iter().all(|&n| n < 200), "{counts:?}");
}
