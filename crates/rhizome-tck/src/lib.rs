//! A small, focused reader for Gherkin `.feature` files as used by the
//! openCypher TCK.
//!
//! [`parse_feature`] turns the text of one file into a [`Feature`]:
//! backgrounds are prepended to every scenario's steps, `Scenario Outline`s
//! are expanded once per `Examples` row (placeholders `<name>` substituted in
//! step text, doc strings and tables), tags are inherited from the feature and
//! the examples block, and every step keeps its doc string (`"""`) and data
//! table. [`load_features`] reads every `.feature` file under a directory in a
//! stable (sorted) order.
//!
//! The reader never panics: malformed input yields a [`GherkinError`] with the
//! line number.

use std::fmt;
use std::path::{Path, PathBuf};

/// The keyword a step was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `Given`
    Given,
    /// `When`
    When,
    /// `Then`
    Then,
    /// `And`
    And,
    /// `But`
    But,
    /// `*`
    Star,
}

/// The role of a step after `And`/`But`/`*` took the role of the step before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// A precondition (`Given`, or `And` after one).
    Given,
    /// An action (`When`, or `And` after one).
    When,
    /// An expectation (`Then`, or `And` after one).
    Then,
}

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The keyword as written.
    pub keyword: Keyword,
    /// The resolved role of the step.
    pub kind: StepKind,
    /// The text after the keyword, trimmed (placeholders substituted).
    pub text: String,
    /// The doc string attached to the step, with its indentation removed.
    pub doc_string: Option<String>,
    /// The data table attached to the step: rows of cells, header row first.
    pub table: Option<Vec<Vec<String>>>,
    /// 1-based line of the step in the file.
    pub line: usize,
}

/// One runnable scenario (an outline contributes one per examples row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// The scenario's name (for outline rows the outline's name with placeholders substituted).
    pub name: String,
    /// Tags of the feature, the scenario and (for outlines) the examples block.
    pub tags: Vec<String>,
    /// Background steps followed by the scenario's own steps.
    pub steps: Vec<Step>,
    /// 1-based line of the `Scenario:` / `Scenario Outline:` keyword.
    pub line: usize,
    /// For outline rows: the 0-based index of the row over all examples blocks.
    pub example_index: Option<usize>,
}

/// A parsed `.feature` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    /// The feature's name.
    pub name: String,
    /// Tags on the feature.
    pub tags: Vec<String>,
    /// The file it was read from, if read from a file.
    pub path: Option<PathBuf>,
    /// The expanded scenarios, in file order.
    pub scenarios: Vec<Scenario>,
}

/// A malformed feature file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GherkinError {
    /// The file, if known.
    pub path: Option<PathBuf>,
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for GherkinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
        }
        write!(f, "{}: {}", self.line, self.message)
    }
}

impl std::error::Error for GherkinError {}

/// An `Examples:` block: (tags, header, rows).
type ExamplesBlock = (Vec<String>, Vec<String>, Vec<Vec<String>>);

#[derive(Default)]
struct RawScenario {
    name: String,
    tags: Vec<String>,
    line: usize,
    steps: Vec<Step>,
    outline: bool,
    examples: Vec<ExamplesBlock>,
}

enum Section {
    None,
    Background,
    Scenario,
    Examples,
}

fn step_keyword(line: &str) -> Option<(Keyword, &str)> {
    for (word, kw) in [
        ("Given ", Keyword::Given),
        ("When ", Keyword::When),
        ("Then ", Keyword::Then),
        ("And ", Keyword::And),
        ("But ", Keyword::But),
        ("* ", Keyword::Star),
    ] {
        if let Some(rest) = line.strip_prefix(word) {
            return Some((kw, rest.trim()));
        }
    }
    None
}

/// Splits a table row `| a | b\|c |` into cells, unescaping `\|`, `\\` and `\n`.
fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars();
    let mut closed = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('|') => cell.push('|'),
                Some('n') => cell.push('\n'),
                Some('\\') => cell.push('\\'),
                Some(other) => {
                    cell.push('\\');
                    cell.push(other);
                }
                None => cell.push('\\'),
            },
            '|' => {
                cells.push(cell.trim().to_string());
                cell.clear();
                closed = true;
                continue;
            }
            _ => cell.push(c),
        }
        closed = false;
    }
    if !closed && !cell.trim().is_empty() {
        cells.push(cell.trim().to_string());
    }
    cells
}

fn substitute(text: &str, header: &[String], row: &[String]) -> String {
    let mut out = text.to_string();
    for (name, value) in header.iter().zip(row) {
        out = out.replace(&format!("<{name}>"), value);
    }
    out
}

/// Parses the text of one `.feature` file.
pub fn parse_feature(text: &str) -> Result<Feature, GherkinError> {
    let err = |line: usize, message: &str| GherkinError {
        path: None,
        line,
        message: message.to_string(),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut feature_name = None;
    let mut feature_tags = Vec::new();
    let mut pending_tags: Vec<String> = Vec::new();
    let mut background: Vec<Step> = Vec::new();
    let mut raws: Vec<RawScenario> = Vec::new();
    let mut section = Section::None;
    let mut i = 0;
    while i < lines.len() {
        let line_no = i + 1;
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('@') {
            pending_tags.extend(line.split_whitespace().map(str::to_string));
            continue;
        }
        if let Some(rest) = line.strip_prefix("Feature:") {
            feature_name = Some(rest.trim().to_string());
            feature_tags = std::mem::take(&mut pending_tags);
            continue;
        }
        if line.starts_with("Background:") {
            section = Section::Background;
            continue;
        }
        let outline = ["Scenario Outline:", "Scenario Template:"]
            .iter()
            .find_map(|p| line.strip_prefix(p));
        let plain = line
            .strip_prefix("Scenario:")
            .or_else(|| line.strip_prefix("Example:"));
        if let Some((rest, is_outline)) = outline.map(|r| (r, true)).or(plain.map(|r| (r, false))) {
            raws.push(RawScenario {
                name: rest.trim().to_string(),
                tags: std::mem::take(&mut pending_tags),
                line: line_no,
                outline: is_outline,
                ..RawScenario::default()
            });
            section = Section::Scenario;
            continue;
        }
        if line.starts_with("Examples:") || line.starts_with("Scenarios:") {
            let raw = raws
                .last_mut()
                .filter(|r| r.outline)
                .ok_or_else(|| err(line_no, "`Examples:` outside a scenario outline"))?;
            raw.examples
                .push((std::mem::take(&mut pending_tags), Vec::new(), Vec::new()));
            section = Section::Examples;
            continue;
        }
        if line.starts_with('|') {
            let cells = table_cells(line);
            match section {
                Section::Examples => {
                    let block = raws
                        .last_mut()
                        .and_then(|r| r.examples.last_mut())
                        .ok_or_else(|| err(line_no, "table outside a block"))?;
                    if block.1.is_empty() {
                        block.1 = cells;
                    } else {
                        block.2.push(cells);
                    }
                }
                _ => {
                    let steps = match section {
                        Section::Background => &mut background,
                        Section::Scenario => match raws.last_mut() {
                            Some(r) => &mut r.steps,
                            None => return Err(err(line_no, "table outside a scenario")),
                        },
                        _ => return Err(err(line_no, "table outside a step")),
                    };
                    let step = steps
                        .last_mut()
                        .ok_or_else(|| err(line_no, "table before any step"))?;
                    step.table.get_or_insert_with(Vec::new).push(cells);
                }
            }
            continue;
        }
        if line.starts_with("\"\"\"") || line.starts_with("```") {
            let fence = &line[..3];
            let indent = lines[i - 1].len() - lines[i - 1].trim_start().len();
            let mut body = Vec::new();
            loop {
                if i >= lines.len() {
                    return Err(err(line_no, "unterminated doc string"));
                }
                let l = lines[i];
                i += 1;
                if l.trim() == fence {
                    break;
                }
                let strip = l.len() - l.trim_start().len();
                body.push(&l[strip.min(indent)..]);
            }
            let doc = body.join("\n");
            let steps = match section {
                Section::Background => &mut background,
                Section::Scenario => match raws.last_mut() {
                    Some(r) => &mut r.steps,
                    None => return Err(err(line_no, "doc string outside a scenario")),
                },
                _ => return Err(err(line_no, "doc string outside a step")),
            };
            let step = steps
                .last_mut()
                .ok_or_else(|| err(line_no, "doc string before any step"))?;
            step.doc_string = Some(doc);
            continue;
        }
        if let Some((keyword, rest)) = step_keyword(line).or_else(|| {
            // Steps such as `Then the result should be empty` have no trailing text issue;
            // a bare keyword line is still a step.
            ["Given", "When", "Then", "And", "But"]
                .iter()
                .find(|k| line == **k)
                .and_then(|_| step_keyword(&format!("{line} ")).map(|(k, _)| (k, "")))
        }) {
            let steps = match section {
                Section::Background => &mut background,
                Section::Scenario => match raws.last_mut() {
                    Some(r) => &mut r.steps,
                    None => return Err(err(line_no, "step outside a scenario")),
                },
                _ => return Err(err(line_no, "step outside a scenario")),
            };
            let kind = match keyword {
                Keyword::Given => StepKind::Given,
                Keyword::When => StepKind::When,
                Keyword::Then => StepKind::Then,
                _ => steps.last().map_or(StepKind::Given, |s| s.kind),
            };
            steps.push(Step {
                keyword,
                kind,
                text: rest.to_string(),
                doc_string: None,
                table: None,
                line: line_no,
            });
            continue;
        }
        match section {
            // Free-form description text under a heading is allowed by Gherkin.
            Section::None | Section::Scenario | Section::Background | Section::Examples
                if feature_name.is_some() =>
            {
                continue
            }
            _ => return Err(err(line_no, &format!("unexpected line `{line}`"))),
        }
    }
    let name = feature_name.ok_or_else(|| err(1, "no `Feature:` line"))?;
    let mut scenarios = Vec::new();
    for raw in raws {
        let mut tags = feature_tags.clone();
        tags.extend(raw.tags.iter().cloned());
        if !raw.outline {
            let mut steps = background.clone();
            steps.extend(raw.steps);
            scenarios.push(Scenario {
                name: raw.name,
                tags,
                steps,
                line: raw.line,
                example_index: None,
            });
            continue;
        }
        let mut index = 0;
        for (ex_tags, header, rows) in &raw.examples {
            for row in rows {
                let mut steps = background.clone();
                steps.extend(raw.steps.iter().map(|s| Step {
                    text: substitute(&s.text, header, row),
                    doc_string: s.doc_string.as_ref().map(|d| substitute(d, header, row)),
                    table: s.table.as_ref().map(|t| {
                        t.iter()
                            .map(|r| r.iter().map(|c| substitute(c, header, row)).collect())
                            .collect()
                    }),
                    ..s.clone()
                }));
                let mut all_tags = tags.clone();
                all_tags.extend(ex_tags.iter().cloned());
                scenarios.push(Scenario {
                    name: substitute(&raw.name, header, row),
                    tags: all_tags,
                    steps,
                    line: raw.line,
                    example_index: Some(index),
                });
                index += 1;
            }
        }
    }
    Ok(Feature {
        name,
        tags: feature_tags,
        path: None,
        scenarios,
    })
}

/// Reads and parses one `.feature` file.
pub fn load_feature(path: &Path) -> Result<Feature, GherkinError> {
    let text = std::fs::read_to_string(path).map_err(|e| GherkinError {
        path: Some(path.to_path_buf()),
        line: 0,
        message: e.to_string(),
    })?;
    let mut feature = parse_feature(&text).map_err(|mut e| {
        e.path = Some(path.to_path_buf());
        e
    })?;
    feature.path = Some(path.to_path_buf());
    Ok(feature)
}

/// Reads every `.feature` file under `dir` (recursively), sorted by path.
pub fn load_features(dir: &Path) -> Result<Vec<Feature>, GherkinError> {
    let mut files = Vec::new();
    collect(dir, &mut files).map_err(|e| GherkinError {
        path: Some(dir.to_path_buf()),
        line: 0,
        message: e.to_string(),
    })?;
    files.sort();
    files.iter().map(|p| load_feature(p)).collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
@tagf
Feature: F
  Background:
    Given an empty graph

  Scenario: [1] plain
    When executing query:
      """
      MATCH (n)
        RETURN n
      """
    Then the result should be, in any order:
      | n | a\|b |
    And no side effects

  @outl
  Scenario Outline: [2] outline <x>
    When executing query:
      """
      RETURN <x> AS v
      """
    Then the result should be empty

    Examples:
      | x |
      | 1 |
      | 2 |
"#;

    #[test]
    fn parses_scenarios_outlines_tables_and_doc_strings() {
        let f = parse_feature(TEXT).unwrap();
        assert_eq!(f.name, "F");
        assert_eq!(f.scenarios.len(), 3);
        let s = &f.scenarios[0];
        assert_eq!(s.steps.len(), 4);
        assert_eq!(s.steps[0].kind, StepKind::Given);
        assert_eq!(
            s.steps[1].doc_string.as_deref(),
            Some("MATCH (n)\n  RETURN n")
        );
        assert_eq!(s.steps[2].table.as_ref().unwrap()[0], vec!["n", "a|b"]);
        assert_eq!(s.steps[3].kind, StepKind::Then);
        let o = &f.scenarios[2];
        assert_eq!(o.name, "[2] outline 2");
        assert_eq!(o.tags, vec!["@tagf", "@outl"]);
        assert_eq!(o.steps[1].doc_string.as_deref(), Some("RETURN 2 AS v"));
    }
}
