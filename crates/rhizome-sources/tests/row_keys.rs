//! Row-number keys (`"key": null`) against real PostgreSQL and Redis
//! servers with the bus lines of `scripts/sources.sh load-places` (run by
//! `scripts/suites/50-sources.sh`): a table without a key column, with two
//! identical rows. Every relationship gets its own id, the same from
//! either end, across queries, cache clears and sources (processes): the
//! documented function of the row; relationship uniqueness
//! in patterns tells parallel duplicates apart; route procedures follow
//! such relationships.

mod common;

use common::example;
use rhizome_common::Value;
use rhizome_sources::{Mapping, Source, SourceEngine};
use std::collections::BTreeMap;

fn rows(engine: &SourceEngine, query: &str) -> Vec<Vec<Value>> {
    common::rows(engine, query).unwrap_or_else(|e| panic!("{query}: {e}"))
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

/// (id(b), line, minutes) of the buses from place 1 to place 2, by id.
const ONE_TO_TWO: &str = "MATCH (:Place {id: 1})-[b:BUS]->(:Place {id: 2}) \
     RETURN id(b), b.line, b.minutes, elementId(b) ORDER BY id(b)";

#[test]
fn relationships_without_a_key_column_get_stable_row_keys() {
    for file in ["places-postgres.json", "places-redis.json"] {
        let source = Source::connect(Mapping::parse(&example(file)).unwrap()).unwrap();
        let e = SourceEngine::new(source.clone()).unwrap();
        let first = rows(&e, ONE_TO_TWO);
        assert_eq!(first.len(), 3, "{file}: three buses from 1 to 2");
        let ids: std::collections::BTreeSet<i64> = first.iter().map(|r| int(&r[0])).collect();
        assert_eq!(
            ids.len(),
            3,
            "{file}: parallel duplicates have their own ids"
        );
        let mut lines: Vec<(String, i64)> = first
            .iter()
            .map(|r| (format!("{:?}", r[1]), int(&r[2])))
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                ("String(\"L1\")".to_string(), 30),
                ("String(\"L1\")".to_string(), 30),
                ("String(\"L2\")".to_string(), 25)
            ],
            "{file}"
        );
        // The same ids in the next query, and after the cache is emptied.
        assert_eq!(rows(&e, ONE_TO_TWO), first, "{file}: a second query");
        rows(&e, "CALL db.source.clear()");
        assert_eq!(rows(&e, ONE_TO_TWO), first, "{file}: after a clear");
        // Read from the other end (place 2's incoming list) first, on a
        // cold cache: the same ids (the L2 bus by its line).
        rows(&e, "CALL db.source.clear()");
        let from_end = rows(
            &e,
            "MATCH (:Place {id: 2})<-[b:BUS]-(a) RETURN id(b), b.line, b.minutes, elementId(b) ORDER BY id(b)",
        );
        assert_eq!(from_end, first, "{file}: from the end node");
        // Relationship uniqueness: two different buses from 1 to the same
        // place (3 x 2 ordered pairs among the parallel 1 -> 2 buses).
        let pairs = rows(
            &e,
            "MATCH (a:Place {id: 1})-[b1:BUS]->(x)<-[b2:BUS]-(a) RETURN count(*)",
        );
        assert_eq!(int(&pairs[0][0]), 6, "{file}: b1 <> b2 over duplicates");
        let all = rows(
            &e,
            "MATCH ()-[b:BUS]->() RETURN count(*), count(DISTINCT id(b))",
        );
        // Six between places, and the L5 to a place that does not exist.
        assert_eq!((int(&all[0][0]), int(&all[0][1])), (7, 7), "{file}");
        // A route over them: 1 -> 2 (L2, 25) -> 3 (40) -> 4 (20).
        let route = rows(
            &e,
            "MATCH (a:Place {id: 1}), (b:Place {id: 4}) \
             CALL apoc.algo.dijkstra(a, b, 'BUS>', 'minutes') YIELD path, weight \
             RETURN weight, [r IN relationships(path) | r.line], [r IN relationships(path) | id(r)]",
        );
        assert_eq!(route.len(), 1, "{file}");
        assert_eq!(route[0][0], Value::Float(85.0), "{file}");
        assert_eq!(
            route[0][1],
            Value::List(["L2", "L3", "L3"].map(|s| Value::String(s.into())).to_vec()),
            "{file}"
        );
        let l2 = first
            .iter()
            .find(|r| r[1] == Value::String("L2".into()))
            .unwrap();
        let Value::List(route_ids) = &route[0][2] else {
            panic!("{file}: {route:?}")
        };
        assert_eq!(
            route_ids[0], l2[0],
            "{file}: the route's first bus is the L2 row"
        );
        // The source keyed the seven rows it read, no more.
        assert_eq!(source.row_keys(), 7, "{file}");
    }
}

/// The ids of the three buses from 1 to 2 (`BUS`, relationship space 0,
/// the first name in order, so the id is the key): the documented key of
/// (start, end, ordinal), the two `('L1', 30)` rows ordinals 0 and 1,
/// `('L2', 25)` ordinal 2 (docs/sources.md).
const BUS_IDS: [(i64, &str); 3] = [
    (77_359_922_345_766, "L1"),
    (262_006_263_529_038, "L2"),
    (266_511_728_322_701, "L1"),
];

#[test]
fn row_keys_are_the_same_in_every_source_whatever_it_reads_first() {
    for (i, (key, _)) in BUS_IDS.iter().enumerate() {
        let ordinal = [0, 2, 1][i];
        assert_eq!(
            *key,
            rhizome_sources::row_keys::row_key(1, 2, ordinal),
            "the documented ids"
        );
    }
    let want: Vec<Vec<Value>> = BUS_IDS
        .iter()
        .map(|(id, line)| vec![Value::Int(*id), Value::String((*line).into())])
        .collect();
    let query =
        "MATCH (:Place {id: 1})-[b:BUS]->(:Place {id: 2}) RETURN id(b), b.line ORDER BY id(b)";
    for file in ["places-postgres.json", "places-redis.json"] {
        // Each source is what a new process has: nothing numbered yet.
        // The first reads every bus from place 4's side of the graph first
        // (an order in which the 1 -> 2 rows come last), the second reads
        // the 1 -> 2 buses from place 2's incoming list, the third from
        // place 1's outgoing list.
        let firsts = [
            "MATCH (:Place {id: 4})<-[:BUS*0..3]-(x)<-[b:BUS]-() RETURN count(b)",
            "MATCH (:Place {id: 2})<-[b:BUS]-() RETURN count(b)",
            "RETURN 1",
        ];
        for first in firsts {
            let source = Source::connect(Mapping::parse(&example(file)).unwrap()).unwrap();
            let e = SourceEngine::new(source).unwrap();
            rows(&e, first);
            assert_eq!(rows(&e, query), want, "{file}, after {first}");
        }
    }
}

/// The documented rule for dangling neighbours (docs/sources.md, "The
/// cache and its freshness rule"): a neighbour key no node has reads as a
/// node without properties, and Dijkstra may pass through it.
#[test]
fn a_dangling_neighbour_reads_as_a_node_without_properties() {
    for file in ["places-postgres.json", "places-redis.json"] {
        let source = Source::connect(Mapping::parse(&example(file)).unwrap()).unwrap();
        let e = SourceEngine::new(source).unwrap();
        let got = rows(
            &e,
            "MATCH (:Place {id: 4})-[b:BUS]->(x) RETURN b.line, x.id, x.name, properties(x)",
        );
        assert_eq!(got.len(), 1, "{file}: {got:?}");
        assert_eq!(got[0][0], Value::String("L5".into()), "{file}");
        assert_eq!(got[0][1..3], [Value::Null, Value::Null], "{file}: {got:?}");
        assert_eq!(got[0][3], Value::Map(BTreeMap::new()), "{file}: {got:?}");
        // 1 -> 2 (25) -> 3 (40) -> 4 (20) -> the dangling node (15).
        let route = rows(
            &e,
            "MATCH (a:Place {id: 1})-[:BUS*4]->(x) WHERE x.id IS NULL \
             CALL apoc.algo.dijkstra(a, x, 'BUS>', 'minutes') YIELD weight RETURN DISTINCT weight",
        );
        assert_eq!(route, [[Value::Float(100.0)]], "{file}");
    }
}
