//! Shared helpers for the TCK-driven tests: extracts the queries of every
//! scenario and what the TCK expects of them at compile time.

#![allow(dead_code)]

use rhizome_cypher::semantic::{AnalyzeOptions, ProcedureSignature, Type};
use rhizome_tck::{load_features, Scenario};
use std::path::PathBuf;

/// Where the TCK lives, relative to this crate.
pub fn tck_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("RHIZOME_TCK_DIR") {
        return PathBuf::from(dir);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::canonicalize(&manifest).unwrap_or(manifest);
    manifest.join("../../../shared/tck")
}

/// What a query is expected to do at compile time.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// Must parse and pass analysis.
    Valid,
    /// Must fail with this kind and code.
    Error(String, String),
}

/// One query to check.
#[derive(Debug, Clone)]
pub struct Case {
    /// `feature file :: scenario name`.
    pub id: String,
    /// The query text.
    pub query: String,
    /// The expectation.
    pub expect: Expect,
    /// Analysis options derived from the scenario (procedures, parameters).
    pub options: AnalyzeOptions,
    /// Whether this is the scenario's main query (vs setup/control).
    pub main: bool,
}

fn parse_type(t: &str) -> Type {
    match t.trim().trim_end_matches('?').to_ascii_uppercase().as_str() {
        "INTEGER" => Type::Integer,
        "FLOAT" => Type::Float,
        "STRING" => Type::String,
        "BOOLEAN" => Type::Boolean,
        "NODE" => Type::Node,
        "RELATIONSHIP" => Type::Relationship,
        "PATH" => Type::Path,
        "MAP" => Type::Map,
        _ => Type::Any,
    }
}

fn parse_fields(s: &str) -> Vec<(String, Type)> {
    s.split(',')
        .filter(|f| !f.trim().is_empty())
        .filter_map(|f| {
            let (n, t) = f.split_once("::")?;
            Some((n.trim().to_string(), parse_type(t)))
        })
        .collect()
}

/// Parses `there exists a procedure test.my.proc(in :: INTEGER?) :: (out :: INTEGER?):`.
fn parse_procedure(text: &str) -> Option<ProcedureSignature> {
    let rest = text.strip_prefix("there exists a procedure ")?;
    let open = rest.find('(')?;
    let name = rest[..open].trim().to_string();
    let close = rest[open..].find(')')? + open;
    let inputs = parse_fields(&rest[open + 1..close]);
    let after = &rest[close + 1..];
    let o_open = after.find('(')?;
    let o_close = after.rfind(')')?;
    let outputs = parse_fields(&after[o_open + 1..o_close]);
    Some(ProcedureSignature {
        name,
        inputs,
        optional: 0,
        outputs,
    })
}

fn scenario_cases(file: &str, s: &Scenario, out: &mut Vec<Case>) {
    let id = format!("{file} :: {}", s.name);
    let mut procedures = Vec::new();
    let mut parameters = Vec::new();
    let mut expect = Expect::Valid;
    for step in &s.steps {
        if let Some(p) = parse_procedure(&step.text) {
            procedures.push(p);
        }
        if step.text.starts_with("parameters are") {
            if let Some(t) = &step.table {
                parameters.extend(t.iter().filter_map(|r| r.first().cloned()));
            }
        }
        if let Some(rest) = step
            .text
            .strip_prefix("a ")
            .or_else(|| step.text.strip_prefix("an "))
        {
            if let Some((kind, tail)) = rest.split_once(" should be raised at compile time: ") {
                expect = Expect::Error(kind.to_string(), tail.trim().to_string());
            }
        }
    }
    let options = AnalyzeOptions {
        procedures: Some(procedures),
        parameters: Some(parameters),
    };
    for step in &s.steps {
        let Some(doc) = &step.doc_string else {
            continue;
        };
        let (main, e) = if step.text.starts_with("executing query") {
            (true, expect.clone())
        } else if step.text.starts_with("having executed")
            || step.text.starts_with("executing control query")
        {
            (false, Expect::Valid)
        } else {
            continue;
        };
        out.push(Case {
            id: id.clone(),
            query: doc.clone(),
            expect: e,
            options: options.clone(),
            main,
        });
    }
}

/// Every query of every TCK scenario with its expectation.
pub fn tck_cases() -> Vec<Case> {
    let dir = tck_dir();
    let features = load_features(&dir.join("features")).expect("TCK features load");
    let mut out = Vec::new();
    let mut scenarios = 0;
    for f in &features {
        let path = f
            .path
            .as_ref()
            .map(|p| p.strip_prefix(&dir).unwrap_or(p).display().to_string())
            .unwrap_or_default();
        for s in &f.scenarios {
            scenarios += 1;
            scenario_cases(&path, s, &mut out);
        }
    }
    assert_eq!(scenarios, 3292, "expanded TCK scenario count");
    // The named graphs' creation scripts must compile too.
    for g in ["binary-tree-1", "binary-tree-2"] {
        let script =
            std::fs::read_to_string(dir.join(format!("graphs/{g}/{g}.cypher"))).unwrap_or_default();
        for q in script.split(';').filter(|q| !q.trim().is_empty()) {
            out.push(Case {
                id: format!("graphs/{g}"),
                query: q.to_string(),
                expect: Expect::Valid,
                options: AnalyzeOptions::default(),
                main: false,
            });
        }
    }
    out
}
