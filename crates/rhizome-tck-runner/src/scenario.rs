//! Running one scenario: interpreting its steps against a fresh database.

use crate::side_effects::{GraphState, SideEffects};
use crate::value::{multiset_match, parse_value, TckValue};
use crate::{Outcome, RunOptions};
use rhizome_common::{Error, Value};
use rhizome_engine::procedures::Procedure;
use rhizome_engine::{Engine, QueryOptions, QueryResult};
use rhizome_exec::context::GraphAccess;
use rhizome_tck::{Scenario, Step, StepKind};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// When an error was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Parsing, analysis or planning.
    Compile,
    /// Execution.
    Runtime,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Compile => "compile time",
            Phase::Runtime => "runtime",
        }
    }
}

/// The outcome of the last `When` step.
struct Executed {
    result: Result<QueryResult, (Error, Phase)>,
    before: GraphState,
    after: GraphState,
}

struct Run<'a> {
    engine: Engine,
    params: BTreeMap<String, Value>,
    last: Option<Executed>,
    options: &'a RunOptions,
}

/// A failed scenario's cause (a short, groupable category) and detail.
fn fail(cause: impl Into<String>, detail: impl Into<String>) -> Outcome {
    Outcome::Failed {
        cause: cause.into(),
        detail: one_line(&detail.into()),
    }
}

fn errored(detail: impl Into<String>) -> Outcome {
    Outcome::Errored(one_line(&detail.into()))
}

/// Collapses whitespace and bounds the length so a reason fits on one line.
pub(crate) fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 300 {
        let mut t: String = s.chars().take(297).collect();
        t.push_str("...");
        t
    } else {
        s
    }
}

fn describe(e: &Error) -> String {
    match e.code {
        Some(code) => format!("{}({code}): {}", e.kind.name(), e.message),
        None => format!("{}: {}", e.kind.name(), e.message),
    }
}

/// A groupable cause for an unexpected error: unsupported features by
/// their message, other errors by kind and code.
fn error_cause(e: &Error) -> String {
    if e.message.contains("not supported yet") {
        return format!("not supported yet: {}", e.message);
    }
    match e.code {
        Some(code) => format!("{}({code})", e.kind.name()),
        None => e.kind.name().to_string(),
    }
}

/// Runs `scenario` in a new database under `workdir`.
pub(crate) fn run_scenario(
    scenario: &Scenario,
    workdir: &Path,
    graphs_dir: Option<&Path>,
    options: &RunOptions,
) -> Outcome {
    if let Err(e) = rhizome_storage::builder::GraphBuilder::new().write(workdir) {
        return errored(format!("creating an empty database: {e}"));
    }
    let engine = match Engine::open(workdir) {
        Ok(engine) => engine,
        Err(e) => return errored(format!("opening the empty database: {e}")),
    };
    let mut run = Run {
        engine,
        params: BTreeMap::new(),
        last: None,
        options,
    };
    for step in &scenario.steps {
        if let Some(outcome) = run.step(step, graphs_dir) {
            return outcome;
        }
    }
    if run.last.is_none() {
        return errored("the scenario executes no query");
    }
    Outcome::Passed
}

impl Run<'_> {
    fn query_options(&self) -> QueryOptions {
        QueryOptions {
            threads: self.options.query_threads,
            timeout: Some(self.options.query_timeout),
            ..QueryOptions::default()
        }
    }

    /// Runs one step; `Some` ends the scenario with that outcome.
    fn step(&mut self, step: &Step, graphs_dir: Option<&Path>) -> Option<Outcome> {
        let text = step.text.trim();
        match step.kind {
            StepKind::Given => self.given(step, text, graphs_dir),
            StepKind::When => self.when(step, text),
            StepKind::Then => self.then(step, text),
        }
    }

    fn setup_query(&mut self, query: &str, what: &str) -> Option<Outcome> {
        match self
            .engine
            .execute(query, self.params.clone(), &self.query_options())
        {
            Ok(_) => None,
            Err(e) => Some(fail(
                format!("setup failed: {}", error_cause(&e)),
                format!("{what} failed: {}", describe(&e)),
            )),
        }
    }

    fn given(&mut self, step: &Step, text: &str, graphs_dir: Option<&Path>) -> Option<Outcome> {
        let text = text.trim_end_matches(':');
        if text == "an empty graph" || text == "any graph" {
            return None;
        }
        if let Some(name) = text
            .strip_prefix("the ")
            .and_then(|t| t.strip_suffix(" graph"))
        {
            return self.named_graph(name.trim(), graphs_dir);
        }
        if text == "having executed" || text == "after having executed" {
            let Some(query) = &step.doc_string else {
                return Some(errored(format!("step `{text}` has no query")));
            };
            let query = query.clone();
            return self.setup_query(&query, "setup query");
        }
        if text == "parameters are" || text == "parameter values are" {
            let Some(table) = &step.table else {
                return Some(errored("`parameters are:` without a table"));
            };
            for row in table {
                let [name, value] = row.as_slice() else {
                    return Some(errored(format!("parameter row {row:?} has not two cells")));
                };
                match parse_value(value).and_then(|v| v.to_value()) {
                    Ok(v) => {
                        self.params.insert(name.trim().to_string(), v);
                    }
                    Err(e) => return Some(errored(format!("parameter `{name}`: {e}"))),
                }
            }
            return None;
        }
        if let Some(signature) = text.strip_prefix("there exists a procedure ") {
            return match procedure(signature, step.table.as_deref().unwrap_or(&[])) {
                Ok(p) => {
                    self.engine.register_procedure(p);
                    None
                }
                Err(e) => Some(errored(format!("procedure `{signature}`: {e}"))),
            };
        }
        Some(errored(format!("unknown step `Given {text}`")))
    }

    fn named_graph(&mut self, name: &str, graphs_dir: Option<&Path>) -> Option<Outcome> {
        let Some(dir) = graphs_dir else {
            return Some(errored(format!("graph `{name}`: no graphs directory")));
        };
        let path = dir.join(name).join(format!("{name}.cypher"));
        let script = match std::fs::read_to_string(&path) {
            Ok(s) => s,
            Err(e) => return Some(errored(format!("graph `{name}`: {}: {e}", path.display()))),
        };
        for statement in split_statements(&script) {
            if let Some(outcome) = self.setup_query(&statement, &format!("graph `{name}`")) {
                return Some(outcome);
            }
        }
        None
    }

    fn when(&mut self, step: &Step, text: &str) -> Option<Outcome> {
        let (head, inline) = match text.split_once(':') {
            Some((h, rest)) => (h.trim(), rest.trim()),
            None => (text, ""),
        };
        if head != "executing query" && head != "executing control query" {
            return Some(errored(format!("unknown step `When {text}`")));
        }
        let query = match &step.doc_string {
            Some(q) => q.clone(),
            None if !inline.is_empty() => inline.to_string(),
            None => return Some(errored("`executing query:` without a query")),
        };
        let before = GraphState::capture(&self.engine.database().snapshot());
        let result = match self.engine.explain(&query, &self.params) {
            Err(e) => Err((e, Phase::Compile)),
            Ok(_) => self
                .engine
                .execute(&query, self.params.clone(), &self.query_options())
                .map_err(|e| (e, Phase::Runtime)),
        };
        let after = GraphState::capture(&self.engine.database().snapshot());
        self.last = Some(Executed {
            result,
            before,
            after,
        });
        None
    }

    fn then(&mut self, step: &Step, text: &str) -> Option<Outcome> {
        let Some(last) = &self.last else {
            return Some(errored(format!("`Then {text}` before any query")));
        };
        if text == "no side effects" || text.starts_with("the side effects should be") {
            let expected = match &step.table {
                Some(table) if text != "no side effects" => match SideEffects::from_table(table) {
                    Ok(s) => s,
                    Err(e) => return Some(errored(e)),
                },
                _ => SideEffects::default(),
            };
            if let Err((e, _)) = &last.result {
                return Some(fail(
                    format!("unexpected error: {}", error_cause(e)),
                    format!("query failed: {}", describe(e)),
                ));
            }
            let actual = SideEffects::between(&last.before, &last.after);
            if actual != expected {
                return Some(fail(
                    "wrong side effects",
                    format!("side effects: expected {expected}, got {actual}"),
                ));
            }
            return None;
        }
        if let Some(rest) = text.strip_prefix("the result should be") {
            let ordered = rest.contains("in order");
            let unordered_lists = rest.contains("ignoring element order for lists");
            let result = match &last.result {
                Ok(r) => r,
                Err((e, phase)) => {
                    return Some(fail(
                        format!("unexpected error: {}", error_cause(e)),
                        format!("query failed at {}: {}", phase.name(), describe(e)),
                    ))
                }
            };
            let empty_table = Vec::new();
            let table = if rest.trim() == "empty" {
                &empty_table
            } else {
                match &step.table {
                    Some(t) => t,
                    None => return Some(errored(format!("`{text}` without a table"))),
                }
            };
            let snapshot = self.engine.database().snapshot();
            return compare_result(result, table, ordered, unordered_lists, &snapshot).err();
        }
        if let Some(rest) = text.strip_prefix("a ").or_else(|| text.strip_prefix("an ")) {
            if let Some((kind, rest)) = rest.split_once(" should be raised at ") {
                let (phase, detail) = match rest.split_once(':') {
                    Some((p, d)) => (p.trim(), d.trim()),
                    None => (rest.trim(), ""),
                };
                return check_error(&last.result, kind.trim(), phase, detail);
            }
        }
        Some(errored(format!("unknown step `Then {text}`")))
    }
}

fn check_error(
    result: &Result<QueryResult, (Error, Phase)>,
    kind: &str,
    phase: &str,
    detail: &str,
) -> Option<Outcome> {
    let expected = format!("{kind} at {phase}: {detail}");
    let (e, actual_phase) = match result {
        Ok(r) => {
            return Some(fail(
                format!("no error raised (expected {kind} {detail})"),
                format!("expected {expected}, got {} row(s)", r.rows.len()),
            ))
        }
        Err(e) => e,
    };
    let phase_ok = match phase {
        "compile time" => *actual_phase == Phase::Compile,
        "runtime" => *actual_phase == Phase::Runtime,
        _ => true,
    };
    let kind_ok = e.kind.name() == kind;
    // `*` in place of the detail code accepts any detail (the TCK writes it
    // where implementations may differ), but the kind and phase still count.
    let detail_ok = detail.is_empty() || detail == "*" || e.code == Some(detail);
    if kind_ok && detail_ok && phase_ok {
        return None;
    }
    let cause = if !kind_ok || !detail_ok {
        format!(
            "wrong error: expected {kind}({detail}), got {}",
            error_cause(e)
        )
    } else {
        format!(
            "wrong phase: {kind}({detail}) at {} instead of {phase}",
            actual_phase.name()
        )
    };
    Some(fail(
        cause,
        format!(
            "expected {expected}, got {} at {}",
            describe(e),
            actual_phase.name()
        ),
    ))
}

fn compare_result(
    result: &QueryResult,
    table: &[Vec<String>],
    ordered: bool,
    unordered_lists: bool,
    snapshot: &rhizome_storage::Snapshot,
) -> Result<(), Outcome> {
    let graph = GraphAccess(snapshot);
    let Some((header, rows)) = table.split_first() else {
        if result.rows.is_empty() {
            return Ok(());
        }
        let first: Vec<String> = result.rows[0]
            .iter()
            .map(|v| TckValue::from_actual(v, &graph).to_string())
            .collect();
        return Err(fail(
            "wrong result",
            format!(
                "expected no rows, got {} (first: | {} |)",
                result.rows.len(),
                first.join(" | ")
            ),
        ));
    };
    // Columns are matched by name: the actual column index of each expected one.
    let mut columns = Vec::with_capacity(header.len());
    for name in header {
        match result.columns.iter().position(|c| c == name.trim()) {
            Some(i) => columns.push(i),
            None => {
                return Err(fail(
                    "wrong columns",
                    format!("expected columns {:?}, got {:?}", header, result.columns),
                ))
            }
        }
    }
    if columns.len() != result.columns.len() {
        return Err(fail(
            "wrong columns",
            format!("expected columns {:?}, got {:?}", header, result.columns),
        ));
    }
    let mut expected = Vec::with_capacity(rows.len());
    for row in rows {
        let cells: Result<Vec<TckValue>, _> = row.iter().map(|c| parse_value(c)).collect();
        match cells {
            Ok(cells) if cells.len() == header.len() => expected.push(cells),
            Ok(_) => return Err(errored(format!("row {row:?} does not match the header"))),
            Err(e) => return Err(errored(format!("expected value: {e}"))),
        }
    }
    let actual: Vec<Vec<TckValue>> = result
        .rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|&i| {
                    row.get(i)
                        .map(|v| TckValue::from_actual(v, &graph))
                        .unwrap_or(TckValue::Unreadable("missing cell".into()))
                })
                .collect()
        })
        .collect();
    let row_eq = |e: &Vec<TckValue>, a: &Vec<TckValue>| {
        e.len() == a.len() && e.iter().zip(a).all(|(x, y)| x.matches(y, unordered_lists))
    };
    let show = |row: &[TckValue]| {
        format!(
            "| {} |",
            row.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    if expected.len() != actual.len() {
        return Err(fail(
            "wrong result",
            format!(
                "expected {} row(s), got {}{}",
                expected.len(),
                actual.len(),
                first_difference(&expected, &actual, &row_eq, &show)
            ),
        ));
    }
    let same = if ordered {
        expected.iter().zip(&actual).all(|(e, a)| row_eq(e, a))
    } else {
        multiset_match(&expected, &actual, row_eq)
    };
    if same {
        return Ok(());
    }
    if ordered && multiset_match(&expected, &actual, row_eq) {
        return Err(fail(
            "wrong result order",
            format!(
                "rows right but in the wrong order: got {}",
                actual.iter().map(|r| show(r)).collect::<Vec<_>>().join(" ")
            ),
        ));
    }
    Err(fail(
        "wrong result",
        format!(
            "rows differ{}",
            first_difference(&expected, &actual, &row_eq, &show)
        ),
    ))
}

/// `: missing | ... |, unexpected | ... |` for the first unmatched rows.
fn first_difference(
    expected: &[Vec<TckValue>],
    actual: &[Vec<TckValue>],
    eq: &dyn Fn(&Vec<TckValue>, &Vec<TckValue>) -> bool,
    show: &dyn Fn(&[TckValue]) -> String,
) -> String {
    let mut used = vec![false; actual.len()];
    let mut missing = None;
    for e in expected {
        match (0..actual.len()).find(|&i| !used[i] && eq(e, &actual[i])) {
            Some(i) => used[i] = true,
            None => {
                if missing.is_none() {
                    missing = Some(show(e));
                }
            }
        }
    }
    let unexpected = used.iter().position(|u| !u).map(|i| show(&actual[i]));
    let mut out = String::new();
    if let Some(m) = missing {
        out.push_str(&format!("; missing {m}"));
    }
    if let Some(u) = unexpected {
        out.push_str(&format!("; unexpected {u}"));
    }
    out
}

/// Splits a script into statements at `;` outside strings.
fn split_statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in script.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
                current.push(c);
            }
            None if c == ';' => out.push(std::mem::take(&mut current)),
            None => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                }
                current.push(c);
            }
        }
    }
    out.push(current);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// Builds the test procedure of a `there exists a procedure NAME(IN) :: (OUT):`
/// step: it returns the output cells of the table rows whose input cells
/// equal the arguments (all rows when it has no inputs).
fn procedure(signature: &str, table: &[Vec<String>]) -> Result<Procedure, String> {
    let signature = signature.trim().trim_end_matches(':').trim();
    let open = signature.find('(').ok_or("no `(` in the signature")?;
    let name = signature[..open].trim().to_string();
    let close = signature[open..]
        .find(')')
        .map(|i| i + open)
        .ok_or("no `)` in the signature")?;
    let inputs = fields(&signature[open + 1..close])?;
    let rest = signature[close + 1..].trim();
    let rest = rest
        .strip_prefix("::")
        .ok_or("no `::` after the inputs")?
        .trim();
    let outputs = fields(
        rest.strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or("outputs are not in parentheses")?,
    )?;
    let (header, rows) = match table.split_first() {
        Some((h, r)) => (h.clone(), r.to_vec()),
        None => (Vec::new(), Vec::new()),
    };
    let index_of = |field: &str| {
        header
            .iter()
            .position(|h| h.trim() == field)
            .ok_or_else(|| format!("column `{field}` missing from the table"))
    };
    let input_columns = inputs
        .iter()
        .map(|(n, _)| index_of(n))
        .collect::<Result<Vec<_>, _>>()?;
    let output_columns = outputs
        .iter()
        .map(|(n, _)| index_of(n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut parsed: Vec<Vec<Value>> = Vec::new();
    for row in &rows {
        parsed.push(
            row.iter()
                .map(|c| parse_value(c).and_then(|v| v.to_value()))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?,
        );
    }
    let body = Arc::new(move |_: &_, args: &[Value]| {
        Ok(parsed
            .iter()
            .filter(|row| {
                // Equivalence, not equality: a `null` row matches a `null` argument.
                input_columns
                    .iter()
                    .zip(args)
                    .all(|(&i, arg)| rhizome_functions::ops::equivalent(&row[i], arg))
            })
            .map(|row| output_columns.iter().map(|&i| row[i].clone()).collect())
            .collect())
    });
    Ok(Procedure {
        name,
        inputs,
        outputs,
        defaults: vec![],
        body,
    })
}

/// `a :: INTEGER?, b :: STRING?` into (name, type) pairs.
fn fields(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let (n, t) = f
                .split_once("::")
                .ok_or_else(|| format!("field `{f}` has no `::`"))?;
            Ok((n.trim().to_string(), t.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_signatures_parse() {
        let table = vec![
            vec!["in".to_string(), "out".to_string()],
            vec!["1".to_string(), "'a'".to_string()],
        ];
        let p = procedure("test.my.proc(in :: INTEGER?) :: (out :: STRING?):", &table).unwrap();
        assert_eq!(p.name, "test.my.proc");
        assert_eq!(p.inputs, vec![("in".to_string(), "INTEGER?".to_string())]);
        assert_eq!(p.outputs, vec![("out".to_string(), "STRING?".to_string())]);
        let p = procedure("test.doNothing() :: ():", &[]).unwrap();
        assert!(p.inputs.is_empty() && p.outputs.is_empty());
    }

    #[test]
    fn scripts_split_outside_strings() {
        assert_eq!(
            split_statements("CREATE ({a: ';'});\nCREATE ()\n;\n"),
            vec!["CREATE ({a: ';'})".to_string(), "\nCREATE ()\n".to_string()]
        );
    }
}
