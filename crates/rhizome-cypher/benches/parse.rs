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

/// CPU time used by this process (user + system), from `/proc/self/stat`
/// (Linux); `None` elsewhere. Reported beside wall time because benchmark
/// machines are often shared: CPU time is what the parser itself costs.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // Clock ticks are 100 Hz on Linux.
    Some(Duration::from_millis((utime + stime) * 10))
}

/// Runs `f` repeatedly for at least `min`; returns iterations, wall time and
/// CPU time (wall time if CPU time is unavailable).
fn measure(min: Duration, mut f: impl FnMut()) -> (u64, Duration, Duration) {
    let cpu0 = cpu_time();
    let start = Instant::now();
    let mut iterations = 0u64;
    while start.elapsed() < min {
        f();
        iterations += 1;
    }
    let wall = start.elapsed();
    let cpu = match (cpu0, cpu_time()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => wall,
    };
    (iterations, wall, cpu)
}

fn report_rate(label: &str, bytes: usize, n: u64, wall: Duration, cpu: Duration) {
    let total = bytes as f64 * n as f64;
    println!(
        "{label:<17}{:8.1} MB/s wall  {:8.1} MB/s CPU",
        total / wall.as_secs_f64() / 1e6,
        total / cpu.as_secs_f64() / 1e6
    );
}

fn report_queries(label: &str, count: usize, n: u64, wall: Duration, cpu: Duration) {
    let per_wall = wall.as_secs_f64() / (n as f64 * count as f64);
    let per_cpu = cpu.as_secs_f64() / (n as f64 * count as f64);
    println!(
        "  {label:<16}{:9.0} queries/s {:7.2} µs/query wall   {:9.0} queries/s {:7.2} µs/query CPU",
        1.0 / per_wall,
        per_wall * 1e6,
        1.0 / per_cpu,
        per_cpu * 1e6
    );
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
    let (n, w, c) = measure(budget, || {
        for q in &queries {
            let _ = black_box(rhizome_cypher::lexer::tokenize(black_box(q)));
        }
    });
    report_rate("lex:", bytes, n, w, c);
    let (n, w, c) = measure(budget, || {
        for q in &queries {
            let _ = black_box(parse(black_box(q)));
        }
    });
    report_rate("parse:", bytes, n, w, c);
    let (n, w, c) = measure(budget, || {
        for q in &queries {
            let _ = black_box(compile(black_box(q)));
        }
    });
    report_rate("parse + analyze:", bytes, n, w, c);

    println!("typical short queries ({}):", SHORT.len());
    let (n, w, c) = measure(budget, || {
        for q in SHORT {
            let _ = black_box(parse(black_box(q)).expect("parses"));
        }
    });
    report_queries("parse:", SHORT.len(), n, w, c);
    let (n, w, c) = measure(budget, || {
        for q in SHORT {
            let _ = black_box(compile(black_box(q)).expect("compiles"));
        }
    });
    report_queries("parse + analyze:", SHORT.len(), n, w, c);
}
