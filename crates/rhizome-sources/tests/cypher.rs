//! Cypher over sources against real PostgreSQL and Redis servers with the
//! Luxembourg network loaded by `scripts/sources.sh` (run by
//! `scripts/suites/50-sources.sh`): the same statements give the same rows
//! over a native import, PostgreSQL and Redis; writes are refused; route
//! procedures, `db.source.clear()`, EXPLAIN and PROFILE over a source.

use rhizome_common::{ErrorKind, Value};
use rhizome_engine::{Engine, QueryOptions};
use rhizome_sources::{Mapping, Source, SourceEngine};
use std::collections::BTreeMap;
use std::sync::OnceLock;

mod common;

use common::{examples, mapping};

/// The Luxembourg network imported natively once.
fn native() -> &'static Engine {
    static DB: OnceLock<(tempfile::TempDir, Engine)> = OnceLock::new();
    &DB.get_or_init(|| {
        let dir = rhizome_import::bench::find_datasets_dir()
            .expect("shared/datasets not found")
            .join("roads/luxembourg-dimacs10");
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("lux");
        let options = rhizome_import::DimacsOptions::new(
            dir.join("luxembourg.gr"),
            Some(dir.join("luxembourg.co")),
        );
        rhizome_import::import_dimacs(&db, &options).unwrap();
        let engine = Engine::open(&db).unwrap();
        (tmp, engine)
    })
    .1
}

fn engine(file: &str) -> SourceEngine {
    SourceEngine::new(Source::connect(mapping(file)).unwrap()).unwrap()
}

fn postgres() -> &'static SourceEngine {
    static E: OnceLock<SourceEngine> = OnceLock::new();
    E.get_or_init(|| engine("roads-postgres.json"))
}

fn redis() -> &'static SourceEngine {
    static E: OnceLock<SourceEngine> = OnceLock::new();
    E.get_or_init(|| engine("roads-redis.json"))
}

fn opts() -> QueryOptions {
    common::options(120)
}

fn rows_native(query: &str) -> Vec<Vec<Value>> {
    native()
        .execute(query, BTreeMap::new(), &opts())
        .unwrap_or_else(|e| panic!("native: {query}: {e}"))
        .rows
        .to_vecs()
}

fn rows_on(source: &SourceEngine, query: &str) -> rhizome_common::Result<Vec<Vec<Value>>> {
    Ok(source
        .execute(query, BTreeMap::new(), &opts())?
        .0
        .rows
        .to_vecs())
}

/// Statements whose rows must be the same over the three copies (sorted,
/// since the runtime is parallel; no float sums, whose order varies).
const SAME: &[&str] = &[
    "MATCH (j:Junction {id: 1})-[r:ROAD]->(k) RETURN k.id, r.distance ORDER BY k.id, r.distance",
    "MATCH (j:Junction {id: 17})-[r:ROAD]->(k) RETURN k.id, r.distance, k.lat, k.lon ORDER BY k.id, r.distance",
    "MATCH (j:Junction {id: 17})<-[r:ROAD]-(k) RETURN k.id, r.distance ORDER BY k.id, r.distance",
    "MATCH (j:Junction {id: 40000})-[:ROAD]->()-[:ROAD]->(k) RETURN k.id, count(*) AS n ORDER BY k.id",
    "MATCH (j:Junction {id: 40000})-[r:ROAD]-(k) WHERE r.distance > 30 RETURN k.id, r.distance ORDER BY k.id, r.distance",
    "MATCH (j:Junction {id: 90001})-[:ROAD*1..4]->(k) RETURN count(*) AS paths, count(DISTINCT k.id) AS reached, min(k.id), max(k.id)",
    "MATCH p = (j:Junction {id: 17})-[:ROAD*2]->(k) RETURN [n IN nodes(p) | n.id] AS ids, reduce(s = 0, r IN relationships(p) | s + r.distance) AS d ORDER BY ids",
    "MATCH (j:Junction) WHERE j.id IN [5, 17, 1000, 114599] RETURN j.id, j.lat, j.lon ORDER BY j.id",
    "MATCH (j:Junction {id: 999999999}) RETURN j.id",
    "MATCH (j:Junction {id: 17}) RETURN properties(j) AS p, labels(j) AS l",
    "MATCH (j:Junction {id: 17})-[r:ROAD]->() RETURN type(r) AS t, properties(r) AS p ORDER BY p.distance",
    "MATCH (j:Junction {id: 17})-[:ROAD]->(k) OPTIONAL MATCH (k)-[:ROAD]->(m) WHERE m.id < 10 RETURN k.id, m.id ORDER BY k.id, m.id",
    "MATCH (j:Junction {id: 17})-[:ROAD]->(k) WITH k ORDER BY k.id LIMIT 2 MATCH (k)-[r:ROAD]->(m) RETURN k.id, collect(m.id) AS ms ORDER BY k.id",
    "MATCH (j:Junction) WHERE j.lat > 50.15 RETURN count(*) AS n, min(j.id), max(j.id)",
    "UNWIND [17, 40000, 90001] AS x MATCH (j:Junction {id: x})-[:ROAD]->(k) RETURN x, count(k) AS degree ORDER BY x",
];

fn check_same(name: &str, source: &SourceEngine) {
    for query in SAME {
        let want = rows_native(query);
        let got = rows_on(source, query).unwrap_or_else(|e| panic!("{name}: {query}: {e}"));
        assert_eq!(got, want, "{name}: {query}");
    }
}

#[test]
fn cypher_gives_the_same_rows_over_native_postgres_and_redis() {
    check_same("PostgreSQL", postgres());
    check_same("Redis", redis());
}

#[test]
fn writes_are_refused() {
    for source in [postgres(), redis()] {
        for query in [
            "CREATE (:Junction {id: 0})",
            "MATCH (j:Junction {id: 17}) SET j.lat = 0",
            "MATCH (j:Junction {id: 17}) DETACH DELETE j",
            "CREATE INDEX FOR (j:Junction) ON (j.lat)",
        ] {
            let Err(e) = source.execute(query, BTreeMap::new(), &opts()) else {
                panic!("{query} ran");
            };
            assert_eq!(e.code, Some("ReadOnlySource"), "{query}: {e}");
            assert!(e.message.contains("read-only"), "{e}");
        }
    }
}

#[test]
fn route_procedures_run_over_sources() {
    for query in [
        "MATCH (a:Junction {id: 17}), (b:Junction {id: 67627}) \
         CALL apoc.algo.aStar(a, b, 'ROAD>', 'distance', 'lat', 'lon') YIELD path, weight \
         RETURN weight, length(path) AS hops, [n IN nodes(path) | n.id] AS ids, [r IN relationships(path) | r.distance] AS ds",
        "MATCH (a:Junction {id: 40000}), (b:Junction {id: 41000}) \
         CALL apoc.algo.dijkstra(a, b, 'ROAD>', 'distance') YIELD path, weight \
         RETURN weight, length(path) AS hops",
        "MATCH (a:Junction {id: 17}), (b:Junction {id: 67627}) \
         CALL apoc.algo.aStarConfig(a, b, 'ROAD>', {weight: 'distance', latitude: 'lat', longitude: 'lon'}) YIELD weight \
         RETURN weight",
    ] {
        let want = rows_native(query);
        assert_eq!(want.len(), 1, "{query}");
        for (name, source) in [("PostgreSQL", postgres()), ("Redis", redis())] {
            let got = rows_on(source, query).unwrap_or_else(|e| panic!("{name}: {query}: {e}"));
            assert_eq!(got, want, "{name}: {query}");
        }
    }
}

#[test]
fn clear_explain_and_profile_report_the_source() {
    let source = engine("roads-postgres.json");
    let query = "MATCH (j:Junction {id: 17})-[r:ROAD]->(k) RETURN k.id";
    rows_on(&source, query).unwrap();
    let cleared = rows_on(
        &source,
        "CALL db.source.clear() YIELD cleared RETURN cleared",
    )
    .unwrap();
    assert!(
        matches!(cleared[0][0], Value::Int(n) if n > 0),
        "{cleared:?}"
    );
    assert_eq!(source.source().cached_entries(), 0);

    let explain = source
        .execute(&format!("EXPLAIN {query}"), BTreeMap::new(), &opts())
        .unwrap()
        .0;
    let text = explain.plan_text().unwrap();
    assert!(
        text.contains("Reads graph source `luxembourg-postgres` (PostgreSQL)"),
        "{text}"
    );

    let cold = source
        .execute(&format!("PROFILE {query}"), BTreeMap::new(), &opts())
        .unwrap()
        .0;
    let text = cold.plan_text().unwrap().to_string();
    assert!(text.contains("Source `luxembourg-postgres`: "), "{text}");
    assert!(
        !text.contains(": 0 round trips"),
        "a cold run fetches: {text}"
    );
    let hot = source
        .execute(&format!("PROFILE {query}"), BTreeMap::new(), &opts())
        .unwrap()
        .0;
    let text = hot.plan_text().unwrap().to_string();
    assert!(
        text.contains(": 0 round trips"),
        "a hot run fetches nothing: {text}"
    );

    let counters = rows_on(
        &source,
        "CALL db.source.counters() YIELD roundTrips, hits RETURN roundTrips, hits",
    )
    .unwrap();
    assert!(
        matches!(counters[0][0], Value::Int(n) if n > 0),
        "{counters:?}"
    );
}

#[test]
fn a_label_scan_without_a_key_set_is_a_clear_error() {
    let text = std::fs::read_to_string(examples().join("roads-redis.json")).unwrap();
    let text = text.replace(",\n      \"keys\": \"luxembourg:junctions\"", "");
    assert!(!text.contains("\"keys\""));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-keys.json");
    std::fs::write(&path, text).unwrap();
    let source =
        SourceEngine::new(Source::connect(Mapping::load(&path).unwrap()).unwrap()).unwrap();
    let e = rows_on(&source, "MATCH (j:Junction) RETURN count(*)").unwrap_err();
    assert_eq!(e.kind, ErrorKind::SemanticError, "{e}");
    assert!(e.message.contains("nodes.Junction.keys"), "{e}");
    // Key lookups still work.
    let rows = rows_on(&source, "MATCH (j:Junction {id: 17}) RETURN j.id").unwrap();
    assert_eq!(rows, vec![vec![Value::Int(17)]]);
}

#[test]
fn a_statement_past_its_timeout_fails_clearly() {
    let engine = engine("roads-redis.json");
    // A timeout of a nanosecond: the first round trip is past the deadline.
    let options = QueryOptions {
        timeout: Some(std::time::Duration::from_nanos(1)),
        ..QueryOptions::default()
    };
    let Err(e) = engine.execute(
        "MATCH (j:Junction {id: 17})-[:ROAD]->(k) RETURN k.id",
        BTreeMap::new(),
        &options,
    ) else {
        panic!("ran past its timeout");
    };
    assert_eq!(e.kind, ErrorKind::QueryAborted, "{e}");
}

/// The round trips a `PROFILE` statement cost its source, from the
/// "Source `...`: N round trips" line, and the profile's text.
fn profiled_round_trips(source: &SourceEngine, query: &str) -> (u64, String) {
    let result = source
        .execute(&format!("PROFILE {query}"), BTreeMap::new(), &opts())
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .0;
    let text = result.plan_text().unwrap().to_string();
    let line = text
        .lines()
        .find(|l| l.starts_with("Source `"))
        .unwrap_or_else(|| panic!("no Source line: {text}"));
    let n = line
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no round trips in {line}"));
    (n, text)
}

/// Deeper levels of variable-length expansion, shortestPath's
/// breadth-first levels and counted patterns (`ExpandCount`) fetch a whole
/// level's adjacency lists in one round trip per (type, direction): on a
/// cold cache a statement costs about one round trip per level, not one
/// per node reached, and gives the rows of a native import.
#[test]
fn every_level_of_a_walk_is_one_round_trip() {
    for file in ["roads-postgres.json", "roads-redis.json"] {
        // (statement, operator it must plan, most round trips on a cold cache)
        let cases = [
            // A key lookup, then levels at distance 0..3 of `*1..4`.
            (
                "MATCH (j:Junction {id: 90001})-[:ROAD*1..4]->(k) RETURN count(*) AS paths",
                "VarLengthExpand",
                1 + 4,
            ),
            (
                "MATCH (j:Junction {id: 90001})-[:ROAD*1..6]-(k) RETURN count(*) AS paths",
                "VarLengthExpand",
                // Both directions: two lists per level.
                1 + 2 * 6,
            ),
            // A key lookup, then one level per hop.
            (
                "MATCH (j:Junction {id: 40000})-[:ROAD]->()-[:ROAD]->()-[:ROAD]->()-[:ROAD]->(k) RETURN count(*) AS n",
                "ExpandCount",
                1 + 4,
            ),
        ];
        for (query, operator, most) in cases {
            let source = engine(file);
            let want = rows_native(query);
            let (trips, text) = profiled_round_trips(&source, query);
            eprintln!("{file}: {operator}: {trips} round trips (at most {most})");
            assert!(text.contains(operator), "{file}: {query}: {text}");
            assert!(
                trips <= most,
                "{file}: {query}: {trips} round trips, at most {most} expected: {text}"
            );
            assert_eq!(rows_on(&source, query).unwrap(), want, "{file}: {query}");
        }
        // shortestPath: two key lookups, then one round trip per level of
        // either side of the bidirectional search, i.e. about one per
        // relationship of the path.
        let query = "MATCH (a:Junction {id: 17}), (b:Junction {id: 3101}) \
                     MATCH p = shortestPath((a)-[:ROAD*..40]->(b)) RETURN length(p) AS hops";
        let want = rows_native(query);
        assert_eq!(want.len(), 1, "{query}: {want:?}");
        let Value::Int(hops) = want[0][0] else {
            panic!("{want:?}")
        };
        let source = engine(file);
        let (trips, text) = profiled_round_trips(&source, query);
        eprintln!("{file}: ShortestPath: {trips} round trips for a path of {hops}");
        assert!(text.contains("ShortestPath"), "{text}");
        assert!(
            trips <= 2 + hops as u64,
            "{file}: {trips} round trips for a path of {hops}: {text}"
        );
        assert_eq!(rows_on(&source, query).unwrap(), want, "{file}: {query}");
    }
}

/// `CYPHER prefetch=...` chooses a statement's prefetcher: a lookahead
/// fetches a variable-length walk's neighbourhood in one round trip, and
/// the route procedures follow the statement's prefetcher instead of the
/// mapping's; the rows stay those of a native import.
#[test]
fn a_statement_chooses_its_prefetcher() {
    for file in ["roads-postgres.json", "roads-redis.json"] {
        let walk = "MATCH (j:Junction {id: 90001})-[:ROAD*1..4]->(k) RETURN count(*) AS paths";
        let want = rows_native(walk);
        let (plain, _) = profiled_round_trips(&engine(file), walk);
        let source = engine(file);
        let hinted = format!("CYPHER prefetch=lookahead:4 {walk}");
        let (ahead, text) = profiled_round_trips(&source, &hinted);
        eprintln!("{file}: *1..4: {plain} round trips, {ahead} with prefetch=lookahead:4");
        assert!(
            ahead < plain && ahead <= 2,
            "{file}: {ahead} round trips with a lookahead, {plain} without: {text}"
        );
        assert!(!text.contains("prefetched 0 used"), "{text}");
        assert_eq!(rows_on(&source, walk).unwrap(), want, "{file}");
        assert_eq!(rows_on(&engine(file), &hinted).unwrap(), want, "{file}");

        let route = "MATCH (a:Junction {id: 17}), (b:Junction {id: 3101}) \
                     CALL apoc.algo.dijkstra(a, b, 'ROAD>', 'distance') YIELD weight RETURN weight";
        let want = rows_native(route);
        let mut trips = Vec::new();
        for prefetch in ["none", "lookahead:8"] {
            let query = format!("CYPHER prefetch={prefetch} {route}");
            let source = engine(file);
            let (n, text) = profiled_round_trips(&source, &query);
            trips.push(n);
            assert_eq!(
                rows_on(&engine(file), &query).unwrap(),
                want,
                "{file}: {query}: {text}"
            );
        }
        eprintln!(
            "{file}: dijkstra: {} round trips with prefetch=none, {} with lookahead:8",
            trips[0], trips[1]
        );
        assert!(trips[1] < trips[0], "{file}: {trips:?}");

        let e = rows_on(&source, &format!("CYPHER prefetch=lookahead:99 {walk}")).unwrap_err();
        assert_eq!(e.code, Some("InvalidQueryOption"), "{e}");
        assert!(e.message.contains("from 1 to 16"), "{e}");
    }
}

/// The planner's label counts come from the backend: each node space's
/// key set is counted when the source connects (PostgreSQL `count(*)` over
/// the `keys` query, Redis `ZCARD`), so a label scan is estimated at the
/// network's 114,599 junctions, not at a guess.
#[test]
fn label_scans_are_estimated_from_counted_keys() {
    for source in [postgres(), redis()] {
        let plan = source
            .execute(
                "EXPLAIN MATCH (j:Junction) RETURN j.id",
                BTreeMap::new(),
                &opts(),
            )
            .unwrap()
            .0;
        let text = plan.plan_text().unwrap().to_string();
        let scan = text
            .lines()
            .find(|l| l.contains("Junction") && l.contains("Scan"))
            .unwrap_or_else(|| panic!("no label scan: {text}"));
        assert!(scan.contains("est. 114599 rows"), "{text}");
    }
}

/// Relationship counts come from the backend too: each relationship space
/// is counted when the source connects (PostgreSQL `count(*)` over the
/// `outgoing` query bound to every key, Redis the sum of the lists'
/// `LLEN`), so an expansion from a label scan is estimated at the
/// network's 239,332 roads, not at two per junction.
#[test]
fn expansions_are_estimated_from_counted_relationships() {
    for source in [postgres(), redis()] {
        let plan = source
            .execute(
                "EXPLAIN MATCH (j:Junction)-[r:ROAD]->(k) RETURN r.distance",
                BTreeMap::new(),
                &opts(),
            )
            .unwrap()
            .0;
        let text = plan.plan_text().unwrap().to_string();
        let expand = text
            .lines()
            .find(|l| l.contains("Expand"))
            .unwrap_or_else(|| panic!("no expansion: {text}"));
        assert!(expand.contains("est. 239332 rows"), "{text}");
    }
}

#[test]
fn returned_nodes_are_fetched_a_block_at_a_time_not_one_by_one() {
    use rhizome_storage::GraphRead;
    // The statement never reads the rows of a, b and c; rendering them
    // used to cost a round trip per node.
    let query =
        "MATCH (j:Junction {id: 1})-[:ROAD]->(a)-[:ROAD]->(b)-[:ROAD]->(c) RETURN a, b, [c] AS cs";
    // Sources of its own: the shared ones' counters and cache are used by
    // the tests running beside this one (a clear there, or their round
    // trips, counted here, made this test fail under load).
    let (pg, redis) = (engine("roads-postgres.json"), engine("roads-redis.json"));
    for (name, source) in [("PostgreSQL", &pg), ("Redis", &redis)] {
        rows_on(source, "CALL db.source.clear()").unwrap();
        let before = source.source().counters();
        let (result, snapshot) = source.execute(query, BTreeMap::new(), &opts()).unwrap();
        let ran = source.source().counters().since(&before);
        let before = source.source().counters();
        let mut nodes = std::collections::BTreeSet::new();
        let mut props = Vec::new();
        for row in result.rows.iter() {
            for value in row {
                let id = match value {
                    Value::Node(id) => *id,
                    Value::List(l) => match l[0] {
                        Value::Node(id) => id,
                        ref other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                };
                props.clear();
                snapshot.node_properties(id, &mut props);
                assert_eq!(props.len(), 3, "{name}: node {id}: {props:?}");
                nodes.insert(id);
            }
        }
        let rendering = source.source().counters().since(&before);
        assert!(nodes.len() > 6, "{name}: {nodes:?}");
        assert_eq!(
            rendering.round_trips,
            0,
            "{name}: rendering {} nodes: {}",
            nodes.len(),
            rendering.render()
        );
        // The key lookup, three expansions and the result's rows.
        assert!(ran.round_trips <= 5, "{name}: {}", ran.render());
    }
}
