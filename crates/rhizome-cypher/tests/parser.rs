//! Parser coverage of the language surface and the shape of syntax errors.

use rhizome_cypher::ast::*;
use rhizome_cypher::printer::print_statement;
use rhizome_cypher::{compile, parse, parse_expression};

const VALID: &[&str] = &[
    "MATCH (n) RETURN n",
    "OPTIONAL MATCH (a:A:B {x: 1})-[r:T|U*1..3]->(b) WHERE a.x > 1 RETURN DISTINCT a AS x, b ORDER BY x DESC, b SKIP 1 LIMIT 2",
    "match (n) return n",
    "MATCH (a)-[*]-(b), (c)<-[:T*2]-(d), (e)-[*..5]->(f), (g)-[*0..]->(h) RETURN a, b, c, d, e, f, g, h",
    "MATCH p = shortestPath((a)-[:T*]-(b)), q = allShortestPaths((a)-->(b)) RETURN p, q",
    "UNWIND [1, 2, 3] AS x WITH x WHERE x > 1 RETURN x UNION ALL RETURN 1 AS x",
    "RETURN 1 AS a UNION RETURN 2 AS a",
    "CREATE (a:Person {name: 'A'})-[:KNOWS {since: 2020}]->(b:Person)",
    "MERGE (n:Person {id: 1}) ON CREATE SET n.created = 1 ON MATCH SET n.seen = n.seen + 1",
    "MATCH (n) SET n.x = 1, n += {y: 2}, n = {z: 3}, n:Label:Other",
    "MATCH (n) REMOVE n.x, n:Label",
    "MATCH (n) DETACH DELETE n",
    "MATCH ()-[r]->() DELETE r",
    "MATCH (n) FOREACH (x IN [1, 2] | CREATE (:X {v: x}) SET n.v = x)",
    "CALL db.labels()",
    "CALL db.labels() YIELD label AS l WHERE l <> 'A' RETURN l",
    "CALL db.labels",
    "MATCH (n) CALL { WITH n MATCH (n)-->(m) RETURN count(m) AS c } RETURN n, c",
    "EXPLAIN MATCH (n) RETURN n",
    "PROFILE MATCH (n) RETURN n",
    "CREATE INDEX person_name IF NOT EXISTS FOR (p:Person) ON (p.name, p.age)",
    "CREATE INDEX FOR ()-[r:KNOWS]-() ON (r.since)",
    "CREATE INDEX ON :Person(name)",
    "DROP INDEX person_name IF EXISTS",
    "DROP INDEX ON :Person(name)",
    "CREATE CONSTRAINT uniq FOR (p:Person) REQUIRE p.email IS UNIQUE",
    "CREATE CONSTRAINT FOR (p:Person) REQUIRE (p.a, p.b) IS NODE KEY",
    "DROP CONSTRAINT uniq",
    "SHOW INDEXES",
    "SHOW CONSTRAINTS",
    "SHOW TRANSACTIONS",
    "TERMINATE TRANSACTIONS 'tx-1', 'tx-2'",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "RETURN 0x1F, 0o17, 1.5e3, .5, 1E-3, 'a\\tb\\u00e9\\U0001F600', \"dq\", null, true, FALSE, [1, [2]], {a: {b: 1}}",
    "RETURN $param, $0, $p.x",
    "MATCH (n) RETURN n.name, n['name'], [1,2,3][0], [1,2,3][1..], [1,2,3][..2], [1,2,3][0..1]",
    "RETURN 1 + 2 * 3 ^ 2 - -1 % 5 / 2",
    "RETURN 'abc' STARTS WITH 'a', 'abc' ENDS WITH 'c', 'abc' CONTAINS 'b', 'abc' =~ 'a.*', 1 IN [1], null IS NULL, 1 IS NOT NULL",
    "RETURN true AND false OR NOT true XOR false",
    "RETURN 1 < 2 <= 3 > 0 >= 0 = 0 <> 1",
    "RETURN CASE 1 WHEN 1 THEN 'one' ELSE 'other' END, CASE WHEN true THEN 1 END",
    "RETURN [x IN range(1, 10) WHERE x % 2 = 0 | x * x], reduce(s = 0, x IN [1, 2] | s + x)",
    "MATCH (n) RETURN [(n)-->(m) WHERE m.x > 1 | m.x], [p = (n)-->() | p]",
    "RETURN all(x IN [1] WHERE x > 0), any(x IN [1] WHERE x > 0), none(x IN [1] WHERE x > 0), single(x IN [1] WHERE x > 0)",
    "MATCH (n) WHERE EXISTS { MATCH (n)-->(m) } AND COUNT { (n)-->() } > 1 RETURN n",
    "MATCH (n) WHERE (n)-[:T]->() AND NOT (n)<--() RETURN n",
    "MATCH (n) RETURN count(*), count(DISTINCT n), collect(n.x), date.truncate('day', date())",
    "MATCH (n) RETURN n {.name, .*, k: 1, n}",
    "MATCH (`weird name`:`Label with space`) RETURN `weird name`.`a key` AS `the column`",
    "// comment\nMATCH /* inline */ (n) RETURN n // trailing",
    "MATCH (n) WHERE n:A:B RETURN n;",
];

#[test]
fn the_language_surface_parses_and_round_trips() {
    for q in VALID {
        let ast = parse(q).unwrap_or_else(|e| panic!("{q}\n{}", e.render_with_source(q)));
        let printed = print_statement(&ast);
        assert_eq!(
            parse(&printed).as_ref().ok(),
            Some(&ast),
            "{q}\n=> {printed}"
        );
    }
}

#[test]
fn the_language_surface_compiles() {
    for q in VALID {
        if let Err(e) = compile(q) {
            panic!("{q}\n{}", e.render_with_source(q));
        }
    }
}

#[test]
fn keywords_are_case_insensitive_but_names_are_not() {
    let a = parse("match (n:Person) where n.Name = 1 return n").unwrap();
    let b = parse("MATCH (n:Person) WHERE n.Name = 1 RETURN n").unwrap();
    assert_eq!(a, b);
    let c = parse("MATCH (n:person) WHERE n.Name = 1 RETURN n").unwrap();
    assert_ne!(a, c);
}

#[test]
fn syntax_errors_say_what_was_expected_and_found() {
    let q = "MATCH (n RETURN n";
    let e = parse(q).unwrap_err();
    assert_eq!(e.kind, rhizome_common::ErrorKind::SyntaxError);
    assert!(
        e.message.contains("expected `)` but found `RETURN`"),
        "{}",
        e.message
    );
    let pos = e.position.unwrap();
    assert_eq!((pos.line, pos.column), (1, 10));
    let rendered = e.render_with_source(q);
    assert!(
        rendered.ends_with("MATCH (n RETURN n\n           ^"),
        "{rendered}"
    );
}

#[test]
fn literal_errors_have_tck_codes() {
    let code = |q: &str| parse(q).unwrap_err().code.unwrap();
    assert_eq!(code("RETURN 9223372036854775808"), "IntegerOverflow");
    assert_eq!(code("RETURN 0x8000000000000000"), "IntegerOverflow");
    assert_eq!(code("RETURN 12h3"), "InvalidNumberLiteral");
    assert_eq!(code("RETURN 1e999"), "FloatingPointOverflow");
    assert_eq!(code("RETURN '\\uZZZZ'"), "InvalidUnicodeLiteral");
    assert_eq!(code("RETURN 1 — 2"), "InvalidUnicodeCharacter");
    assert!(parse("RETURN -9223372036854775808").is_ok());
}

#[test]
fn precedence_and_associativity() {
    let p = |s: &str| rhizome_cypher::printer::print_expr(&parse_expression(s).unwrap());
    // Printing adds parentheses only where needed, so equal prints mean equal trees.
    assert_eq!(
        parse_expression("1 + 2 * 3").unwrap(),
        parse_expression("1 + (2 * 3)").unwrap()
    );
    assert_eq!(
        parse_expression("1 - 2 - 3").unwrap(),
        parse_expression("(1 - 2) - 3").unwrap()
    );
    assert_eq!(
        parse_expression("2 ^ 3 ^ 2").unwrap(),
        parse_expression("(2 ^ 3) ^ 2").unwrap()
    );
    assert_eq!(
        parse_expression("a OR b XOR c AND NOT d").unwrap(),
        parse_expression("a OR (b XOR (c AND (NOT d)))").unwrap()
    );
    assert_eq!(
        parse_expression("NOT a = b").unwrap(),
        parse_expression("NOT (a = b)").unwrap()
    );
    assert_eq!(
        parse_expression("a + b IN c").unwrap(),
        parse_expression("(a + b) IN c").unwrap()
    );
    assert_eq!(p("(1 + 2) * 3"), "(1 + 2) * 3");
    assert_eq!(p("-x.y"), "-x.y");
    match parse_expression("1 < 2 < 3").unwrap().kind {
        ExprKind::Comparison(_, rest) => assert_eq!(rest.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn spans_point_into_the_text() {
    let q = "MATCH (n)\nRETURN n.name AS name";
    let s = parse(q).unwrap();
    let StatementKind::Query(query) = &s.kind else {
        panic!()
    };
    let Clause::Return(r) = &query.first.clauses[1] else {
        panic!()
    };
    let item = &r.items[0];
    assert_eq!(&q[item.expr.span.start..item.expr.span.end], "n.name");
    assert_eq!(&q[r.span.start..r.span.end], "RETURN n.name AS name");
}
