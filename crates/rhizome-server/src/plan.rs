//! `EXPLAIN` and `PROFILE` plans as the structured trees Neo4j clients
//! read: the `plan` and `profile` entries of a Bolt summary (drivers show
//! them as `summary.plan` / `summary.profile`), which the HTTP API turns
//! into `queryPlan` / `profiledQueryPlan`.
//!
//! The engine renders a plan as a text tree (one operator per line, depth
//! first, `└─`/`├─` branches); this module reads that rendering back into
//! operators, and takes each operator's rows and time from the engine's
//! profile counters, which are numbered in the same depth-first order.
//! Subquery plans printed after the main tree (`Subquery #n`) are not
//! part of the structured plan.

use crate::packstream::PackValue;
use rhizome_engine::QueryResult;

/// One operator of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOperator {
    /// The operator's name (`LabelScan`, `Expand`, `Filter`, …).
    pub operator_type: String,
    /// The rest of its description (patterns, expressions).
    pub details: String,
    /// The planner's estimate of its rows.
    pub estimated_rows: f64,
    /// The optimizer rule that produced it, if one did.
    pub rule: Option<String>,
    /// Variables its description names (pattern variables and aliases).
    pub identifiers: Vec<String>,
    /// Its inputs.
    pub children: Vec<PlanOperator>,
}

/// Reads the engine's plan rendering into a tree (`None` if it has no
/// operator line).
pub fn parse(text: &str) -> Option<PlanOperator> {
    // (depth, operator) in depth-first order.
    let mut flat: Vec<(usize, PlanOperator)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("Columns:") || line.starts_with("Subquery #") {
            break;
        }
        let content_at = line
            .char_indices()
            .find(|(_, c)| !matches!(c, ' ' | '│' | '└' | '├' | '─'))
            .map(|(i, _)| i);
        let Some(at) = content_at else { continue };
        let depth = line[..at].chars().count() / 3;
        if depth > 0 && flat.is_empty() {
            continue;
        }
        flat.push((depth, operator(&line[at..])));
    }
    if flat.is_empty() {
        return None;
    }
    let mut iter = flat.into_iter().peekable();
    let (depth, root) = iter.next()?;
    Some(build(root, depth, &mut iter))
}

/// Attaches the following deeper operators to `node` as children.
fn build(
    mut node: PlanOperator,
    depth: usize,
    rest: &mut std::iter::Peekable<std::vec::IntoIter<(usize, PlanOperator)>>,
) -> PlanOperator {
    while let Some((d, _)) = rest.peek() {
        if *d <= depth {
            break;
        }
        let (d, child) = rest.next().expect("peeked");
        node.children.push(build(child, d, rest));
    }
    node
}

/// One operator line without its tree prefix.
fn operator(content: &str) -> PlanOperator {
    let (description, annotations) = match content.find("  [est. ") {
        Some(i) => (&content[..i], &content[i + 2..]),
        None => (content, ""),
    };
    let description = description.trim();
    let (operator_type, details) = match description.find(char::is_whitespace) {
        Some(i) => (&description[..i], description[i..].trim()),
        None => (description, ""),
    };
    let estimated_rows = annotations
        .strip_prefix("[est. ")
        .and_then(|a| a.split(' ').next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0);
    let rule = annotations
        .find("] [")
        .and_then(|i| {
            let rest = &annotations[i + 3..];
            rest.find(']').map(|j| rest[..j].to_string())
        })
        .filter(|r| !r.contains('='));
    PlanOperator {
        operator_type: operator_type.to_string(),
        details: details.to_string(),
        estimated_rows,
        rule,
        identifiers: identifiers(details),
        children: Vec::new(),
    }
}

/// Variables named in `details`: `(x`, `[x`, `AS x`, in order, once each.
fn identifiers(details: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let bytes = details.as_bytes();
    let word_at = |start: usize| -> Option<String> {
        let rest = details.get(start..)?.trim_start();
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        let first = word.chars().next()?;
        (first.is_alphabetic() || first == '_').then(|| word.to_string())
    };
    let mut push = |word: Option<String>| {
        if let Some(w) = word {
            if !found.contains(&w) {
                found.push(w);
            }
        }
    };
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' => {
                // `(p:Person)`, `(p)`, `[anon_0:T]` but not calls `count(x)`.
                let after = word_at(i + 1);
                let next = after
                    .as_ref()
                    .and_then(|w| details[i + 1..].trim_start().get(w.len()..))
                    .and_then(|r| r.chars().next());
                if matches!(next, Some(':' | ')' | ']')) {
                    push(after);
                }
            }
            b'A' if details[i..].starts_with("AS ") && (i == 0 || bytes[i - 1] == b' ') => {
                push(alias_at(details, i + 3))
            }
            _ => {}
        }
    }
    found
}

/// The alias after `AS ` at `start`: up to a `,`, `]` or unbalanced `)`
/// (so `count(*)` stays whole).
fn alias_at(details: &str, start: usize) -> Option<String> {
    let rest = details.get(start..)?;
    let mut depth = 0usize;
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => {
                end = i;
                break;
            }
            ')' => depth -= 1,
            ',' | ']' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let alias = rest[..end].trim();
    (!alias.is_empty()).then(|| alias.to_string())
}

/// The `plan` (EXPLAIN) or `profile` (PROFILE) entry of a Bolt summary for
/// `outcome`, in Bolt's shape: `operatorType`, `args`, `identifiers`,
/// `children`, and for a profile also `rows`, `dbHits`, `time` (ns) and
/// page-cache fields.
pub fn summary_entries(outcome: &QueryResult) -> Vec<(String, PackValue)> {
    if let Some(profile) = &outcome.profile {
        if let Some(tree) = parse(&profile.text) {
            let mut next = 0usize;
            let value = to_pack(&tree, Some(profile), &mut next);
            return vec![("profile".to_string(), value)];
        }
    }
    if let Some(text) = &outcome.plan {
        if let Some(tree) = parse(text) {
            let mut next = 0usize;
            return vec![("plan".to_string(), to_pack(&tree, None, &mut next))];
        }
    }
    Vec::new()
}

fn to_pack(
    node: &PlanOperator,
    profile: Option<&rhizome_exec::query::ProfileReport>,
    next: &mut usize,
) -> PackValue {
    let id = *next;
    *next += 1;
    let mut args = vec![
        (
            "Details".to_string(),
            PackValue::from(node.details.as_str()),
        ),
        (
            "EstimatedRows".to_string(),
            PackValue::Float(node.estimated_rows),
        ),
    ];
    if let Some(rule) = &node.rule {
        args.push(("Rule".to_string(), rule.as_str().into()));
    }
    let stats = profile.and_then(|p| p.operators.iter().find(|o| o.id == id));
    if let Some(stats) = stats {
        args.push(("Morsels".to_string(), PackValue::Int(stats.morsels as i64)));
        args.push(("Workers".to_string(), PackValue::Int(stats.workers as i64)));
    }
    let mut entries = vec![
        (
            "operatorType".to_string(),
            PackValue::from(node.operator_type.as_str()),
        ),
        ("args".to_string(), PackValue::Map(args)),
        (
            "identifiers".to_string(),
            PackValue::List(
                node.identifiers
                    .iter()
                    .map(|i| PackValue::from(i.as_str()))
                    .collect(),
            ),
        ),
    ];
    let children: Vec<PackValue> = node
        .children
        .iter()
        .map(|c| to_pack(c, profile, next))
        .collect();
    if profile.is_some() {
        let (rows, time) = stats
            .map(|s| (s.rows as i64, s.time.as_nanos() as i64))
            .unwrap_or((0, 0));
        entries.extend([
            ("rows".to_string(), PackValue::Int(rows)),
            ("dbHits".to_string(), PackValue::Int(0)),
            ("time".to_string(), PackValue::Int(time)),
            ("pageCacheHits".to_string(), PackValue::Int(0)),
            ("pageCacheMisses".to_string(), PackValue::Int(0)),
            ("pageCacheHitRatio".to_string(), PackValue::Float(0.0)),
        ]);
    }
    entries.push(("children".to_string(), PackValue::List(children)));
    PackValue::Map(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "\
Top p.name LIMIT 3  [est. 3 rows] [limit_to_top] rows=3 time=0.066ms morsels=8 workers=2
└─ Aggregate keys [p.name AS name], aggregates [CountStar() AS count(*)]  [est. 4 rows] rows=4
   ├─ Filter (m.released > 1990)  [est. 16 rows] rows=52
   │  └─ Expand (p)-[  anon_0:ACTED_IN]->(m)  [est. 54 rows] rows=54
   └─ LabelScan (p:Person)  [est. 56 rows] rows=56
      └─ Argument  [est. 1 rows] rows=0
Columns: p.name, count(*)
Subquery #1 (EXISTS):
  Expand (a)-->(b)  [est. 1 rows]
";

    #[test]
    fn reads_the_tree_back() {
        let root = parse(PROFILE).unwrap();
        assert_eq!(root.operator_type, "Top");
        assert_eq!(root.details, "p.name LIMIT 3");
        assert_eq!(root.estimated_rows, 3.0);
        assert_eq!(root.rule.as_deref(), Some("limit_to_top"));
        let agg = &root.children[0];
        assert_eq!(agg.operator_type, "Aggregate");
        assert_eq!(agg.identifiers, vec!["name", "count(*)"]);
        assert_eq!(agg.children.len(), 2);
        assert_eq!(agg.children[0].operator_type, "Filter");
        assert_eq!(agg.children[0].children[0].operator_type, "Expand");
        assert_eq!(
            agg.children[0].children[0].identifiers,
            vec!["p", "anon_0", "m"]
        );
        assert_eq!(agg.children[1].operator_type, "LabelScan");
        assert_eq!(agg.children[1].identifiers, vec!["p"]);
        assert_eq!(agg.children[1].children[0].operator_type, "Argument");
        assert!(agg.children[1].children[0].children.is_empty());
    }

    #[test]
    fn text_without_operators_has_no_plan() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("Columns: a\n"), None);
    }

    #[test]
    fn odd_text_never_panics() {
        for text in [
            "└─",
            "   └─ X",
            "X  [est. ",
            "X  [est. 1 rows] [",
            "X (",
            "AS",
            "a AS ",
            "├─ ├─ (é:",
        ] {
            let _ = parse(text);
        }
    }
}
