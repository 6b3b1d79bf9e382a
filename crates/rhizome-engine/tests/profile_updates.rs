//! `PROFILE` of updating statements: the statement runs (and commits) and
//! every operator, write operators included, reports rows and time.

use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;
use common::empty_engine;

fn run(engine: &Engine, query: &str) -> rhizome_engine::QueryResult {
    engine
        .execute(query, BTreeMap::new(), &QueryOptions::default())
        .unwrap()
}

#[test]
fn profile_of_create_reports_write_operators() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let r = run(
        &engine,
        "PROFILE UNWIND range(1, 3) AS i CREATE (:P {v: i})",
    );
    assert_eq!(r.counters.nodes_created, 3);
    let profile = r.profile.expect("PROFILE returns counters");
    println!("{}", profile.text);
    let create = profile
        .text
        .lines()
        .find(|l| l.contains("Create"))
        .expect("a Create operator line");
    assert!(create.contains("rows=3"), "{create}");
    assert!(profile.text.contains("Unwind"), "{}", profile.text);
    // The writes were committed.
    let c = run(&engine, "MATCH (n:P) RETURN count(*) AS c");
    assert_eq!(c.rows, vec![vec![rhizome_common::Value::Int(3)]]);
}

#[test]
fn profile_of_match_set_counts_reads_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    run(&engine, "UNWIND range(1, 10) AS i CREATE (:P {v: i})");
    let r = run(
        &engine,
        "PROFILE MATCH (p:P) WHERE p.v > 4 SET p.big = true RETURN count(*) AS c",
    );
    assert_eq!(r.rows, vec![vec![rhizome_common::Value::Int(6)]]);
    assert_eq!(r.counters.properties_set, 6);
    let profile = r.profile.expect("PROFILE returns counters");
    println!("{}", profile.text);
    let line = |name: &str| {
        profile
            .text
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no {name} in\n{}", profile.text))
            .to_string()
    };
    assert!(line("Set").contains("rows=6"));
    assert!(line("Filter").contains("rows=6"));
    assert!(profile.operators.iter().any(|o| o.rows == 10), "the scan");
}

#[test]
fn profile_inside_a_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    let mut tx = engine.begin().unwrap();
    let r = tx
        .execute(
            "PROFILE CREATE (:Q)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    assert!(r.profile.is_some());
    assert_eq!(r.counters.nodes_created, 1);
    tx.commit().unwrap();
}
