//! Rhizome values to PackStream and back.
//!
//! Results are written straight into the output buffer (no intermediate
//! value tree per row). Nodes and relationships are looked up in the
//! snapshot the query read, so they go out as Bolt Node / Relationship /
//! Path structures with labels, type and properties; their element id is
//! what Cypher's `elementId()` returns (`n:<id>`, `r:<id>`). Date-times use
//! the UTC structures of Bolt 5 and the legacy local-seconds ones of 4.4.
//!
//! Parameters come the other way: every PackStream type Rhizome has a value
//! for is accepted; byte arrays, points and graph structures are refused
//! with a message naming the parameter.

use crate::packstream::{
    write_bool, write_float, write_int, write_list_header, write_map_header, write_null,
    write_string, write_struct_header, PackValue,
};
use rhizome_common::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use rhizome_common::{NodeId, PathValue, RelId, Value};
use rhizome_storage::{GraphRead, PropertyKeyId};
use std::collections::BTreeMap;

/// Structure tags.
mod tag {
    pub const NODE: u8 = 0x4E;
    pub const RELATIONSHIP: u8 = 0x52;
    pub const UNBOUND_RELATIONSHIP: u8 = 0x72;
    pub const PATH: u8 = 0x50;
    pub const DATE: u8 = 0x44;
    pub const TIME: u8 = 0x54;
    pub const LOCAL_TIME: u8 = 0x74;
    pub const LOCAL_DATE_TIME: u8 = 0x64;
    pub const DATE_TIME: u8 = 0x49;
    pub const DATE_TIME_ZONE_ID: u8 = 0x69;
    pub const LEGACY_DATE_TIME: u8 = 0x46;
    pub const LEGACY_DATE_TIME_ZONE_ID: u8 = 0x66;
    pub const DURATION: u8 = 0x45;
    pub const POINT_2D: u8 = 0x58;
    pub const POINT_3D: u8 = 0x59;
}

/// How to write values on one connection.
pub struct ValueWriter<'a> {
    /// Bolt 5 structures (element ids, UTC date-times) rather than 4.4's.
    pub v5: bool,
    /// The graph that entities are looked up in (`None`: entities are
    /// written without labels, type or properties).
    pub graph: Option<&'a dyn GraphRead>,
}

impl ValueWriter<'_> {
    /// Appends `value` to `out`.
    pub fn write(&self, out: &mut Vec<u8>, value: &Value) {
        match value {
            Value::Null => write_null(out),
            Value::Bool(b) => write_bool(out, *b),
            Value::Int(i) => write_int(out, *i),
            Value::Float(x) => write_float(out, *x),
            Value::String(s) => write_string(out, s),
            Value::List(items) => {
                write_list_header(out, items.len());
                for item in items {
                    self.write(out, item);
                }
            }
            Value::Map(entries) => {
                write_map_header(out, entries.len());
                for (k, v) in entries {
                    write_string(out, k);
                    self.write(out, v);
                }
            }
            Value::Node(id) => self.node(out, *id),
            Value::Relationship(id) => self.relationship(out, *id),
            Value::Path(path) => self.path(out, path),
            Value::Date(d) => {
                write_struct_header(out, tag::DATE, 1);
                write_int(out, d.days);
            }
            Value::LocalTime(t) => {
                write_struct_header(out, tag::LOCAL_TIME, 1);
                write_int(out, t.nanos);
            }
            Value::Time(t) => {
                write_struct_header(out, tag::TIME, 2);
                write_int(out, t.nanos);
                write_int(out, t.offset_seconds as i64);
            }
            Value::LocalDateTime(t) => {
                write_struct_header(out, tag::LOCAL_DATE_TIME, 2);
                write_int(out, t.seconds);
                write_int(out, t.nanos as i64);
            }
            Value::DateTime(t) => self.date_time(out, t),
            Value::Duration(d) => {
                write_struct_header(out, tag::DURATION, 4);
                write_int(out, d.months);
                write_int(out, d.days);
                write_int(out, d.seconds);
                write_int(out, d.nanos as i64);
            }
        }
    }

    fn date_time(&self, out: &mut Vec<u8>, t: &DateTime) {
        let seconds = if self.v5 {
            t.seconds
        } else {
            t.seconds + t.offset_seconds as i64
        };
        let (zoned, offset) = match (self.v5, &t.zone) {
            (true, Some(_)) => (tag::DATE_TIME_ZONE_ID, tag::DATE_TIME),
            (true, None) => (0, tag::DATE_TIME),
            (false, Some(_)) => (tag::LEGACY_DATE_TIME_ZONE_ID, tag::LEGACY_DATE_TIME),
            (false, None) => (0, tag::LEGACY_DATE_TIME),
        };
        match &t.zone {
            Some(zone) => {
                write_struct_header(out, zoned, 3);
                write_int(out, seconds);
                write_int(out, t.nanos as i64);
                write_string(out, zone);
            }
            None => {
                write_struct_header(out, offset, 3);
                write_int(out, seconds);
                write_int(out, t.nanos as i64);
                write_int(out, t.offset_seconds as i64);
            }
        }
    }

    fn properties(&self, out: &mut Vec<u8>, props: &[(PropertyKeyId, Value)]) {
        write_map_header(out, props.len());
        if let Some(graph) = self.graph {
            let catalog = graph.catalog();
            for (key, value) in props {
                write_string(out, catalog.property_key_name(*key));
                self.write(out, value);
            }
        }
    }

    /// Writes (Bolt 5 only) the element id Cypher's `elementId()` gives:
    /// `n:<id>` for a node, `r:<id>` for a relationship.
    fn element_id(&self, out: &mut Vec<u8>, prefix: &str, id: u64) {
        if self.v5 {
            write_string(out, &format!("{prefix}:{id}"));
        }
    }

    fn node(&self, out: &mut Vec<u8>, id: NodeId) {
        write_struct_header(out, tag::NODE, if self.v5 { 4 } else { 3 });
        write_int(out, id as i64);
        let mut props = Vec::new();
        match self.graph.filter(|g| g.node_exists(id)) {
            Some(graph) => {
                let labels = graph.node_labels(id);
                write_list_header(out, labels.len());
                for &label in labels {
                    write_string(out, graph.catalog().label_name(label));
                }
                graph.node_properties(id, &mut props);
            }
            None => write_list_header(out, 0),
        }
        self.properties(out, &props);
        self.element_id(out, "n", id);
    }

    /// The type name, endpoints and properties of a relationship (empty if
    /// it is unknown).
    fn rel_parts(&self, id: RelId) -> (&str, NodeId, NodeId, Vec<(PropertyKeyId, Value)>) {
        let mut props = Vec::new();
        let Some(graph) = self.graph else {
            return ("", 0, 0, props);
        };
        match graph.relationship(id) {
            Some(info) => {
                graph.rel_properties(id, &mut props);
                (
                    graph.catalog().rel_type_name(info.rel_type),
                    info.start,
                    info.end,
                    props,
                )
            }
            None => ("", 0, 0, props),
        }
    }

    fn relationship(&self, out: &mut Vec<u8>, id: RelId) {
        let (rel_type, start, end, props) = self.rel_parts(id);
        write_struct_header(out, tag::RELATIONSHIP, if self.v5 { 8 } else { 5 });
        write_int(out, id as i64);
        write_int(out, start as i64);
        write_int(out, end as i64);
        write_string(out, rel_type);
        self.properties(out, &props);
        self.element_id(out, "r", id);
        self.element_id(out, "n", start);
        self.element_id(out, "n", end);
    }

    fn path(&self, out: &mut Vec<u8>, path: &PathValue) {
        let mut nodes: Vec<NodeId> = Vec::with_capacity(path.nodes.len());
        let mut rels: Vec<RelId> = Vec::with_capacity(path.rels.len());
        let mut indices = Vec::with_capacity(path.rels.len() * 2);
        let index_of = |list: &mut Vec<u64>, id: u64| match list.iter().position(|&x| x == id) {
            Some(i) => i,
            None => {
                list.push(id);
                list.len() - 1
            }
        };
        if let Some(&first) = path.nodes.first() {
            nodes.push(first);
        }
        for (i, &rel) in path.rels.iter().enumerate() {
            let r = index_of(&mut rels, rel) as i64 + 1;
            let (_, start, _, _) = self.rel_parts(rel);
            let forward = path.nodes.get(i) == Some(&start);
            indices.push(if forward { r } else { -r });
            let next = path.nodes.get(i + 1).copied().unwrap_or_default();
            indices.push(index_of(&mut nodes, next) as i64);
        }
        write_struct_header(out, tag::PATH, 3);
        write_list_header(out, nodes.len());
        for &n in &nodes {
            self.node(out, n);
        }
        write_list_header(out, rels.len());
        for &r in &rels {
            let (rel_type, _, _, props) = self.rel_parts(r);
            write_struct_header(out, tag::UNBOUND_RELATIONSHIP, if self.v5 { 4 } else { 3 });
            write_int(out, r as i64);
            write_string(out, rel_type);
            self.properties(out, &props);
            self.element_id(out, "r", r);
        }
        write_list_header(out, indices.len());
        for i in indices {
            write_int(out, i);
        }
    }
}

/// Converts the parameter map of a RUN message; the error says which
/// parameter could not be taken and why.
pub fn parameters(params: PackValue) -> Result<BTreeMap<String, Value>, String> {
    let PackValue::Map(entries) = params else {
        return Ok(BTreeMap::new());
    };
    entries
        .into_iter()
        .map(|(name, value)| {
            let value = to_value(value).map_err(|why| format!("parameter `{name}`: {why}"))?;
            Ok((name, value))
        })
        .collect()
}

fn int(field: &PackValue) -> Result<i64, String> {
    match field {
        PackValue::Int(i) => Ok(*i),
        other => Err(format!(
            "expected an Integer field, got a {}",
            other.type_name()
        )),
    }
}

fn nanos_of_second(field: &PackValue) -> Result<u32, String> {
    let n = int(field)?;
    u32::try_from(n)
        .ok()
        .filter(|&n| n < 1_000_000_000)
        .ok_or_else(|| format!("nanoseconds {n} are not in 0..10^9"))
}

fn nanos_of_day(field: &PackValue) -> Result<i64, String> {
    let n = int(field)?;
    if (0..86_400_000_000_000).contains(&n) {
        Ok(n)
    } else {
        Err(format!("time of day {n} ns is not within one day"))
    }
}

fn offset(field: &PackValue) -> Result<i32, String> {
    let o = int(field)?;
    i32::try_from(o)
        .ok()
        .filter(|o| o.abs() <= 18 * 3600)
        .ok_or_else(|| format!("UTC offset {o} s is out of range"))
}

fn zone(field: &PackValue) -> Result<rhizome_functions::temporal::Zone, String> {
    match field {
        PackValue::String(s) => rhizome_functions::temporal::Zone::parse(s).map_err(|e| e.message),
        other => Err(format!("expected a zone name, got a {}", other.type_name())),
    }
}

/// A decoded PackStream value as a Rhizome value.
pub fn to_value(value: PackValue) -> Result<Value, String> {
    Ok(match value {
        PackValue::Null => Value::Null,
        PackValue::Bool(b) => Value::Bool(b),
        PackValue::Int(i) => Value::Int(i),
        PackValue::Float(x) => Value::Float(x),
        PackValue::String(s) => Value::String(s),
        PackValue::Bytes(_) => return Err("byte arrays are not supported by Rhizome".into()),
        PackValue::List(items) => {
            Value::List(items.into_iter().map(to_value).collect::<Result<_, _>>()?)
        }
        PackValue::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| Ok((k, to_value(v)?)))
                .collect::<Result<_, String>>()?,
        ),
        PackValue::Struct(t, fields) => structure(t, &fields)?,
    })
}

/// `days` (since 1970-01-01) if the date is within the years Rhizome's
/// calendar functions handle.
fn in_calendar(days: i64) -> Result<i64, String> {
    rhizome_functions::temporal::make_date(days)
        .map(|_| days)
        .map_err(|e| format!("day {days}: {}", e.message))
}

/// `seconds` (since the epoch) if its date is within the calendar.
fn seconds_in_calendar(seconds: i64) -> Result<i64, String> {
    in_calendar(seconds.div_euclid(86_400)).map(|_| seconds)
}

fn structure(t: u8, f: &[PackValue]) -> Result<Value, String> {
    let want = |n: usize| {
        if f.len() == n {
            Ok(())
        } else {
            Err(format!(
                "structure 0x{t:02X} needs {n} field(s), it has {}",
                f.len()
            ))
        }
    };
    Ok(match t {
        tag::DATE => {
            want(1)?;
            Value::Date(Date {
                days: in_calendar(int(&f[0])?)?,
            })
        }
        tag::LOCAL_TIME => {
            want(1)?;
            Value::LocalTime(LocalTime {
                nanos: nanos_of_day(&f[0])?,
            })
        }
        tag::TIME => {
            want(2)?;
            Value::Time(Time {
                nanos: nanos_of_day(&f[0])?,
                offset_seconds: offset(&f[1])?,
            })
        }
        tag::LOCAL_DATE_TIME => {
            want(2)?;
            Value::LocalDateTime(LocalDateTime {
                seconds: seconds_in_calendar(int(&f[0])?)?,
                nanos: nanos_of_second(&f[1])?,
            })
        }
        tag::DATE_TIME | tag::LEGACY_DATE_TIME => {
            want(3)?;
            let offset_seconds = offset(&f[2])?;
            let seconds = seconds_in_calendar(int(&f[0])?)?;
            let utc = if t == tag::DATE_TIME {
                seconds
            } else {
                seconds
                    .checked_sub(offset_seconds as i64)
                    .ok_or("seconds out of range")?
            };
            Value::DateTime(DateTime {
                seconds: utc,
                nanos: nanos_of_second(&f[1])?,
                offset_seconds,
                zone: None,
            })
        }
        tag::DATE_TIME_ZONE_ID | tag::LEGACY_DATE_TIME_ZONE_ID => {
            want(3)?;
            let zone = zone(&f[2])?;
            let (seconds, nanos) = (seconds_in_calendar(int(&f[0])?)?, nanos_of_second(&f[1])?);
            Value::DateTime(if t == tag::DATE_TIME_ZONE_ID {
                zone.at_utc(seconds, nanos)
            } else {
                zone.resolve_local(seconds, nanos)
            })
        }
        tag::DURATION => {
            want(4)?;
            let nanos = int(&f[3])?;
            let seconds = int(&f[2])?;
            let total = seconds as i128 * 1_000_000_000 + nanos as i128;
            let seconds = i64::try_from(total.div_euclid(1_000_000_000))
                .map_err(|_| "duration out of range")?;
            let mut nanos = total.rem_euclid(1_000_000_000) as i32;
            let mut seconds = seconds;
            if seconds < 0 && nanos > 0 {
                seconds += 1;
                nanos -= 1_000_000_000;
            }
            Value::Duration(Duration {
                months: int(&f[0])?,
                days: int(&f[1])?,
                seconds,
                nanos,
            })
        }
        tag::POINT_2D | tag::POINT_3D => {
            return Err("spatial points are not supported by Rhizome".into())
        }
        tag::NODE | tag::RELATIONSHIP | tag::UNBOUND_RELATIONSHIP | tag::PATH => {
            return Err("nodes, relationships and paths cannot be passed as parameters".into())
        }
        _ => return Err(format!("unknown structure tag 0x{t:02X}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packstream::decode;

    fn written(v5: bool, value: &Value) -> PackValue {
        let mut out = Vec::new();
        ValueWriter { v5, graph: None }.write(&mut out, value);
        decode(&out).unwrap()
    }

    #[test]
    fn scalars_and_temporals_round_trip_through_parameters() {
        let values = [
            Value::Null,
            Value::Bool(false),
            Value::Int(-300),
            Value::Float(2.5),
            Value::String("x".into()),
            Value::List(vec![Value::Int(1), Value::Null]),
            Value::Map([("k".to_string(), Value::Int(1))].into()),
            Value::Date(Date { days: -5 }),
            Value::LocalTime(LocalTime { nanos: 5 }),
            Value::Time(Time {
                nanos: 7,
                offset_seconds: -3600,
            }),
            Value::LocalDateTime(LocalDateTime {
                seconds: 10,
                nanos: 3,
            }),
            Value::DateTime(DateTime {
                seconds: 1000,
                nanos: 1,
                offset_seconds: 7200,
                zone: None,
            }),
            Value::Duration(Duration {
                months: 14,
                days: 3,
                seconds: -5,
                nanos: -20,
            }),
        ];
        for v5 in [true, false] {
            for value in &values {
                assert_eq!(to_value(written(v5, value)).as_ref(), Ok(value), "v5={v5}");
            }
        }
    }

    #[test]
    fn date_times_use_utc_seconds_in_bolt_5_and_local_ones_in_4_4() {
        let stockholm = rhizome_functions::temporal::Zone::parse("Europe/Stockholm")
            .unwrap()
            .at_utc(1_700_000_000, 0);
        let v5 = written(true, &Value::DateTime(stockholm.clone()));
        assert_eq!(
            v5,
            PackValue::Struct(
                0x69,
                vec![1_700_000_000.into(), 0.into(), "Europe/Stockholm".into()]
            )
        );
        let v4 = written(false, &Value::DateTime(stockholm.clone()));
        assert_eq!(
            v4,
            PackValue::Struct(
                0x66,
                vec![1_700_003_600.into(), 0.into(), "Europe/Stockholm".into()]
            )
        );
        assert_eq!(to_value(v5), Ok(Value::DateTime(stockholm.clone())));
        assert_eq!(to_value(v4), Ok(Value::DateTime(stockholm)));
    }

    #[test]
    fn unsupported_parameters_name_themselves() {
        let params = crate::packstream::map([("blob", PackValue::Bytes(vec![1]))]);
        assert!(parameters(params)
            .unwrap_err()
            .contains("parameter `blob`: byte arrays"));
        let bad = PackValue::Struct(0x44, vec![]);
        assert!(to_value(bad).unwrap_err().contains("needs 1 field"));
        let node = PackValue::Struct(0x4E, vec![]);
        assert!(to_value(node).unwrap_err().contains("cannot be passed"));
    }
}
