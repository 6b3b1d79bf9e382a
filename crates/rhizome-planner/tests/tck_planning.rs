//! Plans every read-only query of the openCypher TCK that compiles.
//!
//! The queries are extracted locally from the feature files (`executing
//! query:` / `executing control query:` doc strings, with scenario outline
//! examples substituted); procedures declared by a scenario (`there exists a
//! procedure ...`) are known to the planner context. Planning must succeed
//! without error or panic for all of them, except the explained entries of
//! `tck_planning_known_failures.txt` (a ratchet: it may only shrink).

use rhizome_planner::{plan_statement, PlannerContext, ProcedureInfo};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

struct Case {
    id: String,
    query: String,
    procedures: Vec<(String, ProcedureInfo)>,
}

struct TckContext {
    procedures: Vec<(String, ProcedureInfo)>,
}

impl PlannerContext for TckContext {
    fn label_count(&self, _label: &str) -> Option<u64> {
        Some(10)
    }
    fn node_count(&self) -> u64 {
        100
    }
    fn rel_count(&self, _rel_type: Option<&str>) -> u64 {
        200
    }
    fn triple_count(&self, _src: Option<&str>, _t: Option<&str>, _dst: Option<&str>) -> u64 {
        20
    }
    fn has_index(&self, _label: &str, key: &str) -> bool {
        // Pretend some keys are indexed so the seek rules are exercised.
        matches!(key, "name" | "id" | "num")
    }
    fn distinct_values(&self, _label: &str, _key: &str) -> Option<u64> {
        Some(5)
    }
    fn procedure(&self, name: &str) -> Option<ProcedureInfo> {
        self.procedures
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.clone())
    }
}

/// Knows the procedures but has no statistics at all.
struct NoStats(TckContext);

impl PlannerContext for NoStats {
    fn label_count(&self, _label: &str) -> Option<u64> {
        None
    }
    fn node_count(&self) -> u64 {
        0
    }
    fn rel_count(&self, _rel_type: Option<&str>) -> u64 {
        0
    }
    fn triple_count(&self, _src: Option<&str>, _t: Option<&str>, _dst: Option<&str>) -> u64 {
        0
    }
    fn has_index(&self, _label: &str, _key: &str) -> bool {
        false
    }
    fn distinct_values(&self, _label: &str, _key: &str) -> Option<u64> {
        None
    }
    fn procedure(&self, name: &str) -> Option<ProcedureInfo> {
        self.0.procedure(name)
    }
}

fn tck_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tck/features")
}

fn feature_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            feature_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "feature") {
            out.push(p);
        }
    }
}

fn fields(s: &str) -> Vec<String> {
    s.split(',')
        .filter_map(|f| f.split_once("::").map(|(n, _)| n.trim().to_string()))
        .filter(|n| !n.is_empty())
        .collect()
}

fn parse_procedure(line: &str) -> Option<(String, ProcedureInfo)> {
    let rest = line.split("there exists a procedure ").nth(1)?;
    let open = rest.find('(')?;
    let name = rest[..open].trim().to_string();
    let close = rest[open..].find(')')? + open;
    let after = &rest[close + 1..];
    let o_open = after.find('(')?;
    let o_close = after.rfind(')')?;
    Some((
        name,
        ProcedureInfo {
            inputs: fields(&rest[open + 1..close]),
            outputs: fields(&after[o_open + 1..o_close]),
        },
    ))
}

fn table_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

/// Extracts the cases of one feature file.
fn extract(file: &str, text: &str, out: &mut Vec<Case>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut scenario = String::new();
    let mut procedures: Vec<(String, ProcedureInfo)> = Vec::new();
    let mut queries: Vec<String> = Vec::new();
    let mut examples: Vec<Vec<String>> = Vec::new();
    let flush = |scenario: &str,
                 queries: &mut Vec<String>,
                 examples: &mut Vec<Vec<String>>,
                 procedures: &[(String, ProcedureInfo)],
                 out: &mut Vec<Case>| {
        let rows: Vec<Vec<(String, String)>> = if examples.len() > 1 {
            let header = examples[0].clone();
            examples[1..]
                .iter()
                .map(|r| header.iter().cloned().zip(r.iter().cloned()).collect())
                .collect()
        } else {
            vec![Vec::new()]
        };
        for (qi, q) in queries.iter().enumerate() {
            for (ri, row) in rows.iter().enumerate() {
                let mut query = q.clone();
                for (k, v) in row {
                    query = query.replace(&format!("<{k}>"), v);
                }
                out.push(Case {
                    id: format!("{file} :: {scenario} :: q{qi} :: ex{ri}"),
                    query,
                    procedures: procedures.to_vec(),
                });
            }
        }
        queries.clear();
        examples.clear();
    };
    let mut in_examples = false;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("Scenario") {
            flush(&scenario, &mut queries, &mut examples, &procedures, out);
            scenario = line.to_string();
            procedures.clear();
            in_examples = false;
        } else if line.starts_with("Examples:") {
            in_examples = true;
        } else if in_examples && line.starts_with('|') {
            examples.push(table_row(line));
        } else if line.contains("there exists a procedure") {
            if let Some(p) = parse_procedure(line) {
                procedures.push(p);
            }
        } else if line.ends_with("executing query:") || line.ends_with("executing control query:") {
            // The doc string follows.
            let mut j = i + 1;
            while j < lines.len() && !lines[j].trim().starts_with("\"\"\"") {
                j += 1;
            }
            let indent = lines.get(j).map_or(0, |l| l.len() - l.trim_start().len());
            let mut body = Vec::new();
            j += 1;
            while j < lines.len() && !lines[j].trim().starts_with("\"\"\"") {
                let l = lines[j];
                let cut = l.len() - l.trim_start().len();
                body.push(&l[cut.min(indent)..]);
                j += 1;
            }
            queries.push(body.join("\n"));
            i = j;
        }
        i += 1;
    }
    flush(&scenario, &mut queries, &mut examples, &procedures, out);
}

fn known_failures() -> BTreeSet<String> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tck_planning_known_failures.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(" # ").next().unwrap_or(l).trim().to_string())
        .collect()
}

#[test]
fn every_read_only_tck_query_plans() {
    let mut files = Vec::new();
    feature_files(&tck_dir(), &mut files);
    assert!(
        !files.is_empty(),
        "TCK features not found at {}",
        tck_dir().display()
    );
    let mut cases = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        extract(&name, &text, &mut cases);
    }
    let known = known_failures();
    let (mut compiled, mut planned, mut updating) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in &cases {
        let Ok(analyzed) = rhizome_cypher::compile(&case.query) else {
            continue;
        };
        compiled += 1;
        if analyzed.updating {
            updating += 1;
            continue;
        }
        let ctx = TckContext {
            procedures: case.procedures.clone(),
        };
        // With statistics (seeks, joins) and without (ties broken by query order).
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            plan_statement(&analyzed, &ctx)?;
            let empty = TckContext {
                procedures: case.procedures.clone(),
            };
            plan_statement(&analyzed, &NoStats(empty))
        }));
        match result {
            Ok(Ok(_)) => planned += 1,
            Ok(Err(e)) => failures.push((case.id.clone(), format!("{e}"), case.query.clone())),
            Err(_) => failures.push((case.id.clone(), "PANIC".to_string(), case.query.clone())),
        }
    }
    let attempted = compiled - updating;
    println!(
        "TCK planning: {} queries extracted, {compiled} compile, {updating} updating (skipped), {planned}/{attempted} read-only queries planned",
        cases.len()
    );
    let unexpected: Vec<_> = failures
        .iter()
        .filter(|(id, ..)| !known.contains(id))
        .collect();
    for (id, err, q) in &unexpected {
        println!("FAIL {id}: {err}\n    {}", q.replace('\n', "\n    "));
    }
    assert!(
        unexpected.is_empty(),
        "{} TCK queries failed to plan",
        unexpected.len()
    );
}
