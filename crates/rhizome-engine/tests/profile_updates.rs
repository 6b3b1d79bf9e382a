//! `PROFILE` of updating statements: the statement runs (and commits) and
//! every operator, write operators and the plans nested in their
//! expressions included, reports rows and time.

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

/// The first line of `text` containing `needle`.
fn line_of<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle} in\n{text}"))
}

#[test]
fn plans_nested_in_updating_operators_count_their_own_rows() {
    // 4 people, 3 of them know 2 others each: the COUNT { } under SET runs
    // once per person (4 arguments) and expands 6 relationships.
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    run(
        &engine,
        "CREATE (a:P {n: 1}), (b:P {n: 2}), (c:P {n: 3}), (d:P {n: 4}),
                (a)-[:K]->(b), (a)-[:K]->(c), (b)-[:K]->(c), (b)-[:K]->(d),
                (c)-[:K]->(d), (c)-[:K]->(a)",
    );
    let r = run(
        &engine,
        "PROFILE MATCH (p:P) SET p.k = COUNT { (p)-[:K]->(q) WHERE q.n > 0 }",
    );
    assert_eq!(r.counters.properties_set, 4);
    let profile = r.profile.expect("PROFILE returns counters").text;
    println!("{profile}");
    // Set counts its own rows only (the nested plan used to count into the
    // operators numbered from 0: Set and the scan under it).
    assert!(line_of(&profile, "Set").contains("rows=4"), "{profile}");
    assert!(
        line_of(&profile, "LabelScan").contains("rows=4"),
        "{profile}"
    );
    // The nested plan is listed, and its operators have their counters:
    // its root, the filter, passed the 6 relationships it counted.
    let nested = line_of(&profile, "[COUNT subquery]");
    assert!(
        nested.contains("Filter") && nested.contains("rows=6 "),
        "{profile}"
    );
    assert!(line_of(&profile, "Expand").contains("rows=6 "), "{profile}");
    let c = run(&engine, "MATCH (p:P) RETURN sum(p.k) AS s");
    assert_eq!(c.rows, vec![vec![rhizome_common::Value::Int(6)]]);
}

#[test]
fn plans_nested_in_read_operators_are_listed_with_their_counters() {
    // The listing numbers operators as the runtime does (nested plans
    // before inputs): the scan under the projection shows its own rows.
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    run(
        &engine,
        "CREATE (a:P {n: 1}), (b:P {n: 2}), (c:P {n: 3}), (a)-[:K]->(b), (a)-[:K]->(c)",
    );
    let r = run(
        &engine,
        "PROFILE MATCH (p:P) RETURN p.n AS n, COUNT { (p)-[:K]->(q) WHERE q.n > 2 } AS c",
    );
    let profile = r.profile.expect("PROFILE returns counters").text;
    println!("{profile}");
    assert!(
        line_of(&profile, "LabelScan").contains("rows=3"),
        "{profile}"
    );
    let nested = line_of(&profile, "[COUNT subquery]");
    assert!(
        nested.contains("Filter") && nested.contains("rows=1 "),
        "{profile}"
    );
    assert!(line_of(&profile, "Expand").contains("rows=2 "), "{profile}");
}

#[test]
fn breakers_report_the_rows_they_hand_on() {
    // An aggregation, a sort and a limit make their rows in their sinks;
    // PROFILE counts them as they are handed on (it used to say rows=0).
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    run(&engine, "UNWIND range(1, 10) AS i CREATE (:P {v: i % 3})");
    let r = run(
        &engine,
        "PROFILE MATCH (p:P) WITH p.v AS v, count(*) AS c ORDER BY v RETURN v, c",
    );
    assert_eq!(r.rows.len(), 3);
    let profile = r.profile.expect("PROFILE returns counters").text;
    println!("{profile}");
    assert!(
        line_of(&profile, "Aggregate").contains("rows=3 "),
        "{profile}"
    );
    assert!(line_of(&profile, "Sort").contains("rows=3 "), "{profile}");
    let r = run(&engine, "PROFILE MATCH (p:P) RETURN count(*) AS c");
    let profile = r.profile.expect("PROFILE returns counters").text;
    assert!(
        line_of(&profile, "Aggregate").contains("rows=1 "),
        "{profile}"
    );
}
