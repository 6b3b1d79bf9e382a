//! The route procedures through the engine: hand-made graphs (ties,
//! unreachable, start = end, missing weights, bad arguments, timeouts) and
//! the Luxembourg road network against an independent Dijkstra.

use rhizome_common::{ErrorKind, Value};
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[path = "support/reference_dijkstra.rs"]
mod reference_dijkstra;

fn engine_with(create: &str) -> (tempfile::TempDir, Engine) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = Engine::open(&db).unwrap();
    engine
        .execute(create, BTreeMap::new(), &QueryOptions::default())
        .unwrap();
    (tmp, engine)
}

fn rows(engine: &Engine, query: &str) -> Vec<Vec<Value>> {
    let result = engine
        .execute(query, BTreeMap::new(), &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    (&result.rows).into_iter().map(|r| r.to_vec()).collect()
}

fn error(engine: &Engine, query: &str) -> rhizome_common::Error {
    match engine.execute(query, BTreeMap::new(), &QueryOptions::default()) {
        Ok(_) => panic!("{query} did not fail"),
        Err(e) => e,
    }
}

/// a -800-> b -800-> c, a -2000-> c, e -1-> a (0.01 degrees of longitude,
/// about 730 m, apart per hop for A*); apart from them f -(no w)-> g, both
/// without coordinates.
const SMALL: &str =
    "CREATE (a:P {name: 'a', lat: 49.0, lon: 6.0}), (b:P {name: 'b', lat: 49.0, lon: 6.01}),
    (c:P {name: 'c', lat: 49.0, lon: 6.02}), (e:P {name: 'e', lat: 49.0, lon: 5.99}),
    (f:P {name: 'f'}), (g:P {name: 'g'}),
    (a)-[:R {w: 800}]->(b), (b)-[:R {w: 800.0}]->(c), (a)-[:R {w: 2000}]->(c), (e)-[:R {w: 1}]->(a),
    (f)-[:R]->(g)";

fn route(engine: &Engine, from: &str, to: &str, call: &str) -> Vec<Vec<Value>> {
    rows(
        engine,
        &format!(
            "MATCH (s:P {{name: '{from}'}}), (t:P {{name: '{to}'}}) CALL {call} YIELD path, weight \
             RETURN [n IN nodes(path) | n.name] AS names, weight"
        ),
    )
}

fn names(list: &[&str]) -> Value {
    Value::List(list.iter().map(|s| Value::String(s.to_string())).collect())
}

#[test]
fn dijkstra_and_a_star_on_a_small_graph() {
    let (_tmp, e) = engine_with(SMALL);
    let want = vec![vec![names(&["a", "b", "c"]), Value::Float(1600.0)]];
    assert_eq!(
        route(&e, "a", "c", "apoc.algo.dijkstra(s, t, 'R>', 'w')"),
        want
    );
    assert_eq!(
        route(&e, "a", "c", "apoc.algo.dijkstra(s, t, 'R', 'w')"),
        want
    );
    assert_eq!(
        route(
            &e,
            "a",
            "c",
            "apoc.algo.aStar(s, t, 'R>', 'w', 'lat', 'lon')"
        ),
        want
    );
    assert_eq!(
        route(
            &e,
            "a",
            "c",
            "apoc.algo.aStarConfig(s, t, 'R>', {weight: 'w', latitude: 'lat', longitude: 'lon'})"
        ),
        want
    );
    assert_eq!(
        route(
            &e,
            "a",
            "c",
            "apoc.algo.aStarConfig(s, t, 'R>', {weight: 'w', y: 'lat', x: 'lon'})"
        ),
        want
    );
    // Directions: e -> a exists, so a reaches e only against the arrow.
    assert_eq!(
        route(&e, "a", "e", "apoc.algo.dijkstra(s, t, 'R>', 'w')"),
        Vec::<Vec<Value>>::new()
    );
    assert_eq!(
        route(&e, "a", "e", "apoc.algo.dijkstra(s, t, '<R', 'w')"),
        vec![vec![names(&["a", "e"]), Value::Float(1.0)]]
    );
    assert_eq!(
        route(&e, "c", "a", "apoc.algo.dijkstra(s, t, '', 'w')"),
        vec![vec![names(&["c", "b", "a"]), Value::Float(1600.0)]]
    );
    // Start = end: a path of length 0.
    assert_eq!(
        route(&e, "b", "b", "apoc.algo.dijkstra(s, t, 'R>', 'w')"),
        vec![vec![names(&["b"]), Value::Float(0.0)]]
    );
    // Unknown type: nothing to follow, no row.
    assert!(route(&e, "a", "c", "apoc.algo.dijkstra(s, t, 'NOPE', 'w')").is_empty());
}

#[test]
fn ties_give_one_cheapest_path() {
    let (_tmp, e) = engine_with(
        "CREATE (a:P {name: 'a'}), (b:P {name: 'b'}), (c:P {name: 'c'}), (d:P {name: 'd'}),
         (a)-[:R {w: 1}]->(b), (a)-[:R {w: 1}]->(c), (b)-[:R {w: 1}]->(d), (c)-[:R {w: 1}]->(d)",
    );
    let found = route(&e, "a", "d", "apoc.algo.dijkstra(s, t, 'R>', 'w')");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0][1], Value::Float(2.0));
    assert!(found[0][0] == names(&["a", "b", "d"]) || found[0][0] == names(&["a", "c", "d"]));
    for _ in 0..3 {
        assert_eq!(
            route(&e, "a", "d", "apoc.algo.dijkstra(s, t, 'R>', 'w')"),
            found
        );
    }
}

#[test]
fn missing_weights_use_the_default_or_fail() {
    let (_tmp, e) = engine_with(SMALL);
    let err = error(&e, "MATCH (s:P {name: 'f'}), (t:P {name: 'g'}) CALL apoc.algo.dijkstra(s, t, 'R>', 'w') YIELD weight RETURN weight");
    assert_eq!(err.kind, ErrorKind::ProcedureError);
    assert!(
        err.message
            .contains("has no numeric `w` property and no default weight"),
        "{err}"
    );
    assert_eq!(
        route(
            &e,
            "f",
            "g",
            "apoc.algo.dijkstraWithDefaultWeight(s, t, 'R>', 'w', 5)"
        ),
        vec![vec![names(&["f", "g"]), Value::Float(5.0)]]
    );
    let (_tmp, e) = engine_with(
        "CREATE (a:P {name: 'a', lat: 49.0, lon: 6.0}), (b:P {name: 'b', lat: 49.0, lon: 6.01}),
         (c:P {name: 'c', lat: 49.0, lon: 6.02}), (a)-[:R]->(b), (b)-[:R {w: 900}]->(c), (a)-[:R {w: 5000}]->(c)",
    );
    assert_eq!(
        route(&e, "a", "c", "apoc.algo.aStarConfig(s, t, 'R>', {weight: 'w', default: 1000, latitude: 'lat', longitude: 'lon'})"),
        vec![vec![names(&["a", "b", "c"]), Value::Float(1900.0)]]
    );
}

/// APOC 5's optional fifth and sixth arguments of `apoc.algo.dijkstra`:
/// `defaultWeight` (NaN: none) and `numberOfWantedPaths` (the k cheapest
/// loopless paths, cheapest first, one row each).
#[test]
fn dijkstra_takes_apoc_5s_optional_arguments() {
    let (_tmp, e) = engine_with(SMALL);
    let cheapest = vec![names(&["a", "b", "c"]), Value::Float(1600.0)];
    let direct = vec![names(&["a", "c"]), Value::Float(2000.0)];
    // Left out, NaN and null mean what APOC's defaults mean: no default
    // weight, one path.
    for call in [
        "apoc.algo.dijkstra(s, t, 'R>', 'w')",
        "apoc.algo.dijkstra(s, t, 'R>', 'w', 0.0 / 0.0)",
        "apoc.algo.dijkstra(s, t, 'R>', 'w', null, null)",
        "apoc.algo.dijkstra(s, t, 'R>', 'w', 7, 1)",
    ] {
        assert_eq!(route(&e, "a", "c", call), vec![cheapest.clone()], "{call}");
    }
    assert_eq!(
        route(
            &e,
            "a",
            "c",
            "apoc.algo.dijkstra(s, t, 'R>', 'w', 0.0 / 0.0, 2)"
        ),
        vec![cheapest.clone(), direct.clone()]
    );
    // More paths wanted than there are: every loopless path once.
    assert_eq!(
        route(&e, "a", "c", "apoc.algo.dijkstra(s, t, 'R>', 'w', 1.0, 10)"),
        vec![cheapest, direct]
    );
    // The fifth argument is the default weight, as in
    // dijkstraWithDefaultWeight.
    assert_eq!(
        route(&e, "f", "g", "apoc.algo.dijkstra(s, t, 'R>', 'w', 5)"),
        vec![vec![names(&["f", "g"]), Value::Float(5.0)]]
    );
    let err = error(&e, "MATCH (s:P {name: 'f'}), (t:P {name: 'g'}) CALL apoc.algo.dijkstra(s, t, 'R>', 'w', 0.0 / 0.0, 3) YIELD weight RETURN weight");
    assert_eq!(err.kind, ErrorKind::ProcedureError, "{err}");
}

#[test]
fn a_star_without_coordinates_fails_clearly() {
    let (_tmp, e) = engine_with(SMALL);
    let err = error(&e, "MATCH (s:P {name: 'a'}), (t:P {name: 'f'}) CALL apoc.algo.aStar(s, t, 'R>', 'w', 'lat', 'lon') YIELD weight RETURN weight");
    assert!(
        err.message
            .contains("has no numeric latitude and longitude"),
        "{err}"
    );
}

#[test]
fn bad_arguments_are_clear_errors() {
    let (_tmp, e) = engine_with(SMALL);
    let cases = [
        ("CALL apoc.algo.dijkstra('a', 'b', 'R', 'w')", ErrorKind::SyntaxError, "expects NODE but got STRING"),
        ("UNWIND ['a', 1] AS x MATCH (t:P {name: 'a'}) CALL apoc.algo.dijkstra(x, t, 'R', 'w') YIELD weight RETURN weight", ErrorKind::ArgumentError, "startNode must be a node, got STRING"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, null, 'R', 'w') YIELD weight RETURN weight", ErrorKind::ArgumentError, "endNode must be a node, got NULL"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, s, '<R>', 'w') YIELD weight RETURN weight", ErrorKind::ArgumentError, "relTypesAndDirections: `<R>` has both"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, s, 'R', 3) YIELD weight RETURN weight", ErrorKind::SyntaxError, "expects STRING but got INTEGER"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstraWithDefaultWeight(s, s, 'R', 'w', -1) YIELD weight RETURN weight", ErrorKind::ArgumentError, "defaultWeight must be a finite number that is not negative"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.aStarConfig(s, s, 'R', {wieght: 'w'}) YIELD weight RETURN weight", ErrorKind::ArgumentError, "config has an unknown key `wieght`"),
        ("MATCH (s:P {name: 'a'}) UNWIND ['w', 1] AS c CALL apoc.algo.aStarConfig(s, s, 'R', c) YIELD weight RETURN weight", ErrorKind::ArgumentError, "config must be a map"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, s, 'R') YIELD weight RETURN weight", ErrorKind::SyntaxError, "takes 4 to 6 argument(s) but 3 were given"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, s, 'R', 'w', 1.0, 2, 3) YIELD weight RETURN weight", ErrorKind::SyntaxError, "takes 4 to 6 argument(s) but 7 were given"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstraWithDefaultWeight(s, s, 'R', 'w') YIELD weight RETURN weight", ErrorKind::SyntaxError, "takes 5 argument(s) but 4 were given"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, s, 'R', 'w', 1.0, 0) YIELD weight RETURN weight", ErrorKind::ArgumentError, "numberOfWantedPaths must be at least 1, got 0"),
        ("MATCH (s:P {name: 'a'}) UNWIND [1, 'two'] AS k CALL apoc.algo.dijkstra(s, s, 'R', 'w', 1.0, k) YIELD weight RETURN weight", ErrorKind::ArgumentError, "numberOfWantedPaths must be an integer, got STRING"),
        ("MATCH (s:P {name: 'a'}) CALL apoc.algo.dijkstra(s, s, 'R', 'w', -2.5) YIELD weight RETURN weight", ErrorKind::ArgumentError, "defaultWeight must be a finite number that is not negative"),
    ];
    for (query, kind, message) in cases {
        let err = error(&e, query);
        assert_eq!(err.kind, kind, "{query}: {err}");
        assert!(err.message.contains(message), "{query}: {err}");
    }
}

// ---- The Luxembourg road network ----

fn luxembourg_dir() -> PathBuf {
    rhizome_import::bench::find_datasets_dir()
        .expect("shared/datasets not found (set RHIZOME_DATASETS)")
        .join("roads/luxembourg-dimacs10")
}

/// The network imported once for all tests of this file.
fn luxembourg() -> &'static Engine {
    static ENGINE: OnceLock<(tempfile::TempDir, Engine)> = OnceLock::new();
    &ENGINE
        .get_or_init(|| {
            let dir = luxembourg_dir();
            let tmp = tempfile::tempdir().unwrap();
            let db = tmp.path().join("lux");
            let options = rhizome_import::DimacsOptions::new(
                dir.join("luxembourg.gr"),
                Some(dir.join("luxembourg.co")),
            );
            rhizome_import::import_dimacs(&db, &options).unwrap();
            (tmp, Engine::open(&db).unwrap())
        })
        .1
}

/// The reference: a textbook Dijkstra over the `.gr` file's arcs, read
/// once for all tests of this file.
fn reference_costs(from: usize) -> Vec<u64> {
    static ARCS: OnceLock<Vec<Vec<(usize, u64)>>> = OnceLock::new();
    let arcs = ARCS.get_or_init(|| {
        let text = std::fs::read_to_string(luxembourg_dir().join("luxembourg.gr")).unwrap();
        reference_dijkstra::gr_arcs(&text)
    });
    reference_dijkstra::distances(arcs, from)
}

fn lux_route(call: &str, from: i64, to: i64) -> Vec<Vec<Value>> {
    let params = BTreeMap::from([
        ("s".to_string(), Value::Int(from)),
        ("t".to_string(), Value::Int(to)),
    ]);
    let query = format!(
        "MATCH (s:Junction {{id: $s}}), (t:Junction {{id: $t}}) CALL {call} YIELD path, weight \
         RETURN weight, reduce(total = 0, r IN relationships(path) | total + r.distance) AS summed, \
         head(nodes(path)).id AS first, last(nodes(path)).id AS last"
    );
    let result = luxembourg()
        .execute(&query, params, &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    (&result.rows).into_iter().map(|r| r.to_vec()).collect()
}

#[test]
fn luxembourg_route_costs_equal_an_independent_dijkstra() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 114_599) as i64 + 1
    };
    for _ in 0..4 {
        let from = next();
        let reference = reference_costs(from as usize);
        for _ in 0..3 {
            let to = next();
            let want = reference[to as usize] as f64;
            for call in [
                "apoc.algo.dijkstra(s, t, 'ROAD>', 'distance')",
                "apoc.algo.aStar(s, t, 'ROAD>', 'distance', 'lat', 'lon')",
                "apoc.algo.aStarConfig(s, t, 'ROAD', {weight: 'distance', latitude: 'lat', longitude: 'lon'})",
            ] {
                let found = lux_route(call, from, to);
                assert_eq!(
                    found,
                    vec![vec![Value::Float(want), Value::Int(want as i64), Value::Int(from), Value::Int(to)]],
                    "{call} from {from} to {to}"
                );
            }
        }
    }
}

#[test]
fn a_long_search_stops_at_the_timeout() {
    let engine = luxembourg();
    let query = "MATCH (s:Junction {id: 1}), (t:Junction {id: 114599}) \
                 CALL apoc.algo.dijkstra(s, t, 'ROAD>', 'distance') YIELD weight RETURN weight";
    let started = Instant::now();
    engine
        .execute(query, BTreeMap::new(), &QueryOptions::default())
        .unwrap();
    let full = started.elapsed();
    let options = QueryOptions {
        timeout: Some(full / 20),
        ..QueryOptions::default()
    };
    let started = Instant::now();
    let err = engine
        .execute(query, BTreeMap::new(), &options)
        .unwrap_err();
    let stopped = started.elapsed();
    assert_eq!(err.kind, ErrorKind::QueryAborted, "{err}");
    assert!(
        stopped < full.max(Duration::from_millis(50)),
        "stopped after {stopped:?}, a full run takes {full:?}"
    );
}
