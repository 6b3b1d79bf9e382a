//! `collect()` keeps integers and floats as typed lists: the results are
//! those of collecting boxed values (order, nulls skipped, a list turning
//! mixed when another type arrives), the memory budget is charged their
//! typed size, and a collection beyond the budget fails cleanly.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;

fn run(engine: &Engine, q: &str, options: &QueryOptions) -> Result<Vec<Vec<Value>>, String> {
    engine
        .execute(q, BTreeMap::new(), options)
        .map(|r| r.rows.to_vecs())
        .map_err(|e| format!("{:?} {:?} {e}", e.kind, e.code))
}

fn one_worker() -> QueryOptions {
    QueryOptions {
        threads: Some(1),
        ..QueryOptions::default()
    }
}

fn ints(xs: impl IntoIterator<Item = i64>) -> Value {
    Value::List(xs.into_iter().map(Value::Int).collect())
}

/// Nodes `(:V {i, f, s})` for `i` in `0..n`, checkpointed into columns.
fn engine(dir: &std::path::Path, n: i64) -> Engine {
    let engine = common::empty_engine(dir);
    let q = format!(
        "UNWIND range(0, {}) AS i CREATE (:V {{i: i, f: toFloat(i) / 2.0, \
         s: CASE WHEN i % 3 = 0 THEN null ELSE toString(i) END}})",
        n - 1
    );
    run(&engine, &q, &QueryOptions::default()).unwrap();
    assert!(engine.database().checkpoint().unwrap());
    engine
}

#[test]
fn typed_collections_equal_boxed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 5000);
    let w1 = one_worker();
    // Ungrouped, from a property column, in scan order.
    assert_eq!(
        run(&engine, "MATCH (n:V) RETURN collect(n.i) AS c", &w1).unwrap(),
        vec![vec![ints(0..5000)]]
    );
    // Typed until another type arrives; nulls skipped.
    let mixed = "UNWIND [1, null, 2, 3.5, 'a', null, 4] AS x RETURN collect(x) AS c";
    assert_eq!(
        run(&engine, mixed, &w1).unwrap(),
        vec![vec![Value::List(vec![
            Value::Int(1),
            Value::Int(2),
            Value::Float(3.5),
            Value::String("a".into()),
            Value::Int(4),
        ])]]
    );
    let floats = "UNWIND [0.5, null, -0.0, 2] AS x RETURN collect(x) AS c";
    assert_eq!(
        run(&engine, floats, &w1).unwrap(),
        vec![vec![Value::List(vec![
            Value::Float(0.5),
            Value::Float(-0.0),
            Value::Int(2),
        ])]]
    );
    assert_eq!(
        run(
            &engine,
            "MATCH (n:V) WHERE n.i < 0 RETURN collect(n.i) AS c",
            &w1
        )
        .unwrap(),
        vec![vec![Value::List(vec![])]]
    );
    // Grouped: each group in scan order on one worker; the same sets on two.
    let grouped = "MATCH (n:V) RETURN n.i % 3 AS g, collect(n.i) AS c, collect(n.f) AS f, \
                   collect(n.s) AS s ORDER BY g";
    let rows = run(&engine, grouped, &w1).unwrap();
    for (g, row) in rows.iter().enumerate() {
        let members: Vec<i64> = (0..5000).filter(|i| i % 3 == g as i64).collect();
        assert_eq!(row[1], ints(members.iter().copied()));
        let halves = members.iter().map(|&i| Value::Float(i as f64 / 2.0));
        assert_eq!(row[2], Value::List(halves.collect()));
        let strings = members
            .iter()
            .filter(|&&i| i % 3 != 0)
            .map(|i| Value::String(i.to_string()));
        assert_eq!(row[3], Value::List(strings.collect()));
    }
    let two = QueryOptions {
        threads: Some(2),
        ..QueryOptions::default()
    };
    let mut sorted = run(&engine, grouped, &two).unwrap();
    for row in &mut sorted {
        if let Value::List(items) = &mut row[1] {
            items.sort_by_key(|v| match v {
                Value::Int(i) => *i,
                _ => i64::MIN,
            });
        }
    }
    for (a, b) in sorted.iter().zip(&rows) {
        assert_eq!(a[1], b[1]);
    }
}

#[test]
fn collections_are_charged_their_typed_size_and_fail_cleanly_beyond_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 100_000);
    let q = "MATCH (n:V) RETURN size(collect(n.i)) AS c";
    let limited = |bytes: usize| QueryOptions {
        threads: Some(1),
        memory_limit: Some(bytes),
        ..QueryOptions::default()
    };
    // 100,000 integers are 800 kB typed (4.8 MB at the boxed estimate).
    assert_eq!(
        run(&engine, q, &limited(2_000_000)).unwrap(),
        vec![vec![Value::Int(100_000)]]
    );
    let err = run(&engine, q, &limited(400_000)).unwrap_err();
    assert!(err.contains("MemoryPoolOutOfMemoryError"), "{err}");
    // Strings are boxed values: charged at the estimate.
    let strings = "MATCH (n:V) RETURN size(collect(n.s)) AS c";
    let err = run(&engine, strings, &limited(2_000_000)).unwrap_err();
    assert!(err.contains("MemoryPoolOutOfMemoryError"), "{err}");
}

#[test]
fn grouped_collections_reach_their_consumer_typed_and_fail_cleanly_beyond_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 100_000);
    // Issue 21's shape: groups of 10 integers, the largest first.
    let q = "MATCH (n:V) WITH n.i % 10000 AS g, collect(n.i) AS ids \
             RETURN g, size(ids) AS s, 90000 IN ids AS has ORDER BY s DESC, g LIMIT 1";
    let limited = |bytes: usize, threads: usize| QueryOptions {
        threads: Some(threads),
        memory_limit: Some(bytes),
        ..QueryOptions::default()
    };
    for threads in [1, 2] {
        assert_eq!(
            run(&engine, q, &limited(64 << 20, threads)).unwrap(),
            vec![vec![Value::Int(0), Value::Int(10), Value::Bool(true)]],
            "{threads} worker(s)"
        );
        // 100,000 integers are 800 kB typed: beyond a 500 kB budget.
        let err = run(&engine, q, &limited(500_000, threads)).unwrap_err();
        assert!(err.contains("MemoryPoolOutOfMemoryError"), "{err}");
    }
}
