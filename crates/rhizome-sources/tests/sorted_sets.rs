//! Neighbours kept in Redis sorted sets (`"type": "sorted_set"` in a
//! relationship's Redis fetch) against a real Redis server with the places
//! of `scripts/sources.sh load-places` (run by
//! `scripts/suites/50-sources.sh`): the roads between the places are
//! loaded both as lists and as sorted sets scored by km, and every read —
//! expansions both ways, a lookahead walking the sets server-side —
//! gives the rows of the list mapping; a `type` that is neither kind
//! fails with the mapping key named.

mod common;

use rhizome_common::{ErrorKind, Value};
use rhizome_sources::Mapping;

fn lists_mapping() -> String {
    common::example("places-redis.json")
}

/// The places mapping with the roads read from the sorted sets.
fn sorted_sets_mapping(kind: &str) -> String {
    let text = lists_mapping();
    let text = text.replace(
        r#"{ "key": "places:road:out:{id}","#,
        &format!(r#"{{ "type": "{kind}", "key": "places:road:zout:{{id}}","#),
    );
    let text = text.replace(
        r#"{ "key": "places:road:in:{id}","#,
        &format!(r#"{{ "type": "{kind}", "key": "places:road:zin:{{id}}","#),
    );
    assert_eq!(text.matches("places:road:z").count(), 2, "{text}");
    text
}

fn rows(text: &str, query: &str) -> rhizome_common::Result<Vec<Vec<Value>>> {
    common::rows(&common::engine(text)?, query)
}

#[test]
fn sorted_sets_of_neighbours_read_as_lists_do() {
    let lists = lists_mapping();
    let sets = sorted_sets_mapping("sorted_set");
    for query in [
        "MATCH (a:Place)-[r:ROAD_TO]->(b) RETURN a.id, id(r), r.km, b.id ORDER BY a.id, b.id",
        "MATCH (a:Place)<-[r:ROAD_TO]-(b) RETURN a.id, id(r), r.km, b.id ORDER BY a.id, b.id",
        "CYPHER prefetch=lookahead:3 MATCH (:Place {id: 1})-[:ROAD_TO*1..3]->(b) RETURN b.id, count(*) ORDER BY b.id",
    ] {
        let want = rows(&lists, query).unwrap();
        assert!(!want.is_empty(), "{query}");
        assert_eq!(rows(&sets, query).unwrap(), want, "{query}");
    }
    // The same keys read as lists: Redis refuses (WRONGTYPE), so the rows
    // above came from `ZRANGE`.
    let err = rows(
        &sorted_sets_mapping("list"),
        "MATCH (:Place {id: 1})-[r:ROAD_TO]->() RETURN r.km",
    )
    .unwrap_err();
    assert!(err.to_string().contains("WRONGTYPE"), "{err}");
}

#[test]
fn a_fetch_type_that_is_neither_list_nor_sorted_set_is_a_mapping_error() {
    let err = Mapping::parse(&sorted_sets_mapping("hash")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InputError, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("relationships.ROAD_TO.outgoing.type"),
        "{text}"
    );
    assert!(text.contains("neither `list` nor `sorted_set`"), "{text}");
}
