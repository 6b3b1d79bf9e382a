//! Filters and projections evaluated a chunk at a time (`rhizome_exec::vector`)
//! give exactly what row-at-a-time evaluation gives: the same rows, the same
//! values and the same errors.
//!
//! Each expression runs twice: as written (evaluated column-wise) and
//! wrapped in `CASE WHEN true THEN … END`, which the vectorized evaluator
//! leaves to the row evaluator.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

mod common;

/// Where the data of [`engine`] lies.
#[derive(Clone, Copy, Debug)]
enum State {
    /// Written by statements: read from the delta layer.
    Written,
    /// Merged into the storage columns by a checkpoint.
    Checkpointed,
    /// Checkpointed, then some nodes changed: base columns and the delta
    /// layer mixed.
    Changed,
}

/// Integers, floats (with NaN and infinities), booleans, strings (with
/// nulls and non-ASCII text), missing properties, a property whose type
/// differs between nodes, and the extreme integers, over several chunks,
/// lying where `state` says.
fn engine(dir: &std::path::Path, state: State) -> Engine {
    let engine = common::empty_engine(dir);
    let setup = [
        "UNWIND range(0, 4999) AS i CREATE (:V {i: i, k: i % 7 - 3, f: toFloat(i) / 8.0, \
         b: i % 3 = 0, s: toString(i % 5), m: CASE WHEN i % 2 = 0 THEN i ELSE toString(i) END, \
         t: CASE WHEN i % 11 = 0 THEN null ELSE 'x' + toString(i % 13) + 'é' END, \
         u: CASE WHEN i < 2000 THEN i % 4 ELSE toString(i % 4) END})",
        "UNWIND range(5000, 5099) AS i CREATE (:V {i: i})",
        "CREATE (:V {i: 9223372036854775807, k: -9223372036854775808, f: 0.0 / 0.0, b: false}), \
         (:V {i: -9223372036854775808, k: 1, f: 1.0 / 0.0, b: true}), \
         (:V {i: 7, k: 2, f: -1.0 / 0.0, m: 2.5})",
        "MATCH (n:V) WHERE n.i % 4 = 0 SET n:W",
    ];
    for q in setup {
        engine
            .execute(q, BTreeMap::new(), &QueryOptions::default())
            .unwrap();
    }
    if !matches!(state, State::Written) {
        assert!(engine.database().checkpoint().unwrap());
    }
    if let State::Changed = state {
        let change = "MATCH (n:V) WHERE n.i % 17 = 0 \
                      SET n.t = CASE WHEN n.i % 2 = 0 THEN 'y' + toString(n.i) END, \
                      n.f = n.f + 1, n.k = n.k * 2";
        engine
            .execute(change, BTreeMap::new(), &QueryOptions::default())
            .unwrap();
    }
    engine
}

/// The rows of `query`, or the error's kind and code.
fn outcome(engine: &Engine, query: &str, threads: usize) -> Result<Vec<Vec<Value>>, String> {
    let options = QueryOptions {
        threads: Some(threads),
        ..QueryOptions::default()
    };
    let strings = ["x1é", "x12é", "y34", "zz"].map(|s| Value::String(s.into()));
    let params = BTreeMap::from([
        ("p".to_string(), Value::Int(2)),
        (
            "ints".to_string(),
            Value::List(vec![Value::Int(-3), Value::Int(0), Value::Int(2)]),
        ),
        ("strs".to_string(), Value::List(strings.to_vec())),
        ("one".to_string(), Value::Int(1)),
    ]);
    engine
        .execute(query, params, &options)
        .map(|r| r.rows.to_vecs())
        .map_err(|e| format!("{:?} {:?}", e.kind, e.code))
}

/// Rows and errors are equal; NaN (not equal to itself) compared by its
/// text. With more than one worker, which failing chunk reports its error
/// first is a race, so then only failing is required of both. Floats need
/// only agree to a relative 1e-12: an aggregate keeps one partial sum per
/// thread that ran its tasks, and even a one-worker query's tasks run on
/// the pool's worker or on the calling thread, so float sums may add their
/// parts in another order (a group summing `i64::MIN + 0.5` with small
/// numbers differed in the last digit, 1 run in about 40).
fn same(
    a: &Result<Vec<Vec<Value>>, String>,
    b: &Result<Vec<Vec<Value>>, String>,
    threads: usize,
) -> bool {
    match (a, b) {
        (Err(x), Err(y)) => threads > 1 || x == y,
        (Ok(a), Ok(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y)))
        }
        _ => false,
    }
}

/// Equal, or floats within 1e-12 of each other relative to the larger
/// (a rounding difference; comparing their text to a number of digits
/// fails whenever the two straddle a rounding boundary of that digit).
fn close(x: &Value, y: &Value) -> bool {
    match (x, y) {
        (Value::Float(a), Value::Float(b)) => {
            a.to_bits() == b.to_bits()
                || (a.is_nan() && b.is_nan())
                || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
        }
        _ => format!("{x:?}") == format!("{y:?}"),
    }
}

const EXPRESSIONS: &[&str] = &[
    // Arithmetic, typed and mixed; overflow and division by zero.
    "n.k + 1",
    "n.k * n.k - n.i",
    "n.i * 2",
    "n.i + n.k",
    "n.k / (n.i % 3)",
    "n.i % n.k",
    "n.i / $p + n.f",
    "n.f / 0",
    "n.f % 0.0",
    "n.k - n.f * 2",
    "-n.k",
    "-n.f",
    "+n.k",
    "-n.i",
    "n.s + n.k",
    "n.m + 1",
    "n.b + 1",
    // Comparisons: integers, floats with NaN and infinities, mixed numbers,
    // strings, booleans, incomparable types, nulls.
    "n.k = 0",
    "n.k <> n.i",
    "n.k < n.f",
    "n.f >= 2.5",
    "n.f = n.f",
    "n.f <> n.f",
    "n.f < n.f",
    "n.s = '3'",
    "n.s < 2",
    "n.s >= '2'",
    "n.b = true",
    "n.b < n.k",
    "n.m > 100",
    "n.missing = 1",
    "n.k > $p",
    "n.k = $absent",
    // Logic with three values and short circuits past errors.
    "n.b AND n.k > 0",
    "n.b OR n.missing",
    "n.b XOR n.k < 0",
    "NOT n.b",
    "NOT n.k",
    "n.missing AND false",
    "n.missing OR true",
    "n.k > 0 AND n.i / n.k > 10",
    "n.k = 0 OR n.i / n.k > 10",
    // Guards whose right side fails on one row only (division by zero at
    // i = 50), which the guard keeps from being evaluated.
    "n.i >= 100 AND n.k / (n.i - 50) > 0",
    "n.i < 100 OR n.k / (n.i - 50) > 0",
    "n.b AND n.k",
    "n.k AND n.b",
    "false AND n.k",
    "n.missing IS NULL",
    "n.k IS NOT NULL AND n.s STARTS WITH '1'",
    "n.s CONTAINS '4' OR n.s ENDS WITH '2'",
    "n",
    "n.i",
    "n = n",
    // Label predicates.
    "n:W",
    "n:V:W",
    "n:Nope",
    "NOT n:W AND n.k > 0",
    // Operators evaluated element by element.
    "n.k ^ 2",
    "n.s =~ '[13]'",
    "n.k IN [1, 2, $p]",
    "n.s IN ['1', '2'] OR n.missing IN [1]",
    // Null tests, IN over constant lists and string predicates over typed
    // string columns (views of the storage bytes), with nulls, mixed-type
    // columns and non-string operands.
    "n.t IS NULL",
    "n.t IS NOT NULL",
    "n.f IS NULL",
    "n.m IS NOT NULL",
    "n.t = 'x3é'",
    "n.t <> 'x3é'",
    "'x3é' = n.t",
    "n.t = n.s",
    "n.t <> n.t",
    "n.t = 3",
    "n.t = null",
    "n.t < 'x5'",
    "n.t >= 'x12é'",
    "'x3' > n.t",
    "n.t <= n.s",
    "n.s > n.t",
    "n.t < null",
    "n.t > 3",
    "n.t <= n.t",
    "n.u < '2'",
    "n.t STARTS WITH 'x1'",
    "n.t ENDS WITH '2é'",
    "n.t CONTAINS '1'",
    "'x12é' CONTAINS n.t",
    "n.t STARTS WITH n.t",
    "n.t STARTS WITH null",
    "n.t CONTAINS 1",
    "n.m STARTS WITH '1'",
    "n.s ENDS WITH n.t",
    "n.t IN ['x1é', 'x2é', 'y34']",
    "n.t IN ['x1é', null]",
    "n.t IN []",
    "n.t IN $strs",
    "n.k IN $ints",
    "n.i IN [1, 2.0, 3]",
    "n.f IN [0.125, 2, 1.0]",
    "n.m IN [2, '3', 2.5]",
    "n.missing IN []",
    "n.missing IN [1]",
    "n.k IN [null, 1]",
    "n.b IN [true]",
    "n.t IN $absent",
    "n.k IN $one",
    "n.k IN null",
    "n.t STARTS WITH 'x' AND n.k IN [0, 1]",
];

/// Runs `vectorized` on one and two workers and `by_row` on one, and
/// asserts they agree ([`same`]); `what` names the case in the message.
fn assert_agree(engine: &Engine, what: &str, vectorized: &str, by_row: &str) {
    let expected = outcome(engine, by_row, 1);
    for threads in [1, 2] {
        let got = outcome(engine, vectorized, threads);
        assert!(
            same(&got, &expected, threads),
            "{what} ({threads} workers):\n got {:.300}\nwant {:.300}",
            format!("{got:?}"),
            format!("{expected:?}")
        );
    }
}

/// `RETURN e` column-wise agrees with `e` evaluated row by row.
fn assert_projection_agrees(engine: &Engine, e: &str) {
    assert_agree(
        engine,
        &format!("RETURN {e}"),
        &format!("MATCH (n:V) RETURN id(n) AS id, {e} AS x ORDER BY id"),
        &format!("MATCH (n:V) RETURN id(n) AS id, CASE WHEN true THEN {e} END AS x ORDER BY id"),
    );
}

/// `WHERE predicate` column-wise agrees with it evaluated row by row.
fn assert_filter_agrees(engine: &Engine, predicate: &str) {
    assert_agree(
        engine,
        &format!("WHERE {predicate}"),
        &format!("MATCH (n:V) WHERE {predicate} RETURN id(n) AS id ORDER BY id"),
        &format!(
            "MATCH (n:V) WHERE CASE WHEN true THEN {predicate} END RETURN id(n) AS id ORDER BY id"
        ),
    );
}

/// An engine per data state: statements' writes in the delta layer, then
/// merged into storage columns.
fn each_state(check: impl Fn(&Engine)) {
    for state in [State::Written, State::Checkpointed, State::Changed] {
        let dir = tempfile::tempdir().unwrap();
        check(&engine(dir.path(), state));
    }
}

#[test]
fn vectorized_projections_equal_row_evaluation() {
    each_state(|engine| {
        for e in EXPRESSIONS {
            assert_projection_agrees(engine, e);
        }
    });
}

#[test]
fn vectorized_filters_equal_row_evaluation() {
    each_state(|engine| {
        for e in EXPRESSIONS {
            assert_filter_agrees(engine, e);
        }
    });
}

#[test]
fn vectorized_results_are_the_hand_computed_ones() {
    each_state(hand_computed);
}

fn hand_computed(engine: &Engine) {
    let count = |q: &str| match outcome(engine, q, 2).unwrap()[0][0] {
        Value::Int(n) => n,
        ref other => panic!("{q}: {other:?}"),
    };
    // k = i % 7 - 3 over 0..5000: i % 7 = 3 for 714 values of i.
    assert_eq!(count("MATCH (n:V) WHERE n.k = 0 RETURN count(*)"), 714);
    // b is true for i % 3 = 0 (1667 of 0..5000) and for one extreme node.
    assert_eq!(count("MATCH (n:V) WHERE n.b RETURN count(*)"), 1668);
    // NaN is not equal to itself; the infinities are.
    assert_eq!(
        count("MATCH (n:V) WHERE n.f <> n.f RETURN count(*)"),
        1,
        "NaN"
    );
    // Rows with a null predicate are dropped, not kept.
    assert_eq!(
        count("MATCH (n:V) WHERE n.missing = 1 OR n.i = 3 RETURN count(*)"),
        1
    );
    let overflow = outcome(engine, "MATCH (n:V) RETURN n.i + 1 AS x", 2).unwrap_err();
    assert!(overflow.contains("Arithmetic"), "{overflow}");
}

#[test]
fn vectorized_grouping_keys_and_aggregate_arguments_equal_row_evaluation() {
    // `n.i % 10` is an integer column without nulls (grouped through the
    // integer table); `n.k % 3` has nulls, `n.m` mixes types; `n.s` and
    // `n.t` are string columns (grouped through the string table), `n.t`
    // with nulls; `n.u` holds integers on the first 2000 nodes and strings
    // after, so one chunk mixes them and later ones are strings.
    let keys = [
        "n.k % 3",
        "n.b",
        "n.s",
        "n.missing",
        "n.f > 100.0",
        "n.i % 10",
        "n.m",
        "n.t",
        "n.u",
    ];
    let aggregates = [
        "count(n)",
        "min(n.i)",
        "max(n.f)",
        "avg(n.i % 1000)",
        "min(n.m)",
        "count(n.k)",
        "sum(n.k)",
        "sum(n.f * 2)",
        "min(n.s)",
        "max(n.i % 7)",
        "avg(n.k + 0.5)",
        "sum(n.m)",
        "count(DISTINCT n.i % 5)",
        "sum(n.i)",
        "min(n.t)",
        "count(n.t)",
        "min(n.f)",
        "avg(n.f)",
    ];
    let by_row = |e: &str| format!("CASE WHEN true THEN {e} END");
    each_state(|engine| {
        // Ungrouped: each aggregate over whole columns, with and without a
        // filter in front (which hands the sink selected columns).
        for aggregate in aggregates.iter().chain(&["count(*)", "sum(n.i % 1000)"]) {
            for filter in ["", "WHERE n.i % 3 <> 1"] {
                let q = format!("MATCH (n:V) {filter} RETURN {aggregate} AS a");
                let row_filter = filter.replace("WHERE ", "WHERE CASE WHEN true THEN ");
                let row_filter = if filter.is_empty() {
                    row_filter
                } else {
                    format!("{row_filter} END")
                };
                let by_row = match aggregate.split_once('(') {
                    Some((_, "*)")) | None => {
                        format!("MATCH (n:V) {row_filter} RETURN {aggregate} AS a")
                    }
                    Some((function, rest)) => {
                        let argument = rest.strip_suffix(')').unwrap();
                        let (distinct, argument) = match argument.strip_prefix("DISTINCT ") {
                            Some(a) => ("DISTINCT ", a),
                            None => ("", argument),
                        };
                        format!(
                            "MATCH (n:V) {row_filter} RETURN {function}({distinct}{}) AS a",
                            by_row(argument)
                        )
                    }
                };
                assert_agree(engine, &q, &q, &by_row);
            }
        }
        for key in keys {
            for aggregate in aggregates {
                let (function, rest) = aggregate.split_once('(').unwrap();
                let argument = rest.strip_suffix(')').unwrap();
                let (distinct, argument) = match argument.strip_prefix("DISTINCT ") {
                    Some(a) => ("DISTINCT ", a),
                    None => ("", argument),
                };
                assert_agree(
                    engine,
                    &format!("{key} / {aggregate}"),
                    &format!("MATCH (n:V) RETURN {key} AS g, {aggregate} AS a ORDER BY g"),
                    &format!(
                        "MATCH (n:V) RETURN {} AS g, {function}({distinct}{}) AS a ORDER BY g",
                        by_row(key),
                        by_row(argument)
                    ),
                );
            }
        }
    });
}

/// Random expressions (seeded, so a failure repeats) over every property
/// kind, literal kind and operator, as projections and as filters.
#[test]
fn random_expressions_agree_with_row_evaluation() {
    const ATOMS: &[&str] = &[
        "n.k",
        "n.i",
        "n.f",
        "n.b",
        "n.s",
        "n.m",
        "n.missing",
        "0",
        "1",
        "-7",
        "2.5",
        "0.0",
        "'1'",
        "n.t",
        "'x1'",
        "'é'",
        "true",
        "false",
        "null",
        "9223372036854775807",
        "$p",
        "n:W",
    ];
    const BINARY: &[&str] = &[
        "+",
        "-",
        "*",
        "/",
        "%",
        "^",
        "=",
        "<>",
        "<",
        ">",
        "<=",
        ">=",
        "AND",
        "OR",
        "XOR",
        "STARTS WITH",
        "CONTAINS",
        "ENDS WITH",
        "IN",
    ];
    struct Random(u64);
    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
        fn expression(&mut self, depth: u32) -> String {
            if depth == 0 || self.below(4) == 0 {
                return ATOMS[self.below(ATOMS.len())].to_string();
            }
            match self.below(10) {
                0 => format!("NOT ({})", self.expression(depth - 1)),
                1 => format!("-({})", self.expression(depth - 1)),
                2 => format!("({}) IS NULL", self.expression(depth - 1)),
                3 => format!("({}) IN [1, '1', null]", self.expression(depth - 1)),
                4 => format!("({}) IN ['x1é', 2, 2.5]", self.expression(depth - 1)),
                5 => format!("({}) IN $strs", self.expression(depth - 1)),
                _ => {
                    let op = BINARY[self.below(BINARY.len())];
                    let (a, b) = (self.expression(depth - 1), self.expression(depth - 1));
                    format!("({a}) {op} ({b})")
                }
            }
        }
    }
    let mut random = Random(2026);
    let expressions: Vec<String> = (0..120).map(|_| random.expression(3)).collect();
    each_state(|engine| {
        for e in &expressions {
            assert_projection_agrees(engine, e);
            // Under `NOT NOT` a top-level AND stays one predicate: the
            // planner would split it into filters it may fold and order
            // apart (a constant null conjunct empties the result before
            // the other one can raise its error).
            assert_filter_agrees(engine, &format!("NOT (NOT ({e}))"));
        }
    });
}

/// Strings held by slots (projected by `WITH`) are viewed in place: filters
/// and projections over them agree with row evaluation.
#[test]
fn string_slots_agree_with_row_evaluation() {
    let expressions = [
        "t STARTS WITH 'x1'",
        "t = 'x3é'",
        "t <> s",
        "t IN ['x1é', null]",
        "t IN $strs",
        "t IS NULL",
        "t CONTAINS s",
        "m ENDS WITH '1'",
        "t ENDS WITH 'é' AND s = '1'",
    ];
    let with = "MATCH (n:V) WITH id(n) AS id, n.t AS t, n.s AS s, n.m AS m";
    each_state(|engine| {
        for e in expressions {
            assert_agree(
                engine,
                e,
                &format!("{with} WHERE {e} RETURN id ORDER BY id"),
                &format!("{with} WHERE CASE WHEN true THEN {e} END RETURN id ORDER BY id"),
            );
            assert_agree(
                engine,
                e,
                &format!("{with} RETURN id, {e} AS x ORDER BY id"),
                &format!("{with} RETURN id, CASE WHEN true THEN {e} END AS x ORDER BY id"),
            );
        }
    });
}
