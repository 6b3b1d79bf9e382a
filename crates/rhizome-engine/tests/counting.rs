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

/// Runs an updating statement (all workers).
fn run(engine: &Engine, query: &str) {
    engine
        .execute(query, BTreeMap::new(), &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
}

/// Count shapes: (pattern, a variable whose `.id` the materialized count reads).
const SHAPES: [(&str, &str); 9] = [
    (
        "MATCH (p:Person {id: 7})-[:LIKES]->(:Item)<-[:LIKES]-(:Person)-[:LIKES]->(j:Item)",
        "j",
    ),
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
    (
        "MATCH (p:Person {id: 7})-[:LIKES]->(i)<-[:LIKES]-(o)-[:LIKES]->(j)",
        "j",
    ),
    (
        "MATCH (p:Person {id: 7})-[:LIKES]-(i)-[:LIKES]-(o)-[:LIKES]-(j)",
        "j",
    ),
    (
        "MATCH (x:Person)-[:LIKES]->(:Item)<-[:LIKES]-(:Person {id: 3})",
        "x",
    ),
    (
        "MATCH (i:Item {id: 3})<-[:LIKES]-(o)-[:LIKES]->(j)<-[r:LIKES]-(x) WHERE r.weight >= 2",
        "x",
    ),
    (
        "MATCH (p:Person {id: 7})-[r:LIKES]->(i) WHERE r.weight < 4",
        "i",
    ),
    (
        "MATCH (p:Person)-[:LIKES]->(i:Item {id: 5})<-[:LIKES]-(o)",
        "o",
    ),
];

/// Every shape: the fused count equals the materialized one, with 1 and 2 workers.
fn check_shapes(engine: &Engine, what: &str) {
    for (shape, var) in SHAPES {
        let fused = format!("{shape} RETURN count(*)");
        let plan = engine.explain(&fused, &BTreeMap::new()).unwrap();
        assert!(plan.contains("ExpandCount"), "{what}: {plan}");
        let materialized = count(engine, &format!("{shape} RETURN count({var}.id)"), 2);
        assert!(materialized > 0, "{what}: {shape}");
        assert_eq!(
            count(engine, &fused, 1),
            materialized,
            "{what}: {shape}\n{plan}"
        );
        assert_eq!(
            count(engine, &fused, 2),
            materialized,
            "{what}: {shape}\n{plan}"
        );
    }
}

#[test]
fn fused_counts_equal_materialized_counts() {
    let (_dir, engine) = engine();
    check_shapes(&engine, "base");
    let a3 = engine
        .explain(
            &format!("{} RETURN count(*)", SHAPES[0].0),
            &BTreeMap::new(),
        )
        .unwrap();
    assert!(a3.contains("fuse_count_hops"), "{a3}");
}

/// The same over a delta that creates persons and relationships (numeric,
/// string and missing weights), rewrites and removes base weights and
/// deletes relationships, then again after a checkpoint. The delta changes
/// enough lists that a filtered counted hop counts most of them in its
/// memo's one pass (`CountMemo::fill_changed`), not as the walk reaches
/// them.
#[test]
fn fused_counts_over_a_delta_equal_materialized_counts() {
    let (_dir, engine) = engine();
    let run = |q: &str| run(&engine, q);
    run("UNWIND range(1000, 1019) AS i CREATE (:Person {id: i})");
    run(
        "MATCH (p:Person), (i:Item) WHERE p.id >= 1000 AND (p.id + i.id) % 4 = 0 \
         CREATE (p)-[:LIKES {weight: toFloat(i.id % 9)}]->(i)",
    );
    run(
        "MATCH (p:Person), (i:Item) WHERE p.id IN [3, 7, 11] AND i.id % 5 = 1 \
         CREATE (p)-[:LIKES {weight: i.id % 7}]->(i)",
    );
    run("MATCH (p:Person {id: 1003}), (i:Item {id: 3}) CREATE (p)-[:LIKES {weight: 'high'}]->(i)");
    run("MATCH (p:Person {id: 1005}), (i:Item {id: 3}) CREATE (p)-[:LIKES]->(i)");
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE p.id % 13 = 2 SET r.weight = 8.5");
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE p.id % 17 = 4 SET r.weight = 'x'");
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE p.id % 19 = 6 REMOVE r.weight");
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE (p.id + i.id) % 23 = 0 DELETE r");
    check_shapes(&engine, "base + delta");
    engine.database().checkpoint().unwrap();
    check_shapes(&engine, "checkpointed");
    // A second delta over the delta file: more likes of base persons (their
    // lists keep every base entry), base likes deleted beside new ones (they
    // do not), base and created weights rewritten and removed.
    run(
        "MATCH (p:Person), (i:Item) WHERE p.id % 29 = 5 AND i.id % 6 = 2 \
         CREATE (p)-[:LIKES {weight: toFloat(p.id % 5) - 1.5}]->(i)",
    );
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE p.id % 29 = 5 AND i.id % 7 = 3 DELETE r");
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE p.id % 31 = 8 SET r.weight = -9");
    run("MATCH (p:Person)-[r:LIKES]->(i:Item) WHERE p.id >= 1000 AND i.id % 3 = 0 REMOVE r.weight");
    check_shapes(&engine, "a second delta");
    engine.database().checkpoint_full().unwrap();
    check_shapes(&engine, "merged");
}

/// One relationship type walked and counted in every direction combination,
/// over self-loops, parallel relationships and cycles, so that the walked
/// relationship and the path's relationships lie in the counted lists in
/// every way they can: the fused count equals the materialized count with
/// the lists in the delta and again as base CSR slices after a checkpoint.
#[test]
fn fused_counts_over_loops_and_parallel_relationships() {
    let dir = tempfile::tempdir().unwrap();
    rhizome_storage::GraphBuilder::new()
        .write(&dir.path().join("db"))
        .unwrap();
    let engine = Engine::open(&dir.path().join("db")).unwrap();
    let run = |q: &str| run(&engine, q);
    run("UNWIND range(0, 29) AS i CREATE (:N {id: i})");
    run(
        "MATCH (a:N), (b:N) WHERE b.id = (a.id * 7 + 3) % 30 OR b.id = (a.id * 11 + 5) % 30 \
         CREATE (a)-[:R]->(b)",
    );
    run("MATCH (a:N) WHERE a.id % 5 = 0 CREATE (a)-[:R]->(a)");
    run(
        "MATCH (a:N), (b:N) WHERE a.id % 7 = 0 AND b.id = (a.id + 1) % 30 \
         CREATE (a)-[:R]->(b), (a)-[:R]->(b)",
    );
    run("MATCH (a:N)-[r:R]->(b:N) SET r.w = (a.id + b.id) % 3");
    // Undirected hops see a self-loop once; the counted hop reads it from
    // degrees, less the incoming loops.
    let arrows = ["-[:R]->", "<-[:R]-", "-[:R]-"];
    let mut shapes = Vec::new();
    for first in arrows {
        for second in arrows {
            // The first relationship is bound by an `Expand` row.
            shapes.push(format!("(a:N){first}(){second}(x)"));
            for third in arrows {
                shapes.push(format!("(a:N {{id: 5}}){first}(){second}(){third}(x)"));
                shapes.push(format!("(a:N){first}(){second}(){third}(x)"));
                let named = |arrow: &str, name: &str| arrow.replace("[:R]", &format!("[{name}:R]"));
                shapes.push(format!(
                    "(a:N {{id: 5}}){}(){}(){}(x) WHERE r1.w <> 1 AND r2.w <> 1 AND r3.w <> 1",
                    named(first, "r1"),
                    named(second, "r2"),
                    named(third, "r3")
                ));
                for fourth in arrows {
                    shapes.push(format!(
                        "(a:N {{id: 10}}){first}(){second}(){third}(){fourth}(x)"
                    ));
                }
            }
        }
    }
    let check = |what: &str| {
        for shape in &shapes {
            let fused = format!("MATCH {shape} RETURN count(*)");
            let plan = engine.explain(&fused, &BTreeMap::new()).unwrap();
            assert!(plan.contains("ExpandCount"), "{what}: {plan}");
            let materialized = count(&engine, &format!("MATCH {shape} RETURN count(x.id)"), 2);
            assert!(materialized > 0, "{what}: {shape}");
            for threads in [1, 2] {
                assert_eq!(
                    count(&engine, &fused, threads),
                    materialized,
                    "{what}, {threads} workers: {shape}\n{plan}"
                );
            }
        }
    };
    check("delta");
    engine.database().checkpoint().unwrap();
    check("checkpointed");
}
