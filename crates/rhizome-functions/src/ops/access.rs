//! Subscripts, slices and property access.

use crate::entity::EntityAccess;
use crate::errors::{invalid_type, wrong_type};
use crate::temporal::fields;
use rhizome_common::{Error, ErrorKind, Result, Value};

/// `container[idx]`.
///
/// - list with an integer: negative indices count from the end; out of
///   range gives null; a non-integer index is
///   `TypeError: ListElementAccessByNonInteger`.
/// - map, node or relationship with a string: the value or null;
///   a map with a non-string key is `TypeError: MapElementAccessByNonString`.
/// - null on either side gives null; any other container is a `TypeError`.
pub fn index(container: &Value, idx: &Value, graph: &dyn EntityAccess) -> Result<Value> {
    match (container, idx) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::List(items), Value::Int(i)) => {
            let len = items.len() as i64;
            let pos = if *i < 0 { len + i } else { *i };
            Ok(if (0..len).contains(&pos) {
                items[pos as usize].clone()
            } else {
                Value::Null
            })
        }
        (Value::List(_), _) => Err(Error::new(
            ErrorKind::TypeError,
            format!(
                "a list can only be indexed by an integer, not by {}",
                idx.type_name()
            ),
        )
        .with_code("ListElementAccessByNonInteger")),
        (Value::Map(_) | Value::Node(_) | Value::Relationship(_), Value::String(key)) => {
            property(container, key, graph)
        }
        (Value::Map(_) | Value::Node(_) | Value::Relationship(_), _) => Err(Error::new(
            ErrorKind::TypeError,
            format!(
                "a map can only be indexed by a string, not by {}",
                idx.type_name()
            ),
        )
        .with_code("MapElementAccessByNonString")),
        _ => Err(wrong_type("subscript `[]`", container)),
    }
}

fn bound(v: Option<&Value>) -> Result<Option<Option<i64>>> {
    match v {
        None => Ok(Some(None)),
        Some(Value::Null) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(Some(*i))),
        Some(other) => Err(invalid_type(format!(
            "a list slice bound must be an integer, not {}",
            other.type_name()
        ))),
    }
}

/// `list[from..to]`: `None` for an omitted bound; a null bound (or list)
/// gives null. Negative bounds count from the end; bounds are clamped, and
/// an empty or inverted range gives `[]`.
pub fn slice(list: &Value, from: Option<&Value>, to: Option<&Value>) -> Result<Value> {
    let (Some(from), Some(to)) = (bound(from)?, bound(to)?) else {
        return Ok(Value::Null);
    };
    let items = match list {
        Value::Null => return Ok(Value::Null),
        Value::List(items) => items,
        _ => return Err(wrong_type("list slice", list)),
    };
    let len = items.len() as i64;
    let norm = |i: i64| if i < 0 { (len + i).max(0) } else { i.min(len) };
    let start = from.map_or(0, norm);
    let end = to.map_or(len, norm);
    Ok(Value::List(if start < end {
        items[start as usize..end as usize].to_vec()
    } else {
        Vec::new()
    }))
}

/// `v.key`: a map entry, a node or relationship property (null if absent),
/// or a component of a temporal value or duration (`date.year`,
/// `dt.timezone`, `d.minutes`, ...). Null gives null; other values are a
/// `TypeError`.
pub fn property(v: &Value, key: &str, graph: &dyn EntityAccess) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Map(map) => Ok(map.get(key).cloned().unwrap_or(Value::Null)),
        Value::Node(id) => Ok(graph
            .node_properties(*id)?
            .remove(key)
            .unwrap_or(Value::Null)),
        Value::Relationship(id) => Ok(graph
            .rel_properties(*id)?
            .remove(key)
            .unwrap_or(Value::Null)),
        Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_)
        | Value::Duration(_) => fields::component(v, key),
        _ => Err(wrong_type("property access", v)),
    }
}
