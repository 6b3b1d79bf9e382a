//! `WHERE x IN list` over a list slot shared by many rows (the hash-set
//! path of `Filter`) keeps exactly the rows Cypher's `IN` is true for,
//! including integer/float equality and lists with nulls or mixed types.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

fn count(engine: &Engine, q: &str) -> Value {
    engine
        .execute(q, BTreeMap::new(), &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{q}: {e}"))
        .rows[0][0]
        .clone()
}

#[test]
fn in_over_a_shared_list_slot_follows_cypher_equality() {
    let dir = tempfile::tempdir().unwrap();
    rhizome_storage::GraphBuilder::new()
        .write(&dir.path().join("db"))
        .unwrap();
    let engine = Engine::open(&dir.path().join("db")).unwrap();
    let cases = [
        // Integers: 1..100 of -5..120.
        ("UNWIND range(1, 100) AS i WITH collect(i) AS ids UNWIND range(-5, 120) AS x WITH x, ids WHERE x IN ids RETURN count(*)", 100),
        // Floats equal to integers are in the list.
        ("UNWIND range(1, 100) AS i WITH collect(i) AS ids UNWIND range(-5, 120) AS x WITH toFloat(x) AS x, ids WHERE x IN ids RETURN count(*)", 100),
        ("UNWIND range(1, 100) AS i WITH collect(toFloat(i)) AS ids UNWIND range(-5, 120) AS x WITH x, ids WHERE x IN ids RETURN count(*)", 100),
        // Strings, and a list mixing strings and integers.
        ("UNWIND range(1, 50) AS i WITH collect(toString(i)) AS ids UNWIND range(0, 60) AS x WITH toString(x) AS x, ids WHERE x IN ids RETURN count(*)", 50),
        ("UNWIND range(1, 50) AS i WITH collect(toString(i)) + range(100, 120) AS ids UNWIND range(0, 130) AS x WITH x, ids WHERE x IN ids OR toString(x) IN ids RETURN count(*)", 71),
        ("UNWIND range(1, 50) AS i WITH collect(toString(i)) + range(100, 120) AS ids UNWIND range(0, 130) AS x WITH x, ids WHERE x IN ids RETURN count(*)", 21),
        // Nulls in the list or as the value never make IN true.
        ("UNWIND range(1, 40) AS i WITH collect(i) + [null] AS ids UNWIND range(0, 50) + [null] AS x WITH x, ids WHERE x IN ids RETURN count(*)", 40),
        ("UNWIND range(1, 40) AS i WITH collect(i) AS ids UNWIND [null, 3, null] AS x WITH x, ids WHERE x IN ids RETURN count(*)", 1),
        // Lists as elements compare as lists.
        ("UNWIND range(1, 40) AS i WITH collect([i]) AS ids UNWIND range(0, 50) AS x WITH [x] AS x, ids WHERE x IN ids RETURN count(*)", 40),
    ];
    for (q, n) in cases {
        assert_eq!(count(&engine, q), Value::Int(n), "{q}");
    }
}
