//! An `EXISTS` run stops at its first row: the expansions inside it send
//! their first rows in small batches that double up to a chunk, so a hub
//! whose first neighbour already matches is not expanded in full. PROFILE's
//! row counts of the inner plan show how much of the hub was walked; the
//! answers are the same under every scheduling policy.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;
use common::empty_engine;

/// Neighbours of each hub.
const FAN: i64 = 3_000;

fn run(engine: &Engine, query: &str) -> rhizome_engine::QueryResult {
    let options = QueryOptions {
        threads: Some(2),
        ..QueryOptions::default()
    };
    engine.execute(query, BTreeMap::new(), &options).unwrap()
}

/// Hub 1: every neighbour's leaf is `ok`; hub 2: only the leaf of its
/// neighbour number `FAN` is; hub 3: none is.
fn hubs() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = empty_engine(dir.path());
    run(
        &engine,
        &format!(
            "UNWIND [1, 2, 3] AS h CREATE (hub:Hub {{id: h}}) WITH hub, h \
             UNWIND range(1, {FAN}) AS i \
             CREATE (hub)-[:R]->(:Mid {{i: i}})-[:S]->(:Leaf {{ok: h = 1 OR (h = 2 AND i = {FAN})}})"
        ),
    );
    (dir, engine)
}

/// The rows, and the rows the plan's `Expand` operators produced in all
/// (from PROFILE's text, where each line names its operator).
fn profiled(engine: &Engine, query: &str) -> (Vec<Vec<Value>>, u64, String) {
    let r = run(engine, &format!("PROFILE {query}"));
    let text = r.profile.expect("PROFILE returns counters").text;
    let expanded = text
        .lines()
        .filter(|line| line.contains("Expand ("))
        .map(|line| {
            let at = line
                .find(" rows=")
                .expect("an operator line counts its rows")
                + 6;
            let digits: String = line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<u64>().expect("a row count")
        })
        .sum();
    (r.rows.to_vecs(), expanded, text)
}

const PREFIXES: [&str; 5] = [
    "",
    "CYPHER scheduling=off ",
    "CYPHER scheduling=fifo ",
    "CYPHER scheduling=bfs ",
    "CYPHER scheduling=dfs ",
];

#[test]
fn an_exists_whose_first_neighbour_matches_walks_few_of_them() {
    let (_dir, engine) = hubs();
    // `scheduling=off` is the baseline that counts every match (`COUNT {
    // … } > 0`, no instance stops early), so it is left out here.
    for prefix in PREFIXES.iter().filter(|p| !p.contains("off")) {
        for query in [
            "MATCH (h:Hub {id: 1}) WHERE EXISTS { (h)-[:R]->()-[:S]->(l) WHERE l.ok } RETURN h.id",
            "MATCH (h:Hub {id: 1}) RETURN h.id, EXISTS { (h)-[:R]->()-[:S]->(l) WHERE l.ok } AS e",
        ] {
            let (rows, expanded, text) = profiled(&engine, &format!("{prefix}{query}"));
            assert_eq!(rows[0][0], Value::Int(1), "{prefix}{query}");
            // The hub's 3,000 neighbours and their 3,000 leaves: a first
            // batch of 8 of each, not a chunk of 2,048.
            assert!(
                expanded <= 32,
                "{prefix}{query}: {expanded} rows expanded\n{text}"
            );
        }
    }
}

#[test]
fn exists_answers_are_the_same_whether_the_match_comes_first_last_or_never() {
    let (_dir, engine) = hubs();
    let expected = vec![
        vec![Value::Int(1), Value::Bool(true), Value::Bool(false)],
        vec![Value::Int(2), Value::Bool(true), Value::Bool(false)],
        vec![Value::Int(3), Value::Bool(false), Value::Bool(true)],
    ];
    for prefix in PREFIXES {
        let rows = run(
            &engine,
            &format!(
                "{prefix}MATCH (h:Hub) RETURN h.id, \
                 EXISTS {{ (h)-[:R]->()-[:S]->(l) WHERE l.ok }} AS some, \
                 NOT EXISTS {{ (h)-[:R]->()-[:S]->(l) WHERE l.ok }} AS none ORDER BY h.id"
            ),
        )
        .rows
        .to_vecs();
        assert_eq!(rows, expected, "{prefix}");
        let filtered = run(
            &engine,
            &format!(
                "{prefix}MATCH (h:Hub) WHERE EXISTS {{ (h)-[:R]->()-[:S]->(l) WHERE l.ok }} \
                 RETURN h.id ORDER BY h.id"
            ),
        )
        .rows
        .to_vecs();
        assert_eq!(
            filtered,
            vec![vec![Value::Int(1)], vec![Value::Int(2)]],
            "{prefix}"
        );
    }
}
