//! Conversions between Rhizome values and Python objects.
//!
//! Results: scalars become `None`/`bool`/`int`/`float`/`str`, lists `list`,
//! maps `dict`, temporal values `datetime` objects (nanoseconds rounded down
//! to microseconds), durations `rhizome.Duration`, and entities
//! `rhizome.Node` / `Relationship` / `Path` with labels, type and properties
//! read from the snapshot the result came from.
//!
//! Parameters: the same types back (a `tuple` as a list, a `timedelta` as
//! a duration); anything else is a `TypeError` naming the type and where
//! in the parameter it was.

use crate::python_side::{helpers, Helpers};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rhizome_common::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use rhizome_common::{NodeId, RelId, Value};
use rhizome_storage::{GraphRead, PropertyKeyId, Snapshot};
use std::collections::BTreeMap;

/// Converts values to Python, resolving entities through a snapshot.
pub(crate) struct ToPython<'a, 'py> {
    py: Python<'py>,
    helpers: &'static Helpers,
    graph: &'a Snapshot,
    /// Reused buffer of an entity's properties.
    props: Vec<(PropertyKeyId, Value)>,
    /// Entities as plain dicts (for Arrow) instead of `Node`/`Relationship`/`Path`.
    as_maps: bool,
}

impl<'a, 'py> ToPython<'a, 'py> {
    /// A converter for values of a result read on `graph`.
    pub fn new(py: Python<'py>, graph: &'a Snapshot) -> PyResult<ToPython<'a, 'py>> {
        Ok(ToPython {
            py,
            helpers: helpers(py)?,
            graph,
            props: Vec::new(),
            as_maps: false,
        })
    }

    /// The same converter turning entities into dicts that `pyarrow.array`
    /// understands: a node `{"_id", "_labels", **properties}`, a relationship
    /// `{"_id", "_type", "_start", "_end", **properties}`, a path
    /// `{"nodes": [...], "relationships": [...]}`.
    pub fn entities_as_maps(mut self) -> Self {
        self.as_maps = true;
        self
    }

    /// One value.
    pub fn value(&mut self, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let h = self.helpers;
        Ok(match value {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            Value::Int(i) => i.into_pyobject(py)?.into_any(),
            Value::Float(x) => PyFloat::new(py, *x).into_any(),
            Value::String(s) => PyString::new(py, s).into_any(),
            Value::List(items) => {
                let list = PyList::empty(py);
                for item in items {
                    list.append(self.value(item)?)?;
                }
                list.into_any()
            }
            Value::Map(map) => {
                let dict = PyDict::new(py);
                for (k, v) in map {
                    dict.set_item(k, self.value(v)?)?;
                }
                dict.into_any()
            }
            Value::Node(id) => self.node(*id)?,
            Value::Relationship(id) => self.relationship(*id)?,
            Value::Path(path) => {
                let nodes = PyList::empty(py);
                for &n in &path.nodes {
                    nodes.append(self.node(n)?)?;
                }
                let rels = PyList::empty(py);
                for &r in &path.rels {
                    rels.append(self.relationship(r)?)?;
                }
                if self.as_maps {
                    let dict = PyDict::new(py);
                    dict.set_item("nodes", nodes)?;
                    dict.set_item("relationships", rels)?;
                    dict.into_any()
                } else {
                    h.path.bind(py).call1((nodes, rels))?
                }
            }
            Value::Date(d) => h.date.bind(py).call1((d.days,))?,
            Value::LocalTime(t) => h.local_time.bind(py).call1((t.nanos,))?,
            Value::Time(t) => h.time.bind(py).call1((t.nanos, t.offset_seconds))?,
            Value::LocalDateTime(t) => h.local_datetime.bind(py).call1((t.seconds, t.nanos))?,
            Value::DateTime(t) => h.datetime.bind(py).call1((
                t.seconds,
                t.nanos,
                t.offset_seconds,
                t.zone.as_deref(),
            ))?,
            Value::Duration(d) => h
                .duration
                .bind(py)
                .call1((d.months, d.days, d.seconds, d.nanos))?,
        })
    }

    /// The properties gathered in `self.props` as a dict.
    fn properties(&mut self) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(self.py);
        let props = std::mem::take(&mut self.props);
        for (key, value) in &props {
            let name = self.graph.catalog().property_key_name(*key);
            dict.set_item(name, self.value(value)?)?;
        }
        self.props = props;
        self.props.clear();
        Ok(dict)
    }

    fn node(&mut self, id: NodeId) -> PyResult<Bound<'py, PyAny>> {
        let catalog = self.graph.catalog();
        let labels: Vec<&str> = self
            .graph
            .node_labels(id)
            .iter()
            .map(|&l| catalog.label_name(l))
            .collect();
        let labels = PyList::new(self.py, labels)?;
        self.props.clear();
        self.graph.node_properties(id, &mut self.props);
        let properties = self.properties()?;
        if self.as_maps {
            let dict = PyDict::new(self.py);
            dict.set_item("_id", id)?;
            dict.set_item("_labels", labels)?;
            dict.update(properties.as_mapping())?;
            return Ok(dict.into_any());
        }
        self.helpers
            .node
            .bind(self.py)
            .call1((id, labels, properties))
    }

    fn relationship(&mut self, id: RelId) -> PyResult<Bound<'py, PyAny>> {
        let Some(info) = self.graph.relationship(id) else {
            // deleted by the statement that returns it: only the id is left
            let properties = PyDict::new(self.py);
            if self.as_maps {
                properties.set_item("_id", id)?;
                return Ok(properties.into_any());
            }
            let none = self.py.None();
            return self.helpers.relationship.bind(self.py).call1((
                id,
                none.clone_ref(self.py),
                none.clone_ref(self.py),
                none,
                properties,
            ));
        };
        let rel_type = self
            .graph
            .catalog()
            .rel_type_name(info.rel_type)
            .to_string();
        self.props.clear();
        self.graph.rel_properties(id, &mut self.props);
        let properties = self.properties()?;
        if self.as_maps {
            let dict = PyDict::new(self.py);
            dict.set_item("_id", id)?;
            dict.set_item("_type", rel_type)?;
            dict.set_item("_start", info.start)?;
            dict.set_item("_end", info.end)?;
            dict.update(properties.as_mapping())?;
            return Ok(dict.into_any());
        }
        self.helpers
            .relationship
            .bind(self.py)
            .call1((id, rel_type, info.start, info.end, properties))
    }
}

/// Query parameters from a Python mapping (or `None`).
pub(crate) fn parameters(
    parameters: Option<&Bound<'_, PyAny>>,
) -> PyResult<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    let Some(parameters) = parameters.filter(|p| !p.is_none()) else {
        return Ok(out);
    };
    let dict = parameters.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "parameters must be a dict of names to values, not {}",
            type_name(parameters)
        ))
    })?;
    for (key, value) in dict.iter() {
        let name: String = key.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "parameter names must be strings, not {}",
                type_name(&key)
            ))
        })?;
        let converted = from_python(&value, &mut vec![name.clone()])?;
        out.insert(name, converted);
    }
    Ok(out)
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn describe(path: &[String]) -> String {
    let mut text = format!("${}", path[0]);
    for step in &path[1..] {
        text.push_str(step);
    }
    text
}

/// A parameter value; `path` names where it is (for errors).
fn from_python(value: &Bound<'_, PyAny>, path: &mut Vec<String>) -> PyResult<Value> {
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        return value.extract::<i64>().map(Value::Int).map_err(|_| {
            PyOverflowError::new_err(format!(
                "parameter {} does not fit in a 64-bit integer",
                describe(path)
            ))
        });
    }
    if let Ok(x) = value.cast::<PyFloat>() {
        return Ok(Value::Float(x.value()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if value.is_instance_of::<PyList>() || value.is_exact_instance_of::<PyTuple>() {
        return list(value, path);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = BTreeMap::new();
        for (k, v) in dict.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "map keys in parameter {} must be strings, not {}",
                    describe(path),
                    type_name(&k)
                ))
            })?;
            path.push(format!(".{key}"));
            map.insert(key, from_python(&v, path)?);
            path.pop();
        }
        return Ok(Value::Map(map));
    }
    let py = value.py();
    let parts = helpers(py)?.temporal_parts.bind(py).call1((value,))?;
    if !parts.is_none() {
        return temporal(&parts);
    }
    if value.is_instance_of::<PyTuple>() {
        return list(value, path); // a named tuple other than rhizome.Duration
    }
    // numpy scalars and other numbers that behave as ints or floats
    if value.hasattr("__index__")? {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(Value::Int(i));
        }
    }
    if value.hasattr("__float__")? {
        if let Ok(x) = value.extract::<f64>() {
            return Ok(Value::Float(x));
        }
    }
    Err(PyTypeError::new_err(format!(
        "parameter {} has type {}, which Cypher has no value for \
         (use None, bool, int, float, str, list, dict, or a datetime type)",
        describe(path),
        type_name(value)
    )))
}

/// A list parameter from a Python list or tuple.
fn list(value: &Bound<'_, PyAny>, path: &mut Vec<String>) -> PyResult<Value> {
    let mut items = Vec::new();
    for (i, item) in value.try_iter()?.enumerate() {
        path.push(format!("[{i}]"));
        items.push(from_python(&item?, path)?);
        path.pop();
    }
    Ok(Value::List(items))
}

/// A temporal value from the tagged tuple of `_temporal_parts`.
fn temporal(parts: &Bound<'_, PyAny>) -> PyResult<Value> {
    let tag: String = parts.get_item(0)?.extract()?;
    let int = |i: usize| -> PyResult<i64> { parts.get_item(i)?.extract() };
    Ok(match tag.as_str() {
        "date" => Value::Date(Date { days: int(1)? }),
        "localtime" => Value::LocalTime(LocalTime { nanos: int(1)? }),
        "time" => Value::Time(Time {
            nanos: int(1)?,
            offset_seconds: int(2)? as i32,
        }),
        "localdatetime" => Value::LocalDateTime(LocalDateTime {
            seconds: int(1)?,
            nanos: int(2)? as u32,
        }),
        "datetime" => Value::DateTime(DateTime {
            seconds: int(1)?,
            nanos: int(2)? as u32,
            offset_seconds: int(3)? as i32,
            zone: parts
                .get_item(4)?
                .extract::<Option<String>>()?
                .map(|z| z.into()),
        }),
        _ => {
            let (months, days, seconds, nanos) = (int(1)?, int(2)?, int(3)?, int(4)?);
            // normalise nanoseconds into (-1s, 1s) with the sign of seconds
            let total = seconds as i128 * 1_000_000_000 + nanos as i128;
            let secs = (total / 1_000_000_000) as i64;
            let ns = (total % 1_000_000_000) as i32;
            Value::Duration(Duration {
                months,
                days,
                seconds: secs,
                nanos: ns,
            })
        }
    })
}
