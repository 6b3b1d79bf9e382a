//! The mapping file: how a graph is laid out in PostgreSQL or Redis.
//!
//! A mapping is JSON (the full reference with examples is
//! `docs/sources.md`):
//!
//! ```json
//! { "name": "luxembourg", "backend": "postgres",
//!   "connection": "postgresql://rhizome@127.0.0.1:${RHIZOME_PG_PORT:-54329}/roads",
//!   "nodes": { "Junction": { "key": "id", "properties": {"id": "integer", "lat": "float", "lon": "float"},
//!                            "coordinates": {"lat": "lat", "lon": "lon"},
//!                            "fetch": "SELECT id, lat, lon FROM luxembourg.junction WHERE id = ANY($1)" } },
//!   "relationships": { "ROAD": { "from": "Junction", "to": "Junction", "key": "id",
//!                                "properties": {"distance": "integer"},
//!                                "outgoing": "SELECT source AS node, target AS neighbour, id, distance FROM luxembourg.road WHERE source = ANY($1)" } } }
//! ```
//!
//! [`Mapping::parse`] checks everything that can be checked without the
//! backend and names the offending key (`nodes.Junction.fetch`) in its
//! errors; the backend checks the rest (columns, parameter types) when the
//! source connects. `${VAR}` and `${VAR:-default}` in the connection are
//! taken from the environment; a password written into the file is refused.

use rhizome_common::{Error, ErrorKind, Result};
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::time::Duration;

/// Which database holds the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL: SQL templates.
    Postgres,
    /// Redis: key patterns.
    Redis,
}

/// The type of a mapped property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyType {
    /// A 64-bit integer.
    Integer,
    /// A 64-bit float.
    Float,
    /// A string.
    String,
    /// A boolean.
    Boolean,
    /// A list of strings: PostgreSQL `text[]`, Redis a `;`-separated field
    /// (an empty field is an empty list).
    StringList,
}

impl PropertyType {
    fn parse(text: &str, at: &str) -> Result<PropertyType> {
        Ok(match text {
            "integer" => PropertyType::Integer,
            "float" => PropertyType::Float,
            "string" => PropertyType::String,
            "boolean" => PropertyType::Boolean,
            "string_list" => PropertyType::StringList,
            other => {
                return Err(invalid(
                    at,
                    format!(
                        "unknown type `{other}`; the types are integer, float, string, boolean, string_list"
                    ),
                ))
            }
        })
    }
}

/// How the nodes of one label are fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpace {
    /// The label (the key of `nodes`).
    pub label: String,
    /// Further labels every node of the space has (`"labels": ["Message"]`):
    /// a label may span several spaces, e.g. `Message` over `Post` and
    /// `Comment`.
    pub labels: Vec<String>,
    /// The property that is the node's key (an integer).
    pub key: String,
    /// Properties in declaration order (the key among them).
    pub properties: Vec<(String, PropertyType)>,
    /// The (latitude, longitude) properties, if the nodes have coordinates.
    pub coordinates: Option<(String, String)>,
    /// PostgreSQL: `SELECT <properties> ... WHERE <key> = ANY($1)`.
    /// Redis: the hash key pattern with `{key}`, e.g. `lux:junction:{id}`.
    pub fetch: String,
    /// PostgreSQL only: nodes in a latitude/longitude box,
    /// `... WHERE lat BETWEEN $1 AND $2 AND lon BETWEEN $3 AND $4`.
    pub in_box: Option<String>,
    /// Every key of the space, for label scans. PostgreSQL: a query
    /// returning the keys in its first column. Redis: the name of a sorted
    /// set whose members are the keys. Without it, scans of the label are
    /// refused.
    pub keys: Option<String>,
    /// Labels read per node from one of its properties (`label_column`),
    /// so one table or key pattern can hold nodes of several labels.
    pub label_column: Option<LabelColumn>,
}

/// A node space's `label_column`: the property (a PostgreSQL column, a
/// Redis field) whose value gives each node further labels, and the
/// labels it may hold.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelColumn {
    /// The property: a `string` (one label; empty or null for none) or a
    /// `string_list` (any number of them).
    pub column: String,
    /// Index of the property in the space's properties.
    pub index: usize,
    /// The labels the column may hold, in the mapping's order (at most
    /// [`MAX_COLUMN_LABELS`]); a value outside them is a `SourceDataError`.
    pub labels: Vec<String>,
}

/// Most labels a `label_column` may declare.
pub const MAX_COLUMN_LABELS: usize = 16;

impl NodeSpace {
    /// Position of property `name` in [`NodeSpace::properties`].
    pub fn property_index(&self, name: &str) -> Option<usize> {
        self.properties.iter().position(|(n, _)| n == name)
    }
}

/// How one direction of a relationship type is fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct AdjacencyFetch {
    /// PostgreSQL: a query with `$1` (an integer array of node keys)
    /// returning columns `node`, `neighbour`, the relationship key and the
    /// properties. Redis: the list key pattern with `{key}`.
    pub template: String,
    /// Redis only: the fields of a list element, in order, e.g.
    /// `["neighbour", "id", "distance"]`.
    pub element: Vec<String>,
    /// Redis only: the neighbours are a sorted set (`"type":
    /// "sorted_set"`, read with `ZRANGE`, in score order) instead of a
    /// list (`"type": "list"`, the default, read with `LRANGE`).
    pub sorted_set: bool,
    /// PostgreSQL only (`outgoing_in_box` / `incoming_in_box`): a query
    /// with `$1..$4` (min lat, max lat, min lon, max lon, floats)
    /// returning the columns of `template` plus the start node's
    /// coordinates (named as its space's `coordinates` properties) for
    /// every relationship whose start node lies in the box. The `ellipse`
    /// prefetcher then reads a region's lists by this box (one index range
    /// per band of a spatial key stored with the relationships) instead
    /// of by the region's node keys (one index descent per node).
    pub in_box: Option<String>,
}

/// A relationship space: the relationships of one type between the nodes
/// of two node spaces, fetched one way. A type may have several spaces
/// (`HAS_CREATOR` from `Post` and from `Comment`).
#[derive(Debug, Clone, PartialEq)]
pub struct RelSpace {
    /// The space's name (the key of `relationships`), used in errors.
    pub name: String,
    /// The type name (`type`, by default the space's name).
    pub rel_type: String,
    /// Node space (primary label) of the start nodes.
    pub from: String,
    /// Node space (primary label) of the end nodes.
    pub to: String,
    /// The relationship key (an integer column or element field); `None`
    /// (`"key": null`): the rows have no key column and the source gives
    /// each relationship a row-number key from its endpoints and its
    /// ordinal among parallel duplicates (see [`crate::row_keys`]).
    pub key: Option<String>,
    /// Properties in declaration order.
    pub properties: Vec<(String, PropertyType)>,
    /// From a start node to its end nodes.
    pub outgoing: Option<AdjacencyFetch>,
    /// From an end node to its start nodes.
    pub incoming: Option<AdjacencyFetch>,
}

impl RelSpace {
    /// Position of property `name` in [`RelSpace::properties`].
    pub fn property_index(&self, name: &str) -> Option<usize> {
        self.properties.iter().position(|(n, _)| n == name)
    }
}

/// The cache of a source.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheConfig {
    /// Most entries (node rows plus adjacency lists) kept.
    pub max_entries: usize,
    /// An entry older than this is fetched again (`None`: until cleared).
    pub ttl: Option<Duration>,
}

/// Prefetching when a node is not cached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prefetch {
    /// Only what was asked for.
    None,
    /// The depth-k neighbourhood of the missing nodes in one round trip.
    Lookahead(u32),
    /// Every node whose key is in the same block of `size` consecutive keys.
    KeyBlock(u64),
    /// Every node within a latitude/longitude box of this half-size in
    /// degrees around the missing node (needs `in_box` and coordinates).
    BoxBlock(f64),
    /// Route searches (PostgreSQL): before the search, the region a route
    /// between its two ends is likely to cross — the nodes whose distances
    /// to the two ends (the start's weighted) sum to at most the stretch
    /// times the distance between the ends, an ellipse when the weight is
    /// 1 (needs `in_box` and coordinates) — with every adjacency list in
    /// it, in one round trip; a search that leaves it fetches the next
    /// ring (see `crate::region`). Other expansions fetch plainly.
    Ellipse(RegionShape),
}

/// The shape of the `ellipse` prefetcher's first region: the nodes `n`
/// with `start_weight × d(start, n) + d(n, end) <= stretch × d(start,
/// end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegionShape {
    /// The distance sum allowed, as a multiple of the ends' distance (1-10).
    pub stretch: f64,
    /// How many times the distance to the start counts (1-4): 1 gives an
    /// ellipse; more gives an egg narrowed towards the end, where a
    /// search from the start, whose roads are longer than the straight
    /// line, reaches less far aside.
    pub start_weight: f64,
}

impl RegionShape {
    /// The start weight a region uses: at least 1, so the region lies
    /// inside the ellipse of the same sum (see `crate::region::Foci`).
    pub fn weight(&self) -> f64 {
        self.start_weight.max(1.0)
    }
}

impl Prefetch {
    /// The `ellipse` prefetcher of this stretch, with the start weighted 1.
    pub fn ellipse(stretch: f64) -> Prefetch {
        Prefetch::Ellipse(RegionShape {
            stretch,
            start_weight: 1.0,
        })
    }
}

impl std::fmt::Display for Prefetch {
    /// The prefetcher as `CYPHER prefetch=...` names it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Prefetch::None => write!(f, "none"),
            Prefetch::Lookahead(k) => write!(f, "lookahead:{k}"),
            Prefetch::KeyBlock(n) => write!(f, "key_block:{n}"),
            Prefetch::BoxBlock(d) => write!(f, "box_degrees:{d}"),
            Prefetch::Ellipse(RegionShape {
                stretch,
                start_weight,
            }) if *start_weight == 1.0 => write!(f, "ellipse:{stretch}"),
            Prefetch::Ellipse(RegionShape {
                stretch,
                start_weight,
            }) => write!(f, "ellipse:{stretch}:{start_weight}"),
        }
    }
}

/// A parsed and checked mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// The source's name.
    pub name: String,
    /// The backend.
    pub backend: Backend,
    /// Connection URL with the environment substituted.
    pub connection: String,
    /// Connections in the pool.
    pub pool_size: usize,
    /// Longest wait for one request before it fails.
    pub request_timeout: Duration,
    /// The cache.
    pub cache: CacheConfig,
    /// The default prefetcher (a query may choose another).
    pub prefetch: Prefetch,
    /// Node spaces by label.
    pub nodes: Vec<NodeSpace>,
    /// Relationship spaces.
    pub relationships: Vec<RelSpace>,
}

fn invalid(at: &str, message: impl Into<String>) -> Error {
    Error::new(
        ErrorKind::InputError,
        format!("mapping key `{at}`: {}", message.into()),
    )
    .with_code("InvalidMapping")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMapping {
    name: Option<String>,
    backend: Option<String>,
    connection: Option<String>,
    pool_size: Option<Json>,
    request_timeout_ms: Option<Json>,
    cache: Option<Json>,
    prefetch: Option<Json>,
    nodes: Option<BTreeMap<String, Json>>,
    relationships: Option<BTreeMap<String, Json>>,
}

/// Reads the JSON object at `at` with known keys only.
struct Object<'a> {
    at: String,
    map: &'a serde_json::Map<String, Json>,
}

impl<'a> Object<'a> {
    fn new(value: &'a Json, at: &str, keys: &[&str]) -> Result<Object<'a>> {
        let map = value
            .as_object()
            .ok_or_else(|| invalid(at, "must be an object"))?;
        for key in map.keys() {
            if !keys.contains(&key.as_str()) {
                return Err(invalid(
                    &format!("{at}.{key}"),
                    format!("unknown key; the keys of `{at}` are {}", keys.join(", ")),
                ));
            }
        }
        Ok(Object {
            at: at.to_string(),
            map,
        })
    }

    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    fn string(&self, key: &str) -> Result<Option<String>> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(invalid(&self.path(key), "must be a non-empty string")),
        }
    }

    fn required(&self, key: &str) -> Result<String> {
        self.string(key)?
            .ok_or_else(|| invalid(&self.path(key), "is missing"))
    }

    fn number(&self, key: &str) -> Result<Option<f64>> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Number(n)) => Ok(n.as_f64()),
            Some(_) => Err(invalid(&self.path(key), "must be a number")),
        }
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| invalid(&self.path(key), "must be a list of strings"))
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(_) => Err(invalid(&self.path(key), "must be a list of strings")),
        }
    }

    fn properties(&self, key: &str) -> Result<Vec<(String, PropertyType)>> {
        let Some(value) = self.map.get(key) else {
            return Ok(Vec::new());
        };
        let at = self.path(key);
        let map = value
            .as_object()
            .ok_or_else(|| invalid(&at, "must be an object of name: type"))?;
        map.iter()
            .map(|(name, ty)| {
                let at = format!("{at}.{name}");
                let ty = ty
                    .as_str()
                    .ok_or_else(|| invalid(&at, "must be a type name"))?;
                Ok((name.clone(), PropertyType::parse(ty, &at)?))
            })
            .collect()
    }
}

/// Replaces `${VAR}` / `${VAR:-default}` with the environment's values.
pub fn substitute_env(
    text: &str,
    at: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| invalid(at, "a `${` has no closing `}`"))?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(invalid(
                at,
                format!("`${{{inner}}}` is not an environment variable name"),
            ));
        }
        match env(name)
            .filter(|v| !v.is_empty())
            .or(default.map(str::to_string))
        {
            Some(value) => out.push_str(&value),
            None => {
                return Err(invalid(
                    at,
                    format!("the environment variable {name} is not set and has no default"),
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Refuses a password written into the connection text (outside `${...}`).
fn check_no_literal_password(raw: &str, at: &str) -> Result<()> {
    let Some((_, after_scheme)) = raw.split_once("://") else {
        return Err(invalid(
            at,
            "must be a URL such as postgresql://user@host:port/db or redis://host:port/0",
        ));
    };
    let authority = after_scheme.split(['/', '?']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        if let Some((_, password)) = userinfo.split_once(':') {
            if !(password.starts_with("${") && password.ends_with('}')) {
                return Err(invalid(
                    at,
                    "holds a password; take it from the environment instead, e.g. postgresql://user:${PGPASSWORD}@host/db",
                ));
            }
        }
    }
    if raw.contains("password=") && !raw.contains("password=${") {
        return Err(invalid(
            at,
            "holds a password; take it from the environment",
        ));
    }
    Ok(())
}

fn has_placeholder(template: &str, placeholder: &str) -> bool {
    template.contains(placeholder)
}

impl Mapping {
    /// Parses mapping text, with `${VAR}` from the process environment.
    pub fn parse(text: &str) -> Result<Mapping> {
        Mapping::parse_with_env(text, &|name| std::env::var(name).ok())
    }

    /// Reads and parses a mapping file.
    pub fn load(path: &std::path::Path) -> Result<Mapping> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        Mapping::parse(&text).map_err(|e| e.in_source(path.display().to_string()))
    }

    /// Parses mapping text with an explicit environment (for tests).
    pub fn parse_with_env(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Mapping> {
        let raw: RawMapping = serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            let message = match message.strip_prefix("unknown field ") {
                Some(rest) => format!("unknown top-level key {rest}"),
                None => message,
            };
            Error::new(
                ErrorKind::InputError,
                format!("the mapping is not valid: {message}"),
            )
            .at(rhizome_common::Position {
                offset: 0,
                line: e.line() as u32,
                column: e.column() as u32,
            })
            .with_code("InvalidMapping")
        })?;
        let name = raw.name.unwrap_or_else(|| "source".to_string());
        let backend = match raw.backend.as_deref() {
            Some("postgres") | Some("postgresql") => Backend::Postgres,
            Some("redis") => Backend::Redis,
            Some(other) => {
                return Err(invalid(
                    "backend",
                    format!("unknown backend `{other}`; use postgres or redis"),
                ))
            }
            None => return Err(invalid("backend", "is missing (postgres or redis)")),
        };
        let connection_raw = raw
            .connection
            .ok_or_else(|| invalid("connection", "is missing"))?;
        check_no_literal_password(&connection_raw, "connection")?;
        let connection = substitute_env(&connection_raw, "connection", env)?;
        let scheme_ok = match backend {
            Backend::Postgres => {
                connection.starts_with("postgresql://") || connection.starts_with("postgres://")
            }
            Backend::Redis => connection.starts_with("redis://"),
        };
        if !scheme_ok {
            return Err(invalid(
                "connection",
                format!(
                    "a {backend:?} source needs a {} URL",
                    match backend {
                        Backend::Postgres => "postgresql://",
                        Backend::Redis => "redis://",
                    }
                ),
            ));
        }
        let count = |value: Option<Json>, at: &str, default: u64, max: u64| -> Result<u64> {
            match value {
                None => Ok(default),
                Some(Json::Number(n)) => match n.as_u64() {
                    Some(v) if (1..=max).contains(&v) => Ok(v),
                    _ => Err(invalid(at, format!("must be an integer from 1 to {max}"))),
                },
                Some(_) => Err(invalid(at, format!("must be an integer from 1 to {max}"))),
            }
        };
        let pool_size = count(raw.pool_size, "pool_size", 4, 64)? as usize;
        let request_timeout = Duration::from_millis(count(
            raw.request_timeout_ms,
            "request_timeout_ms",
            30_000,
            3_600_000,
        )?);
        let cache = match &raw.cache {
            None => CacheConfig {
                max_entries: 1_000_000,
                ttl: None,
            },
            Some(value) => {
                let o = Object::new(value, "cache", &["max_entries", "ttl_seconds"])?;
                let max = o.number("max_entries")?.unwrap_or(1_000_000.0);
                if !(max >= 1.0 && max.fract() == 0.0 && max <= 1e9) {
                    return Err(invalid(
                        "cache.max_entries",
                        "must be an integer from 1 to 1,000,000,000",
                    ));
                }
                let ttl = match o.number("ttl_seconds")? {
                    None => None,
                    Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
                    Some(_) => {
                        return Err(invalid("cache.ttl_seconds", "must be a positive number"))
                    }
                };
                CacheConfig {
                    max_entries: max as usize,
                    ttl,
                }
            }
        };
        let prefetch = match &raw.prefetch {
            None => Prefetch::None,
            Some(value) => parse_prefetch(value, "prefetch")?,
        };
        let mut nodes = Vec::new();
        let raw_nodes = raw.nodes.unwrap_or_default();
        if raw_nodes.is_empty() {
            return Err(invalid(
                "nodes",
                "is missing or empty: map at least one label",
            ));
        }
        for (label, value) in &raw_nodes {
            nodes.push(parse_node_space(label, value, backend)?);
        }
        let mut relationships = Vec::new();
        for (name, value) in raw.relationships.unwrap_or_default().iter() {
            let space = parse_rel_space(name, value, backend, &nodes)?;
            if let Some(twin) = relationships.iter().find(|r: &&RelSpace| {
                r.rel_type == space.rel_type && r.from == space.from && r.to == space.to
            }) {
                return Err(invalid(
                    &format!("relationships.{name}"),
                    format!(
                        "maps type `{}` from `{}` to `{}` like `relationships.{}`: \
                         join them in one space",
                        space.rel_type, space.from, space.to, twin.name
                    ),
                ));
            }
            relationships.push(space);
        }
        check_labels(&nodes)?;
        let spatial = match prefetch {
            Prefetch::BoxBlock(_) => Some("box_degrees"),
            Prefetch::Ellipse(_) => Some("ellipse"),
            _ => None,
        };
        if let Some(name) = spatial {
            if !nodes
                .iter()
                .any(|n| n.in_box.is_some() && n.coordinates.is_some())
            {
                return Err(invalid(
                    &format!("prefetch.{name}"),
                    "needs a node space with `coordinates` and an `in_box` template",
                ));
            }
        }
        Ok(Mapping {
            name,
            backend,
            connection,
            pool_size,
            request_timeout,
            cache,
            prefetch,
            nodes,
            relationships,
        })
    }

    /// The node space of `label`.
    pub fn node_space(&self, label: &str) -> Option<&NodeSpace> {
        self.nodes.iter().find(|n| n.label == label)
    }

    /// The first relationship space of type `rel_type`.
    pub fn rel_space(&self, rel_type: &str) -> Option<&RelSpace> {
        self.relationships.iter().find(|r| r.rel_type == rel_type)
    }
}

/// Extra labels must not name a node space (a space's label is its own),
/// and must not repeat; neither may a label column's labels name a node
/// space.
fn check_labels(nodes: &[NodeSpace]) -> Result<()> {
    for space in nodes {
        for label in space.label_column.iter().flat_map(|c| &c.labels) {
            if nodes.iter().any(|n| &n.label == label) {
                return Err(invalid(
                    &format!("nodes.{}.label_column.labels", space.label),
                    format!(
                        "`{label}` is the label of node space `nodes.{label}`; \
                         a label column gives labels no space has as its own"
                    ),
                ));
            }
        }
        for (i, label) in space.labels.iter().enumerate() {
            let at = format!("nodes.{}.labels", space.label);
            if nodes.iter().any(|n| &n.label == label) {
                return Err(invalid(
                    &at,
                    format!(
                        "`{label}` is the label of node space `nodes.{label}`; \
                         extra labels name labels no space has as its own"
                    ),
                ));
            }
            if space.labels[..i].contains(label) {
                return Err(invalid(&at, format!("`{label}` is listed twice")));
            }
        }
    }
    Ok(())
}

/// `{"lookahead": k}`, `{"key_block": n}`, `{"box_degrees": d}`,
/// `{"ellipse": s}` (optionally with `"start_weight": w`) or `"none"`.
pub fn parse_prefetch(value: &Json, at: &str) -> Result<Prefetch> {
    if value.as_str() == Some("none") {
        return Ok(Prefetch::None);
    }
    let o = Object::new(
        value,
        at,
        &[
            "lookahead",
            "key_block",
            "box_degrees",
            "ellipse",
            "start_weight",
        ],
    )?;
    let start_weight = match o.number("start_weight")? {
        None => 1.0,
        Some(_) if !o.map.contains_key("ellipse") => {
            return Err(invalid(
                &o.path("start_weight"),
                "belongs to the ellipse prefetcher (`\"ellipse\": s`)",
            ))
        }
        Some(w) if (1.0..=4.0).contains(&w) => w,
        Some(_) => {
            return Err(invalid(
                &o.path("start_weight"),
                "must be a weight from 1 to 4 (how many times the distance to the \
                 route's start counts in the region's distance sum)",
            ))
        }
    };
    let set: Vec<&String> = o.map.keys().filter(|k| *k != "start_weight").collect();
    if set.len() != 1 {
        return Err(invalid(
            at,
            "must name exactly one of lookahead, key_block, box_degrees, ellipse (or be \"none\")",
        ));
    }
    let v = o.number(set[0])?.unwrap_or(f64::NAN);
    let at = o.path(set[0]);
    Ok(match set[0].as_str() {
        "lookahead" if v.fract() == 0.0 && (1.0..=16.0).contains(&v) => {
            Prefetch::Lookahead(v as u32)
        }
        "lookahead" => return Err(invalid(&at, "must be an integer depth from 1 to 16")),
        "key_block" if v.fract() == 0.0 && (1.0..=1e6).contains(&v) => Prefetch::KeyBlock(v as u64),
        "key_block" => {
            return Err(invalid(
                &at,
                "must be an integer block size from 1 to 1,000,000",
            ))
        }
        "ellipse" if (1.0..=10.0).contains(&v) => Prefetch::Ellipse(RegionShape {
            stretch: v,
            start_weight,
        }),
        "ellipse" => {
            return Err(invalid(
                &at,
                "must be a stretch from 1 to 10 (the longest detour prefetched at once, \
                 as a multiple of the distance between the route's ends)",
            ))
        }
        _ if v > 0.0 && v <= 10.0 => Prefetch::BoxBlock(v),
        _ => {
            return Err(invalid(
                &at,
                "must be a half-size in degrees above 0 and at most 10",
            ))
        }
    })
}

fn parse_node_space(label: &str, value: &Json, backend: Backend) -> Result<NodeSpace> {
    let at = format!("nodes.{label}");
    let o = Object::new(
        value,
        &at,
        &[
            "key",
            "properties",
            "coordinates",
            "fetch",
            "in_box",
            "keys",
            "labels",
            "label_column",
        ],
    )?;
    let properties = o.properties("properties")?;
    let labels = o.strings("labels")?.unwrap_or_default();
    if labels.iter().any(|l| l.trim().is_empty()) {
        return Err(invalid(
            &o.path("labels"),
            "must be a list of non-empty label names",
        ));
    }
    if o.map.get("key") == Some(&Json::Null) {
        return Err(invalid(
            &o.path("key"),
            "a node space needs a key property: relationships name their ends by it (row-number keys, `\"key\": null`, are for relationship spaces)",
        ));
    }
    let key = o.required("key")?;
    let find = |name: &str, at: &str| -> Result<PropertyType> {
        properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| invalid(at, format!("`{name}` is not one of the node's properties")))
    };
    if find(&key, &o.path("key"))? != PropertyType::Integer {
        return Err(invalid(
            &o.path("key"),
            format!("`{key}` must be an integer property"),
        ));
    }
    let coordinates = match o.map.get("coordinates") {
        None => None,
        Some(value) => {
            let c = Object::new(value, &o.path("coordinates"), &["lat", "lon"])?;
            let lat = c.required("lat")?;
            let lon = c.required("lon")?;
            for (name, path) in [(&lat, c.path("lat")), (&lon, c.path("lon"))] {
                if matches!(
                    find(name, &path)?,
                    PropertyType::String | PropertyType::StringList
                ) {
                    return Err(invalid(
                        &path,
                        format!("`{name}` must be a number property"),
                    ));
                }
            }
            Some((lat, lon))
        }
    };
    let label_column = match o.map.get("label_column") {
        None | Some(Json::Null) => None,
        Some(value) => Some(parse_label_column(
            value,
            &o.path("label_column"),
            &properties,
            &labels,
            label,
        )?),
    };
    let fetch = o.required("fetch")?;
    let in_box = o.string("in_box")?;
    let keys = o.string("keys")?;
    match backend {
        Backend::Postgres => {
            if !has_placeholder(&fetch, "$1") {
                return Err(invalid(
                    &o.path("fetch"),
                    "must use $1, the array of keys (`WHERE id = ANY($1)`)",
                ));
            }
            if let Some(b) = &in_box {
                if !(1..=4).all(|i| has_placeholder(b, &format!("${i}"))) {
                    return Err(invalid(
                        &o.path("in_box"),
                        "must use $1..$4: min lat, max lat, min lon, max lon",
                    ));
                }
            }
        }
        Backend::Redis => {
            let placeholder = format!("{{{key}}}");
            if !fetch.contains(&placeholder) {
                return Err(invalid(
                    &o.path("fetch"),
                    format!("must be a key pattern with {placeholder}"),
                ));
            }
            if in_box.is_some() {
                return Err(invalid(&o.path("in_box"), "is for PostgreSQL sources only"));
            }
        }
    }
    Ok(NodeSpace {
        label: label.to_string(),
        labels,
        key,
        properties,
        coordinates,
        fetch,
        in_box,
        keys,
        label_column,
    })
}

/// `{"column": "kind", "labels": ["City", "Village"]}`.
fn parse_label_column(
    value: &Json,
    at: &str,
    properties: &[(String, PropertyType)],
    extra: &[String],
    own: &str,
) -> Result<LabelColumn> {
    let o = Object::new(value, at, &["column", "labels"])?;
    let column = o.required("column")?;
    let index = properties
        .iter()
        .position(|(n, _)| *n == column)
        .ok_or_else(|| {
            invalid(
                &o.path("column"),
                format!("`{column}` is not one of the node's properties (declare it in `properties` as a string or string_list)"),
            )
        })?;
    if !matches!(
        properties[index].1,
        PropertyType::String | PropertyType::StringList
    ) {
        return Err(invalid(
            &o.path("column"),
            format!(
                "`{column}` is declared {:?}; a label column must be a string or string_list property",
                properties[index].1
            ),
        ));
    }
    let labels = o.strings("labels")?.ok_or_else(|| {
        invalid(
            &o.path("labels"),
            "is missing: the labels the column may hold",
        )
    })?;
    let at = o.path("labels");
    if labels.is_empty() || labels.len() > MAX_COLUMN_LABELS {
        return Err(invalid(
            &at,
            format!("must list from 1 to {MAX_COLUMN_LABELS} labels"),
        ));
    }
    for (i, label) in labels.iter().enumerate() {
        if label.trim().is_empty() {
            return Err(invalid(&at, "must be a list of non-empty label names"));
        }
        if labels[..i].contains(label) {
            return Err(invalid(&at, format!("`{label}` is listed twice")));
        }
        if label == own || extra.contains(label) {
            return Err(invalid(
                &at,
                format!("`{label}` is a label every node of the space has already"),
            ));
        }
    }
    Ok(LabelColumn {
        column,
        index,
        labels,
    })
}

fn parse_rel_space(
    name: &str,
    value: &Json,
    backend: Backend,
    nodes: &[NodeSpace],
) -> Result<RelSpace> {
    let at = format!("relationships.{name}");
    let o = Object::new(
        value,
        &at,
        &[
            "type",
            "from",
            "to",
            "key",
            "properties",
            "outgoing",
            "incoming",
            "outgoing_in_box",
            "incoming_in_box",
        ],
    )?;
    let rel_type = o.string("type")?.unwrap_or_else(|| name.to_string());
    let from = o.required("from")?;
    let to = o.required("to")?;
    for (label, key) in [(&from, "from"), (&to, "to")] {
        if !nodes.iter().any(|n| &n.label == label) {
            let spanning: Vec<&str> = nodes
                .iter()
                .filter(|n| n.labels.contains(label))
                .map(|n| n.label.as_str())
                .collect();
            let hint = if spanning.is_empty() {
                String::new()
            } else {
                format!(
                    " (it is an extra label of {}: map one relationship space per node space)",
                    spanning.join(", ")
                )
            };
            return Err(invalid(
                &o.path(key),
                format!("`{label}` is not a node space of `nodes`{hint}"),
            ));
        }
    }
    let key = match o.map.get("key") {
        Some(Json::Null) => None,
        _ => Some(o.string("key")?.unwrap_or_else(|| "id".to_string())),
    };
    let properties = o.properties("properties")?;

    let mut directions = [None, None];
    for (i, dir) in ["outgoing", "incoming"].iter().enumerate() {
        let Some(value) = o.map.get(*dir) else {
            continue;
        };
        let path = o.path(dir);
        directions[i] = Some(match backend {
            Backend::Postgres => {
                let template = value
                    .as_str()
                    .filter(|s| !s.trim().is_empty())
                    .ok_or_else(|| invalid(&path, "must be an SQL query string"))?
                    .to_string();
                if !has_placeholder(&template, "$1") {
                    return Err(invalid(
                        &path,
                        "must use $1, the array of node keys (`WHERE source = ANY($1)`)",
                    ));
                }
                let box_key = format!("{dir}_in_box");
                let in_box = o.string(&box_key)?;
                if let Some(b) = &in_box {
                    if !(1..=4).all(|i| has_placeholder(b, &format!("${i}"))) {
                        return Err(invalid(
                            &o.path(&box_key),
                            "must use $1..$4: min lat, max lat, min lon, max lon",
                        ));
                    }
                    let start = if i == 0 { &from } else { &to };
                    let spatial = nodes
                        .iter()
                        .find(|n| &n.label == start)
                        .is_some_and(|n| n.coordinates.is_some() && n.in_box.is_some());
                    if !spatial {
                        return Err(invalid(
                            &o.path(&box_key),
                            format!(
                                "needs `coordinates` and an `in_box` template on `nodes.{start}`, \
                                 where these relationships start"
                            ),
                        ));
                    }
                }
                AdjacencyFetch {
                    template,
                    element: Vec::new(),
                    sorted_set: false,
                    in_box,
                }
            }
            Backend::Redis => {
                let d = Object::new(value, &path, &["key", "element", "type"])?;
                let sorted_set = match d.string("type")?.as_deref() {
                    None | Some("list") => false,
                    Some("sorted_set") => true,
                    Some(other) => {
                        return Err(invalid(
                            &d.path("type"),
                            format!("`{other}` is neither `list` nor `sorted_set`"),
                        ))
                    }
                };
                let template = d.required("key")?;
                if !template.contains('{') || !template.contains('}') {
                    return Err(invalid(
                        &d.path("key"),
                        "must be a key pattern with the node key in braces, e.g. lux:road:out:{id}",
                    ));
                }
                let element = d
                    .strings("element")?
                    .ok_or_else(|| invalid(&d.path("element"), "is missing: the fields of a list element, e.g. [\"neighbour\", \"id\", \"distance\"]"))?;
                for field in &element {
                    if field != "neighbour"
                        && Some(field) != key.as_ref()
                        && !properties.iter().any(|(n, _)| n == field)
                    {
                        let key = key
                            .as_deref()
                            .map_or(String::new(), |k| format!(", the key `{k}`"));
                        return Err(invalid(
                            &d.path("element"),
                            format!(
                                "`{field}` is neither `neighbour`{key} nor a declared property"
                            ),
                        ));
                    }
                }
                for needed in std::iter::once("neighbour").chain(key.as_deref()) {
                    if !element.iter().any(|f| f == needed) {
                        return Err(invalid(
                            &d.path("element"),
                            format!("has no `{needed}` field"),
                        ));
                    }
                }
                AdjacencyFetch {
                    template,
                    element,
                    sorted_set,
                    in_box: None,
                }
            }
        });
    }
    for (i, dir) in ["outgoing", "incoming"].iter().enumerate() {
        let box_key = format!("{dir}_in_box");
        if o.map.contains_key(&box_key) {
            if backend == Backend::Redis {
                return Err(invalid(&o.path(&box_key), "is for PostgreSQL sources only"));
            }
            if directions[i].is_none() {
                return Err(invalid(&o.path(&box_key), format!("needs `{dir}`")));
            }
        }
    }
    let [outgoing, incoming] = directions;
    if outgoing.is_none() && incoming.is_none() {
        return Err(invalid(&at, "needs `outgoing`, `incoming` or both"));
    }
    Ok(RelSpace {
        name: name.to_string(),
        rel_type,
        from,
        to,
        key,
        properties,
        outgoing,
        incoming,
    })
}

#[cfg(test)]
mod tests;
