//! Plans that skip enumerating paths, checked against paths enumerated in
//! plain Rust on small random graphs with self-loops and parallel
//! relationships, with 1 and 2 workers:
//!
//! * duplicate-insensitive aggregates of a pattern's last node
//!   (`count(DISTINCT x)`, `min`, `max`, `collect(DISTINCT …)`), which the
//!   `distinct_endpoints` rule computes one frontier per hop — against depth-
//!   first enumeration without a relationship twice, with the relationships
//!   in the delta and again after a checkpoint;
//! * `shortestPath` / `allShortestPaths` (bidirectional breadth-first
//!   search) — against a one-sided breadth-first search counting shortest
//!   paths.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use std::collections::{BTreeMap, BTreeSet};

/// A relationship: (start id, end id, type).
type Edge = (i64, i64, &'static str);

/// A small deterministic generator (no dependency on a random crate).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// `nodes` nodes `:N {id}` (every third also `:M`), random `R` and `S`
/// relationships, some self-loops and some doubled.
fn random_graph(seed: u64, nodes: i64, rels: usize) -> Vec<Edge> {
    let mut rng = Lcg(seed);
    let mut edges = Vec::new();
    for _ in 0..rels {
        let a = rng.below(nodes as u64) as i64;
        let b = if rng.below(6) == 0 {
            a
        } else {
            rng.below(nodes as u64) as i64
        };
        let t = if rng.below(2) == 0 { "R" } else { "S" };
        edges.push((a, b, t));
        if rng.below(5) == 0 {
            edges.push((a, b, t));
        }
    }
    edges
}

fn engine_with(dir: &std::path::Path, nodes: i64, edges: &[Edge]) -> Engine {
    rhizome_storage::GraphBuilder::new().write(dir).unwrap();
    let engine = Engine::open(dir).unwrap();
    let run = |q: &str, params: BTreeMap<String, Value>| {
        engine
            .execute(q, params, &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    };
    run(
        &format!("UNWIND range(0, {}) AS i CREATE (:N {{id: i}})", nodes - 1),
        BTreeMap::new(),
    );
    run("MATCH (n:N) WHERE n.id % 3 = 0 SET n:M", BTreeMap::new());
    for t in ["R", "S"] {
        let list: Vec<Value> = edges
            .iter()
            .filter(|e| e.2 == t)
            .map(|e| Value::List(vec![Value::Int(e.0), Value::Int(e.1)]))
            .collect();
        run(
            &format!(
                "UNWIND $edges AS e MATCH (a:N {{id: e[0]}}), (b:N {{id: e[1]}}) CREATE (a)-[:{t}]->(b)"
            ),
            BTreeMap::from([("edges".to_string(), Value::List(list))]),
        );
    }
    engine
}

/// One hop of a pattern: direction (`>` out, `<` in, `-` both) and type (`None`: any).
#[derive(Clone, Copy)]
struct Hop(char, Option<&'static str>);

impl Hop {
    fn cypher(self) -> String {
        let t = self.1.map_or(String::new(), |t| format!("[:{t}]"));
        match self.0 {
            '>' => format!("-{t}->"),
            '<' => format!("<-{t}-"),
            _ => format!("-{t}-"),
        }
    }
}

/// The end nodes of every path over `hops` from any of `starts` that uses
/// no relationship twice and ends on a node passing `end_ok`.
fn reference(
    edges: &[Edge],
    starts: &[i64],
    hops: &[Hop],
    end_ok: impl Fn(i64) -> bool,
) -> BTreeSet<i64> {
    fn walk(
        edges: &[Edge],
        at: i64,
        hops: &[Hop],
        used: &mut Vec<usize>,
        out: &mut BTreeSet<i64>,
        end_ok: &dyn Fn(i64) -> bool,
    ) {
        let Some((hop, rest)) = hops.split_first() else {
            if end_ok(at) {
                out.insert(at);
            }
            return;
        };
        for (i, &(a, b, t)) in edges.iter().enumerate() {
            if hop.1.is_some_and(|want| want != t) || used.contains(&i) {
                continue;
            }
            let mut next = Vec::new();
            if matches!(hop.0, '>' | '-') && a == at {
                next.push(b);
            }
            if matches!(hop.0, '<' | '-') && b == at && !(hop.0 == '-' && a == b) {
                next.push(a);
            }
            for n in next {
                used.push(i);
                walk(edges, n, rest, used, out, end_ok);
                used.pop();
            }
        }
    }
    let mut out = BTreeSet::new();
    for &s in starts {
        walk(edges, s, hops, &mut Vec::new(), &mut out, &end_ok);
    }
    out
}

fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::List(items) => {
            let mut out: Vec<i64> = items
                .iter()
                .map(|x| match x {
                    Value::Int(i) => *i,
                    other => panic!("{other:?}"),
                })
                .collect();
            out.sort_unstable();
            out
        }
        other => panic!("{other:?}"),
    }
}

/// Every shape the rule rewrites, with the reference answer per start.
fn shapes() -> Vec<Vec<Hop>> {
    let dirs = ['>', '<', '-'];
    let types = [None, Some("R")];
    let mut out = Vec::new();
    for d1 in dirs {
        for t1 in types {
            out.push(vec![Hop(d1, t1)]);
            for d2 in dirs {
                for t2 in types {
                    out.push(vec![Hop(d1, t1), Hop(d2, t2)]);
                }
            }
        }
    }
    // Three hops whose first and last types differ.
    for d in dirs {
        out.push(vec![Hop('>', Some("R")), Hop(d, None), Hop('<', Some("S"))]);
        out.push(vec![
            Hop('-', Some("S")),
            Hop(d, Some("S")),
            Hop('-', Some("R")),
        ]);
    }
    out
}

fn check(engine: &Engine, edges: &[Edge], nodes: i64, what: &str) {
    let all: Vec<i64> = (0..nodes).collect();
    let (mut queries, mut rewritten) = (0, 0);
    for hops in shapes() {
        let walk: String = hops.iter().map(|h| format!("{}()", h.cypher())).collect();
        let walk = &walk[..walk.len() - 2];
        for (start, starts) in [("(a:N)", all.clone()), ("(a:N {id: 4})", vec![4])] {
            for (end, labelled) in [("(x)", false), ("(x:M)", true)] {
                let query = format!(
                    "MATCH {start}{walk}{end} RETURN count(DISTINCT x) AS n, min(x.id) AS lo, \
                     max(x.id) AS hi, collect(DISTINCT x.id) AS ids"
                );
                // The planner may also start from the end node (a labelled
                // one, a short pattern); then there is nothing to rewrite.
                let plan = engine.explain(&query, &BTreeMap::new()).unwrap();
                queries += 1;
                rewritten += usize::from(plan.contains("DistinctEndpoints"));
                let expected = reference(edges, &starts, &hops, |n| !labelled || n % 3 == 0);
                for threads in [1, 2] {
                    let options = QueryOptions {
                        threads: Some(threads),
                        ..QueryOptions::default()
                    };
                    let rows = engine
                        .execute(&query, BTreeMap::new(), &options)
                        .unwrap()
                        .rows;
                    let row = &rows[0];
                    let got = ints(&row[3]);
                    let want: Vec<i64> = expected.iter().copied().collect();
                    assert_eq!(got, want, "{what}, {threads} workers: {query}");
                    assert_eq!(row[0], Value::Int(want.len() as i64), "{query}");
                    let lo = want.first().map_or(Value::Null, |v| Value::Int(*v));
                    let hi = want.last().map_or(Value::Null, |v| Value::Int(*v));
                    assert_eq!((&row[1], &row[2]), (&lo, &hi), "{query}");
                }
            }
        }
    }
    assert!(
        rewritten * 2 >= queries,
        "{what}: {rewritten} of {queries} rewritten"
    );
}

#[test]
fn distinct_end_nodes_equal_those_of_enumerated_paths() {
    for (seed, nodes, rels) in [(2, 12, 30), (3, 5, 12)] {
        let dir = tempfile::tempdir().unwrap();
        let edges = random_graph(seed, nodes, rels);
        let engine = engine_with(&dir.path().join("db"), nodes, &edges);
        check(&engine, &edges, nodes, &format!("seed {seed}, delta"));
        engine.database().checkpoint().unwrap();
        check(
            &engine,
            &edges,
            nodes,
            &format!("seed {seed}, checkpointed"),
        );
    }
}

#[test]
fn a_self_loop_is_not_walked_twice() {
    // One node with one loop: (a)-->(b)-->(c) has no path, so no endpoint.
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(&dir.path().join("db"), 1, &[(0, 0, "R")]);
    let run = |q: &str| {
        engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap()
            .rows
    };
    assert_eq!(
        run("MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)"),
        vec![vec![Value::Int(0)]]
    );
    assert_eq!(
        run("MATCH (a)-->(b) RETURN count(DISTINCT b)"),
        vec![vec![Value::Int(1)]]
    );
    // Two loops: each path takes one, then the other.
    engine
        .execute(
            "MATCH (a:N) CREATE (a)-[:R]->(a)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(
        run("MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)"),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        run("MATCH (a)-->(b)-->(c)-->(d) RETURN count(DISTINCT d)"),
        vec![vec![Value::Int(0)]]
    );
}

/// Length and number of shortest paths from `a` to `b` (`a != b`) over
/// relationships of any type in any direction, by breadth-first search
/// from `a` counting the paths into each node.
fn shortest_reference(edges: &[Edge], nodes: i64, a: i64, b: i64) -> Option<(usize, u64)> {
    let mut depth = vec![usize::MAX; nodes as usize];
    let mut paths = vec![0u64; nodes as usize];
    depth[a as usize] = 0;
    paths[a as usize] = 1;
    let mut frontier = vec![a];
    let mut level = 0;
    while !frontier.is_empty() && depth[b as usize] == usize::MAX {
        level += 1;
        let mut next = Vec::new();
        for &n in &frontier {
            for &(s, t, _) in edges {
                // A self-loop never leads anywhere new.
                let m = if s == n {
                    t
                } else if t == n {
                    s
                } else {
                    continue;
                };
                if depth[m as usize] == usize::MAX {
                    depth[m as usize] = level;
                    next.push(m);
                }
                if depth[m as usize] == level {
                    paths[m as usize] += paths[n as usize];
                }
            }
        }
        frontier = next;
    }
    (depth[b as usize] != usize::MAX).then(|| (depth[b as usize], paths[b as usize]))
}

#[test]
fn bidirectional_shortest_paths_equal_breadth_first_ones() {
    for (seed, nodes, rels) in [(5, 14, 20), (6, 25, 40), (7, 9, 30)] {
        let dir = tempfile::tempdir().unwrap();
        let edges = random_graph(seed, nodes, rels);
        let engine = engine_with(&dir.path().join("db"), nodes, &edges);
        for a in 0..nodes.min(6) {
            for b in 0..nodes {
                if a == b {
                    continue;
                }
                let expected = shortest_reference(&edges, nodes, a, b);
                let query = format!(
                    "MATCH (a:N {{id: {a}}}), (b:N {{id: {b}}}) \
                     OPTIONAL MATCH p = allShortestPaths((a)-[*]-(b)) \
                     WITH a, b, collect(p) AS paths \
                     OPTIONAL MATCH q = shortestPath((a)-[*]-(b)) \
                     RETURN size(paths) AS n, [x IN paths | length(x)] AS lengths, length(q) AS one"
                );
                for threads in [1, 2] {
                    let options = QueryOptions {
                        threads: Some(threads),
                        ..QueryOptions::default()
                    };
                    let rows = engine
                        .execute(&query, BTreeMap::new(), &options)
                        .unwrap_or_else(|e| panic!("{query}: {e}"))
                        .rows;
                    let row = &rows[0];
                    match expected {
                        None => {
                            assert_eq!(row[0], Value::Int(0), "{seed} {a}->{b}");
                            assert_eq!(row[2], Value::Null, "{seed} {a}->{b}");
                        }
                        Some((len, count)) => {
                            assert_eq!(row[0], Value::Int(count as i64), "{seed} {a}->{b}");
                            let lengths = ints(&row[1]);
                            assert!(lengths.iter().all(|l| *l == len as i64), "{seed} {a}->{b}");
                            assert_eq!(row[2], Value::Int(len as i64), "{seed} {a}->{b}");
                        }
                    }
                }
            }
        }
    }
}
