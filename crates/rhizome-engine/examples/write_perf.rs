//! Times bulk updates on an empty database (not a test; a quick measurement).

use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = Engine::open(&db).unwrap();
    for q in [
        "UNWIND range(1, 20000) AS i CREATE (:N {i: i})",
        "MATCH (n:N) WHERE n.i % 2 = 0 SET n.even = true",
        "MATCH (a:N) WHERE a.i < 5000 MATCH (b:N {i: a.i + 1}) CREATE (a)-[:NEXT]->(b)",
        "UNWIND range(1, 2000) AS i MERGE (:M {i: i % 100})",
        "MATCH (n:N) DETACH DELETE n",
    ] {
        let t = Instant::now();
        let r = engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap();
        println!(
            "{:>8.1} ms  {:?}  {q}",
            t.elapsed().as_secs_f64() * 1e3,
            r.counters
        );
    }
}
