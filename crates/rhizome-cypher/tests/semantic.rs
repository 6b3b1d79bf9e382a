//! Semantic analysis: resolved information and error classification.

use rhizome_cypher::semantic::Type;
use rhizome_cypher::{compile, parse};

fn code(q: &str) -> &'static str {
    match compile(q) {
        Ok(_) => panic!("expected an error for {q}"),
        Err(e) => e.code.unwrap_or("<none>"),
    }
}

#[test]
fn resolves_variables_columns_and_aggregates() {
    let a = compile("MATCH p = (a:Person)-[r:KNOWS]->(b), (a)-[rs*]->(c) WITH a, count(b) AS n RETURN a.name AS name, n").unwrap();
    let ty = |name: &str| {
        a.variables
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.ty.clone())
    };
    assert_eq!(ty("a"), Some(Type::Node));
    assert_eq!(ty("r"), Some(Type::Relationship));
    assert_eq!(ty("rs"), Some(Type::List(Box::new(Type::Relationship))));
    assert_eq!(ty("p"), Some(Type::Path));
    assert_eq!(ty("n"), Some(Type::Integer));
    assert_eq!(a.columns, vec!["name", "n"]);
    assert_eq!(a.projections.len(), 2);
    assert!(a.projections[0].aggregating);
    assert_eq!(a.aggregates.len(), 1);
    assert!(!a.updating);
    // Each reference resolves to a binding whose name matches.
    for (span, index) in &a.references {
        let text = &"MATCH p = (a:Person)-[r:KNOWS]->(b), (a)-[rs*]->(c) WITH a, count(b) AS n RETURN a.name AS name, n"[span.start..span.end];
        assert!(text.starts_with(&a.variables[*index].name), "{text}");
    }
}

#[test]
fn unaliased_columns_use_the_expression_text() {
    let a = compile("MATCH (n) RETURN n.name, count( * )").unwrap();
    assert_eq!(a.columns, vec!["n.name", "count( * )"]);
}

#[test]
fn scoping_errors() {
    assert_eq!(code("RETURN x"), "UndefinedVariable");
    assert_eq!(code("MATCH (a) WITH a AS b RETURN a"), "UndefinedVariable");
    assert_eq!(code("MATCH (a)-[a]->() RETURN a"), "VariableTypeConflict");
    assert_eq!(code("MATCH (a) CREATE (a:L)"), "VariableAlreadyBound");
    assert_eq!(
        code("WITH 1 AS x UNWIND [1] AS x RETURN x"),
        "VariableAlreadyBound"
    );
    assert_eq!(
        code("RETURN 1 AS a UNION RETURN 2 AS b"),
        "DifferentColumnsInUnion"
    );
    assert_eq!(code("RETURN 1 AS a, 2 AS a"), "ColumnNameConflict");
    assert_eq!(code("MATCH (n) WITH n.x RETURN 1"), "NoExpressionAlias");
}

#[test]
fn aggregation_errors() {
    // openCypher: an aggregate in an aggregate's argument is nested, and a
    // non-deterministic argument is not constant over the group.
    assert_eq!(code("RETURN count(count(*))"), "NestedAggregation");
    assert_eq!(code("RETURN sum(1 + max(1))"), "NestedAggregation");
    assert_eq!(code("RETURN count(rand())"), "NonConstantExpression");
    assert_eq!(code("RETURN [x IN [1] | count(*)]"), "InvalidAggregation");
    assert_eq!(
        code("MATCH (n) WHERE count(n) > 1 RETURN n"),
        "InvalidAggregation"
    );
    assert_eq!(
        code("MATCH (n) RETURN n.x ORDER BY max(n.y)"),
        "InvalidAggregation"
    );
    assert_eq!(
        code("MATCH (n) RETURN n.x + count(*)"),
        "AmbiguousAggregationExpression"
    );
    assert!(compile("MATCH (n) RETURN n, n.x + count(*)").is_ok());
}

#[test]
fn function_and_argument_errors() {
    assert_eq!(code("RETURN foo(1)"), "UnknownFunction");
    assert_eq!(code("RETURN size()"), "InvalidNumberOfArguments");
    assert_eq!(code("RETURN labels(1)"), "InvalidArgumentType");
    assert_eq!(code("MATCH (n) RETURN n SKIP n.x"), "NonConstantExpression");
    assert_eq!(code("RETURN 1 LIMIT -1"), "NegativeIntegerArgument");
    assert_eq!(code("RETURN 1 LIMIT 1.5"), "InvalidArgumentType");
    assert!(compile("RETURN toUpper('a'), Date.Truncate('day', date())").is_ok());
}

#[test]
fn update_errors() {
    assert_eq!(code("MATCH (n) DELETE n:L"), "InvalidDelete");
    assert_eq!(code("DELETE 1"), "InvalidArgumentType");
    assert_eq!(code("CREATE ()-[:A|B]->()"), "NoSingleRelationshipType");
    assert_eq!(code("CREATE ()-[:A]-()"), "RequiresDirectedRelationship");
    assert_eq!(code("MERGE ()-[:A*2]->()"), "CreatingVarLength");
    assert_eq!(code("MERGE (n $props)"), "InvalidParameterUse");
    assert!(compile("CREATE (n $props)").is_ok());
}

#[test]
fn unknown_procedures_are_a_runtime_matter_by_default() {
    assert!(compile("CALL my.proc(1) YIELD x RETURN x").is_ok());
    assert!(compile("CALL my.proc").is_ok());
}

#[test]
fn errors_render_with_a_caret() {
    let q = "MATCH (n)\nRETURN m";
    let e = compile(q).unwrap_err();
    assert_eq!(
        e.to_string(),
        "SyntaxError: variable `m` not defined [UndefinedVariable] at 2:8"
    );
    assert!(e.render_with_source(q).ends_with("  RETURN m\n         ^"));
    assert!(parse(q).is_ok());
}
