//! End-to-end tests from plain-text case files in `tests/cases/*.test`.
//!
//! Format (one directive per line; `#` starts a comment line):
//! - `dataset chain NODES DEGREE` / `dataset likes PERSONS ITEMS LIKES SEED`:
//!   generate that graph, import it, and run the file's queries against it;
//! - `query` or `query ordered`, the query text on the following lines, a
//!   `----` line, the header (column names separated by ` | `) and the
//!   expected rows, values printed as the openCypher TCK prints them; rows are
//!   compared as a multiset unless `ordered`; the case ends at a blank line;
//! - `error KIND [CODE]`, then the query: it must fail with that classification.
//! - `plan TEXT`, then the query: its `EXPLAIN` output must contain TEXT
//!   (e.g. `plan IndexSeek` checks that an index is used).
//! - `dataset empty`: start from an empty database; the file is then a
//!   script: every query runs once, in order, and may write (later cases see
//!   earlier writes; a failed statement must change nothing).
//! - after a query's rows, `counters name=value ...` checks the statement's
//!   side-effect counters (`nodes_created`, `relationships_deleted`, ...);
//!   counters not named must be zero.
//! - `param NAME = EXPR` (one line each, before a case): the next case runs
//!   with parameter `$NAME` set to the value of the Cypher expression EXPR
//!   (evaluated with `RETURN EXPR`), so a value reaches the query untyped.
//!
//! Every query of a generated dataset runs with 1 worker and with all
//! workers; both must give the expected result.

use rhizome_engine::{Engine, QueryOptions, Rows};
use rhizome_exec::context::GraphAccess;
use rhizome_functions::display::format_value;
use rhizome_import::generate::{generate_chain, generate_likes, ChainOptions, LikesOptions};
use rhizome_import::{import, NoProgress};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

fn open_dataset(spec: &[&str], work: &Path) -> Engine {
    let csv = work.join("csv");
    if spec == ["empty"] {
        return common::empty_engine(work);
    }
    let db = work.join("db");
    let options = match spec {
        ["chain", nodes, degree] => generate_chain(
            &csv,
            &ChainOptions {
                nodes: nodes.parse().unwrap(),
                degree: degree.parse().unwrap(),
            },
        ),
        ["likes", persons, items, likes, seed] => generate_likes(
            &csv,
            &LikesOptions {
                persons: persons.parse().unwrap(),
                items: items.parse().unwrap(),
                likes_per_person: likes.parse().unwrap(),
                seed: seed.parse().unwrap(),
            },
        ),
        other => panic!("unknown dataset {other:?}"),
    }
    .unwrap();
    import(&db, &options, &NoProgress).unwrap();
    Engine::open(&db).unwrap()
}

fn render(engine: &Engine, rows: &Rows) -> Vec<String> {
    let snapshot = engine.database().snapshot();
    let graph = GraphAccess(&snapshot);
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| format_value(v, &graph))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

struct Case {
    line: usize,
    query: String,
    expect: Expect,
    /// Parameters as (name, Cypher expression of the value).
    params: Vec<(String, String)>,
}

enum Expect {
    Rows {
        header: String,
        rows: Vec<String>,
        ordered: bool,
        counters: Option<String>,
    },
    Error {
        kind: String,
        code: Option<String>,
    },
    Plan {
        needle: String,
    },
}

fn parse_cases(text: &str) -> (Vec<String>, Vec<Case>) {
    let mut dataset = Vec::new();
    let mut cases = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut params: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        let start = i + 1;
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let cases_before = cases.len();
        match words[0] {
            "dataset" => dataset = words[1..].iter().map(|s| s.to_string()).collect(),
            "param" => {
                let (name, expr) = line["param".len()..]
                    .split_once('=')
                    .unwrap_or_else(|| panic!("line {start}: param NAME = EXPR"));
                params.push((name.trim().to_string(), expr.trim().to_string()));
            }
            "query" => {
                let ordered = words.get(1) == Some(&"ordered");
                let mut query = Vec::new();
                while lines[i].trim_end() != "----" {
                    query.push(lines[i]);
                    i += 1;
                }
                i += 1;
                let header = lines[i].trim_end().to_string();
                i += 1;
                let mut rows = Vec::new();
                let mut counters = None;
                while i < lines.len() && !lines[i].trim().is_empty() {
                    if let Some(c) = lines[i].trim_end().strip_prefix("counters") {
                        counters = Some(c.trim().to_string());
                    } else {
                        rows.push(lines[i].trim_end().to_string());
                    }
                    i += 1;
                }
                cases.push(Case {
                    params: Vec::new(),
                    line: start,
                    query: query.join("\n"),
                    expect: Expect::Rows {
                        header,
                        rows,
                        ordered,
                        counters,
                    },
                });
            }
            "plan" => {
                let mut query = Vec::new();
                while i < lines.len() && !lines[i].trim().is_empty() {
                    query.push(lines[i]);
                    i += 1;
                }
                cases.push(Case {
                    params: Vec::new(),
                    line: start,
                    query: query.join("\n"),
                    expect: Expect::Plan {
                        needle: words[1..].join(" "),
                    },
                });
            }
            "error" => {
                let mut query = Vec::new();
                while i < lines.len() && !lines[i].trim().is_empty() {
                    query.push(lines[i]);
                    i += 1;
                }
                cases.push(Case {
                    params: Vec::new(),
                    line: start,
                    query: query.join("\n"),
                    expect: Expect::Error {
                        kind: words[1].to_string(),
                        code: words.get(2).map(|s| s.to_string()),
                    },
                });
            }
            other => panic!("line {start}: unknown directive {other}"),
        }
        if cases.len() > cases_before {
            if let Some(case) = cases.last_mut() {
                case.params = std::mem::take(&mut params);
            }
        }
    }
    (dataset, cases)
}

fn run_file(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let (dataset, cases) = parse_cases(&text);
    let work = tempfile::tempdir().unwrap();
    let spec: Vec<&str> = dataset.iter().map(String::as_str).collect();
    let engine = open_dataset(&spec, work.path());
    let mut failures = Vec::new();
    let name = path.file_name().unwrap().to_string_lossy();
    let script = spec == ["empty"];
    let thread_counts: &[usize] = if script { &[1] } else { &[1, 2] };
    for case in &cases {
        for &threads in thread_counts {
            let options = QueryOptions {
                threads: Some(threads),
                ..QueryOptions::default()
            };
            let at = format!("{name}:{} ({threads} thread(s))", case.line);
            if let Expect::Plan { needle } = &case.expect {
                match engine.explain(&case.query, &BTreeMap::new()) {
                    Ok(plan) if plan.contains(needle.as_str()) => {}
                    Ok(plan) => failures.push(format!("{at}: plan lacks {needle:?}:\n{plan}")),
                    Err(e) => failures.push(format!("{at}: unexpected error {e}")),
                }
                continue;
            }
            let outcome = engine.execute(&case.query, case_params(&engine, case), &options);
            match (&case.expect, outcome) {
                (
                    Expect::Rows {
                        header,
                        rows,
                        ordered,
                        counters,
                    },
                    Ok(result),
                ) => {
                    let got_counters = counters_text(&result.counters);
                    if let Some(c) = counters {
                        if &got_counters != c {
                            failures.push(format!(
                                "{at}: expected counters {c:?}, got {got_counters:?}"
                            ));
                        }
                    }
                    let got_header = result.columns.join(" | ");
                    let mut got = render(&engine, &result.rows);
                    let mut want = rows.clone();
                    if !ordered {
                        got.sort();
                        want.sort();
                    }
                    if &got_header != header || got != want {
                        failures.push(format!(
                            "{at}: expected\n{header}\n{}\ngot\n{got_header}\n{}",
                            want.join("\n"),
                            got.join("\n")
                        ));
                    }
                }
                (Expect::Rows { .. }, Err(e)) => {
                    failures.push(format!("{at}: unexpected error {e}"))
                }
                (Expect::Error { kind, code }, Err(e)) => {
                    if e.kind.name() != kind || (code.is_some() && e.code != code.as_deref()) {
                        failures.push(format!("{at}: expected {kind} {code:?}, got {e}"));
                    }
                }
                (Expect::Error { kind, .. }, Ok(_)) => {
                    failures.push(format!("{at}: expected {kind}, query succeeded"))
                }
                (Expect::Plan { .. }, _) => unreachable!("plan cases are checked above"),
            }
        }
    }
    failures
}

/// The parameters of `case`, each the value of its Cypher expression.
fn case_params(engine: &Engine, case: &Case) -> BTreeMap<String, rhizome_common::Value> {
    case.params
        .iter()
        .map(|(name, expr)| {
            let result = engine
                .execute(
                    &format!("RETURN {expr} AS v"),
                    BTreeMap::new(),
                    &QueryOptions::default(),
                )
                .unwrap_or_else(|e| panic!("param {name} = {expr}: {e}"));
            (name.clone(), result.rows[0][0].clone())
        })
        .collect()
}

/// The non-zero counters as `name=value` words.
fn counters_text(c: &rhizome_engine::WriteCounters) -> String {
    [
        ("nodes_created", c.nodes_created),
        ("nodes_deleted", c.nodes_deleted),
        ("relationships_created", c.relationships_created),
        ("relationships_deleted", c.relationships_deleted),
        ("properties_set", c.properties_set),
        ("labels_added", c.labels_added),
        ("labels_removed", c.labels_removed),
        ("indexes_added", c.indexes_added),
        ("indexes_removed", c.indexes_removed),
        ("constraints_added", c.constraints_added),
        ("constraints_removed", c.constraints_removed),
    ]
    .iter()
    .filter(|(_, v)| *v > 0)
    .map(|(n, v)| format!("{n}={v}"))
    .collect::<Vec<_>>()
    .join(" ")
}

#[test]
fn case_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for f in &files {
        failures.extend(run_file(f));
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
