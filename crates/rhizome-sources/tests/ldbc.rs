//! The LDBC SNB Interactive reads over the small LDBC set (`ldbc-tiny`)
//! in three copies: a native import, PostgreSQL and Redis (loaded by
//! `scripts/sources.sh load-ldbc`, mapped by `examples/sources/ldbc-*.json`;
//! run by `scripts/suites/50-sources.sh`). Every read must give the same
//! rows on all three, or — for the reads listed in [`UNSUPPORTED`] (and in
//! docs/sources.md) — fail over both sources with the error given there.

use rhizome_bench::ldbc::{ldbc_parameters, ldbc_query_text, LdbcQuery, Params};
use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use rhizome_import::LdbcLayout;
use rhizome_sources::{Source, SourceEngine};
use std::time::Instant;

/// Parameter sets per read.
const SETS: usize = 3;

/// Reads that cannot run over a source, with (part of) their error.
const UNSUPPORTED: &[(LdbcQuery, &str)] = &[];

/// Reads whose lists come from `collect()` without an order (IC12's tag
/// names): their lists are compared sorted, since a native import and a
/// source list a node's relationships in different orders.
const UNORDERED_LISTS: &[LdbcQuery] = &[LdbcQuery::Ic12];

fn sort_lists(rows: &mut [Vec<Value>]) {
    for row in rows {
        for value in row {
            if let Value::List(items) = value {
                items.sort_by_key(|v| format!("{v:?}"));
            }
        }
    }
}

mod common;

use common::mapping;

fn source(file: &str) -> SourceEngine {
    SourceEngine::new(Source::connect(mapping(file)).unwrap()).unwrap()
}

fn opts() -> QueryOptions {
    common::options(120)
}

fn native_rows(engine: &Engine, query: &str, params: &Params) -> Vec<Vec<Value>> {
    engine
        .execute(query, params.clone(), &opts())
        .unwrap_or_else(|e| panic!("native: {query}: {e}"))
        .rows
        .to_vecs()
}

fn source_rows(
    engine: &SourceEngine,
    query: &str,
    params: &Params,
) -> rhizome_common::Result<Vec<Vec<Value>>> {
    Ok(engine
        .execute(query, params.clone(), &opts())?
        .0
        .rows
        .to_vecs())
}

/// Statements beyond the LDBC reads that exercise what the LDBC mapping
/// needs: a label over several node spaces, a type over several
/// relationship spaces, relationships without keys and their properties.
const EXTRA: &[&str] = &[
    "MATCH (m:Message) RETURN count(*) AS n, min(m.id), max(m.id)",
    "MATCH (p:Place) RETURN count(*) AS n",
    "MATCH (o:Organisation) WHERE o.name STARTS WITH 'A' RETURN o.name, labels(o) AS l ORDER BY o.name LIMIT 5",
    "MATCH (c:Country)-[:IS_PART_OF]->(k:Continent) RETURN k.name, count(c) AS n ORDER BY k.name",
    "MATCH (p:Person)-[k:KNOWS]->(q:Person) RETURN count(k) AS n, count(DISTINCT k) AS d, sum(k.creationDate) % 1000003 AS s",
    "MATCH (p:Person)-[l:LIKES]->(m:Message) RETURN labels(m) AS l, count(*) AS n, max(l.creationDate) AS last ORDER BY l",
    "MATCH (p:Person)-[w:WORK_AT|STUDY_AT]->(o) RETURN type(w) AS t, count(*) AS n, min(coalesce(w.workFrom, w.classYear)) AS y ORDER BY t",
    "MATCH (f:Forum)-[m:HAS_MEMBER]->(p:Person) WITH f, count(p) AS members, max(m.creationDate) AS last RETURN f.id, members, last ORDER BY members DESC, f.id LIMIT 5",
    "MATCH (x)-[:IS_LOCATED_IN]->(pl:Place) RETURN labels(x)[0] AS l, labels(pl) AS pls, count(*) AS n ORDER BY l, n",
    "MATCH (p:Person)-[k1:KNOWS]-(q:Person)-[k2:KNOWS]-(r:Person) WHERE p.id < 5000000000000 RETURN count(*) AS n",
    "MATCH (:Person)-[:KNOWS]-()-[:KNOWS]-(q) RETURN count(DISTINCT q) AS n",
    "MATCH (:Person)<-[:HAS_CREATOR]-(m)-[:IS_LOCATED_IN]->(c) RETURN count(DISTINCT m) AS m, count(DISTINCT c) AS c",
    "MATCH (c:Comment)-[:REPLY_OF*1..]->(p:Post) RETURN count(*) AS n, count(DISTINCT p) AS posts",
    "MATCH (p:Person) RETURN p.id, p.speaks, p.email ORDER BY p.id LIMIT 3",
];

/// Parameter sets whose answers are not empty where the generated ones
/// are: IC3 with two countries a contact of the person posted from (over
/// the whole date range), IS7 on messages that have replies.
fn more_sets(native: &Engine, params: &mut std::collections::BTreeMap<LdbcQuery, Vec<Params>>) {
    let persons: Vec<Value> = params[&LdbcQuery::Ic3]
        .iter()
        .map(|set| set["personId"].clone())
        .collect();
    for person in persons {
        let set: Params = [("personId".to_string(), person)].into();
        let countries = native_rows(
            native,
            "MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(contact:Person) WHERE contact <> start \
             WITH DISTINCT contact \
             MATCH (contact)-[:IS_LOCATED_IN]->(:City)-[:IS_PART_OF]->(home:Country) \
             MATCH (contact)<-[:HAS_CREATOR]-(:Message)-[:IS_LOCATED_IN]->(c:Country) WHERE c <> home \
             WITH contact, c.name AS country, count(*) AS n ORDER BY contact.id, n DESC, country \
             WITH contact, collect(country) AS cs WHERE size(cs) >= 2 \
             RETURN cs[0], cs[1] ORDER BY contact.id LIMIT 1",
            &set,
        );
        let Some(row) = countries.first() else {
            continue;
        };
        let mut set = set;
        set.insert("countryXName".into(), row[0].clone());
        set.insert("countryYName".into(), row[1].clone());
        set.insert("startDate".into(), Value::Int(0));
        set.insert("endDate".into(), Value::Int(4_000_000_000_000));
        params.entry(LdbcQuery::Ic3).or_default().push(set);
    }
    let replied = native_rows(
        native,
        "MATCH (m:Message)<-[:REPLY_OF]-(:Comment) WITH m, count(*) AS n WHERE n > 1 \
         RETURN m.id ORDER BY m.id LIMIT 3",
        &Params::new(),
    );
    for row in replied {
        let set: Params = [("messageId".to_string(), row[0].clone())].into();
        params.entry(LdbcQuery::Is7).or_default().push(set);
    }
}

#[test]
fn ldbc_reads_give_the_same_rows_over_native_postgres_and_redis() {
    let started = Instant::now();
    let dataset = rhizome_import::bench::find_datasets_dir()
        .expect("shared/datasets not found")
        .join("ldbc-tiny");
    let tmp = tempfile::tempdir().unwrap();
    let native =
        rhizome_bench::ldbc::import_ldbc(&tmp.path().join("tiny"), &dataset, LdbcLayout::Tiny)
            .unwrap();
    let mut params = ldbc_parameters(&native, SETS).unwrap();
    more_sets(&native, &mut params);
    let sources = [
        ("PostgreSQL", source("ldbc-postgres.json")),
        ("Redis", source("ldbc-redis.json")),
    ];
    eprintln!(
        "native import and connections: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for query in EXTRA {
        let want = native_rows(&native, query, &Params::new());
        assert!(!want.is_empty(), "{query}");
        for (name, engine) in &sources {
            let got = source_rows(engine, query, &Params::new())
                .unwrap_or_else(|e| panic!("{name}: {query}: {e}"));
            assert_eq!(got, want, "{name}: {query}");
        }
    }
    let mut same = Vec::new();
    for q in LdbcQuery::ALL {
        let text = ldbc_query_text(q);
        let unsupported = UNSUPPORTED.iter().find(|(u, _)| *u == q);
        let timer = Instant::now();
        let mut rows = 0;
        for set in params.get(&q).map(Vec::as_slice).unwrap_or(&[]) {
            let unordered = UNORDERED_LISTS.contains(&q);
            let mut want = native_rows(&native, text, set);
            if unordered {
                sort_lists(&mut want);
            }
            rows += want.len();
            for (name, engine) in &sources {
                match (source_rows(engine, text, set), unsupported) {
                    (Ok(mut got), None) => {
                        if unordered {
                            sort_lists(&mut got);
                        }
                        assert_eq!(got, want, "{name}: {} with {set:?}", q.name())
                    }
                    (Err(e), Some((_, message))) => assert!(
                        e.message.contains(message),
                        "{name}: {}: {e}",
                        q.name()
                    ),
                    (Ok(_), Some(_)) => panic!(
                        "{name}: {} runs over sources now: take it off UNSUPPORTED and docs/sources.md",
                        q.name()
                    ),
                    (Err(e), None) => panic!("{name}: {} with {set:?}: {e}", q.name()),
                }
            }
        }
        if unsupported.is_none() {
            same.push(format!(
                "{} ({rows} rows, {:.1} s)",
                q.name(),
                timer.elapsed().as_secs_f64()
            ));
        }
    }
    eprintln!(
        "same rows over native, PostgreSQL and Redis ({SETS} parameter sets): {}; in {:.1} s",
        same.join(", "),
        started.elapsed().as_secs_f64()
    );
}
