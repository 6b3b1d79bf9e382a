//! The runner on small feature files of its own: what passes must pass, what
//! is wrong must fail with a reason, and side effects are measured from
//! snapshots.

use rhizome_common::Value;
use rhizome_tck_runner::side_effects::{GraphState, SideEffects};
use rhizome_tck_runner::{run, Outcome, RunOptions};
use std::path::Path;

const FEATURE: &str = r#"
Feature: Runner self-test

  Scenario: [1] ordered result
    Given an empty graph
    When executing query:
      """
      UNWIND [3, 1, 2] AS x RETURN x ORDER BY x
      """
    Then the result should be, in order:
      | x |
      | 1 |
      | 2 |
      | 3 |
    And no side effects

  Scenario: [2] rows in any order, maps by key, floats apart from integers
    Given any graph
    When executing query:
      """
      UNWIND [{b: 1.5, a: [1, 2]}, {b: 2.0, a: []}] AS m RETURN m
      """
    Then the result should be, in any order:
      | m                     |
      | {b: 2.0, a: []}       |
      | {a: [1, 2], b: 1.5}   |

  Scenario: [3] wrong value fails
    Given any graph
    When executing query:
      """
      RETURN 1 AS x
      """
    Then the result should be, in any order:
      | x   |
      | 1.0 |

  Scenario: [4] wrong order fails
    Given any graph
    When executing query:
      """
      UNWIND [2, 1] AS x RETURN x ORDER BY x
      """
    Then the result should be, in order:
      | x |
      | 2 |
      | 1 |

  Scenario: [5] list element order ignored on request
    Given any graph
    When executing query:
      """
      RETURN [2, 1, 2] AS l
      """
    Then the result should be (ignoring element order for lists):
      | l         |
      | [1, 2, 2] |

  Scenario: [6] expected error
    Given any graph
    When executing query:
      """
      RETURN x
      """
    Then a SyntaxError should be raised at compile time: UndefinedVariable

  Scenario: [7] error of the wrong phase fails
    Given any graph
    When executing query:
      """
      RETURN x
      """
    Then a SyntaxError should be raised at runtime: UndefinedVariable

  Scenario: [8] parameters and a test procedure
    Given an empty graph
    And there exists a procedure test.my.proc(in :: INTEGER?) :: (out :: STRING?):
      | in   | out   |
      | 1    | 'one' |
      | null | 'nix' |
    And parameters are:
      | p | 1 |
    When executing query:
      """
      CALL test.my.proc($p) YIELD out RETURN out
      """
    Then the result should be, in any order:
      | out   |
      | 'one' |

  Scenario: [9] side effects are checked
    Given an empty graph
    When executing query:
      """
      RETURN 1 AS x
      """
    Then the result should be, in any order:
      | x |
      | 1 |
    And the side effects should be:
      | +nodes | 1 |

  Scenario: [10] unknown steps error
    Given a graph nobody knows
    When executing query:
      """
      RETURN 1
      """
    Then the result should be empty

  Scenario: [11] a wildcard detail accepts any detail code
    Given any graph
    When executing query:
      """
      RETURN x
      """
    Then a SyntaxError should be raised at compile time: *

  Scenario: [12] a wildcard detail still checks the kind
    Given any graph
    When executing query:
      """
      RETURN x
      """
    Then a TypeError should be raised at compile time: *

  Scenario: [13] a wildcard detail still checks the phase
    Given any graph
    When executing query:
      """
      RETURN x
      """
    Then a SyntaxError should be raised at runtime: *
"#;

fn outcomes() -> Vec<(String, Outcome)> {
    let dir = tempfile::tempdir().unwrap();
    let features = dir.path().join("features");
    std::fs::create_dir_all(features.join("clauses/self")).unwrap();
    std::fs::write(features.join("clauses/self/Self1.feature"), FEATURE).unwrap();
    let report = run(&features, &RunOptions::default());
    assert_eq!(report.features.len(), 1);
    assert_eq!(report.features[0].category, "clauses/self");
    let text = report.render();
    assert!(text.trim_end().ends_with("6 passed, 7 failed"), "{text}");
    report.features[0]
        .scenarios
        .iter()
        .map(|s| (s.name.clone(), s.outcome.clone()))
        .collect()
}

#[test]
fn scenarios_pass_and_fail_for_the_right_reasons() {
    let outcomes = outcomes();
    let by_number = |n: &str| {
        outcomes
            .iter()
            .find(|(name, _)| name.starts_with(&format!("[{n}]")))
            .map(|(_, o)| o.clone())
            .unwrap()
    };
    for n in ["1", "2", "5", "6", "8", "11"] {
        assert_eq!(by_number(n), Outcome::Passed, "scenario {n}");
    }
    let failed = |n: &str| match by_number(n) {
        Outcome::Failed { detail, .. } => detail,
        other => panic!("scenario {n}: {other:?}"),
    };
    assert!(failed("3").contains("missing | 1.0 |"), "{}", failed("3"));
    assert!(failed("4").contains("wrong order"), "{}", failed("4"));
    assert!(failed("7").contains("at compile time"), "{}", failed("7"));
    assert!(
        failed("9").contains("expected +nodes 1, got none"),
        "{}",
        failed("9")
    );
    assert!(matches!(by_number("10"), Outcome::Errored(_)));
    assert!(
        failed("12").contains("expected TypeError at compile time: *"),
        "{}",
        failed("12")
    );
    assert!(
        failed("13").contains("expected SyntaxError at runtime: *"),
        "{}",
        failed("13")
    );
}

#[test]
fn side_effects_follow_the_tck_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    rhizome_storage::builder::GraphBuilder::new()
        .write(&path)
        .unwrap();
    let db = rhizome_storage::Database::open(Path::new(&path)).unwrap();
    let before = GraphState::capture(&db.snapshot());
    let mut txn = db.begin_write().unwrap();
    let a = txn
        .create_node(&["A", "B"], &[("name", Value::from("a"))])
        .unwrap();
    let b = txn.create_node(&["A"], &[]).unwrap();
    txn.create_relationship(a, b, "T", &[("w", Value::Int(1))])
        .unwrap();
    txn.commit().unwrap();
    let middle = GraphState::capture(&db.snapshot());
    let created = SideEffects::between(&before, &middle);
    assert_eq!(
        created.to_string(),
        "+nodes 2, +relationships 1, +properties 2, +labels 2"
    );
    let mut txn = db.begin_write().unwrap();
    txn.set_node_property(a, "name", Value::from("z")).unwrap();
    txn.remove_label(a, "B").unwrap();
    txn.delete_node(b, true).unwrap();
    txn.commit().unwrap();
    let after = GraphState::capture(&db.snapshot());
    assert_eq!(
        SideEffects::between(&middle, &after).to_string(),
        "-nodes 1, -relationships 1, +properties 1, -properties 2, -labels 1"
    );
}
