//! The printer round-trip property: `parse(print(ast)) == ast`, over every
//! query in the TCK and over generated ASTs.

mod common;

use proptest::prelude::*;
use rhizome_cypher::ast::*;
use rhizome_cypher::printer::{print_expr, print_statement};
use rhizome_cypher::{parse, parse_expression};

fn check_exprs_in_items(s: &Statement, failures: &mut Vec<String>) {
    // Unaliased items print as their source text; round-trip their expressions separately.
    fn visit_query(q: &Query, failures: &mut Vec<String>) {
        for sq in std::iter::once(&q.first).chain(q.unions.iter().map(|u| &u.query)) {
            for c in &sq.clauses {
                if let Clause::With(p) | Clause::Return(p) = c {
                    for item in &p.items {
                        let text = print_expr(&item.expr);
                        match parse_expression(&text) {
                            Ok(e) if e == item.expr => {}
                            Ok(_) => failures
                                .push(format!("expression changed: {} => {text}", item.text)),
                            Err(err) => {
                                failures.push(format!("expression reparse failed: {text}: {err}"))
                            }
                        }
                    }
                }
                if let Clause::CallSubquery(c) = c {
                    visit_query(&c.query, failures);
                }
            }
        }
    }
    if let StatementKind::Query(q) = &s.kind {
        visit_query(q, failures);
    }
}

#[test]
fn every_tck_query_round_trips_through_the_printer() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in common::tck_cases() {
        let Ok(ast) = parse(&case.query) else {
            continue;
        };
        checked += 1;
        let printed = print_statement(&ast);
        match parse(&printed) {
            Ok(again) if again == ast => {}
            Ok(_) => failures.push(format!(
                "AST changed:\n  {}\n  {printed}",
                case.query.replace('\n', " ")
            )),
            Err(e) => failures.push(format!(
                "reparse failed: {e}\n  {}\n  {printed}",
                case.query.replace('\n', " ")
            )),
        }
        check_exprs_in_items(&ast, &mut failures);
    }
    println!("round-tripped {checked} TCK queries");
    assert!(checked > 3000);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ----- generated ASTs -----

fn sp() -> Span {
    Span::default()
}

fn ident_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9_]{0,5}",
        1 => Just("count".to_string()),
        1 => Just("MATCH".to_string()),
        1 => Just("a b`c".to_string()),
        1 => Just("ünï".to_string()),
        1 => Just("end".to_string()),
    ]
}

fn ident() -> impl Strategy<Value = Ident> {
    ident_name().prop_map(|name| Ident { name, span: sp() })
}

fn e(kind: ExprKind) -> Expr {
    Expr::new(kind, sp())
}

fn literal() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(Literal::Null),
        any::<bool>().prop_map(Literal::Bool),
        any::<i64>().prop_map(Literal::Integer),
        (-1.0e300f64..1.0e300).prop_map(Literal::Float),
        "[ -~\\n\\t'\"\\\\é]{0,8}".prop_map(Literal::String),
    ]
    .prop_map(|l| e(ExprKind::Literal(l)))
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        3 => literal(),
        2 => ident_name().prop_map(|n| e(ExprKind::Variable(n))),
        1 => "[a-z][a-z0-9]{0,4}".prop_map(|n| e(ExprKind::Parameter(n))),
        1 => Just(e(ExprKind::CountStar)),
    ]
}

fn node_pattern(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = NodePattern> {
    (
        proptest::option::of(ident()),
        proptest::collection::vec(ident(), 0..3),
        proptest::option::of(map_expr(inner)),
    )
        .prop_map(|(variable, labels, properties)| NodePattern {
            variable,
            labels,
            properties: properties.map(Box::new),
            span: sp(),
        })
}

fn map_expr(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = Expr> {
    proptest::collection::vec((ident(), inner), 0..3).prop_map(|entries| e(ExprKind::Map(entries)))
}

fn rel_pattern(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = RelationshipPattern> {
    let length = prop_oneof![
        Just(None),
        Just(Some(LengthRange {
            min: None,
            max: None,
            exact: false
        })),
        (0u64..5).prop_map(|n| Some(LengthRange {
            min: Some(n),
            max: Some(n),
            exact: true
        })),
        (proptest::option::of(0u64..5), proptest::option::of(0u64..9))
            .prop_filter("some bound", |(a, b)| a.is_some() || b.is_some())
            .prop_map(|(min, max)| Some(LengthRange {
                min,
                max,
                exact: false
            })),
    ];
    let direction = prop_oneof![
        Just(Direction::Outgoing),
        Just(Direction::Incoming),
        Just(Direction::Both)
    ];
    (
        proptest::option::of(ident()),
        proptest::collection::vec(ident(), 0..3),
        length,
        proptest::option::of(map_expr(inner)),
        direction,
    )
        .prop_map(
            |(variable, types, length, properties, direction)| RelationshipPattern {
                variable,
                types,
                length,
                properties: properties.map(Box::new),
                direction,
                span: sp(),
            },
        )
}

fn element(inner: BoxedStrategy<Expr>, min_rels: usize) -> impl Strategy<Value = PatternElement> {
    (
        node_pattern(inner.clone()),
        proptest::collection::vec(
            (rel_pattern(inner.clone()), node_pattern(inner)),
            min_rels..3,
        ),
    )
        .prop_map(|(start, chain)| PatternElement {
            start,
            chain,
            span: sp(),
        })
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(4, 48, 4, |inner| {
        let b = |x: Expr| Box::new(x);
        let binop = prop_oneof![
            Just(BinaryOp::Or),
            Just(BinaryOp::Xor),
            Just(BinaryOp::And),
            Just(BinaryOp::Add),
            Just(BinaryOp::Sub),
            Just(BinaryOp::Mul),
            Just(BinaryOp::Div),
            Just(BinaryOp::Mod),
            Just(BinaryOp::Pow),
            Just(BinaryOp::StartsWith),
            Just(BinaryOp::EndsWith),
            Just(BinaryOp::Contains),
            Just(BinaryOp::RegexMatch),
            Just(BinaryOp::In),
        ];
        let cmp = prop_oneof![
            Just(CompareOp::Eq),
            Just(CompareOp::Ne),
            Just(CompareOp::Lt),
            Just(CompareOp::Gt),
            Just(CompareOp::Le),
            Just(CompareOp::Ge)
        ];
        let unop = prop_oneof![Just(UnaryOp::Not), Just(UnaryOp::Neg), Just(UnaryOp::Plus)];
        let quant = prop_oneof![
            Just(Quantifier::All),
            Just(Quantifier::Any),
            Just(Quantifier::None),
            Just(Quantifier::Single)
        ];
        let inner_b = inner.clone().boxed();
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(|v| e(ExprKind::List(v))),
            map_expr(inner.clone().boxed()),
            (inner.clone(), ident()).prop_map(move |(x, k)| e(ExprKind::Property(b(x), k))),
            (inner.clone(), inner.clone()).prop_map(move |(x, i)| e(ExprKind::Index(b(x), b(i)))),
            (
                inner.clone(),
                proptest::option::of(inner.clone()),
                proptest::option::of(inner.clone())
            )
                .prop_map(move |(x, f, t)| e(ExprKind::Slice(
                    b(x),
                    f.map(b),
                    t.map(b)
                ))),
            (unop, inner.clone()).prop_map(move |(op, x)| e(ExprKind::Unary(op, b(x)))),
            (binop, inner.clone(), inner.clone()).prop_map(move |(op, l, r)| e(ExprKind::Binary(
                op,
                b(l),
                b(r)
            ))),
            (
                inner.clone(),
                proptest::collection::vec((cmp, inner.clone()), 1..3)
            )
                .prop_map(move |(f, rest)| e(ExprKind::Comparison(b(f), rest))),
            (inner.clone(), any::<bool>()).prop_map(move |(x, n)| e(ExprKind::IsNull(b(x), n))),
            (inner.clone(), proptest::collection::vec(ident(), 1..3))
                .prop_map(move |(x, l)| e(ExprKind::HasLabels(b(x), l))),
            (
                proptest::option::of(inner.clone()),
                proptest::collection::vec((inner.clone(), inner.clone()), 1..3),
                proptest::option::of(inner.clone())
            )
                .prop_map(move |(o, w, el)| e(ExprKind::Case {
                    operand: o.map(b),
                    whens: w,
                    else_: el.map(b)
                })),
            (
                proptest::collection::vec(ident(), 1..3),
                any::<bool>(),
                proptest::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(name, distinct, args)| e(ExprKind::FunctionCall {
                    name,
                    distinct,
                    args
                })),
            (
                ident(),
                inner.clone(),
                proptest::option::of(inner.clone()),
                proptest::option::of(inner.clone())
            )
                .prop_map(move |(v, l, p, pr)| e(ExprKind::ListComprehension {
                    variable: v,
                    list: b(l),
                    predicate: p.map(b),
                    projection: pr.map(b)
                })),
            (
                proptest::option::of(ident()),
                element(inner_b.clone(), 1),
                proptest::option::of(inner.clone()),
                inner.clone()
            )
                .prop_map(move |(v, p, pr, proj)| e(ExprKind::PatternComprehension {
                    variable: v,
                    pattern: p,
                    predicate: pr.map(b),
                    projection: b(proj)
                })),
            (
                ident(),
                inner.clone(),
                ident(),
                inner.clone(),
                inner.clone()
            )
                .prop_map(move |(a, i, v, l, x)| e(ExprKind::Reduce {
                    accumulator: a,
                    init: b(i),
                    variable: v,
                    list: b(l),
                    expr: b(x)
                })),
            (
                quant,
                ident(),
                inner.clone(),
                proptest::option::of(inner.clone())
            )
                .prop_map(move |(q, v, l, p)| e(ExprKind::Quantified {
                    quantifier: q,
                    variable: v,
                    list: b(l),
                    predicate: p.map(b)
                })),
            element(inner_b.clone(), 1).prop_map(|p| e(ExprKind::PatternPredicate(p))),
            (
                element(inner_b.clone(), 0),
                proptest::option::of(inner.clone())
            )
                .prop_map(move |(p, w)| e(ExprKind::Exists(SubqueryBody::Pattern {
                    pattern: vec![PatternPart {
                        variable: None,
                        shortest: None,
                        element: p,
                        span: sp()
                    }],
                    where_: w.map(b)
                }))),
            (
                ident(),
                proptest::collection::vec(
                    prop_oneof![
                        ident().prop_map(MapProjectionItem::Property),
                        Just(MapProjectionItem::AllProperties),
                        (ident(), inner.clone())
                            .prop_map(|(k, v)| MapProjectionItem::Literal(k, v)),
                        ident().prop_map(MapProjectionItem::Variable),
                    ],
                    0..3
                )
            )
                .prop_map(|(v, items)| e(ExprKind::MapProjection(v, items))),
        ]
    })
}

fn statement() -> impl Strategy<Value = Statement> {
    let part = (proptest::option::of(ident()), element(expr().boxed(), 0))
        .prop_map(|(variable, element)| PatternPart {
            variable,
            shortest: None,
            element,
            span: sp(),
        })
        .boxed();
    let item = (expr(), ident()).prop_map(|(expr, alias)| ProjectionItem {
        expr,
        alias: Some(alias),
        text: String::new(),
        span: sp(),
    });
    let sort = (expr(), any::<bool>()).prop_map(|(expr, descending)| SortItem {
        expr,
        descending,
        span: sp(),
    });
    let projection = (
        any::<bool>(),
        proptest::collection::vec(item, 1..3),
        proptest::collection::vec(sort, 0..2),
        proptest::option::of(expr()),
        proptest::option::of(expr()),
    )
        .prop_map(|(distinct, items, order_by, skip, limit)| Projection {
            distinct,
            star: false,
            items,
            order_by,
            skip,
            limit,
            where_: None,
            span: sp(),
        })
        .boxed();
    let clause = prop_oneof![
        (
            any::<bool>(),
            proptest::collection::vec(part.clone(), 1..3),
            proptest::option::of(expr())
        )
            .prop_map(|(optional, pattern, where_)| Clause::Match(Match {
                optional,
                pattern,
                where_,
                span: sp()
            })),
        (expr(), ident()).prop_map(|(expr, variable)| Clause::Unwind(Unwind {
            expr,
            variable,
            span: sp()
        })),
        (projection.clone(), proptest::option::of(expr())).prop_map(|(mut p, w)| {
            p.where_ = w;
            Clause::With(p)
        }),
        proptest::collection::vec(part.clone(), 1..3).prop_map(|pattern| Clause::Create(Create {
            pattern,
            span: sp()
        })),
        (any::<bool>(), proptest::collection::vec(expr(), 1..3)).prop_map(|(detach, exprs)| {
            Clause::Delete(Delete {
                detach,
                exprs,
                span: sp(),
            })
        }),
        (ident(), expr()).prop_map(|(variable, value)| Clause::Set(SetClause {
            items: vec![SetItem::Merge {
                variable,
                value,
                span: sp()
            }],
            span: sp()
        })),
    ];
    (proptest::collection::vec(clause, 0..3), projection).prop_map(|(mut clauses, ret)| {
        clauses.push(Clause::Return(ret));
        Statement {
            prefix: None,
            kind: StatementKind::Query(Query {
                first: SingleQuery {
                    clauses,
                    span: sp(),
                },
                unions: Vec::new(),
                span: sp(),
            }),
            span: sp(),
        }
    })
}

/// Runs `body` on a thread with a large stack: proptest's generation of
/// deeply nested strategies uses a lot of stack in debug builds.
fn on_big_stack(body: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(body)
        .expect("spawn")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[test]
fn generated_expressions_round_trip() {
    on_big_stack(|| {
        let mut runner = proptest::test_runner::TestRunner::new(config());
        let result = runner.run(&expr(), |x| {
            let text = print_expr(&x);
            let again = parse_expression(&text);
            prop_assert!(again.is_ok(), "{text}: {:?}", again.err());
            prop_assert_eq!(again.unwrap(), x, "{}", text);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    });
}

#[test]
fn generated_statements_round_trip() {
    on_big_stack(|| {
        let mut runner = proptest::test_runner::TestRunner::new(config());
        let result = runner.run(&statement(), |s| {
            let text = print_statement(&s);
            let again = parse(&text);
            prop_assert!(again.is_ok(), "{text}: {:?}", again.err());
            prop_assert_eq!(again.unwrap(), s, "{}", text);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    });
}
