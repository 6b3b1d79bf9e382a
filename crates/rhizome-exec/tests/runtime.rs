//! Runs hand-built plans over a generated chain graph and checks results
//! against answers computed directly, single-threaded and in parallel.

use rhizome_common::Value;
use rhizome_exec::scheduler::{CancelToken, WorkerPool};
use rhizome_exec::{execute, QueryOptions, StatementSettings};
use rhizome_plan::*;
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput, RelGroupInput, RowLabels};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{Database, Snapshot};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

const N: u64 = 5_000;
const DEGREE: u64 = 4;

/// N nodes :All (first 10% also :Ten), `id`, `mod7`, `tag` ('t' + id % 13,
/// null for every 11th); (n)-[:NEXT {w: k}]->((n+k) % N) for k in 1..=DEGREE.
fn database() -> &'static (tempfile::TempDir, Database) {
    static DB: OnceLock<(tempfile::TempDir, Database)> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut b = GraphBuilder::new();
        let (mut id, mut mod7) = (ColumnBuilder::new(), ColumnBuilder::new());
        let mut tag = ColumnBuilder::new();
        for i in 0..N {
            id.push_i64(i as i64);
            mod7.push_i64((i % 7) as i64);
            match i % 11 {
                0 => tag.push_null(),
                _ => tag.push_str(&format!("t{}", i % 13)),
            }
        }
        let ids = b
            .add_nodes(NodeGroupInput {
                rows: N,
                labels: vec!["All".into()],
                row_labels: Some(RowLabels {
                    sets: vec![vec![], vec!["Ten".into()]],
                    row_set: (0..N).map(|i| u32::from(i < N / 10)).collect(),
                }),
                properties: vec![
                    ("id".into(), id.finish()),
                    ("mod7".into(), mod7.finish()),
                    ("tag".into(), tag.finish()),
                ],
            })
            .unwrap();
        let (mut sources, mut targets, mut w) = (Vec::new(), Vec::new(), ColumnBuilder::new());
        for i in 0..N {
            for k in 1..=DEGREE {
                sources.push(ids[i as usize]);
                targets.push(ids[((i + k) % N) as usize]);
                w.push_f64(k as f64);
            }
        }
        b.add_relationships(
            "NEXT",
            RelGroupInput {
                sources,
                targets,
                properties: vec![("w".into(), w.finish())],
            },
        )
        .unwrap();
        b.add_index("All", "id");
        b.write(&path).unwrap();
        let db = Database::open(&path).unwrap();
        (dir, db)
    })
}

fn snap() -> Snapshot {
    database().1.snapshot()
}

fn node(kind: OpKind, inputs: Vec<PlanNode>) -> PlanNode {
    PlanNode::new(kind, inputs, 1.0)
}

fn arg() -> PlanNode {
    node(OpKind::Argument, vec![])
}

fn slot(s: Slot) -> Expr {
    Expr::Slot(s)
}

fn prop(s: Slot, k: &str) -> Expr {
    Expr::Property(Box::new(slot(s)), k.into())
}

fn int(i: i64) -> Expr {
    Expr::Literal(Value::Int(i))
}

fn expand(
    input: PlanNode,
    from: Slot,
    rel: Slot,
    to: Slot,
    direction: ExpandDirection,
    distinct_from: Vec<Slot>,
) -> PlanNode {
    node(
        OpKind::Expand {
            from,
            rel,
            to,
            types: vec!["NEXT".into()],
            direction,
            to_labels: vec![],
            distinct_from,
            optional: false,
        },
        vec![input],
    )
}

fn count_star(input: PlanNode, out: Slot) -> PlanNode {
    node(
        OpKind::Aggregate {
            keys: vec![],
            aggregates: vec![AggregateItem {
                slot: out,
                function: AggregateKind::CountStar,
                args: vec![],
                distinct: false,
            }],
        },
        vec![input],
    )
}

fn plan(root: PlanNode, width: usize, columns: &[(&str, Slot)], ordered: bool) -> Plan {
    Plan {
        root,
        width,
        columns: columns.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
        slot_names: (0..width).map(|i| format!("s{i}")).collect(),
        ordered,
        updating: false,
    }
}

fn run(p: &Plan, threads: usize) -> Vec<Vec<Value>> {
    let options = QueryOptions {
        threads: Some(threads),
        ..QueryOptions::default()
    };
    execute(
        p,
        snap(),
        BTreeMap::new(),
        &options,
        &StatementSettings::default(),
    )
    .unwrap()
    .rows
    .to_vecs()
}

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    rows
}

#[test]
fn scan_and_count() {
    let p = plan(
        count_star(node(OpKind::AllNodesScan { out: 0 }, vec![arg()]), 1),
        2,
        &[("c", 1)],
        false,
    );
    assert_eq!(run(&p, 1), vec![vec![Value::Int(N as i64)]]);
    assert_eq!(run(&p, 2), vec![vec![Value::Int(N as i64)]]);
    let ten = plan(
        count_star(
            node(
                OpKind::LabelScan {
                    out: 0,
                    label: "Ten".into(),
                },
                vec![arg()],
            ),
            1,
        ),
        2,
        &[("c", 1)],
        false,
    );
    assert_eq!(run(&ten, 2), vec![vec![Value::Int((N / 10) as i64)]]);
    let missing = plan(
        count_star(
            node(
                OpKind::LabelScan {
                    out: 0,
                    label: "Nope".into(),
                },
                vec![arg()],
            ),
            1,
        ),
        2,
        &[("c", 1)],
        false,
    );
    assert_eq!(run(&missing, 2), vec![vec![Value::Int(0)]]);
}

#[test]
fn three_hops_from_one_node_match_the_formula_and_use_all_workers() {
    // MATCH (a:All {id: 7})-->(b)-->(c)-->(d) RETURN count(*), relationship-unique.
    let seek = node(
        OpKind::IndexSeek {
            out: 0,
            label: "All".into(),
            key: "id".into(),
            lookup: IndexLookup::Equal(int(7)),
        },
        vec![arg()],
    );
    let e1 = expand(seek, 0, 1, 2, ExpandDirection::Both, vec![]);
    let e2 = expand(e1, 2, 3, 4, ExpandDirection::Both, vec![1]);
    let e3 = expand(e2, 4, 5, 6, ExpandDirection::Both, vec![1, 3]);
    let p = plan(count_star(e3, 7), 8, &[("c", 7)], false);
    // Each hop may not reuse an earlier relationship; count by plain loops.
    let expected = brute_force_paths();
    let one = run(&p, 1);
    let two = run(&p, 2);
    assert_eq!(one, two);
    assert_eq!(one, vec![vec![Value::Int(expected)]]);

    // Counting the last hop without enumerating it gives the same answer.
    let seek = node(
        OpKind::IndexSeek {
            out: 0,
            label: "All".into(),
            key: "id".into(),
            lookup: IndexLookup::Equal(int(7)),
        },
        vec![arg()],
    );
    let e1 = expand(seek, 0, 1, 2, ExpandDirection::Outgoing, vec![]);
    let e2 = expand(e1, 2, 3, 4, ExpandDirection::Outgoing, vec![1]);
    let counted = node(
        OpKind::ExpandCount {
            from: 4,
            prefix: vec![],
            types: vec!["NEXT".into()],
            direction: ExpandDirection::Outgoing,
            to_labels: vec![],
            rel_predicate: Some((
                5,
                Expr::Binary(
                    BinaryOp::Gt,
                    Box::new(prop(5, "w")),
                    Box::new(Expr::Literal(Value::Float(1.5))),
                ),
            )),
            distinct_from: vec![1, 3],
            count_slot: 6,
        },
        vec![e2],
    );
    let summed = node(
        OpKind::Aggregate {
            keys: vec![],
            aggregates: vec![AggregateItem {
                slot: 7,
                function: AggregateKind::Sum,
                args: vec![slot(6)],
                distinct: false,
            }],
        },
        vec![counted],
    );
    // Outgoing chain: 4 * 4 * 3 paths (w > 1.5 keeps k = 2, 3, 4 of each last hop).
    assert_eq!(
        run(&plan(summed, 8, &[("c", 7)], false), 2),
        vec![vec![Value::Int(4 * 4 * 3)]]
    );
}

/// Relationship-unique undirected 3-hop paths from node 7 of the ring, by plain loops.
fn brute_force_paths() -> i64 {
    let n = N as i64;
    let nbrs = |x: i64| -> Vec<(i64, (i64, i64))> {
        let mut v = Vec::new();
        for k in 1..=DEGREE as i64 {
            v.push(((x + k).rem_euclid(n), (x, k)));
            v.push(((x - k).rem_euclid(n), ((x - k).rem_euclid(n), k)));
        }
        v
    };
    let mut total = 0i64;
    for (b, r1) in nbrs(7) {
        for (c, r2) in nbrs(b) {
            if r2 == r1 {
                continue;
            }
            for (_, r3) in nbrs(c) {
                if r3 != r1 && r3 != r2 {
                    total += 1;
                }
            }
        }
    }
    total
}

#[test]
fn filter_project_sort_limit() {
    // MATCH (n:Ten) WHERE n.mod7 = 3 RETURN n.id AS id ORDER BY id DESC LIMIT 5
    let scan = node(
        OpKind::LabelScan {
            out: 0,
            label: "Ten".into(),
        },
        vec![arg()],
    );
    let filter = node(
        OpKind::Filter {
            predicate: Expr::Binary(BinaryOp::Eq, Box::new(prop(0, "mod7")), Box::new(int(3))),
        },
        vec![scan],
    );
    let project = node(
        OpKind::Project {
            items: vec![(1, prop(0, "id"))],
        },
        vec![filter],
    );
    let top = node(
        OpKind::Top {
            keys: vec![SortKey {
                slot: 1,
                descending: true,
            }],
            limit: int(5),
        },
        vec![project],
    );
    let p = plan(top, 2, &[("id", 1)], true);
    let expected: Vec<Vec<Value>> = (0..N / 10)
        .rev()
        .filter(|i| i % 7 == 3)
        .take(5)
        .map(|i| vec![Value::Int(i as i64)])
        .collect();
    assert_eq!(run(&p, 2), expected);
    assert_eq!(run(&p, 1), expected);

    // Plain LIMIT without order: exactly 10 rows.
    let limit = node(
        OpKind::Limit { count: int(10) },
        vec![node(OpKind::AllNodesScan { out: 0 }, vec![arg()])],
    );
    assert_eq!(run(&plan(limit, 1, &[("n", 0)], false), 2).len(), 10);
}

#[test]
fn grouping_and_distinct_agree_across_thread_counts() {
    // MATCH (n) RETURN n.mod7 AS m, count(*) AS c, collect(DISTINCT n.mod7) AS d
    let scan = node(OpKind::AllNodesScan { out: 0 }, vec![arg()]);
    let agg = node(
        OpKind::Aggregate {
            keys: vec![(1, prop(0, "mod7"))],
            aggregates: vec![
                AggregateItem {
                    slot: 2,
                    function: AggregateKind::CountStar,
                    args: vec![],
                    distinct: false,
                },
                AggregateItem {
                    slot: 3,
                    function: AggregateKind::Max,
                    args: vec![prop(0, "id")],
                    distinct: false,
                },
            ],
        },
        vec![scan],
    );
    let p = plan(agg, 4, &[("m", 1), ("c", 2), ("max", 3)], false);
    let one = sorted(run(&p, 1));
    let two = sorted(run(&p, 2));
    assert_eq!(one, two);
    assert_eq!(one.len(), 7);
    let total: i64 = one
        .iter()
        .map(|r| if let Value::Int(c) = r[1] { c } else { 0 })
        .sum();
    assert_eq!(total, N as i64);

    // DISTINCT over a projection.
    let scan = node(OpKind::AllNodesScan { out: 0 }, vec![arg()]);
    let project = node(
        OpKind::Project {
            items: vec![(1, prop(0, "mod7"))],
        },
        vec![scan],
    );
    let distinct = node(OpKind::Distinct { slots: vec![1] }, vec![project]);
    assert_eq!(run(&plan(distinct, 2, &[("m", 1)], false), 2).len(), 7);
}

#[test]
fn grouping_by_a_string_and_an_integer_matches_a_brute_force_count() {
    // MATCH (n) RETURN n.tag AS t, n.mod7 AS m, count(*) AS c, min(n.id) AS lo
    // (typed composite keys: string views and integers, with null tags),
    // and the same with the node itself as a third key.
    let aggregate = |with_node: bool| {
        let scan = node(OpKind::AllNodesScan { out: 0 }, vec![arg()]);
        let mut keys = vec![(1, prop(0, "tag")), (2, prop(0, "mod7"))];
        if with_node {
            keys.push((5, slot(0)));
        }
        let agg = node(
            OpKind::Aggregate {
                keys,
                aggregates: vec![
                    AggregateItem {
                        slot: 3,
                        function: AggregateKind::CountStar,
                        args: vec![],
                        distinct: false,
                    },
                    AggregateItem {
                        slot: 4,
                        function: AggregateKind::Min,
                        args: vec![prop(0, "id")],
                        distinct: false,
                    },
                ],
            },
            vec![scan],
        );
        plan(agg, 6, &[("t", 1), ("m", 2), ("c", 3), ("lo", 4)], false)
    };
    let mut expected: BTreeMap<(Option<u64>, u64), (i64, i64)> = BTreeMap::new();
    for i in 0..N {
        let tag = (i % 11 != 0).then_some(i % 13);
        let e = expected.entry((tag, i % 7)).or_insert((0, i as i64));
        e.0 += 1;
    }
    let expected: Vec<Vec<Value>> = expected
        .into_iter()
        .map(|((tag, m), (c, lo))| {
            let tag = tag.map_or(Value::Null, |t| Value::String(format!("t{t}")));
            vec![tag, Value::Int(m as i64), Value::Int(c), Value::Int(lo)]
        })
        .collect();
    for threads in [1, 2] {
        assert_eq!(
            sorted(run(&aggregate(false), threads)),
            sorted(expected.clone()),
            "{threads} threads"
        );
        // One group per node: every count is 1 and the minimum is its id.
        let per_node = run(&aggregate(true), threads);
        assert_eq!(per_node.len(), N as usize, "{threads} threads");
        assert!(per_node.iter().all(|r| r[2] == Value::Int(1)));
    }
}

/// The nodes the walk of `hops` undirected `NEXT` hops from the nodes with
/// `id < 3000` reaches, no relationship taken twice in a row: by brute
/// force over the ring (a relationship is its pair of end ids).
fn brute_force_endpoints(hops: usize) -> Vec<i64> {
    let n = N as i64;
    let neighbours = |x: i64| {
        (1..=DEGREE as i64).flat_map(move |k| {
            let out = (x + k) % n;
            let back = (x - k).rem_euclid(n);
            [
                (out, (x.min(out), x.max(out))),
                (back, (x.min(back), x.max(back))),
            ]
        })
    };
    // (node, relationship it arrived by)
    let mut walks: std::collections::BTreeSet<(i64, (i64, i64))> =
        (0..3000).map(|x| (x, (-1, -1))).collect();
    for _ in 0..hops {
        walks = walks
            .iter()
            .flat_map(|&(x, arrived)| neighbours(x).filter(move |&(_, r)| r != arrived))
            .collect();
    }
    let ends: std::collections::BTreeSet<i64> = walks.iter().map(|&(x, _)| x).collect();
    ends.into_iter().collect()
}

#[test]
fn frontier_walk_gives_the_same_endpoints_at_one_and_two_threads() {
    // The nodes reached from 3,000 start nodes (frontiers of thousands of
    // nodes, so two workers split each hop) in 2 and 3 hops.
    for hops in [2, 3] {
        let scan = node(OpKind::AllNodesScan { out: 0 }, vec![arg()]);
        let filter = node(
            OpKind::Filter {
                predicate: Expr::Binary(BinaryOp::Lt, Box::new(prop(0, "id")), Box::new(int(3000))),
            },
            vec![scan],
        );
        let walk = node(
            OpKind::DistinctEndpoints {
                from: 0,
                hops: (0..hops)
                    .map(|_| FrontierHop {
                        types: vec!["NEXT".into()],
                        direction: ExpandDirection::Both,
                        to_labels: vec![],
                    })
                    .collect(),
                to: 1,
            },
            vec![filter],
        );
        let project = node(
            OpKind::Project {
                items: vec![(2, prop(1, "id"))],
            },
            vec![walk],
        );
        let p = plan(project, 3, &[("id", 2)], false);
        let want: Vec<Vec<Value>> = brute_force_endpoints(hops)
            .into_iter()
            .map(|x| vec![Value::Int(x)])
            .collect();
        assert!(want.len() > 3000, "{hops} hops reach {}", want.len());
        for threads in [1, 2] {
            assert_eq!(
                sorted(run(&p, threads)),
                sorted(want.clone()),
                "{hops} hops, {threads} threads"
            );
        }
    }
}

#[test]
fn optional_unwind_and_subquery() {
    // UNWIND [1, 2, -1] AS i OPTIONAL MATCH (n:All {id: i})-[r]->(m) WHERE m.id = i + 1 RETURN i, m.id
    let unwind = node(
        OpKind::Unwind {
            list: Expr::List(vec![int(1), int(2), int(-1)]),
            out: 0,
        },
        vec![arg()],
    );
    let inner_seek = node(
        OpKind::IndexSeek {
            out: 1,
            label: "All".into(),
            key: "id".into(),
            lookup: IndexLookup::Equal(slot(0)),
        },
        vec![arg()],
    );
    let inner = node(
        OpKind::Filter {
            predicate: Expr::Binary(
                BinaryOp::Eq,
                Box::new(prop(3, "id")),
                Box::new(Expr::Binary(
                    BinaryOp::Add,
                    Box::new(slot(0)),
                    Box::new(int(1)),
                )),
            ),
        },
        vec![expand(
            inner_seek,
            1,
            2,
            3,
            ExpandDirection::Outgoing,
            vec![],
        )],
    );
    let optional = node(
        OpKind::Optional {
            nullable: vec![1, 2, 3],
            scope: Default::default(),
        },
        vec![unwind, inner],
    );
    let project = node(
        OpKind::Project {
            items: vec![(4, prop(3, "id"))],
        },
        vec![optional],
    );
    let rows = sorted(run(&plan(project, 5, &[("i", 0), ("m", 4)], false), 2));
    assert_eq!(
        rows,
        sorted(vec![
            vec![Value::Int(1), Value::Int(2)],
            vec![Value::Int(2), Value::Int(3)],
            vec![Value::Int(-1), Value::Null],
        ])
    );

    // EXISTS as an expression subquery: nodes with an outgoing edge to id 3.
    let sub_plan = node(
        OpKind::Filter {
            predicate: Expr::Binary(BinaryOp::Eq, Box::new(prop(2, "id")), Box::new(int(3))),
        },
        vec![expand(arg(), 0, 1, 2, ExpandDirection::Outgoing, vec![])],
    );
    let scan = node(OpKind::AllNodesScan { out: 0 }, vec![arg()]);
    let filter = node(
        OpKind::Filter {
            predicate: Expr::Subquery(Box::new(sub_plan), SubqueryKind::Exists),
        },
        vec![scan],
    );
    let project = node(
        OpKind::Project {
            items: vec![(3, prop(0, "id"))],
        },
        vec![filter],
    );
    let rows = sorted(run(&plan(project, 4, &[("id", 3)], false), 2));
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(0)],
            vec![Value::Int(1)],
            vec![Value::Int(2)],
            vec![Value::Int(N as i64 - 1)]
        ]
    );
}

#[test]
fn var_length_paths_are_relationship_unique() {
    // MATCH (a:All {id: 0})-[rs:NEXT*1..3]->(b) RETURN count(*)
    let seek = node(
        OpKind::IndexSeek {
            out: 0,
            label: "All".into(),
            key: "id".into(),
            lookup: IndexLookup::Equal(int(0)),
        },
        vec![arg()],
    );
    let var = node(
        OpKind::VarExpand {
            from: 0,
            rels: 1,
            to: 2,
            types: vec!["NEXT".into()],
            direction: ExpandDirection::Outgoing,
            min: 1,
            max: Some(3),
            to_labels: vec![],
            rel_predicate: None,
            node_predicate: None,
            scope: Default::default(),
            into: false,
            distinct_from: vec![],
            optional: false,
        },
        vec![seek],
    );
    let d = DEGREE as i64;
    assert_eq!(
        run(&plan(count_star(var, 3), 4, &[("c", 3)], false), 2),
        vec![vec![Value::Int(d + d * d + d * d * d)]]
    );
}

#[test]
fn timeouts_and_cancellation_stop_the_query() {
    // A cartesian product of all nodes with all nodes with all nodes: far too big to finish.
    let big = node(
        OpKind::CartesianProduct,
        vec![
            node(
                OpKind::CartesianProduct,
                vec![
                    node(OpKind::AllNodesScan { out: 0 }, vec![arg()]),
                    node(OpKind::AllNodesScan { out: 1 }, vec![arg()]),
                ],
            ),
            node(OpKind::AllNodesScan { out: 2 }, vec![arg()]),
        ],
    );
    let p = plan(count_star(big, 3), 4, &[("c", 3)], false);
    let started = std::time::Instant::now();
    let options = QueryOptions {
        timeout: Some(Duration::from_millis(200)),
        ..QueryOptions::default()
    };
    let err = execute(
        &p,
        snap(),
        BTreeMap::new(),
        &options,
        &StatementSettings::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind, rhizome_common::ErrorKind::QueryAborted);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );

    let token = CancelToken::root();
    let options = QueryOptions {
        cancel: Some(token.clone()),
        ..QueryOptions::default()
    };
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        token.cancel();
    });
    let err = execute(
        &p,
        snap(),
        BTreeMap::new(),
        &options,
        &StatementSettings::default(),
    )
    .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(err.kind, rhizome_common::ErrorKind::QueryAborted);

    // A memory limit fails a query cleanly.
    let sort = node(
        OpKind::Sort {
            keys: vec![SortKey {
                slot: 0,
                descending: false,
            }],
        },
        vec![node(OpKind::AllNodesScan { out: 0 }, vec![arg()])],
    );
    let options = QueryOptions {
        memory_limit: Some(10_000),
        ..QueryOptions::default()
    };
    let err = execute(
        &plan(sort, 1, &[("n", 0)], true),
        snap(),
        BTreeMap::new(),
        &options,
        &StatementSettings::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind, rhizome_common::ErrorKind::QueryAborted);
    assert!(err.message.contains("memory"), "{err}");
}

#[test]
fn profile_attributes_time_to_operators() {
    let pool = WorkerPool::new(2);
    let scan = node(OpKind::AllNodesScan { out: 0 }, vec![arg()]);
    let e1 = expand(scan, 0, 1, 2, ExpandDirection::Both, vec![]);
    let p = plan(count_star(e1, 3), 4, &[("c", 3)], false);
    let options = QueryOptions {
        pool: Some(pool),
        ..QueryOptions::default()
    };
    let profile = StatementSettings {
        profile: true,
        ..StatementSettings::default()
    };
    let result = execute(&p, snap(), BTreeMap::new(), &options, &profile).unwrap();
    let report = result.profile.unwrap();
    assert_eq!(result.rows, vec![vec![Value::Int((N * DEGREE * 2) as i64)]]);
    let expand_stats = &report.operators[1];
    assert_eq!(expand_stats.rows, N * DEGREE * 2);
    assert!(report.text.contains("Expand"), "{}", report.text);
    assert!(
        report.attributed() > 0.5,
        "attributed {}",
        report.attributed()
    );
}
