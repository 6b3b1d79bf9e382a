//! Printing values exactly in the openCypher TCK's expected-result syntax.
//!
//! Nodes print as `(:A:B {name: 'x'})`, relationships as `[:T {k: 1}]`,
//! paths as `<(:A)-[:T]->(:B)>` (each hop's arrow follows the stored
//! direction of its relationship), lists as `[1, 2]`, maps as `{a: 1}`,
//! strings single-quoted with `\'` escapes, floats always with a point or
//! exponent (`1.0`, `NaN`, `Infinity`; `-0.0` prints as `0.0`, as the TCK
//! expects), temporal values as quoted ISO
//! strings (`'2015-07-21T21:40:32.142+01:00[Europe/Stockholm]'`).

use crate::entity::EntityAccess;
use rhizome_common::{NodeId, RelId, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A float as the TCK prints it: always with a point or an exponent
/// (`1.0`, `0.000001`, `1000000000.0`), in exponent form outside
/// `1e-7..1e16` (`1e-305`, `1.2635418652381264e305`), and `NaN`,
/// `Infinity`, `-Infinity`.
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let a = x.abs();
    if a != 0.0 && !(1e-7..1e16).contains(&a) {
        return format!("{x:e}");
    }
    let s = format!("{x}");
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// `v` in TCK syntax, reading entity labels, types and properties from
/// `graph` (an entity `graph` cannot read prints as `(?)`/`[?]`).
pub fn format_value(v: &Value, graph: &dyn EntityAccess) -> String {
    let mut out = String::new();
    write_value(&mut out, v, graph);
    out
}

fn write_string(out: &mut String, s: &str) {
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

fn write_props(out: &mut String, props: &BTreeMap<String, Value>, graph: &dyn EntityAccess) {
    if props.is_empty() {
        return;
    }
    out.push_str(" {");
    for (i, (k, v)) in props.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{k}: ");
        write_value(out, v, graph);
    }
    out.push('}');
}

fn write_node(out: &mut String, id: NodeId, graph: &dyn EntityAccess) {
    out.push('(');
    match (graph.node_labels(id), graph.node_properties(id)) {
        (Ok(labels), Ok(props)) => {
            for l in &labels {
                let _ = write!(out, ":{l}");
            }
            let mut props_text = String::new();
            write_props(&mut props_text, &props, graph);
            if labels.is_empty() {
                out.push_str(props_text.trim_start());
            } else {
                out.push_str(&props_text);
            }
        }
        _ => out.push('?'),
    }
    out.push(')');
}

fn write_rel(out: &mut String, id: RelId, graph: &dyn EntityAccess) {
    out.push('[');
    match (graph.rel_type(id), graph.rel_properties(id)) {
        (Ok(t), Ok(props)) => {
            let _ = write!(out, ":{t}");
            write_props(out, &props, graph);
        }
        _ => out.push('?'),
    }
    out.push(']');
}

fn write_value(out: &mut String, v: &Value, graph: &dyn EntityAccess) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        // The TCK never distinguishes -0.0 (`RETURN -0.0` expects `0.0`).
        Value::Float(x) if *x == 0.0 => out.push_str("0.0"),
        Value::Float(x) => out.push_str(&format_float(*x)),
        Value::String(s) => write_string(out, s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, graph);
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{k}: ");
                write_value(out, item, graph);
            }
            out.push('}');
        }
        Value::Node(id) => write_node(out, *id, graph),
        Value::Relationship(id) => write_rel(out, *id, graph),
        Value::Path(p) => {
            out.push('<');
            if let Some(first) = p.nodes.first() {
                write_node(out, *first, graph);
            }
            for (i, rel) in p.rels.iter().enumerate() {
                let from = p.nodes.get(i).copied();
                let forward = match graph.rel_endpoints(*rel) {
                    Ok((start, _)) => Some(start) == from,
                    Err(_) => true,
                };
                out.push_str(if forward { "-" } else { "<-" });
                write_rel(out, *rel, graph);
                out.push_str(if forward { "->" } else { "-" });
                if let Some(next) = p.nodes.get(i + 1) {
                    write_node(out, *next, graph);
                }
            }
            out.push('>');
        }
        Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_)
        | Value::Duration(_) => {
            let text = crate::functions::convert::plain_string(v).unwrap_or_default();
            write_string(out, &text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_common::{PathValue, Result};

    /// Nodes 0 (:A {name: 'x'}), 1 (no labels, no properties), 2 (:B:C);
    /// relationship 0 (0)-[:T {k: 1}]->(1), relationship 1 (2)-[:U]->(1).
    struct Graph;

    impl EntityAccess for Graph {
        fn node_labels(&self, node: NodeId) -> Result<Vec<String>> {
            Ok(match node {
                0 => vec!["A".into()],
                2 => vec!["B".into(), "C".into()],
                _ => vec![],
            })
        }
        fn node_properties(&self, node: NodeId) -> Result<BTreeMap<String, Value>> {
            let mut m = BTreeMap::new();
            if node == 0 {
                m.insert("name".into(), Value::from("x"));
            }
            Ok(m)
        }
        fn rel_type(&self, rel: RelId) -> Result<String> {
            Ok(if rel == 0 { "T" } else { "U" }.into())
        }
        fn rel_endpoints(&self, rel: RelId) -> Result<(NodeId, NodeId)> {
            Ok(if rel == 0 { (0, 1) } else { (2, 1) })
        }
        fn rel_properties(&self, rel: RelId) -> Result<BTreeMap<String, Value>> {
            let mut m = BTreeMap::new();
            if rel == 0 {
                m.insert("k".into(), Value::Int(1));
            }
            Ok(m)
        }
    }

    #[test]
    fn entities_print_like_the_tck() {
        assert_eq!(format_value(&Value::Node(0), &Graph), "(:A {name: 'x'})");
        assert_eq!(format_value(&Value::Node(1), &Graph), "()");
        assert_eq!(format_value(&Value::Node(2), &Graph), "(:B:C)");
        assert_eq!(format_value(&Value::Relationship(0), &Graph), "[:T {k: 1}]");
        let path = Value::Path(PathValue {
            nodes: vec![0, 1, 2],
            rels: vec![0, 1],
        });
        assert_eq!(
            format_value(&path, &Graph),
            "<(:A {name: 'x'})-[:T {k: 1}]->()<-[:U]-(:B:C)>"
        );
        assert_eq!(
            format_value(
                &Value::Path(PathValue {
                    nodes: vec![1],
                    rels: vec![]
                }),
                &Graph
            ),
            "<()>"
        );
        assert_eq!(format_value(&Value::Node(0), &crate::NoGraph), "(?)");
    }

    #[test]
    fn scalars_print_like_the_tck() {
        let mut m = BTreeMap::new();
        m.insert(
            "a".to_string(),
            Value::List(vec![Value::Int(1), Value::Null]),
        );
        assert_eq!(format_value(&Value::Map(m), &Graph), "{a: [1, null]}");
        assert_eq!(format_value(&Value::from("it's"), &Graph), "'it\\'s'");
        assert_eq!(format_value(&Value::Float(1.0), &Graph), "1.0");
        assert_eq!(format_value(&Value::Float(-0.0), &Graph), "0.0");
        assert_eq!(format_value(&Value::Float(1e20), &Graph), "1e20");
        assert_eq!(format_value(&Value::Float(f64::NAN), &Graph), "NaN");
        assert_eq!(format_value(&Value::Bool(true), &Graph), "true");
        assert_eq!(
            format_value(
                &Value::Duration(rhizome_common::Duration {
                    seconds: -1,
                    nanos: -500_000_000,
                    ..Default::default()
                }),
                &Graph
            ),
            "'PT-1.5S'"
        );
    }
}
