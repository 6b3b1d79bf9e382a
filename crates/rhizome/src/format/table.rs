//! The text table: `|`-separated aligned columns, values written as Cypher
//! literals (strings quoted), nodes as `(:Label {key: value})`, relationships
//! as `[:TYPE {key: value}]`, paths as `(a)-[r]->(b)`.

use super::format_elapsed;
use crate::engine::QueryResult;
use crate::graph::{GraphView, Properties};
use rhizome_common::{PathValue, Result, Value};
use std::fmt::Write;

/// Renders `result` as a table, then the plan of `EXPLAIN` / `PROFILE` if
/// any, then the footer line. (`EXPLAIN` has no rows: only its plan shows.)
pub fn render_table(result: &QueryResult, graph: &dyn GraphView) -> Result<String> {
    let mut out = String::new();
    let only_plan = result.plan_text().is_some() && result.rows.is_empty();
    if !result.columns.is_empty() && !only_plan {
        let cells = result
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| Ok(Cell::new(table_cell(v, graph)?, is_numeric(v))))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        out = render_grid(&result.columns, &cells);
    }
    if let Some(plan) = result.plan_text() {
        out.push_str(plan.trim_end());
        out.push('\n');
    }
    out.push_str(&footer(result));
    out.push('\n');
    Ok(out)
}

/// One rendered cell of a grid.
pub struct Cell {
    text: String,
    right_aligned: bool,
}

impl Cell {
    /// A cell; numbers are right-aligned.
    pub fn new(text: String, right_aligned: bool) -> Cell {
        Cell {
            text,
            right_aligned,
        }
    }
}

/// Draws `columns` and `rows` of rendered cells as an aligned, ruled grid.
pub fn render_grid(columns: &[String], rows: &[Vec<Cell>]) -> String {
    let mut widths: Vec<usize> = columns.iter().map(|c| width(c)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(&cell.text));
        }
    }
    let mut rule = String::from("+");
    for w in &widths {
        rule.push_str(&"-".repeat(w + 2));
        rule.push('+');
    }
    rule.push('\n');
    let mut out = rule.clone();
    out.push('|');
    for (name, w) in columns.iter().zip(&widths) {
        let _ = write!(out, " {name}{} |", pad(name, *w));
    }
    out.push('\n');
    out.push_str(&rule);
    for row in rows {
        out.push('|');
        for (cell, w) in row.iter().zip(&widths) {
            let (text, padding) = (&cell.text, pad(&cell.text, *w));
            if cell.right_aligned {
                let _ = write!(out, " {padding}{text} |");
            } else {
                let _ = write!(out, " {text}{padding} |");
            }
        }
        out.push('\n');
    }
    out.push_str(&rule);
    out
}

/// `3 rows, 2 nodes created, elapsed 1.2 ms`.
fn footer(result: &QueryResult) -> String {
    let n = result.rows.len();
    let mut parts = vec![format!("{n} {}", if n == 1 { "row" } else { "rows" })];
    parts.extend(crate::engine::counter_lines(&result.counters));
    parts.push(format!("elapsed {}", format_elapsed(result.elapsed)));
    parts.join(", ")
}

/// Display width in terminal columns (CJK characters take two).
fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

fn pad(s: &str, w: usize) -> String {
    " ".repeat(w.saturating_sub(width(s)))
}

fn is_numeric(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_))
}

/// One value as the table prints it.
fn table_cell(value: &Value, graph: &dyn GraphView) -> Result<String> {
    let mut out = String::new();
    write_value(&mut out, value, graph)?;
    Ok(out)
}

fn write_value(out: &mut String, value: &Value, graph: &dyn GraphView) -> Result<()> {
    match value {
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, graph)?;
            }
            out.push(']');
        }
        Value::Map(map) => write_map(out, map, graph)?,
        Value::Node(id) => write_node(out, *id, graph)?,
        Value::Relationship(id) => {
            out.push('[');
            write_rel_body(out, *id, graph)?;
            out.push(']');
        }
        Value::Path(path) => write_path(out, path, graph)?,
        scalar => {
            let _ = write!(out, "{scalar}");
        }
    }
    Ok(())
}

fn write_map(out: &mut String, map: &Properties, graph: &dyn GraphView) -> Result<()> {
    out.push('{');
    for (i, (key, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{key}: ");
        write_value(out, v, graph)?;
    }
    out.push('}');
    Ok(())
}

fn write_node(out: &mut String, id: u64, graph: &dyn GraphView) -> Result<()> {
    out.push('(');
    for label in graph.node_labels(id)? {
        let _ = write!(out, ":{label}");
    }
    let props = graph.node_properties(id)?;
    if !props.is_empty() {
        if !out.ends_with('(') {
            out.push(' ');
        }
        write_map(out, &props, graph)?;
    }
    out.push(')');
    Ok(())
}

fn write_rel_body(out: &mut String, id: u64, graph: &dyn GraphView) -> Result<()> {
    let _ = write!(out, ":{}", graph.rel_type(id)?);
    let props = graph.rel_properties(id)?;
    if !props.is_empty() {
        out.push(' ');
        write_map(out, &props, graph)?;
    }
    Ok(())
}

fn write_path(out: &mut String, path: &PathValue, graph: &dyn GraphView) -> Result<()> {
    let Some(&first) = path.nodes.first() else {
        return Ok(());
    };
    write_node(out, first, graph)?;
    for (i, &rel) in path.rels.iter().enumerate() {
        let from = path.nodes[i];
        let Some(&to) = path.nodes.get(i + 1) else {
            break;
        };
        let (start, _) = graph.rel_endpoints(rel)?;
        let forward = start == from;
        out.push_str(if forward { "-[" } else { "<-[" });
        write_rel_body(out, rel, graph)?;
        out.push_str(if forward { "]->" } else { "]-" });
        write_node(out, to, graph)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::QueryStats;
    use crate::graph::test_graph::{props, TestGraph};
    use crate::graph::NoGraph;
    use rhizome_common::Date;
    use std::time::Duration;

    fn graph() -> TestGraph {
        TestGraph {
            nodes: vec![
                (
                    vec!["Person".into()],
                    props(&[("name", Value::String("Ada".into()))]),
                ),
                (vec!["City".into(), "Capital".into()], props(&[])),
            ],
            rels: vec![(
                "LIVES_IN".into(),
                0,
                1,
                props(&[("since", Value::Date(Date::from_ymd(2020, 1, 31).unwrap()))]),
            )],
        }
    }

    #[test]
    fn aligns_columns_quotes_strings_and_right_aligns_numbers() {
        let result = QueryResult {
            columns: vec!["name".into(), "age".into()],
            rows: vec![
                vec![Value::String("Ada".into()), Value::Int(36)],
                vec![Value::String("it's".into()), Value::Float(1.5)],
                vec![Value::Null, Value::Int(7)],
            ]
            .into(),
            elapsed: Duration::from_micros(1500),
            ..QueryResult::default()
        };
        let expected = "\
+---------+-----+
| name    | age |
+---------+-----+
| 'Ada'   |  36 |
| 'it\\'s' | 1.5 |
| null    |   7 |
+---------+-----+
3 rows, elapsed 1.5 ms
";
        assert_eq!(render_table(&result, &NoGraph).unwrap(), expected);
    }

    #[test]
    fn entities_print_with_labels_type_and_properties() {
        let g = graph();
        assert_eq!(
            table_cell(&Value::Node(0), &g).unwrap(),
            "(:Person {name: 'Ada'})"
        );
        assert_eq!(table_cell(&Value::Node(1), &g).unwrap(), "(:City:Capital)");
        assert_eq!(
            table_cell(&Value::Relationship(0), &g).unwrap(),
            "[:LIVES_IN {since: '2020-01-31'}]"
        );
        let forward = Value::Path(PathValue {
            nodes: vec![0, 1],
            rels: vec![0],
        });
        assert_eq!(
            table_cell(&forward, &g).unwrap(),
            "(:Person {name: 'Ada'})-[:LIVES_IN {since: '2020-01-31'}]->(:City:Capital)"
        );
        let backward = Value::Path(PathValue {
            nodes: vec![1, 0],
            rels: vec![0],
        });
        assert_eq!(
            table_cell(&backward, &g).unwrap(),
            "(:City:Capital)<-[:LIVES_IN {since: '2020-01-31'}]-(:Person {name: 'Ada'})"
        );
        let nested = Value::List(vec![Value::Node(1), Value::Int(2)]);
        assert_eq!(table_cell(&nested, &g).unwrap(), "[(:City:Capital), 2]");
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let result = QueryResult {
            columns: vec!["t".into()],
            rows: vec![
                vec![Value::String("千と千尋".into())],
                vec![Value::String("Amélie".into())],
            ]
            .into(),
            ..QueryResult::default()
        };
        let table = render_table(&result, &NoGraph).unwrap();
        assert!(
            table.contains("| '千と千尋' |\n| 'Amélie'   |\n"),
            "{table}"
        );
    }

    #[test]
    fn footer_reports_side_effects_and_singular_row() {
        let result = QueryResult {
            columns: vec![],
            rows: vec![vec![]].into(),
            counters: QueryStats {
                nodes_created: 2,
                properties_set: 4,
                labels_added: 1,
                ..QueryStats::default()
            },
            elapsed: Duration::from_millis(250),
            ..QueryResult::default()
        };
        assert_eq!(
            render_table(&result, &NoGraph).unwrap(),
            "1 row, 2 nodes created, 4 properties set, 1 label added, elapsed 250 ms\n"
        );
    }

    #[test]
    fn plans_print_before_the_footer() {
        let explain = QueryResult {
            columns: vec!["n".into()],
            plan: Some("AllNodesScan n\n".into()),
            ..QueryResult::default()
        };
        assert_eq!(
            render_table(&explain, &NoGraph).unwrap(),
            "AllNodesScan n\n0 rows, elapsed 0.00 ms\n"
        );
        let profile = QueryResult {
            rows: vec![vec![Value::Int(1)]].into(),
            ..explain
        };
        assert_eq!(
            render_table(&profile, &NoGraph).unwrap(),
            "+---+\n| n |\n+---+\n| 1 |\n+---+\nAllNodesScan n\n1 row, elapsed 0.00 ms\n"
        );
    }

    #[test]
    fn empty_result_still_prints_header() {
        let result = QueryResult {
            columns: vec!["n".into()],
            ..QueryResult::default()
        };
        assert_eq!(
            render_table(&result, &NoGraph).unwrap(),
            "+---+\n| n |\n+---+\n+---+\n0 rows, elapsed 0.00 ms\n"
        );
    }
}
