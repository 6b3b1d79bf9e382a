//! The APOC route procedures over a native snapshot:
//!
//! - `apoc.algo.dijkstra(startNode, endNode, relTypesAndDirections, weightPropertyName[, defaultWeight = NaN[, numberOfWantedPaths = 1]])`
//! - `apoc.algo.dijkstraWithDefaultWeight(startNode, endNode, relTypesAndDirections, weightPropertyName, defaultWeight)`
//! - `apoc.algo.aStar(startNode, endNode, relTypesAndDirections, weightPropertyName, latPropertyName, lonPropertyName)`
//! - `apoc.algo.aStarConfig(startNode, endNode, relTypesAndDirections, config)`
//!
//! Each yields `path` and `weight` (a float), one row per path found
//! (`numberOfWantedPaths` of them at most, cheapest first), none when the
//! end is unreachable. The searches check the query's cancellation
//! and timeout every few hundred settled nodes. Bad arguments (not a node,
//! a malformed filter, an unknown config key, a negative default weight)
//! are `ArgumentError`s naming the argument; a relationship without a
//! numeric weight and no default, a negative weight or a node without
//! coordinates under A* are `ProcedureError`s naming the entity.

use crate::expand::parse_filter;
use crate::native::NativeGraph;
use crate::search::{k_shortest_paths, Goal, Route, SearchOptions, SearchStats};
use rhizome_common::{Error, ErrorKind, NodeId, PathValue, Result, Value};
use rhizome_exec::context::QueryContext;
use rhizome_exec::procedures::{Procedure, ProcedureFn};
use rhizome_storage::GraphRead;
use std::sync::Arc;

/// Everything a route call needs, decoded from its arguments.
struct Call {
    start: NodeId,
    end: NodeId,
    filter: String,
    options: SearchOptions,
    coordinates: Option<(String, String)>,
    paths: usize,
}

fn argument_error(message: String) -> Error {
    Error::new(ErrorKind::ArgumentError, message)
}

fn node_arg(q: &QueryContext, value: &Value, name: &str) -> Result<NodeId> {
    match value {
        Value::Node(id) if q.snapshot.node_exists(*id) => Ok(*id),
        Value::Node(id) => Err(Error::new(
            ErrorKind::EntityNotFound,
            format!("{name}: node {id} does not exist (any more)"),
        )),
        other => Err(argument_error(format!(
            "{name} must be a node, got {}",
            other.type_name()
        ))),
    }
}

fn string_arg(value: &Value, name: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(argument_error(format!(
            "{name} must be a string, got {}",
            other.type_name()
        ))),
    }
}

/// A default weight: a number; NaN (APOC's "none") or null mean none.
fn default_weight_arg(value: &Value, name: &str) -> Result<Option<f64>> {
    let w = match value {
        Value::Null => return Ok(None),
        Value::Float(x) if x.is_nan() => return Ok(None),
        Value::Float(x) => *x,
        Value::Int(i) => *i as f64,
        other => {
            return Err(argument_error(format!(
                "{name} must be a number, got {}",
                other.type_name()
            )))
        }
    };
    if !(w >= 0.0 && w.is_finite()) {
        return Err(argument_error(format!(
            "{name} must be a finite number that is not negative, got {w}"
        )));
    }
    Ok(Some(w))
}

/// `numberOfWantedPaths`: a positive integer (null means one path).
fn wanted_paths_arg(value: &Value) -> Result<usize> {
    match value {
        Value::Null => Ok(1),
        Value::Int(k) if *k >= 1 => Ok(usize::try_from(*k).unwrap_or(usize::MAX)),
        Value::Int(k) => Err(argument_error(format!(
            "numberOfWantedPaths must be at least 1, got {k}"
        ))),
        other => Err(argument_error(format!(
            "numberOfWantedPaths must be an integer, got {}",
            other.type_name()
        ))),
    }
}

fn filter_arg(value: &Value) -> Result<String> {
    let text = string_arg(value, "relTypesAndDirections")?;
    parse_filter(&text, "relTypesAndDirections")?;
    Ok(text)
}

/// Runs the search and turns routes into rows of (path, weight).
/// Which graph the route procedures search: the native snapshot a query
/// reads ([`NativeGraphs`]), or a graph source (`rhizome-sources` provides
/// one), so the same procedures run over both.
pub trait RouteGraphs: Send + Sync {
    /// Runs `search` over the graph `q` reads, following `specs`, weighing
    /// by property `weight`, with coordinates from the named properties if
    /// given; `cancelled` says whether the query was stopped.
    fn search(
        &self,
        q: &QueryContext,
        specs: &[crate::ExpandSpec],
        weight: &str,
        coordinates: Option<(&str, &str)>,
        cancelled: &dyn Fn() -> Result<()>,
        search: &mut dyn FnMut(&dyn crate::RouteGraph) -> Result<Vec<Route>>,
    ) -> Result<Vec<Route>>;
}

/// The route procedures' graph over native storage.
pub struct NativeGraphs;

impl RouteGraphs for NativeGraphs {
    fn search(
        &self,
        q: &QueryContext,
        specs: &[crate::ExpandSpec],
        weight: &str,
        coordinates: Option<(&str, &str)>,
        cancelled: &dyn Fn() -> Result<()>,
        search: &mut dyn FnMut(&dyn crate::RouteGraph) -> Result<Vec<Route>>,
    ) -> Result<Vec<Route>> {
        let graph =
            NativeGraph::new(&q.snapshot, specs, weight, coordinates).with_cancel(cancelled);
        search(&graph)
    }
}

fn run(q: &QueryContext, call: Call, graphs: &dyn RouteGraphs) -> Result<Vec<Vec<Value>>> {
    let specs = parse_filter(&call.filter, "relTypesAndDirections")?;
    let cancelled = || {
        if q.scope.is_cancelled() {
            Err(q
                .scope
                .take_error()
                .unwrap_or_else(|| Error::new(ErrorKind::QueryAborted, "the query was cancelled")))
        } else {
            Ok(())
        }
    };
    let coordinates = call
        .coordinates
        .as_ref()
        .map(|(lat, lon)| (lat.as_str(), lon.as_str()));
    let routes = graphs.search(
        q,
        &specs,
        &call.options.weight_name,
        coordinates,
        &cancelled,
        &mut |graph| {
            let mut stats = SearchStats::default();
            k_shortest_paths(
                graph,
                call.start,
                call.end,
                call.paths,
                &call.options,
                &mut stats,
            )
        },
    )?;
    Ok(routes
        .into_iter()
        .map(|r| {
            vec![
                Value::Path(PathValue {
                    nodes: r.nodes,
                    rels: r.rels,
                }),
                Value::Float(r.cost),
            ]
        })
        .collect())
}

fn procedure(
    graphs: &Arc<dyn RouteGraphs>,
    name: &str,
    inputs: &[(&str, &str)],
    defaults: Vec<Value>,
    body: impl Fn(&QueryContext, &[Value]) -> Result<Call> + Send + Sync + 'static,
) -> Procedure {
    let graphs = graphs.clone();
    let body: ProcedureFn = Arc::new(move |q: &QueryContext, args: &[Value]| {
        let call = body(q, args)?;
        run(q, call, graphs.as_ref())
    });
    Procedure {
        name: name.into(),
        inputs: inputs
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect(),
        outputs: vec![
            ("path".into(), "PATH?".into()),
            ("weight".into(), "FLOAT?".into()),
        ],
        defaults,
        body,
    }
}

const START: (&str, &str) = ("startNode", "NODE?");
const END: (&str, &str) = ("endNode", "NODE?");
const FILTER: (&str, &str) = ("relTypesAndDirections", "STRING?");
const WEIGHT: (&str, &str) = ("weightPropertyName", "STRING?");

fn dijkstra_call(q: &QueryContext, args: &[Value], default: Option<f64>) -> Result<Call> {
    Ok(Call {
        start: node_arg(q, &args[0], "startNode")?,
        end: node_arg(q, &args[1], "endNode")?,
        filter: filter_arg(&args[2])?,
        options: SearchOptions {
            goal: Goal::Dijkstra,
            default_weight: default,
            weight_name: string_arg(&args[3], "weightPropertyName")?,
        },
        coordinates: None,
        paths: 1,
    })
}

/// The keys `apoc.algo.aStarConfig` reads from its config map.
const CONFIG_KEYS: &str = "weight, default, latitude (or y), longitude (or x)";

fn a_star_config_call(q: &QueryContext, args: &[Value]) -> Result<Call> {
    let Value::Map(config) = &args[3] else {
        return Err(argument_error(format!(
            "config must be a map with keys {CONFIG_KEYS}, got {}",
            args[3].type_name()
        )));
    };
    let mut weight = "distance".to_string();
    let mut default = None;
    let mut lat = "latitude".to_string();
    let mut lon = "longitude".to_string();
    for (key, value) in config {
        match key.as_str() {
            "weight" => weight = string_arg(value, "config.weight")?,
            "default" => default = default_weight_arg(value, "config.default")?,
            "latitude" | "y" => lat = string_arg(value, &format!("config.{key}"))?,
            "longitude" | "x" => lon = string_arg(value, &format!("config.{key}"))?,
            other => {
                return Err(argument_error(format!(
                    "config has an unknown key `{other}`; the keys are {CONFIG_KEYS}"
                )))
            }
        }
    }
    Ok(Call {
        start: node_arg(q, &args[0], "startNode")?,
        end: node_arg(q, &args[1], "endNode")?,
        filter: filter_arg(&args[2])?,
        options: SearchOptions {
            goal: Goal::AStar,
            default_weight: default,
            weight_name: weight,
        },
        coordinates: Some((lat, lon)),
        paths: 1,
    })
}

/// The route procedures over native storage, for registration with an engine.
pub fn procedures() -> Vec<Procedure> {
    procedures_over(Arc::new(NativeGraphs))
}

/// The route procedures searching the graphs `graphs` gives (a graph
/// source registers these in place of the native ones).
pub fn procedures_over(graphs: Arc<dyn RouteGraphs>) -> Vec<Procedure> {
    vec![
        procedure(
            &graphs,
            "apoc.algo.dijkstra",
            &[
                START,
                END,
                FILTER,
                WEIGHT,
                ("defaultWeight", "FLOAT?"),
                ("numberOfWantedPaths", "INTEGER?"),
            ],
            // APOC 5's defaults: no default weight, one path.
            vec![Value::Float(f64::NAN), Value::Int(1)],
            |q, a| {
                let default = default_weight_arg(&a[4], "defaultWeight")?;
                let mut call = dijkstra_call(q, a, default)?;
                call.paths = wanted_paths_arg(&a[5])?;
                Ok(call)
            },
        ),
        procedure(
            &graphs,
            "apoc.algo.dijkstraWithDefaultWeight",
            &[START, END, FILTER, WEIGHT, ("defaultWeight", "FLOAT?")],
            vec![],
            |q, a| {
                let default = default_weight_arg(&a[4], "defaultWeight")?;
                dijkstra_call(q, a, default)
            },
        ),
        procedure(
            &graphs,
            "apoc.algo.aStar",
            &[
                START,
                END,
                FILTER,
                WEIGHT,
                ("latPropertyName", "STRING?"),
                ("lonPropertyName", "STRING?"),
            ],
            vec![],
            |q, a| {
                let mut call = dijkstra_call(q, a, None)?;
                call.options.goal = Goal::AStar;
                call.coordinates = Some((
                    string_arg(&a[4], "latPropertyName")?,
                    string_arg(&a[5], "lonPropertyName")?,
                ));
                Ok(call)
            },
        ),
        procedure(
            &graphs,
            "apoc.algo.aStarConfig",
            &[START, END, FILTER, ("config", "MAP?")],
            vec![],
            a_star_config_call,
        ),
    ]
}
