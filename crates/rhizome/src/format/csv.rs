//! CSV output (RFC 4180): a header with the column names, then one record per
//! row. Null is the empty field, strings are written raw (quoted by CSV rules
//! only when needed), numbers and booleans as Cypher prints them, temporal
//! values in ISO 8601; lists, maps, nodes, relationships and paths as their
//! JSON text (see [`super::json`]).

use super::{json_value, output_error};
use crate::engine::QueryResult;
use crate::graph::GraphView;
use rhizome_common::{Error, Result, Value};
use std::io::Write;

/// Writes `result` as CSV.
pub fn write_csv(out: &mut dyn Write, result: &QueryResult, graph: &dyn GraphView) -> Result<()> {
    let mut writer = ::csv::Writer::from_writer(out);
    writer.write_record(&result.columns).map_err(csv_error)?;
    let mut record = Vec::with_capacity(result.columns.len());
    for row in &result.rows {
        record.clear();
        for value in row {
            record.push(field(value, graph)?);
        }
        writer.write_record(&record).map_err(csv_error)?;
    }
    writer.flush().map_err(output_error)
}

fn field(value: &Value, graph: &dyn GraphView) -> Result<String> {
    Ok(match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(_) | Value::Int(_) | Value::Float(_) => value.to_string(),
        Value::Date(d) => d.to_string(),
        Value::LocalTime(t) => t.to_string(),
        Value::Time(t) => t.to_string(),
        Value::LocalDateTime(t) => t.to_string(),
        Value::DateTime(t) => t.to_string(),
        Value::Duration(d) => d.to_string(),
        Value::List(_)
        | Value::Map(_)
        | Value::Node(_)
        | Value::Relationship(_)
        | Value::Path(_) => json_value(value, graph)?,
    })
}

fn csv_error(err: ::csv::Error) -> Error {
    match err.into_kind() {
        ::csv::ErrorKind::Io(io) => output_error(io),
        other => Error::internal(format!("writing CSV: {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::test_graph::{props, TestGraph};
    use rhizome_common::Date;

    #[test]
    fn header_rows_quoting_and_composites() {
        let g = TestGraph {
            nodes: vec![(vec!["P".into()], props(&[("n", Value::Int(1))]))],
            rels: vec![],
        };
        let result = QueryResult {
            columns: vec!["s".into(), "x, y".into(), "n".into()],
            rows: vec![
                vec![
                    Value::String("say \"hi\", twice".into()),
                    Value::Float(1.0),
                    Value::Node(0),
                ],
                vec![
                    Value::Null,
                    Value::Date(Date::from_ymd(2024, 2, 29).unwrap()),
                    Value::List(vec![Value::String("a".into()), Value::Int(2)]),
                ],
            ]
            .into(),
            ..QueryResult::default()
        };
        let mut out = Vec::new();
        write_csv(&mut out, &result, &g).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "s,\"x, y\",n\n\
             \"say \"\"hi\"\", twice\",1.0,\"{\"\"~id\"\":0,\"\"~labels\"\":[\"\"P\"\"],\"\"~properties\"\":{\"\"n\"\":1}}\"\n\
             ,2024-02-29,\"[\"\"a\"\",2]\"\n"
        );
    }
}
