//! The plan cache: a statement run again uses its plan without planning,
//! with the new parameter values, until the schema or the statistics its
//! plan was made with change.

use rhizome_common::{ErrorKind, Value};
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;

fn run(engine: &Engine, query: &str, params: &[(&str, Value)]) -> Vec<Vec<Value>> {
    let params: BTreeMap<String, Value> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    engine
        .execute(query, params, &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows
        .to_vecs()
}

fn explain(engine: &Engine, query: &str) -> String {
    let params = BTreeMap::from([("id".to_string(), Value::Int(0))]);
    let result = engine
        .execute(
            &format!("EXPLAIN {query}"),
            params,
            &QueryOptions::default(),
        )
        .unwrap();
    result.plan.unwrap()
}

#[test]
fn a_cached_plan_runs_with_new_parameters_until_the_schema_changes() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    run(
        &engine,
        "UNWIND range(1, 50) AS i CREATE (:Person {id: i, name: 'p' + toString(i)})",
        &[],
    );
    let query = "MATCH (p:Person) WHERE p.id = $id RETURN p.name";
    let before = engine.plan_cache_stats();
    assert_eq!(
        run(&engine, query, &[("id", Value::Int(7))]),
        [[Value::String("p7".into())]]
    );
    let after_first = engine.plan_cache_stats();
    assert_eq!(after_first.misses, before.misses + 1);
    // The second run hits, and sees its own parameter value (of another
    // kind, too): values are not part of the plan.
    assert_eq!(
        run(&engine, query, &[("id", Value::Int(9))]),
        [[Value::String("p9".into())]]
    );
    assert!(run(&engine, query, &[("id", Value::String("9".into()))]).is_empty());
    let after_hits = engine.plan_cache_stats();
    assert_eq!(after_hits.hits, after_first.hits + 2);
    assert_eq!(after_hits.misses, after_first.misses);
    // Other parameter names are another entry: a missing parameter is still
    // an error, not a run of the cached plan.
    let missing = engine.execute(query, BTreeMap::new(), &QueryOptions::default());
    assert_eq!(missing.unwrap_err().kind, ErrorKind::ParameterMissing);

    // EXPLAIN and PROFILE of a cached statement still explain and profile.
    assert!(explain(&engine, query).contains("LabelScan"));
    assert!(explain(&engine, query).contains("LabelScan"));
    let profiled = format!("PROFILE {query}");
    for _ in 0..2 {
        let params = BTreeMap::from([("id".to_string(), Value::Int(3))]);
        let result = engine
            .execute(&profiled, params, &QueryOptions::default())
            .unwrap();
        assert_eq!(result.rows, [[Value::String("p3".into())]]);
        assert!(result.profile.unwrap().text.contains("rows="));
    }

    // A new index invalidates the plans that asked about it: used at once.
    let hits = engine.plan_cache_stats().hits;
    run(
        &engine,
        "CREATE INDEX person_id FOR (p:Person) ON (p.id)",
        &[],
    );
    assert!(explain(&engine, query).contains("IndexSeek"));
    assert_eq!(
        run(&engine, query, &[("id", Value::Int(8))]),
        [[Value::String("p8".into())]]
    );
    let stats = engine.plan_cache_stats();
    assert!(stats.invalidations >= 2, "{stats:?}");
    assert_eq!(stats.hits, hits);
    // ... and dropping it takes it out of the plan again.
    run(&engine, "DROP INDEX person_id", &[]);
    assert!(explain(&engine, query).contains("LabelScan"));

    // Changed data (counts the plan was costed with) replans; the answer is
    // always the current one.
    run(&engine, "CREATE (:Person {id: 51, name: 'p51'})", &[]);
    assert_eq!(
        run(&engine, query, &[("id", Value::Int(51))]),
        [[Value::String("p51".into())]]
    );
}

#[test]
fn a_repeated_single_row_create_is_planned_once() {
    // The durable single-row commit path (`rhizome bench writes`): each
    // commit changes the counts of the label it creates, which the plan of
    // a bare CREATE must not depend on, or every commit would replan.
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    run(&engine, "CREATE (:Single {i: -1})", &[]);
    let before = engine.plan_cache_stats();
    for i in 0..20 {
        run(&engine, "CREATE (:Single {i: $i})", &[("i", Value::Int(i))]);
    }
    let after = engine.plan_cache_stats();
    assert_eq!(after.misses - before.misses, 1, "{before:?} -> {after:?}");
    assert_eq!(after.hits - before.hits, 19, "{before:?} -> {after:?}");
    let count = run(&engine, "MATCH (s:Single) RETURN count(*)", &[]);
    assert_eq!(count, vec![vec![Value::Int(21)]]);
}
