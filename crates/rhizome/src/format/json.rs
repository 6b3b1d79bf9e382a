//! JSON Lines output: one object per row, keys are the column names in column
//! order. Integers and finite floats are JSON numbers (NaN and infinities are
//! the strings `"NaN"`, `"Infinity"`, `"-Infinity"`), temporal values ISO 8601
//! strings, maps objects; a node is
//! `{"~id":…, "~labels":[…], "~properties":{…}}`, a relationship
//! `{"~id":…, "~type":…, "~start":…, "~end":…, "~properties":{…}}` and a path
//! the list of its nodes and relationships in alternation.
//!
//! The text is written directly (not through `serde_json::Value`) so that keys
//! keep the documented order.

use super::output_error;
use crate::engine::QueryResult;
use crate::graph::{GraphView, Properties};
use rhizome_common::value::format_float;
use rhizome_common::{NodeId, RelId, Result, Value};
use std::fmt::Write as _;
use std::io::Write;

/// Writes one JSON object per row of `result`, each on its own line.
pub fn write_json(out: &mut dyn Write, result: &QueryResult, graph: &dyn GraphView) -> Result<()> {
    let mut line = String::new();
    for row in &result.rows {
        line.clear();
        line.push('{');
        for (i, (column, value)) in result.columns.iter().zip(row).enumerate() {
            if i > 0 {
                line.push(',');
            }
            write_string(&mut line, column);
            line.push(':');
            write_value(&mut line, value, graph)?;
        }
        line.push_str("}\n");
        out.write_all(line.as_bytes()).map_err(output_error)?;
    }
    Ok(())
}

/// One value as JSON text.
pub fn json_value(value: &Value, graph: &dyn GraphView) -> Result<String> {
    let mut out = String::new();
    write_value(&mut out, value, graph)?;
    Ok(out)
}

fn write_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("strings always serialize"));
}

fn write_value(out: &mut String, value: &Value, graph: &dyn GraphView) -> Result<()> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(x) if x.is_finite() => out.push_str(&format_float(*x)),
        Value::Float(x) => write_string(out, &format_float(*x)),
        Value::String(s) => write_string(out, s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, graph)?;
            }
            out.push(']');
        }
        Value::Map(map) => write_map(out, map, graph)?,
        Value::Node(id) => write_node(out, *id, graph)?,
        Value::Relationship(id) => write_rel(out, *id, graph)?,
        Value::Path(path) => {
            out.push('[');
            for (i, &node) in path.nodes.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    write_rel(out, path.rels[i - 1], graph)?;
                    out.push(',');
                }
                write_node(out, node, graph)?;
            }
            out.push(']');
        }
        Value::Date(d) => write_string(out, &d.to_string()),
        Value::LocalTime(t) => write_string(out, &t.to_string()),
        Value::Time(t) => write_string(out, &t.to_string()),
        Value::LocalDateTime(t) => write_string(out, &t.to_string()),
        Value::DateTime(t) => write_string(out, &t.to_string()),
        Value::Duration(d) => write_string(out, &d.to_string()),
    }
    Ok(())
}

fn write_map(out: &mut String, map: &Properties, graph: &dyn GraphView) -> Result<()> {
    out.push('{');
    for (i, (key, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_value(out, v, graph)?;
    }
    out.push('}');
    Ok(())
}

fn write_node(out: &mut String, id: NodeId, graph: &dyn GraphView) -> Result<()> {
    let _ = write!(out, "{{\"~id\":{id},\"~labels\":[");
    for (i, label) in graph.node_labels(id)?.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, label);
    }
    out.push_str("],\"~properties\":");
    write_map(out, &graph.node_properties(id)?, graph)?;
    out.push('}');
    Ok(())
}

fn write_rel(out: &mut String, id: RelId, graph: &dyn GraphView) -> Result<()> {
    let _ = write!(out, "{{\"~id\":{id},\"~type\":");
    write_string(out, &graph.rel_type(id)?);
    let (start, end) = graph.rel_endpoints(id)?;
    let _ = write!(out, ",\"~start\":{start},\"~end\":{end},\"~properties\":");
    write_map(out, &graph.rel_properties(id)?, graph)?;
    out.push('}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::test_graph::{props, TestGraph};
    use crate::graph::NoGraph;
    use rhizome_common::{Date, Duration, PathValue};
    use std::collections::BTreeMap;

    fn graph() -> TestGraph {
        TestGraph {
            nodes: vec![
                (
                    vec!["Person".into()],
                    props(&[
                        ("name", Value::String("Ada \"A\"".into())),
                        ("tags", Value::List(vec![Value::String("x".into())])),
                    ]),
                ),
                (vec!["City".into()], props(&[("pop", Value::Int(9))])),
            ],
            rels: vec![("LIVES_IN".into(), 0, 1, props(&[("w", Value::Float(0.5))]))],
        }
    }

    #[test]
    fn rows_are_objects_with_keys_in_column_order() {
        let result = QueryResult {
            columns: vec!["z".into(), "a".into()],
            rows: vec![
                vec![Value::Int(1), Value::String("x".into())],
                vec![Value::Null, Value::Bool(true)],
            ]
            .into(),
            ..QueryResult::default()
        };
        let mut out = Vec::new();
        write_json(&mut out, &result, &NoGraph).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"z\":1,\"a\":\"x\"}\n{\"z\":null,\"a\":true}\n"
        );
    }

    #[test]
    fn scalars_floats_temporals_and_maps() {
        let g = NoGraph;
        assert_eq!(json_value(&Value::Float(2.0), &g).unwrap(), "2.0");
        assert_eq!(json_value(&Value::Float(f64::NAN), &g).unwrap(), "\"NaN\"");
        assert_eq!(
            json_value(&Value::Float(f64::NEG_INFINITY), &g).unwrap(),
            "\"-Infinity\""
        );
        assert_eq!(
            json_value(&Value::Date(Date::from_ymd(1815, 12, 10).unwrap()), &g).unwrap(),
            "\"1815-12-10\""
        );
        let d = Duration {
            days: 3,
            ..Duration::default()
        };
        assert_eq!(json_value(&Value::Duration(d), &g).unwrap(), "\"P3D\"");
        let map: BTreeMap<String, Value> = [
            (
                "b".to_string(),
                Value::List(vec![Value::Int(1), Value::Null]),
            ),
            ("a\n".to_string(), Value::String("é".into())),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            json_value(&Value::Map(map), &g).unwrap(),
            "{\"a\\n\":\"é\",\"b\":[1,null]}"
        );
    }

    #[test]
    fn entities_and_paths() {
        let g = graph();
        let node = json_value(&Value::Node(0), &g).unwrap();
        assert_eq!(
            node,
            r#"{"~id":0,"~labels":["Person"],"~properties":{"name":"Ada \"A\"","tags":["x"]}}"#
        );
        let rel = json_value(&Value::Relationship(0), &g).unwrap();
        assert_eq!(
            rel,
            r#"{"~id":0,"~type":"LIVES_IN","~start":0,"~end":1,"~properties":{"w":0.5}}"#
        );
        let path = Value::Path(PathValue {
            nodes: vec![0, 1],
            rels: vec![0],
        });
        let city = r#"{"~id":1,"~labels":["City"],"~properties":{"pop":9}}"#;
        assert_eq!(
            json_value(&path, &g).unwrap(),
            format!("[{node},{rel},{city}]")
        );
        // Every line is valid JSON.
        let parsed: serde_json::Value =
            serde_json::from_str(&json_value(&path, &g).unwrap()).unwrap();
        assert_eq!(parsed[2]["~properties"]["pop"], 9);
    }
}
