//! `all(x IN nodes(path)[k..] WHERE …)` tested per hop inside the
//! variable-length expansion (`path_predicate_into_expand`) gives the same
//! paths as the filter over whole paths. The same query with the slice start
//! as a parameter (`[$k..]`, which the rule leaves alone) is the reference;
//! EXPLAIN shows which of the two was rewritten. Small random graphs with
//! self-loops, parallel relationships and undirected walks, so paths
//! repeat nodes; 1 and 2 workers.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions, Rows};
use std::collections::BTreeMap;

mod common;

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

/// `nodes` nodes `:N {id, ok}` (`ok` false for every fourth, null for one
/// in seven), each of two in three with a `U` relationship to an `:L`
/// node, and `rels` random `R`/`S` relationships with a weight `w`.
fn random_engine(dir: &std::path::Path, seed: u64, nodes: i64, rels: usize) -> Engine {
    let engine = common::empty_engine(dir);
    let run = |q: &str, params: BTreeMap<String, Value>| {
        engine
            .execute(q, params, &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    };
    run(
        &format!(
            "UNWIND range(0, {}) AS i CREATE (n:N {{id: i, ok: CASE WHEN i % 7 = 3 THEN null \
             ELSE i % 4 <> 1 END}}) WITH n, i WHERE i % 3 <> 2 CREATE (n)-[:U]->(:L)",
            nodes - 1
        ),
        BTreeMap::new(),
    );
    let mut rng = Lcg(seed);
    let mut edges = Vec::new();
    for i in 0..rels {
        let a = rng.below(nodes as u64) as i64;
        let b = if rng.below(6) == 0 {
            a
        } else {
            rng.below(nodes as u64) as i64
        };
        let t = if rng.below(3) == 0 { "S" } else { "R" };
        let copies = if rng.below(5) == 0 { 2 } else { 1 };
        for _ in 0..copies {
            edges.push(Value::List(vec![
                Value::Int(a),
                Value::Int(b),
                Value::String(t.into()),
                Value::Int(i as i64 % 3),
            ]));
        }
    }
    run(
        "UNWIND $edges AS e MATCH (a:N {id: e[0]}), (b:N {id: e[1]}) \
         FOREACH (_ IN CASE WHEN e[2] = 'R' THEN [1] ELSE [] END | CREATE (a)-[:R {w: e[3]}]->(b)) \
         FOREACH (_ IN CASE WHEN e[2] = 'S' THEN [1] ELSE [] END | CREATE (a)-[:S {w: e[3]}]->(b))",
        BTreeMap::from([("edges".to_string(), Value::List(edges))]),
    );
    engine
}

/// The rows of `query`, sorted, at `threads` workers.
fn sorted_rows(
    engine: &Engine,
    query: &str,
    params: &BTreeMap<String, Value>,
    threads: usize,
) -> Vec<String> {
    let options = QueryOptions {
        threads: Some(threads),
        ..QueryOptions::default()
    };
    let mut rows: Vec<String> = engine
        .execute(query, params.clone(), &options)
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    rows.sort();
    rows
}

/// Queries with `K` where the slice start goes: each is run with a literal
/// (rewritten) and with `$k` (the reference).
const SHAPES: &[&str] = &[
    "MATCH path = (a:N {id: $s})-[:R*1..4]-(b) WHERE all(x IN nodes(path)[K..] WHERE x.ok) \
     RETURN [n IN nodes(path) | n.id] AS ns",
    "MATCH path = (a:N {id: $s})-[*0..3]->(b:N) WHERE all(x IN nodes(path)[K..] WHERE x.ok) \
     RETURN [n IN nodes(path) | n.id] AS ns, b.id",
    "MATCH path = (a:N {id: $s})-[:R|S*3]-(b) \
     WHERE all(x IN nodes(path)[K..] WHERE EXISTS { (x)-[:U]->(:L) }) AND b.id <> a.id \
     RETURN DISTINCT b.id",
    "MATCH path = (a:N {id: $s})-[*1..3]-(b) \
     WHERE all(r IN relationships(path)[K..] WHERE r.w > 0) AND all(x IN nodes(path)[K..] WHERE x.ok) \
     RETURN [r IN relationships(path) | r.w] AS ws, b.id",
];

#[test]
fn per_hop_node_predicates_keep_the_paths_of_the_whole_path_filter() {
    let (mut compared, mut nonempty) = (0, 0);
    for seed in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let engine = random_engine(dir.path(), seed, 14, 30);
        for shape in SHAPES {
            for k in [0i64, 1, 2] {
                // relationships(path)[k..] is rewritten only from 0.
                if shape.contains("relationships(path)[K..]") && k > 0 {
                    continue;
                }
                let literal = shape.replace("[K..]", &format!("[{k}..]"));
                let reference = shape.replace("[K..]", "[$k..]");
                let plan = engine.explain(&literal, &BTreeMap::new()).unwrap();
                assert!(
                    plan.contains("per hop: all("),
                    "not rewritten:\n{literal}\n{plan}"
                );
                let plan = engine.explain(&reference, &BTreeMap::new()).unwrap();
                assert!(!plan.contains("per hop"), "reference rewritten:\n{plan}");
                for s in [0i64, 2, 5, 9] {
                    let params = BTreeMap::from([
                        ("s".to_string(), Value::Int(s)),
                        ("k".to_string(), Value::Int(k)),
                    ]);
                    let want = sorted_rows(&engine, &reference, &params, 1);
                    for threads in [1, 2] {
                        let got = sorted_rows(&engine, &literal, &params, threads);
                        assert_eq!(
                            got, want,
                            "seed {seed}, s {s}, {threads} workers: {literal}"
                        );
                    }
                    compared += 1;
                    nonempty += usize::from(!want.is_empty());
                }
            }
        }
    }
    // The graphs must give the comparison something to compare.
    assert!(
        nonempty * 2 > compared,
        "{nonempty} of {compared} answers non-empty"
    );
}

#[test]
fn a_failing_start_node_yields_no_path_only_when_the_slice_includes_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 4, 14, 30);
    // Node 1 has ok = false: [0..] includes it, [1..] does not.
    let count = |k: i64| {
        let q = format!(
            "MATCH path = (a:N {{id: 1}})-[*0..2]-(b) WHERE all(x IN nodes(path)[{k}..] WHERE x.ok <> false) \
             RETURN count(*) AS n"
        );
        engine
            .execute(&q, BTreeMap::new(), &QueryOptions::default())
            .unwrap()
            .rows[0][0]
            .clone()
    };
    assert_eq!(count(0), Value::Int(0));
    assert_ne!(count(1), Value::Int(0));
}

/// The scheduling hints under which every query must give the same rows.
const HINTS: &[&str] = &[
    "CYPHER scheduling=off ",
    "CYPHER scheduling=dfs ",
    "CYPHER scheduling=bfs ",
    "CYPHER scheduling=fifo ",
    "CYPHER scheduling=dfs max_si=3 ",
    "CYPHER scheduling=bfs max_si=5 ",
    "CYPHER scheduling=fifo max_si=64 ",
];

#[test]
fn every_scope_policy_gives_the_same_rows() {
    let queries = [
        // Many input rows (instances), trails that repeat nodes.
        "MATCH (a:N)-[rs:R*1..3]-(b) RETURN a.id, b.id, [r IN rs | r.w] AS ws",
        "MATCH (a:N)-[*0..2]->(b:N) WHERE a.id % 2 = 0 RETURN a.id, b.id",
        // Into (both ends bound), with a relationship predicate.
        "MATCH (a:N), (b:N) WHERE a.id < 4 AND b.id > 9 \
         MATCH (a)-[rs*2..3 {w: 1}]-(b) RETURN a.id, b.id, size(rs)",
        // OPTIONAL: rows without paths keep their nulls.
        "MATCH (a:N) OPTIONAL MATCH (a)-[:S*2]->(b) RETURN a.id, b.id",
        // Per-hop node predicates and EXISTS branch scopes.
        "MATCH path = (a:N)-[:R|S*2..3]-(b) \
         WHERE all(x IN nodes(path)[1..] WHERE EXISTS { (x)-[:U]->(:L) }) RETURN a.id, b.id",
        "MATCH (a:N) WHERE EXISTS { (a)-[:R*1..3]-(c:N) WHERE c.ok } RETURN a.id",
        "MATCH (a:N) WHERE NOT EXISTS { (a)-[:S*2]-(c) } RETURN a.id",
        // A limit over a deterministic order.
        "MATCH (a:N {id: 3})-[:R*1..4]-(b) RETURN DISTINCT b.id ORDER BY b.id LIMIT 4",
        // Branch scopes: semi-applies (two on one row), OPTIONAL MATCH,
        // CALL { } with an aggregation (two pipelines per instance) and
        // with a LIMIT inside (a pipeline stopped inside an instance).
        "MATCH (a:N) WHERE EXISTS { (a)-[:R*1..3]-(c:N) WHERE c.ok } \
         AND NOT EXISTS { (a)-[:S]->(:N)-[:S]->() } RETURN a.id",
        "MATCH (a:N) OPTIONAL MATCH (a)-[:R]->(b)-[:R|S]-(c) WHERE c.ok RETURN a.id, b.id, c.id",
        "MATCH (a:N) OPTIONAL MATCH (a)-[:R*1..2]-(b:N) WHERE b.id > a.id RETURN a.id, b.id",
        "MATCH (a:N) CALL { WITH a MATCH (a)-[:R*1..2]-(c) RETURN count(c) AS k } RETURN a.id, k",
        "MATCH (a:N) CALL { WITH a MATCH (a)-[:R|S]-(c) RETURN c.id AS cid ORDER BY cid LIMIT 2 } \
         RETURN a.id, cid",
        "MATCH (a:N) RETURN a.id, COUNT { (a)-[:R*1..2]-(:N) } AS k",
    ];
    let (mut compared, mut nonempty) = (0, 0);
    for seed in [5, 6] {
        let dir = tempfile::tempdir().unwrap();
        let engine = random_engine(dir.path(), seed, 14, 30);
        for q in queries {
            let want = sorted_rows(&engine, q, &BTreeMap::new(), 1);
            compared += 1;
            nonempty += usize::from(!want.is_empty());
            for hint in HINTS {
                let text = format!("{hint}{q}");
                for threads in [1, 2] {
                    let got = sorted_rows(&engine, &text, &BTreeMap::new(), threads);
                    assert_eq!(got, want, "seed {seed}, {threads} workers: {text}");
                }
            }
        }
    }
    assert!(
        nonempty + 2 >= compared,
        "{nonempty} of {compared} answers non-empty"
    );
}

#[test]
fn interleaved_instances_give_the_same_rows() {
    // A denser graph: each instance walks thousands of trails, so with
    // several open its steps are cut into slices and interleaved.
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 10, 12, 40);
    let queries = [
        "MATCH (a:N) WHERE EXISTS { (a)-[:R|S*1..4]-(c:N) WHERE c.id = (a.id * 7 + 3) % 12 } \
         RETURN a.id",
        "MATCH (a:N) WHERE NOT EXISTS { (a)-[:R|S*1..4]-(c:N) WHERE c.id = 100 } RETURN a.id",
        "MATCH (a:N) OPTIONAL MATCH (a)-[:R*3]-(b:N) WHERE b.id = (a.id + 5) % 12 \
         RETURN a.id, b.id",
        "MATCH (a:N) CALL { WITH a MATCH (a)-[:R|S*1..3]-(c) RETURN count(*) AS k } RETURN a.id, k",
    ];
    for q in queries {
        let want = sorted_rows(
            &engine,
            &format!("CYPHER scheduling=off {q}"),
            &BTreeMap::new(),
            1,
        );
        assert!(!want.is_empty(), "{q}");
        for hint in HINTS {
            for threads in [1, 2] {
                let text = format!("{hint}{q}");
                let got = sorted_rows(&engine, &text, &BTreeMap::new(), threads);
                assert_eq!(got, want, "{threads} workers: {text}");
            }
        }
    }
    // The instances were interleaved: more steps than instances.
    let result = engine
        .execute(
            &format!("PROFILE CYPHER scheduling=fifo max_si=4 {}", queries[1]),
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    let text = result.profile.expect("a PROFILE report").text;
    let line = text.lines().find(|l| l.contains("SemiApply")).unwrap();
    let count = |key: &str| -> u64 {
        let at = line.find(&format!(" {key}=")).unwrap() + key.len() + 2;
        line[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(count("started"), 12, "{text}");
    assert!(count("steps") > count("started"), "{text}");
}

#[test]
fn a_branch_scope_keeps_the_order_of_a_sorted_input() {
    let dir = tempfile::tempdir().unwrap();
    // Instances of unequal length, cut into slices (as in
    // `interleaved_instances_give_the_same_rows`): they end out of order.
    let engine = random_engine(dir.path(), 10, 12, 40);
    let queries = [
        "MATCH (a:N) WITH a ORDER BY a.id DESC \
         WHERE NOT EXISTS { (a)-[:R|S*1..4]-(c:N) WHERE c.id = 100 } RETURN a.id",
        "MATCH (a:N) WITH a ORDER BY a.id DESC \
         OPTIONAL MATCH (a)-[:R*3]-(b:N) WHERE b.id = (a.id + 5) % 12 RETURN a.id",
        "MATCH (a:N) WITH a ORDER BY a.id DESC \
         CALL { WITH a MATCH (a)-[:R|S*1..3]-(c) RETURN count(*) AS k } RETURN a.id, k",
    ];
    let rows = |q: &str, threads: usize| -> Vec<String> {
        let options = QueryOptions {
            threads: Some(threads),
            ..QueryOptions::default()
        };
        engine
            .execute(q, BTreeMap::new(), &options)
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .rows
            .iter()
            .map(|r| format!("{r:?}"))
            .collect()
    };
    for q in queries {
        let want = rows(&format!("CYPHER scheduling=off {q}"), 1);
        assert!(want.len() > 3, "{q}: {want:?}");
        for hint in HINTS {
            for threads in [1, 2] {
                assert_eq!(rows(&format!("{hint}{q}"), threads), want, "{hint}{q}");
            }
        }
    }
}

#[test]
fn explain_shows_the_chosen_and_the_hinted_scope() {
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 7, 6, 6);
    let explain = |q: &str| engine.explain(q, &BTreeMap::new()).unwrap();
    // No early stop: the scope is off (no "scope:" on the expansion).
    assert!(!explain("MATCH (a)-[*1..3]->(b) RETURN b").contains("scope:"));
    // Under a limit: depth first for a fixed length, breadth first for a range.
    assert!(explain("MATCH (a)-[*3]->(b) RETURN b LIMIT 1").contains("scope: dfs max_si=1"));
    assert!(explain("MATCH (a)-[*1..3]->(b) RETURN b LIMIT 1").contains("scope: bfs max_si=1"));
    // A sort reads everything first.
    assert!(!explain("MATCH (a)-[*1..3]->(b) RETURN b ORDER BY b.id LIMIT 1").contains("scope:"));
    // Inside an EXISTS.
    assert!(
        explain("MATCH (a) WHERE EXISTS { (a)-[*1..3]->(b) } RETURN a")
            .contains("scope: dfs max_si=1")
    );
    // The hint overrides; off also turns EXISTS into a full count.
    assert!(
        explain("CYPHER scheduling=fifo max_si=8 MATCH (a)-[*1..3]->(b) RETURN b")
            .contains("scope: fifo max_si=8")
    );
    // Branch scopes: a semi-apply's is on (dfs, one instance at a time),
    // an OPTIONAL MATCH's and a CALL's off unless the hint names a policy.
    let semi = explain("MATCH (a) WHERE EXISTS { (a)-[:R]->(b)-[:R]->(c) } RETURN a");
    assert!(semi.contains("SemiApply scope: dfs max_si=1"), "{semi}");
    let optional = "MATCH (a) OPTIONAL MATCH (a)-[:R]->(b)-[:R]->(c) RETURN c";
    let plain = explain(optional);
    assert!(
        plain.contains("Optional") && !plain.contains("scope:"),
        "{plain}"
    );
    let hinted = explain(&format!("CYPHER scheduling=bfs max_si=4 {optional}"));
    assert!(hinted.contains("Optional scope: bfs max_si=4"), "{hinted}");
    let max_si_alone = explain(&format!("CYPHER max_si=4 {optional}"));
    assert!(!max_si_alone.contains("scope:"), "{max_si_alone}");
    let off = explain("CYPHER scheduling=off MATCH (a) WHERE EXISTS { (a)-[*1..3]->(b) } RETURN a");
    assert!(
        !off.contains("scope:") && off.contains("COUNT {...} > 0"),
        "{off}"
    );
    // A bad option is a clear error, before anything runs.
    let e = engine
        .execute(
            "CYPHER scheduling=sideways RETURN 1",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert!(e.message.contains("expected dfs, bfs, fifo or off"), "{e}");
}

#[test]
fn profile_reports_each_loop_scope() {
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 8, 14, 30);
    let profile = |q: &str| {
        let result = engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        result.profile.expect("a PROFILE report").text
    };
    // The counters of the expansion's line (a semi-apply above has its own).
    let counters = |text: &str, key: &str| -> u64 {
        let text = text
            .lines()
            .find(|l| l.contains("VarLengthExpand"))
            .unwrap_or_else(|| panic!("no expansion in {text}"));
        let at = text
            .find(&format!("{key}="))
            .unwrap_or_else(|| panic!("{key} in {text}"));
        text[at + key.len() + 1..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // Every instance of an EXISTS probe that matched was cancelled at its
    // first row, dropping its pending prefixes.
    let text = profile("PROFILE MATCH (a:N) WHERE EXISTS { (a)-[:R*1..3]-(c) } RETURN count(*)");
    let started = counters(&text, "started");
    assert_eq!(started, 14, "{text}");
    assert!(counters(&text, "cancelled") > 0, "{text}");
    assert!(counters(&text, "dropped") > 0, "{text}");
    assert_eq!(
        counters(&text, "finished") + counters(&text, "cancelled"),
        started,
        "{text}"
    );
    // Without an early stop every instance finishes and nothing is dropped.
    let text =
        profile("PROFILE CYPHER scheduling=bfs max_si=4 MATCH (a:N)-[:R*1..2]-(c) RETURN count(*)");
    assert_eq!(counters(&text, "started"), 14, "{text}");
    assert_eq!(counters(&text, "finished"), 14, "{text}");
    assert_eq!(counters(&text, "dropped"), 0, "{text}");
    assert!(text.contains("scope: bfs max_si=4"), "{text}");
    // Scopes off: no scope counters.
    let text = profile("PROFILE CYPHER scheduling=off MATCH (a:N)-[:R*1..2]-(c) RETURN count(*)");
    assert!(!text.contains("started="), "{text}");
}

#[test]
fn profile_reports_each_branch_scope() {
    // Two rows enter an EXISTS: the first one's probe walks thousands of
    // trails through a clique and finds nothing, the second one's matches
    // at its first hop.
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    for q in [
        "CREATE (a:Start {id: 0}), (b:Start {id: 1}), (b)-[:R]->(:Goal) \
         WITH a UNWIND range(1, 8) AS i CREATE (a)-[:R]->(:K {i: i})",
        "MATCH (x:K), (y:K) WHERE x.i < y.i CREATE (x)-[:R]->(y)",
    ] {
        engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let query = "MATCH (s:Start) WHERE EXISTS { (s)-[:R*1..5]-(:Goal) } RETURN s.id LIMIT 1";
    let profile = |hint: &str| {
        let q = format!("PROFILE {hint}{query}");
        let result = engine
            .execute(&q, BTreeMap::new(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(result.rows, vec![vec![Value::Int(1)]], "{q}");
        result.profile.expect("a PROFILE report").text
    };
    let counter = |text: &str, op: &str, key: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.contains(op))
            .unwrap_or_else(|| panic!("no {op} in {text}"));
        let at = line
            .find(&format!(" {key}="))
            .unwrap_or_else(|| panic!("{key} in {line}"));
        line[at + key.len() + 2..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // The planner's choice, one instance at a time: the first row's probe
    // runs to its end, then the second matches and ends the query.
    let text = profile("");
    assert!(text.contains("SemiApply scope: dfs max_si=1"), "{text}");
    assert_eq!(counter(&text, "SemiApply", "started"), 2, "{text}");
    assert_eq!(counter(&text, "SemiApply", "finished"), 1, "{text}");
    assert_eq!(counter(&text, "SemiApply", "cancelled"), 1, "{text}");
    assert_eq!(counter(&text, "SemiApply", "dropped"), 0, "{text}");
    let semi = text.lines().find(|l| l.contains("SemiApply")).unwrap_or("");
    assert!(semi.contains(" steps=") && semi.ends_with("ms"), "{text}");
    // Two instances interleaved (oldest work first, or least advanced
    // first): the second row's probe matches while the first one's walk
    // waits in its queue, the LIMIT is reached, and the first instance is
    // cancelled with its pending work dropped (its walk's prefixes too).
    for hint in [
        "CYPHER scheduling=fifo max_si=2 ",
        "CYPHER scheduling=bfs max_si=2 ",
    ] {
        let text = profile(hint);
        assert_eq!(counter(&text, "SemiApply", "started"), 2, "{text}");
        assert_eq!(counter(&text, "SemiApply", "finished"), 0, "{text}");
        assert_eq!(counter(&text, "SemiApply", "cancelled"), 2, "{text}");
        assert!(counter(&text, "SemiApply", "dropped") >= 1, "{text}");
        assert!(
            counter(&text, "VarLengthExpand", "cancelled") >= 1,
            "{text}"
        );
        assert!(counter(&text, "VarLengthExpand", "dropped") >= 1, "{text}");
    }
    // Depth first between two open instances finishes the first one first.
    let text = profile("CYPHER scheduling=dfs max_si=2 ");
    assert_eq!(counter(&text, "SemiApply", "finished"), 1, "{text}");
    assert_eq!(counter(&text, "SemiApply", "cancelled"), 1, "{text}");
}

#[test]
fn shortest_path_searches_are_a_loop_scope() {
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 11, 14, 30);
    let run = |q: &str| {
        engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"))
    };
    let counter = |text: &str, key: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.contains("ShortestPath"))
            .unwrap_or_else(|| panic!("no ShortestPath in {text}"));
        let at = line
            .find(&format!(" {key}="))
            .unwrap_or_else(|| panic!("{key} in {line}"));
        line[at + key.len() + 2..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let pairs = "MATCH (a:N), (b:N) WHERE a.id < b.id \
                 MATCH p = shortestPath((a)-[:R|S*]-(b))";
    // Every pair's search is an instance, run to its end.
    let result = run(&format!("PROFILE {pairs} RETURN count(p) AS n"));
    let text = result.profile.expect("a PROFILE report").text;
    assert_eq!(counter(&text, "started"), 91, "{text}");
    assert_eq!(counter(&text, "finished"), 91, "{text}");
    assert_eq!(counter(&text, "cancelled"), 0, "{text}");
    assert!(counter(&text, "expanded") >= 91, "{text}");
    let Value::Int(found) = result.rows[0][0] else {
        panic!("{:?}", result.rows)
    };
    assert!(found > 1, "{found} paths");
    // Under a LIMIT the first path ends the scope: the pairs after it are
    // never searched.
    let result = run(&format!("PROFILE {pairs} RETURN a.id, b.id LIMIT 1"));
    assert_eq!(result.rows.len(), 1);
    let text = result.profile.expect("a PROFILE report").text;
    let started = counter(&text, "started");
    assert!(started < 91, "{text}");
    assert_eq!(counter(&text, "finished"), started, "{text}");
}

#[test]
fn a_long_shortest_path_search_hands_its_task_back_at_each_quantum() {
    // Two searches along a chain of 20,000 nodes (tens of milliseconds in
    // a debug build): each search's state goes to a new task once the
    // task's quantum is spent, and the paths are the same as one search
    // run to its end. Without the hand-back, each row's search ran in the
    // task that started it.
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let options = |threads| QueryOptions {
        threads: Some(threads),
        ..QueryOptions::default()
    };
    for q in [
        "UNWIND range(0, 20000) AS i CREATE (:C {i: i})",
        "CREATE INDEX FOR (c:C) ON (c.i)",
        "MATCH (a:C), (b:C {i: a.i + 1}) CREATE (a)-[:NEXT]->(b)",
    ] {
        engine
            .execute(q, BTreeMap::new(), &options(2))
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let searches = "UNWIND [[0, 20000], [5, 19000]] AS pair \
                    MATCH (a:C {i: pair[0]}), (b:C {i: pair[1]}) \
                    MATCH p = shortestPath((a)-[:NEXT*]-(b))";
    let mut lengths = Vec::new();
    for (q, order) in [
        (
            format!("PROFILE {searches} RETURN a.i, length(p) AS n"),
            false,
        ),
        (
            format!("PROFILE {searches} RETURN a.i, length(p) AS n ORDER BY n"),
            true,
        ),
        (
            format!("PROFILE {searches} RETURN a.i, length(p) AS n LIMIT 5"),
            false,
        ),
    ] {
        for threads in [1, 2] {
            let (rows, line, text) = profiled(&engine, &q, threads, "ShortestPath");
            let mut rows = rows.to_vecs();
            if !order {
                rows.sort_by_key(|r| format!("{r:?}"));
            }
            lengths.push(rows);
            assert!(
                line.contains("started=2 finished=2 cancelled=0"),
                "{q}: {text}"
            );
            let tasks = morsels_of(&line);
            assert!(tasks > 4, "{q}: two searches in {tasks} tasks: {text}");
        }
    }
    let expected = vec![
        vec![Value::Int(0), Value::Int(20000)],
        vec![Value::Int(5), Value::Int(18995)],
    ];
    let mut by_length = expected.clone();
    by_length.sort_by_key(|r| format!("{:?}", r[1]));
    for (i, rows) in lengths.iter().enumerate() {
        let want = if (2..4).contains(&i) {
            &by_length
        } else {
            &expected
        };
        assert_eq!(rows, want, "variant {i}");
    }
}

/// An engine on a clique of eight `:K` nodes under `(:Start {id: 0})`,
/// whose probes for a `:Goal` walk every trail (milliseconds each), with
/// the statements `extra` run after it.
fn clique_engine(dir: &std::path::Path, extra: &[&str]) -> Engine {
    let engine = common::empty_engine(dir);
    for q in [
        "CREATE (a:Start {id: 0}) WITH a UNWIND range(1, 8) AS i CREATE (a)-[:R]->(:K {i: i})",
        "MATCH (x:K), (y:K) WHERE x.i < y.i CREATE (x)-[:R]->(y)",
    ]
    .iter()
    .chain(extra)
    {
        engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    engine
}

/// The rows of the PROFILE statement `q` run with `threads` workers, and
/// the line of its report that names `operator`.
fn profiled(engine: &Engine, q: &str, threads: usize, operator: &str) -> (Rows, String, String) {
    let options = QueryOptions {
        threads: Some(threads),
        ..QueryOptions::default()
    };
    let result = engine
        .execute(q, BTreeMap::new(), &options)
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    let text = result.profile.expect("a PROFILE report").text;
    let line = text
        .lines()
        .find(|l| l.contains(operator))
        .unwrap_or_else(|| panic!("no {operator} in {text}"))
        .to_string();
    (result.rows, line, text)
}

#[test]
fn a_long_instance_hands_its_task_back_at_each_quantum() {
    // One row's EXISTS probe walks every trail through a clique (tens of
    // milliseconds): the semi-apply's task hands the open instance back to
    // the pool once its quantum is spent, and a new task resumes it.
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &[]);
    let q = "PROFILE MATCH (s:Start) WHERE NOT EXISTS { (s)-[:R*1..5]-(:Goal) } RETURN s.id";
    for threads in [1, 2] {
        let (rows, line, text) = profiled(&engine, q, threads, "SemiApply");
        assert_eq!(rows, vec![vec![Value::Int(0)]]);
        let tasks = morsels_of(&line);
        assert!(tasks > 2, "one instance in {tasks} tasks: {text}");
        assert!(line.contains("started=1 finished=1"), "{text}");
    }
}

/// The `morsels=` count of a PROFILE line: the tasks its operator ran in.
fn morsels_of(line: &str) -> u64 {
    counter_of(line, "morsels")
}

/// The number after ` key=` in a PROFILE line.
fn counter_of(line: &str, key: &str) -> u64 {
    let at = line.find(&format!(" {key}=")).unwrap() + key.len() + 2;
    line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn an_expression_subquery_hands_its_task_back_at_each_quantum() {
    // The same long probe inside an expression (CQ6's shape: `all(x IN …
    // WHERE EXISTS { … })`), which is no semi-apply: the filter runs it as
    // a branch-scope instance that pauses at the task's quantum, and the
    // row with its paused instance goes to a new task, which resumes it.
    // Run inline (as before), the one instance took one task.
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &["CREATE (:Start {id: 1})-[:R]->(:Goal)"]);
    let q = "PROFILE MATCH (s:Start) \
             WHERE all(x IN [s] WHERE NOT EXISTS { (x)-[:R*1..5]-(:Goal) }) RETURN s.id";
    for threads in [1, 2] {
        let (rows, line, text) = profiled(&engine, q, threads, "Filter");
        assert_eq!(rows, vec![vec![Value::Int(0)]]);
        let tasks = morsels_of(&line);
        assert!(tasks > 2, "two rows' instances in {tasks} tasks: {text}");
        // Start 1's probe ends at its first row (cancelled), start 0's
        // walks every trail (finished).
        assert!(line.contains("started=2 finished=1 cancelled=1"), "{text}");
    }
}

#[test]
fn a_projected_subquery_hands_its_task_back_at_each_quantum() {
    // The same long probe in a RETURN item, a WITH item, a sort key, under
    // a LIMIT, and in an aggregate's key and argument (computed by a
    // projection below the aggregate): the projection runs it as a
    // branch-scope instance that pauses at the task's quantum, and the
    // chunk (with the items done and the paused instance) goes to a new
    // task, which resumes it. Run inline (as before), the two instances
    // took one task.
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &["CREATE (:Start {id: 1})-[:R]->(:Goal)"]);
    let far = "NOT EXISTS { (s)-[:R*1..5]-(:Goal) }";
    let (t, f) = (Value::Bool(true), Value::Bool(false));
    let both = vec![
        vec![Value::Int(0), t.clone()],
        vec![Value::Int(1), f.clone()],
    ];
    let cases = [
        (
            format!("RETURN s.id AS id, {far} AS far"),
            both.clone(),
            false,
        ),
        (
            format!("WITH s, {far} AS far RETURN s.id AS id, far"),
            both.clone(),
            false,
        ),
        (
            format!("RETURN s.id AS id, {far} AS far ORDER BY id"),
            both.clone(),
            true,
        ),
        (
            format!("RETURN s.id AS id, {far} AS far LIMIT 5"),
            both.clone(),
            false,
        ),
        (
            format!("RETURN s.id AS id, {far} AS far ORDER BY far DESC, id"),
            both,
            true,
        ),
        (
            format!("RETURN count(CASE WHEN {far} THEN 1 END) AS n"),
            vec![vec![Value::Int(1)]],
            true,
        ),
        (
            format!("RETURN {far} AS far, count(*) AS n"),
            vec![vec![f, Value::Int(1)], vec![t, Value::Int(1)]],
            false,
        ),
    ];
    for (tail, expected, ordered) in cases {
        let q = format!("PROFILE MATCH (s:Start) {tail}");
        for threads in [1, 2] {
            let (rows, line, text) = profiled(&engine, &q, threads, "scope: instances");
            let mut rows = rows.to_vecs();
            if !ordered {
                rows.sort_by_key(|r| format!("{r:?}"));
            }
            assert_eq!(rows, expected, "{q}");
            assert!(line.contains("Projection"), "{q}: {text}");
            let tasks = morsels_of(&line);
            assert!(
                tasks > 2,
                "{q}: two rows' instances in {tasks} tasks: {text}"
            );
            assert!(
                line.contains("started=2 finished=1 cancelled=1"),
                "{q}: {text}"
            );
        }
    }
}

#[test]
fn a_per_hop_subquery_hands_the_walk_back_at_each_quantum() {
    // CQ6's shape: `all(x IN nodes(path)[1..] WHERE EXISTS { … })` becomes
    // the variable-length walk's per-hop predicate. Each node's long probe
    // runs as an instance that pauses at the task's quantum, and the walk
    // (with the prefix being tested) goes to a new task, which resumes it.
    // Run inline (as before), the eight probes took one task.
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &[]);
    // The walk is scoped by the hint (the planner scopes it only under a
    // LIMIT, whose pipeline runs in one task in source order).
    let q = "PROFILE CYPHER scheduling=bfs \
             MATCH path = (s:Start {id: 0})-[:R*1..2]->(k:K) \
             WHERE all(x IN nodes(path)[1..] WHERE NOT EXISTS { (x)-[:R*1..5]-(:Goal) }) \
             RETURN k.i";
    for threads in [1, 2] {
        let (rows, line, text) = profiled(&engine, q, threads, "VarLengthExpand");
        // 8 paths of one hop, 28 of two.
        assert_eq!(rows.len(), 36);
        assert!(line.contains("per hop:"), "{text}");
        let tasks = morsels_of(&line);
        assert!(tasks > 2, "eight probes in {tasks} tasks: {text}");
    }
}

#[test]
fn subqueries_hand_back_in_a_pipeline_that_ends_in_a_limit() {
    // CQ6's shape as written: the pipeline ends in a LIMIT, so it runs in
    // one task in source order. Its expression subqueries (in a WHERE and
    // in the walk's per-hop predicate) still pause at the task's quantum:
    // the task hands its work back to a successor that runs it before
    // anything after it. Before, both ran in one task to their end.
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &["CREATE (:Start {id: 1})-[:R]->(:Goal)"]);
    let filter = "PROFILE MATCH (s:Start) \
                  WHERE all(x IN [s] WHERE NOT EXISTS { (x)-[:R*1..5]-(:Goal) }) \
                  RETURN s.id LIMIT 5";
    let walk = "PROFILE MATCH path = (s:Start)-[:R*1..2]->(k:K) \
                WHERE all(x IN nodes(path)[1..] WHERE NOT EXISTS { (x)-[:R*1..5]-(:Goal) }) \
                RETURN k.i LIMIT 100";
    for threads in [1, 2] {
        let (rows, line, text) = profiled(&engine, filter, threads, "Filter");
        assert_eq!(rows, vec![vec![Value::Int(0)]]);
        let tasks = morsels_of(&line);
        assert!(tasks > 2, "two rows' instances in {tasks} tasks: {text}");
        assert!(line.contains("started=2 finished=1 cancelled=1"), "{text}");

        let (rows, line, text) = profiled(&engine, walk, threads, "VarLengthExpand");
        // 8 paths of one hop, 28 of two.
        assert_eq!(rows.len(), 36);
        assert!(
            line.contains("per hop:") && line.contains("scope: bfs"),
            "{text}"
        );
        let tasks = morsels_of(&line);
        assert!(tasks > 2, "eight probes in {tasks} tasks: {text}");
    }
}

#[test]
fn an_ordered_pipeline_handing_back_keeps_its_rows_in_order() {
    // Rows after ORDER BY, filtered by a long expression subquery per row
    // and cut by a LIMIT: the hand-backs at each quantum must not change
    // which rows come out, nor their order.
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &[]);
    let q = "MATCH (k:K) WITH k ORDER BY k.i DESC \
             WHERE all(x IN [k] WHERE x.i % 3 <> 0 AND NOT EXISTS { (x)-[:R*1..5]-(:Goal) }) \
             RETURN k.i LIMIT 5";
    let want: Vec<Vec<Value>> = [8, 7, 5, 4, 2]
        .iter()
        .map(|&i| vec![Value::Int(i)])
        .collect();
    for prefix in [
        "",
        "CYPHER scheduling=off ",
        "CYPHER scheduling=fifo max_si=4 ",
    ] {
        for threads in [1, 2] {
            let options = QueryOptions {
                threads: Some(threads),
                ..QueryOptions::default()
            };
            let text = format!("{prefix}{q}");
            let result = engine
                .execute(&text, BTreeMap::new(), &options)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(result.rows, want, "{text} at {threads} workers");
        }
    }
}

#[test]
fn a_semi_apply_runs_one_instance_per_key() {
    // The probe reads only `b`: rows with a `b` seen before take its
    // memoized answer instead of running an instance.
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 12, 14, 30);
    let q = "MATCH (a:N)-[:R|S]-(b:N) WHERE EXISTS { (b)-[:R*1..3]-(c:N) WHERE c.ok } \
             RETURN a.id, b.id";
    let want = sorted_rows(
        &engine,
        &format!("CYPHER scheduling=off {q}"),
        &BTreeMap::new(),
        1,
    );
    for threads in [1, 2] {
        assert_eq!(sorted_rows(&engine, q, &BTreeMap::new(), threads), want);
    }
    let result = engine
        .execute(
            &format!("PROFILE {q}"),
            BTreeMap::new(),
            &QueryOptions {
                threads: Some(1),
                ..QueryOptions::default()
            },
        )
        .unwrap();
    let text = result.profile.expect("a PROFILE report").text;
    let line = text.lines().find(|l| l.contains("SemiApply")).unwrap();
    let at = line.find(" started=").unwrap() + " started=".len();
    let started: usize = line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(want.len() > 14, "{} rows", want.len());
    assert!(started <= 14, "{started} instances for 14 persons: {text}");
}

#[test]
fn a_distinct_of_the_end_prunes_and_gives_the_same_rows() {
    // Queries whose expansion only feeds a DISTINCT of its end node: the
    // scope produces each end once and cancels saturated prefixes. The
    // reference is the same query with scopes off (every path walked).
    let queries = [
        // Fixed length, a per-hop EXISTS on every node after the start
        // (CQ6's shape), one start.
        "MATCH path = (a:N {id: $s})-[:R|S*4]-(b) \
         WHERE all(x IN nodes(path)[1..] WHERE EXISTS { (x)-[:U]->(:L) }) RETURN DISTINCT b.id",
        "MATCH (a:N {id: $s})-[:R|S*3]-(b) RETURN DISTINCT b.id",
        // Many starts (instances) sharing the produced ends; a range.
        "MATCH (a:N)-[:R*1..3]-(b:N) RETURN DISTINCT b.id",
        "MATCH (a:N)-[*0..3]->(b) WITH DISTINCT b RETURN b.id",
        // A filter and a per-hop predicate that read only the end node.
        "MATCH (a:N)-[*2..4]->(b) WHERE b.ok RETURN DISTINCT b.id",
        "MATCH path = (a:N)-[:R*1..3]-(b) WHERE all(x IN nodes(path)[1..] WHERE x.ok) \
         RETURN DISTINCT b",
        // A per-hop predicate reading the start: saturation ignores it.
        "MATCH path = (a:N)-[:R|S*1..3]-(b) WHERE all(x IN nodes(path)[1..] WHERE x.id <> a.id) \
         RETURN DISTINCT b.id",
        // Unbounded: produced ends only.
        "MATCH (a:N {id: $s})-[:R*]->(b) RETURN DISTINCT b.id",
        // A sort and a limit above.
        "MATCH (a:N {id: $s})-[:R|S*1..4]-(b) RETURN DISTINCT b.id ORDER BY b.id LIMIT 3",
        // Aggregates that ignore duplicates, grouped by the end's property.
        "MATCH (a:N {id: $s})-[:R|S*1..4]-(b) RETURN count(DISTINCT b) AS k, min(b.id), max(b.id)",
        "MATCH (a:N)-[:R*1..3]-(b) RETURN b.ok AS ok, count(DISTINCT b.id) AS k",
        // The end and the input row: one set per row (CQ2's shape, with
        // an EXISTS in the filter).
        "MATCH (a:N)-[:R*1..3]-(b) RETURN DISTINCT a.id, b.id",
        "MATCH (a:N)-[:R|S*1..4]-(b) WHERE b.id <> a.id RETURN DISTINCT b.id",
        "MATCH (a:N {id: $s}) WITH a, a.id % 3 AS m MATCH (a)-[:R|S*1..5]-(b) \
         WHERE b <> a AND EXISTS { (b)-[:U]->(:L) } AND b.id % 3 <> m RETURN DISTINCT b.id",
        "MATCH (a:N)-[:U]->(l) WITH a, collect(l) AS ls MATCH (a)-[:R|S*1..4]-(b) \
         WHERE b <> a AND EXISTS { (b)-[:U]->(l2) WHERE NOT l2 IN ls } RETURN DISTINCT b.id",
        // The path or a duplicate-sensitive aggregate: no pruning.
        "MATCH p = (a:N {id: $s})-[:R|S*1..3]-(b) RETURN DISTINCT length(p) AS l, b.id",
        "MATCH (a:N {id: $s})-[:R|S*1..3]-(b) RETURN count(b) AS k, count(DISTINCT b) AS d",
    ];
    let hints = [
        "",
        "CYPHER scheduling=dfs ",
        "CYPHER scheduling=bfs ",
        "CYPHER scheduling=fifo ",
        "CYPHER scheduling=dfs max_si=3 ",
        "CYPHER scheduling=fifo max_si=64 ",
        "CYPHER prune=off ",
    ];
    for seed in [11, 12, 13] {
        let dir = tempfile::tempdir().unwrap();
        let engine = random_engine(dir.path(), seed, 16, 40);
        for s in [0, 5, 9] {
            let params = BTreeMap::from([("s".to_string(), Value::Int(s))]);
            for q in queries {
                let want = sorted_rows(&engine, &format!("CYPHER scheduling=off {q}"), &params, 1);
                for hint in hints {
                    for threads in [1, 2] {
                        let text = format!("{hint}{q}");
                        let got = sorted_rows(&engine, &text, &params, threads);
                        assert_eq!(got, want, "seed {seed}, s {s}, {threads} workers: {text}");
                    }
                }
            }
        }
    }
}

#[test]
fn explain_and_profile_show_where_ends_are_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), 9, 16, 60);
    let explain = |q: &str| engine.explain(q, &BTreeMap::new()).unwrap();
    // A distinct of the end node: the scope runs depth first and prunes,
    // also without a limit.
    let q = "MATCH (a:N)-[:R|S*1..4]-(b) RETURN DISTINCT b.id";
    assert!(
        explain(q).contains("scope: dfs max_si=1 prune ends"),
        "{}",
        explain(q)
    );
    // A policy hint keeps the pruning; prune=off and scheduling=off drop it.
    let fifo = explain(&format!("CYPHER scheduling=fifo {q}"));
    assert!(fifo.contains("scope: fifo max_si=1 prune ends"), "{fifo}");
    let unpruned = explain(&format!("CYPHER scheduling=dfs prune=off {q}"));
    assert!(
        unpruned.contains("scope: dfs max_si=1") && !unpruned.contains("prune ends"),
        "{unpruned}"
    );
    assert!(!explain(&format!("CYPHER scheduling=off {q}")).contains("scope:"));
    // An aggregation that ignores duplicates prunes too.
    let q2 = "MATCH (a:N)-[:R|S*1..4]-(b) RETURN b.ok, count(DISTINCT b) AS d, max(b.id) AS m";
    assert!(explain(q2).contains("prune ends"), "{}", explain(q2));
    // Rows judged by the end and the input row: a set per row.
    for per_row in [
        "MATCH (a:N)-[:R|S*1..4]-(b) RETURN DISTINCT a.id, b.id",
        "MATCH (a:N)-[:R|S*1..4]-(b) WHERE b.id > a.id RETURN DISTINCT b.id",
        // CQ2's shape: the EXISTS a semi-apply between the two.
        "MATCH (a:N)-[:U]->(l) WITH a, collect(l) AS ls MATCH (a)-[:R|S*1..4]-(b) \
         WHERE b <> a AND EXISTS { (b)-[:U]->(l2) WHERE NOT l2 IN ls } RETURN DISTINCT b.id",
    ] {
        let text = explain(per_row);
        assert!(
            text.contains("scope: dfs max_si=1 prune ends per row"),
            "{per_row}:\n{text}"
        );
    }
    // Rows judged by the path, by a random value, or all kept: no pruning.
    for other in [
        "MATCH p = (a:N)-[:R|S*1..4]-(b) RETURN DISTINCT length(p) AS l, b.id",
        "MATCH (a:N)-[:R|S*1..4]-(b) RETURN DISTINCT b.id + rand() AS x",
        "MATCH (a:N)-[:R|S*1..4]-(b) RETURN b.id",
        "MATCH (a:N)-[:R|S*1..4]-(b) RETURN count(DISTINCT b) AS d, count(b) AS k",
    ] {
        assert!(
            !explain(other).contains("scope:"),
            "{other}:\n{}",
            explain(other)
        );
    }
    // PROFILE counts the pruned prefixes; every end came out once.
    let (rows, line, text) = profiled(&engine, &format!("PROFILE {q}"), 1, "VarLengthExpand");
    assert!(line.contains(" pruned="), "{text}");
    assert_eq!(counter_of(&line, "rows"), rows.len() as u64, "{text}");
    // A row's own sets prune once it has walked a few hundred prefixes.
    let q = "PROFILE MATCH (a:N {id: 3})-[:R|S*1..6]-(b) WHERE b <> a RETURN DISTINCT b.id";
    let (_, line, text) = profiled(&engine, q, 1, "VarLengthExpand");
    assert!(
        line.contains("prune ends per row") && line.contains(" pruned="),
        "{text}"
    );
    // A bad value of the option is a clear error.
    let e = engine
        .execute(
            "CYPHER prune=maybe RETURN 1",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert!(e.message.contains("expected on or off"), "{e}");
}

#[test]
fn an_ordered_pipeline_keeps_a_bounded_number_of_pushes_behind_a_pause() {
    // A plain walk (scopes off: no state to hand back) feeds a filter whose
    // subquery pauses at every quantum, in a pipeline that ends in a LIMIT:
    // the pushes kept behind the paused work are charged to the query and
    // run in place once there are a few, so a small memory limit holds.
    // Before, the walk's chunks piled up uncharged (4 GB in 5 s for CQ2
    // with scopes off, until the server was killed).
    let dir = tempfile::tempdir().unwrap();
    let engine = clique_engine(dir.path(), &[]);
    let q = "CYPHER scheduling=off MATCH (s:Start)-[rs:R*1..6]-(k:K) \
             WHERE COUNT { (k)-[:R]->(m:K) WHERE m.i = size(rs) + 100 } > 0 \
             RETURN k.i LIMIT 10";
    for threads in [1, 2] {
        let options = QueryOptions {
            threads: Some(threads),
            memory_limit: Some(8 << 20),
            ..QueryOptions::default()
        };
        let result = engine
            .execute(q, BTreeMap::new(), &options)
            .unwrap_or_else(|e| panic!("{threads} workers: {e}"));
        assert!(result.rows.is_empty());
    }
}
