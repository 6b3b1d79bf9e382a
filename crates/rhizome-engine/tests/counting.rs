//! Factorized counting (`ExpandCount`, fused hops) gives exactly the rows a
//! materializing plan would count, on the likes graph, for the benchmark
//! shapes and variations of them.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use rhizome_import::generate::{generate_likes, LikesOptions};
use rhizome_import::{import, NoProgress};
use std::collections::BTreeMap;

fn engine() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let options = generate_likes(
        &dir.path().join("csv"),
        &LikesOptions {
            persons: 300,
            items: 40,
            likes_per_person: 12,
            seed: 9,
        },
    )
    .unwrap();
    import(&dir.path().join("db"), &options, &NoProgress).unwrap();
    let engine = Engine::open(&dir.path().join("db")).unwrap();
    (dir, engine)
}

fn count(engine: &Engine, query: &str, threads: usize) -> i64 {
    let options = QueryOptions {
        threads: Some(threads),
        ..QueryOptions::default()
    };
    match &engine
        .execute(query, BTreeMap::new(), &options)
        .unwrap()
        .rows[0][0]
    {
        Value::Int(n) => *n,
        other => panic!("{query}: {other:?}"),
    }
}

#[test]
fn fused_counts_equal_materialized_counts() {
    let (_dir, engine) = engine();
    let shapes = [
        ("MATCH (p:Person {id: 7})-[:LIKES]->(:Item)<-[:LIKES]-(:Person)-[:LIKES]->(j:Item)", "j"),
        (
            "MATCH (p:Person {id: 7})-[r1:LIKES]->(:Item)<-[r2:LIKES]-(:Person)-[r3:LIKES]->(j:Item) \
             WHERE r1.weight > -1.0 AND r2.weight > -1.0 AND r3.weight > -1.0",
            "j",
        ),
        (
            "MATCH (p:Person {id: 7})-[r1:LIKES]->(:Item)<-[r2:LIKES]-(:Person)-[r3:LIKES]->(j:Item) \
             WHERE r2.weight > 5.0 AND r3.weight < 3.5",
            "j",
        ),
        ("MATCH (p:Person {id: 7})-[:LIKES]->(i)<-[:LIKES]-(o)-[:LIKES]->(j)", "j"),
        ("MATCH (p:Person {id: 7})-[:LIKES]-(i)-[:LIKES]-(o)-[:LIKES]-(j)", "j"),
        ("MATCH (x:Person)-[:LIKES]->(:Item)<-[:LIKES]-(:Person {id: 3})", "x"),
    ];
    for (shape, var) in shapes {
        let fused = format!("{shape} RETURN count(*)");
        let plan = engine.explain(&fused, &BTreeMap::new()).unwrap();
        assert!(plan.contains("ExpandCount"), "{plan}");
        let materialized = count(&engine, &format!("{shape} RETURN count({var}.id)"), 2);
        assert!(materialized > 0, "{shape}");
        assert_eq!(count(&engine, &fused, 1), materialized, "{shape}\n{plan}");
        assert_eq!(count(&engine, &fused, 2), materialized, "{shape}\n{plan}");
    }
    let a3 = engine
        .explain(
            &format!("{} RETURN count(*)", shapes[0].0),
            &BTreeMap::new(),
        )
        .unwrap();
    assert!(a3.contains("fuse_count_hops"), "{a3}");
}
