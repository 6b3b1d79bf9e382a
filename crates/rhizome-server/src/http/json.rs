//! Values as the Query API's JSON, both ways.
//!
//! Results arrive as the PackStream values the Bolt session writes (so
//! nodes, relationships and paths carry the same element ids, labels and
//! properties a driver sees) and leave as plain JSON or as typed JSON
//! (`{"$type": "Integer", "_value": "1"}`). Parameters come as plain JSON,
//! or typed JSON when the request's content type says so.

use crate::packstream::PackValue;
use crate::values;
use base64::Engine as _;
use rhizome_common::Value;
use rhizome_functions::temporal::construct::{from_string, Kind};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;

const NODE: u8 = 0x4E;
const RELATIONSHIP: u8 = 0x52;
const UNBOUND_RELATIONSHIP: u8 = 0x72;
const PATH: u8 = 0x50;
const DATE_TIME: u8 = 0x49;
const DATE_TIME_ZONE_ID: u8 = 0x69;

/// The JSON form results are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain JSON (`application/json`).
    Plain,
    /// Typed JSON (`application/vnd.neo4j.query`).
    Typed,
}

/// `value` (as the Bolt session wrote it) in `format`.
pub fn to_json(value: &PackValue, format: Format) -> Json {
    match format {
        Format::Plain => plain(value),
        Format::Typed => typed(value),
    }
}

fn float_json(x: f64) -> Json {
    serde_json::Number::from_f64(x)
        .map(Json::Number)
        .unwrap_or_else(|| Json::String(float_text(x)))
}

fn float_text(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        let s = format!("{x:?}");
        s
    }
}

fn text(v: &PackValue) -> String {
    match v {
        PackValue::String(s) => s.clone(),
        _ => String::new(),
    }
}

/// A node's or relationship's parts; `None` for a malformed structure.
struct Entity<'a> {
    element_id: String,
    labels_or_type: Vec<String>,
    properties: &'a PackValue,
    start: String,
    end: String,
}

fn node(fields: &[PackValue]) -> Option<Entity<'_>> {
    let [_, PackValue::List(labels), props, eid] = fields else {
        return None;
    };
    Some(Entity {
        element_id: text(eid),
        labels_or_type: labels.iter().map(text).collect(),
        properties: props,
        start: String::new(),
        end: String::new(),
    })
}

fn relationship(fields: &[PackValue]) -> Option<Entity<'_>> {
    let [_, _, _, kind, props, eid, start, end] = fields else {
        return None;
    };
    Some(Entity {
        element_id: text(eid),
        labels_or_type: vec![text(kind)],
        properties: props,
        start: text(start),
        end: text(end),
    })
}

/// A path as its alternating nodes and relationships (relationships with
/// their start and end filled in from the path's direction indices).
fn path_parts(fields: &[PackValue]) -> Option<Vec<(bool, Entity<'_>)>> {
    let [PackValue::List(nodes), PackValue::List(rels), PackValue::List(indices)] = fields else {
        return None;
    };
    let node_at = |i: usize| match nodes.get(i) {
        Some(PackValue::Struct(NODE, f)) => node(f),
        _ => None,
    };
    let mut out = vec![(true, node_at(0)?)];
    let mut current = 0usize;
    for pair in indices.chunks(2) {
        let [PackValue::Int(r), PackValue::Int(n)] = pair else {
            return None;
        };
        let next = usize::try_from(*n).ok()?;
        let rel_index = usize::try_from(r.unsigned_abs().checked_sub(1)?).ok()?;
        let Some(PackValue::Struct(UNBOUND_RELATIONSHIP, f)) = rels.get(rel_index) else {
            return None;
        };
        let [_, kind, props, eid] = f.as_slice() else {
            return None;
        };
        let (from, to) = (node_at(current)?.element_id, node_at(next)?.element_id);
        let (start, end) = if *r > 0 { (from, to) } else { (to, from) };
        out.push((
            false,
            Entity {
                element_id: text(eid),
                labels_or_type: vec![text(kind)],
                properties: props,
                start,
                end,
            },
        ));
        out.push((true, node_at(next)?));
        current = next;
    }
    Some(out)
}

/// A temporal structure's ISO text and Query API type name.
fn temporal(tag: u8, fields: &[PackValue]) -> Option<(String, &'static str)> {
    let value = values::to_value(PackValue::Struct(tag, fields.to_vec())).ok()?;
    let name = match (&value, tag) {
        (Value::Date(_), _) => "Date",
        (Value::Time(_), _) => "Time",
        (Value::LocalTime(_), _) => "LocalTime",
        (Value::LocalDateTime(_), _) => "LocalDateTime",
        (Value::DateTime(_), DATE_TIME) => "OffsetDateTime",
        (Value::DateTime(_), DATE_TIME_ZONE_ID) => "DateTime",
        (Value::DateTime(dt), _) if dt.zone.is_some() => "DateTime",
        (Value::DateTime(_), _) => "OffsetDateTime",
        (Value::Duration(d), _) => return Some((d.to_string(), "Duration")),
        _ => return None,
    };
    Some((
        rhizome_functions::temporal::format::format_temporal(&value)?,
        name,
    ))
}

fn plain_entity(e: &Entity<'_>, is_node: bool) -> Json {
    if is_node {
        json!({
            "elementId": e.element_id,
            "labels": e.labels_or_type,
            "properties": plain(e.properties),
        })
    } else {
        json!({
            "elementId": e.element_id,
            "startNodeElementId": e.start,
            "endNodeElementId": e.end,
            "type": e.labels_or_type.first().cloned().unwrap_or_default(),
            "properties": plain(e.properties),
        })
    }
}

fn typed_entity(e: &Entity<'_>, is_node: bool) -> Json {
    if is_node {
        json!({"$type": "Node", "_value": {
            "_element_id": e.element_id,
            "_labels": e.labels_or_type,
            "_properties": typed_properties(e.properties),
        }})
    } else {
        json!({"$type": "Relationship", "_value": {
            "_element_id": e.element_id,
            "_start_node_element_id": e.start,
            "_end_node_element_id": e.end,
            "_type": e.labels_or_type.first().cloned().unwrap_or_default(),
            "_properties": typed_properties(e.properties),
        }})
    }
}

fn typed_properties(props: &PackValue) -> Json {
    match props {
        PackValue::Map(entries) => {
            Json::Object(entries.iter().map(|(k, v)| (k.clone(), typed(v))).collect())
        }
        _ => Json::Object(Map::new()),
    }
}

fn plain(value: &PackValue) -> Json {
    match value {
        PackValue::Null => Json::Null,
        PackValue::Bool(b) => Json::Bool(*b),
        PackValue::Int(i) => Json::from(*i),
        PackValue::Float(x) => float_json(*x),
        PackValue::String(s) => Json::String(s.clone()),
        PackValue::Bytes(b) => Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        PackValue::List(items) => Json::Array(items.iter().map(plain).collect()),
        PackValue::Map(entries) => {
            Json::Object(entries.iter().map(|(k, v)| (k.clone(), plain(v))).collect())
        }
        PackValue::Struct(NODE, f) => node(f)
            .map(|e| plain_entity(&e, true))
            .unwrap_or(Json::Null),
        PackValue::Struct(RELATIONSHIP, f) => relationship(f)
            .map(|e| plain_entity(&e, false))
            .unwrap_or(Json::Null),
        PackValue::Struct(PATH, f) => path_parts(f)
            .map(|parts| {
                Json::Array(
                    parts
                        .iter()
                        .map(|(is_node, e)| plain_entity(e, *is_node))
                        .collect(),
                )
            })
            .unwrap_or(Json::Null),
        PackValue::Struct(tag, f) => temporal(*tag, f)
            .map(|(text, _)| Json::String(text))
            .unwrap_or(Json::Null),
    }
}

fn tagged(kind: &str, value: Json) -> Json {
    json!({"$type": kind, "_value": value})
}

fn typed(value: &PackValue) -> Json {
    match value {
        PackValue::Null => tagged("Null", Json::Null),
        PackValue::Bool(b) => tagged("Boolean", Json::Bool(*b)),
        PackValue::Int(i) => tagged("Integer", Json::String(i.to_string())),
        PackValue::Float(x) => tagged("Float", Json::String(float_text(*x))),
        PackValue::String(s) => tagged("String", Json::String(s.clone())),
        PackValue::Bytes(b) => tagged(
            "Base64",
            Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        ),
        PackValue::List(items) => tagged("List", Json::Array(items.iter().map(typed).collect())),
        PackValue::Map(_) => tagged("Map", typed_properties(value)),
        PackValue::Struct(NODE, f) => node(f)
            .map(|e| typed_entity(&e, true))
            .unwrap_or_else(|| tagged("Null", Json::Null)),
        PackValue::Struct(RELATIONSHIP, f) => relationship(f)
            .map(|e| typed_entity(&e, false))
            .unwrap_or_else(|| tagged("Null", Json::Null)),
        PackValue::Struct(PATH, f) => path_parts(f)
            .map(|parts| {
                tagged(
                    "Path",
                    Json::Array(
                        parts
                            .iter()
                            .map(|(is_node, e)| typed_entity(e, *is_node))
                            .collect(),
                    ),
                )
            })
            .unwrap_or_else(|| tagged("Null", Json::Null)),
        PackValue::Struct(tag, f) => temporal(*tag, f)
            .map(|(text, kind)| tagged(kind, Json::String(text)))
            .unwrap_or_else(|| tagged("Null", Json::Null)),
    }
}

/// The parameters of a request as Rhizome values; typed JSON objects
/// (`{"$type": …, "_value": …}`) are read as such when `typed` is true.
/// The error names the parameter and what is wrong.
pub fn parameters(
    params: &Map<String, Json>,
    typed: bool,
) -> Result<BTreeMap<String, Value>, String> {
    params
        .iter()
        .map(|(name, v)| {
            let value = from_json(v, typed).map_err(|why| format!("parameter `{name}`: {why}"))?;
            Ok((name.clone(), value))
        })
        .collect()
}

/// One JSON value as a Rhizome value.
pub fn from_json(v: &Json, typed: bool) -> Result<Value, String> {
    Ok(match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(
                n.as_f64()
                    .ok_or_else(|| format!("the number {n} is out of range"))?,
            ),
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::List(
            items
                .iter()
                .map(|i| from_json(i, typed))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) if typed && map.contains_key("$type") => from_typed(map)?,
        Json::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), from_json(v, typed)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

fn from_typed(map: &Map<String, Json>) -> Result<Value, String> {
    let Some(Json::String(kind)) = map.get("$type") else {
        return Err("`$type` must be a string naming the type".into());
    };
    if let Some(extra) = map.keys().find(|k| *k != "$type" && *k != "_value") {
        return Err(format!(
            "a typed value has only `$type` and `_value`, not `{extra}`"
        ));
    }
    let value = map.get("_value").unwrap_or(&Json::Null);
    let as_text = || match value {
        Json::String(s) => Ok(s.as_str()),
        other => Err(format!("a {kind} `_value` must be a string, not {other}")),
    };
    let temporal = |k: Kind| {
        from_string(k, as_text()?).map_err(|e| format!("not a valid {kind}: {}", e.message))
    };
    Ok(match kind.as_str() {
        "Null" => Value::Null,
        "Boolean" => match value {
            Json::Bool(b) => Value::Bool(*b),
            other => {
                return Err(format!(
                    "a Boolean `_value` must be true or false, not {other}"
                ))
            }
        },
        "Integer" => match value {
            Json::Number(n) if n.is_i64() => Value::Int(n.as_i64().unwrap_or_default()),
            Json::String(s) => Value::Int(
                s.trim()
                    .parse()
                    .map_err(|_| format!("`{s}` is not a 64-bit integer"))?,
            ),
            other => return Err(format!("`{other}` is not a 64-bit integer")),
        },
        "Float" => match value {
            Json::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            Json::String(s) => Value::Float(match s.trim() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                t => t.parse().map_err(|_| format!("`{s}` is not a float"))?,
            }),
            other => return Err(format!("`{other}` is not a float")),
        },
        "String" => Value::String(as_text()?.to_string()),
        "List" => match value {
            Json::Array(items) => Value::List(
                items
                    .iter()
                    .map(|i| from_json(i, true))
                    .collect::<Result<_, _>>()?,
            ),
            other => return Err(format!("a List `_value` must be an array, not {other}")),
        },
        "Map" => match value {
            Json::Object(m) => Value::Map(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), from_json(v, true)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => return Err(format!("a Map `_value` must be an object, not {other}")),
        },
        "Date" => temporal(Kind::Date)?,
        "Time" => temporal(Kind::Time)?,
        "LocalTime" => temporal(Kind::LocalTime)?,
        "LocalDateTime" => temporal(Kind::LocalDateTime)?,
        "DateTime" | "OffsetDateTime" | "ZonedDateTime" => temporal(Kind::DateTime)?,
        "Duration" => Value::Duration(
            rhizome_functions::temporal::duration::parse(as_text()?)
                .map_err(|e| format!("not a valid Duration: {}", e.message))?,
        ),
        "Base64" | "Point" => return Err(format!("{kind} values are not supported by Rhizome")),
        other => {
            return Err(format!(
                "unknown type `{other}` (expected Null, Boolean, Integer, Float, String, List, \
                 Map, Date, Time, LocalTime, LocalDateTime, DateTime, OffsetDateTime or Duration)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_parameters() {
        let params: Map<String, Json> =
            serde_json::from_str(r#"{"a": 1, "b": 1.5, "c": [true, null], "d": {"x": "y"}}"#)
                .unwrap();
        let p = parameters(&params, false).unwrap();
        assert_eq!(p["a"], Value::Int(1));
        assert_eq!(p["b"], Value::Float(1.5));
        assert_eq!(p["c"], Value::List(vec![Value::Bool(true), Value::Null]));
        assert!(matches!(&p["d"], Value::Map(m) if m["x"] == Value::String("y".into())));
    }

    #[test]
    fn typed_parameters_and_their_errors() {
        let params: Map<String, Json> = serde_json::from_str(
            r#"{"i": {"$type": "Integer", "_value": "9007199254740993"},
                "d": {"$type": "Date", "_value": "2024-02-29"},
                "l": {"$type": "List", "_value": [{"$type": "Float", "_value": "NaN"}]},
                "plain": {"$type": "x"}}"#,
        )
        .unwrap();
        // Without the typed content type an object is just a map.
        assert!(parameters(&params, false).is_ok());
        let err = parameters(&params, true).unwrap_err();
        assert!(
            err.contains("parameter `plain`") && err.contains("unknown type `x`"),
            "{err}"
        );
        let mut ok = params.clone();
        ok.remove("plain");
        let p = parameters(&ok, true).unwrap();
        assert_eq!(p["i"], Value::Int(9007199254740993));
        assert!(matches!(p["d"], Value::Date(_)));
        let bad: Map<String, Json> =
            serde_json::from_str(r#"{"d": {"$type": "Date", "_value": "2024-13-01"}}"#).unwrap();
        let err = parameters(&bad, true).unwrap_err();
        assert!(err.contains("not a valid Date"), "{err}");
    }

    #[test]
    fn scalars_in_both_forms() {
        assert_eq!(to_json(&PackValue::Int(7), Format::Plain), json!(7));
        assert_eq!(
            to_json(&PackValue::Int(7), Format::Typed),
            json!({"$type": "Integer", "_value": "7"})
        );
        assert_eq!(
            to_json(&PackValue::Float(f64::NAN), Format::Plain),
            json!("NaN")
        );
        assert_eq!(
            to_json(&PackValue::Float(0.5), Format::Typed),
            json!({"$type": "Float", "_value": "0.5"})
        );
    }

    #[test]
    fn malformed_structures_never_panic() {
        for v in [
            PackValue::Struct(NODE, vec![]),
            PackValue::Struct(RELATIONSHIP, vec![PackValue::Null]),
            PackValue::Struct(
                PATH,
                vec![
                    PackValue::List(vec![]),
                    PackValue::List(vec![]),
                    PackValue::List(vec![PackValue::Int(i64::MIN), PackValue::Int(-1)]),
                ],
            ),
            PackValue::Struct(0x44, vec![PackValue::Int(i64::MAX)]),
            PackValue::Struct(0x01, vec![]),
        ] {
            let _ = to_json(&v, Format::Plain);
            let _ = to_json(&v, Format::Typed);
        }
    }
}
