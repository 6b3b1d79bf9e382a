//! Planning never panics and stays total on extreme or odd inputs.

use rhizome_planner::{explain, plan_statement, EmptyContext};

/// The plan's EXPLAIN text; `None` if planning fails; `Some("")` if the
/// query does not compile (nothing to plan).
fn plan(query: &str) -> Option<String> {
    let Ok(analyzed) = rhizome_cypher::compile(query) else {
        return Some(String::new());
    };
    let planned = plan_statement(&analyzed, &EmptyContext).ok()?;
    Some(explain(&planned))
}

#[test]
fn long_patterns_plan() {
    let mut q = String::from("MATCH (n0)");
    for i in 1..200 {
        q.push_str(&format!("-[r{i}]->(n{i})"));
    }
    q.push_str(" RETURN count(*)");
    let text = plan(&q).expect("plans");
    assert!(text.contains("ExpandCount"));
}

#[test]
fn absurdly_long_patterns_are_rejected_cleanly() {
    let mut q = String::from("MATCH (n0)");
    for i in 1..600 {
        q.push_str(&format!("-[r{i}]->(n{i})"));
    }
    q.push_str(" RETURN n0");
    let Ok(analyzed) = rhizome_cypher::compile(&q) else {
        return;
    };
    let err = plan_statement(&analyzed, &EmptyContext).expect_err("too deep");
    assert!(err.message.contains("too large"), "{}", err.message);
}

#[test]
fn deep_expressions_plan() {
    let q = format!("RETURN {}1{} AS x", "[".repeat(400), "]".repeat(400));
    assert!(plan(&q).is_some());
    let q = format!("RETURN {}1{} AS x", "(".repeat(400), " + 1)".repeat(400));
    assert!(plan(&q).is_some());
}

#[test]
fn many_clauses_and_unions_plan() {
    let mut q = String::from("UNWIND [1] AS x0 ");
    for i in 1..200 {
        q.push_str(&format!("WITH x{} + 1 AS x{i} ", i - 1));
    }
    q.push_str("RETURN x199");
    assert!(plan(&q).is_some());
    let u: Vec<String> = (0..100).map(|i| format!("RETURN {i} AS x")).collect();
    assert!(plan(&u.join(" UNION ")).is_some());
}

#[test]
fn updating_clauses_plan_as_updating() {
    for q in [
        "CREATE (n)",
        "MATCH (n) SET n.x = 1",
        "MATCH (n) DETACH DELETE n",
        "MERGE (n:A)",
        "FOREACH (x IN [1] | CREATE ({x: x}))",
        "CREATE (n) WITH n MATCH (m) RETURN m",
    ] {
        let analyzed = rhizome_cypher::compile(q).expect(q);
        let planned = plan_statement(&analyzed, &EmptyContext).expect(q);
        assert!(planned.plan.updating, "{q}");
    }
    let analyzed = rhizome_cypher::compile("MATCH (n) RETURN n").unwrap();
    assert!(
        !plan_statement(&analyzed, &EmptyContext)
            .unwrap()
            .plan
            .updating
    );
}

#[test]
fn updating_subqueries_are_planned_as_writes() {
    let analyzed =
        rhizome_cypher::compile("MATCH (n) CALL { WITH n CREATE (m) } RETURN n").unwrap();
    assert!(
        plan_statement(&analyzed, &EmptyContext)
            .unwrap()
            .plan
            .updating
    );
}

#[test]
fn schema_commands_are_clear_errors() {
    for q in ["CREATE INDEX FOR (n:A) ON (n.x)"] {
        let Ok(analyzed) = rhizome_cypher::compile(q) else {
            continue;
        };
        let err = plan_statement(&analyzed, &EmptyContext).expect_err(q);
        assert_eq!(err.kind, rhizome_common::ErrorKind::SemanticError, "{q}");
        assert!(
            err.message.contains("not supported yet"),
            "{q}: {}",
            err.message
        );
    }
}

#[test]
fn odd_but_valid_queries_plan() {
    for q in [
        "RETURN 1",
        "MATCH (a)-[r]->(b) WITH r MATCH (x)-[r]->(y) RETURN x",
        "MATCH (a)-[*0..]->(a) RETURN a",
        "MATCH p = ()-[*0..1]-() RETURN p",
        "OPTIONAL MATCH (a)-->(b) RETURN a, b",
        "MATCH (n $props) RETURN n",
        "WITH 1 AS x WITH * RETURN *",
        "MATCH (a), (b) WHERE a.x = b.x AND (a)-->(b) RETURN a, b",
        "MATCH (a)-[rs*]->(b), (b)-[rt*]->(c) RETURN a, c",
        "MATCH (a)-[r1]->(b), (c)-[r2]->(d) RETURN a, d",
        "EXPLAIN MATCH (n) RETURN n",
        "PROFILE MATCH (n) RETURN n",
        "CALL db.labels() YIELD label RETURN label",
        "MATCH (a) RETURN a ORDER BY a.x SKIP $s LIMIT $l",
        "UNWIND [1, 2] AS x RETURN x, count(*) + 1 AS c, collect(x)[0] AS first ORDER BY count(*) DESC",
        "MATCH (a) WHERE COUNT { (a)-->() } > 1 AND NOT EXISTS { MATCH (a)<--() } RETURN a",
    ] {
        assert!(plan(q).is_some(), "{q}");
    }
}
