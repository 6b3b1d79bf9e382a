//! Parse-speed benchmark (plain `std::time`, `harness = false`).
//!
//! Prints MB/s of query text over every TCK query (parse only and
//! parse + analyse) and, for a set of typical short queries, queries/s and
//! µs/query. Run with `cargo bench -p rhizome-cypher --bench parse`.

use rhizome_cypher::{compile, parse};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const SHORT: &[&str] = &[
    "MATCH (n:Person {name: $name}) RETURN n",
    "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE a.age > 30 RETURN b.name ORDER BY b.name LIMIT 10",
    "MATCH (n) RETURN count(*)",
    "CREATE (a:Person {name: 'Alice', age: 42})-[:KNOWS {since: 2020}]->(b:Person {name: 'Bob'})",
    "MATCH (p:Person) WITH p, size([(p)-[:KNOWS]->(f) | f]) AS friends WHERE friends > 3 RETURN p.name, friends",
    "UNWIND range(1, 100) AS i MERGE (n:Node {id: i}) ON CREATE SET n.created = timestamp()",
    "MATCH p = shortestPath((a:City {name: 'A'})-[:ROAD*..10]-(b:City {name: 'B'})) RETURN length(p), nodes(p)",
    "MATCH (n:Person) WHERE n.name STARTS WITH 'A' AND n.age IN [20, 30, 40] RETURN n.name AS name, n.age AS age",
];

fn tck_queries() -> Vec<String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::canonicalize(&manifest).unwrap_or(manifest);
    let dir = std::env::var("RHIZOME_TCK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| manifest.join("../../../shared/tck"));
    let features = rhizome_tck::load_features(&dir.join("features")).expect("load TCK");
    let mut out = Vec::new();
    for f in features {
        for s in f.scenarios {
            for step in s.steps {
                if let Some(d) = step.doc_string {
                    if step.text.contains("execut") {
                        out.push(d);
                    }
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Runs `f` repeatedly for at least `min` and returns iterations and elapsed time.
fn measure(min: Duration, mut f: impl FnMut()) -> (u64, Duration) {
    let start = Instant::now();
    let mut iterations = 0u64;
    while start.elapsed() < min {
        f();
        iterations += 1;
    }
    (iterations, start.elapsed())
}

fn main() {
    let queries = tck_queries();
    let bytes: usize = queries.iter().map(|q| q.len()).sum();
    let budget = Duration::from_secs(2);
    println!(
        "TCK corpus: {} distinct queries, {} bytes",
        queries.len(),
        bytes
    );
    let (n, t) = measure(budget, || {
        for q in &queries {
            let _ = black_box(rhizome_cypher::lexer::tokenize(black_box(q)));
        }
    });
    println!(
        "lex:              {:8.1} MB/s",
        (bytes as f64 * n as f64) / t.as_secs_f64() / 1e6
    );
    let (n, t) = measure(budget, || {
        for q in &queries {
            let _ = black_box(parse(black_box(q)));
        }
    });
    println!(
        "parse:            {:8.1} MB/s",
        (bytes as f64 * n as f64) / t.as_secs_f64() / 1e6
    );
    let (n, t) = measure(budget, || {
        for q in &queries {
            let _ = black_box(compile(black_box(q)));
        }
    });
    println!(
        "parse + analyze:  {:8.1} MB/s",
        (bytes as f64 * n as f64) / t.as_secs_f64() / 1e6
    );

    println!("typical short queries ({}):", SHORT.len());
    let (n, t) = measure(budget, || {
        for q in SHORT {
            let _ = black_box(parse(black_box(q)).expect("parses"));
        }
    });
    let per = t.as_secs_f64() / (n as f64 * SHORT.len() as f64);
    println!(
        "  parse:           {:10.0} queries/s  {:6.2} µs/query",
        1.0 / per,
        per * 1e6
    );
    let (n, t) = measure(budget, || {
        for q in SHORT {
            let _ = black_box(compile(black_box(q)).expect("compiles"));
        }
    });
    let per = t.as_secs_f64() / (n as f64 * SHORT.len() as f64);
    println!(
        "  parse + analyze: {:10.0} queries/s  {:6.2} µs/query",
        1.0 / per,
        per * 1e6
    );
}
