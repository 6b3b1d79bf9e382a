//! `PROFILE` over a source reports what the statement cost it, per
//! counter, against real PostgreSQL and Redis servers with the places of
//! `scripts/sources.sh load-places` (run by `scripts/suites/50-sources.sh`):
//! a graph small enough that every counter's value is known. Each
//! statement runs cold (a new source: an empty cache), then hot, then
//! with a lookahead prefetcher whose entries are partly used; the line
//! "Source `…`: N round trips, R rows, B bytes, cache H hits / M misses,
//! prefetched U used / W wasted, T ms waiting on the backend" must carry
//! the values below, so a counter that stops counting fails here.

mod common;

use common::example;
use rhizome_sources::{Mapping, Source, SourceEngine};
use std::collections::BTreeMap;

/// The numbers of one PROFILE "Source" line.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Line {
    round_trips: u64,
    rows: u64,
    bytes: u64,
    hits: u64,
    misses: u64,
    used: u64,
    wasted: u64,
    waiting_ms: f64,
}

impl Line {
    /// Every counter but the time, which is only known to be zero or not.
    fn counts(&self) -> [u64; 7] {
        [
            self.round_trips,
            self.rows,
            self.bytes,
            self.hits,
            self.misses,
            self.used,
            self.wasted,
        ]
    }
}

/// Runs `PROFILE query` and reads its "Source `name`: …" line.
fn profile(engine: &SourceEngine, name: &str, query: &str) -> Line {
    let options = common::options(60);
    let statement = match query.strip_prefix("CYPHER ") {
        Some(rest) => {
            let (option, body) = rest.split_once(' ').unwrap();
            format!("CYPHER {option} PROFILE {body}")
        }
        None => format!("PROFILE {query}"),
    };
    let result = engine
        .execute(&statement, BTreeMap::new(), &options)
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
        .0;
    let text = result.plan_text().unwrap().to_string();
    let prefix = format!("Source `{name}`: ");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no Source line in {text}"));
    // "3 round trips, 5 rows, 136 bytes, cache 0 hits / 4 misses,
    // prefetched 0 used / 0 wasted, 150.8 ms waiting on the backend"
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty() && *s != ".")
        .map(|s| s.parse().unwrap_or_else(|_| panic!("{s} in {line}")))
        .collect();
    assert_eq!(numbers.len(), 8, "{line}");
    let n = |i: usize| numbers[i] as u64;
    Line {
        round_trips: n(0),
        rows: n(1),
        bytes: n(2),
        hits: n(3),
        misses: n(4),
        used: n(5),
        wasted: n(6),
        waiting_ms: numbers[7],
    }
}

/// Node 1's roads (to 2, 3 and 5) and their ends' names: a key lookup
/// (node 1's row), one adjacency list (3 roads) and three rows.
const ROADS_OF_1: &str =
    "MATCH (p:Place {id: 1})-[r:ROAD_TO]->(q) RETURN q.name, r.km ORDER BY r.km";

/// Two steps from node 1 over ROAD_TO: 1 -> 2 -> 3, 1 -> 3 -> 4.
const TWO_STEPS: &str =
    "MATCH (p:Place {id: 1})-[:ROAD_TO]->()-[:ROAD_TO]->(x) RETURN x.name ORDER BY x.name";

#[test]
fn profile_reports_every_counter_of_a_statement() {
    // Bytes are decoded sizes: 8 an integer or list, a string's length,
    // 1 a null; an adjacency row 24 more in PostgreSQL, a Redis list
    // element its text's length ("2:1:20").
    // (file, source name, bytes cold, bytes with the lookahead)
    for (file, name, cold_bytes, ahead_bytes) in [
        ("places-postgres.json", "places-postgres", 196, 310),
        ("places-redis.json", "places-redis", 118, 180),
    ] {
        let engine =
            SourceEngine::new(Source::connect(Mapping::parse(&example(file)).unwrap()).unwrap())
                .unwrap();
        let source = engine.source().clone();
        // Cold: node 1's row, node 1's list (3 roads), the rows of 2, 3
        // and 5: three round trips, 7 rows, 5 lookups that miss.
        let cold = profile(&engine, name, ROADS_OF_1);
        assert_eq!(
            cold.counts(),
            [3, 7, cold_bytes, 0, 5, 0, 0],
            "{file} cold: {cold:?}"
        );
        assert!(cold.waiting_ms > 0.0, "{file} cold: {cold:?}");
        // Hot: the same 5 lookups hit, nothing is fetched or waited for.
        let hot = profile(&engine, name, ROADS_OF_1);
        assert_eq!(hot.counts(), [0, 0, 0, 5, 0, 0, 0], "{file} hot: {hot:?}");
        assert_eq!(hot.waiting_ms, 0.0, "{file} hot: {hot:?}");
        // The source's own counters are the sum of what PROFILE reported.
        let total = source.counters();
        assert_eq!(
            (
                total.round_trips,
                total.rows,
                total.bytes,
                total.hits,
                total.misses
            ),
            (3, 7, cold_bytes, 5, 5),
            "{file}: {}",
            total.render()
        );

        // Cold with a lookahead of 2: node 1's row (1 round trip), then
        // its list misses and one round trip brings the lists of the
        // nodes fewer than 2 steps away (1 -> 2, 3, 5; 2 -> 3; 3 -> 4;
        // 5 has none: 5 rows) and the rows of those up to 2 steps away
        // (1, 2, 3, 4, 5). The rows of 2, 3 and 5 are then prefetched
        // entries used (3 hits); the lists of 2, 3, 5 and the row of 4
        // are prefetched and not used by this statement (4 wasted).
        source.clear_cache();
        let ahead = profile(
            &engine,
            name,
            &format!("CYPHER prefetch=lookahead:2 {ROADS_OF_1}"),
        );
        assert_eq!(
            ahead.counts(),
            [2, 11, ahead_bytes, 3, 2, 3, 4],
            "{file} lookahead: {ahead:?}"
        );
        assert!(ahead.waiting_ms > 0.0, "{file} lookahead: {ahead:?}");
        // Two steps from node 1 then needs no round trip: node 1, its
        // list, the lists of 2, 3 and 5 and the rows of 3 and 4 hit; four
        // of them (the lists of 2, 3, 5 and the row of 4) are prefetched
        // entries used for the first time.
        let next = profile(&engine, name, TWO_STEPS);
        assert_eq!(
            next.counts(),
            [0, 0, 0, 7, 0, 4, 0],
            "{file} two steps: {next:?}"
        );
        assert_eq!(next.waiting_ms, 0.0, "{file} two steps: {next:?}");
    }
}
