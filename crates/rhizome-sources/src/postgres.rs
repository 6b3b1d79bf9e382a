//! The PostgreSQL backend: a pool of `tokio-postgres` clients, one prepared
//! statement per template, checked against the mapping when the source
//! connects (parameter types, column names and types; errors name the
//! mapping key). A round sends its statements together on one client, so
//! they travel pipelined: one round trip.

use crate::cache::AdjacencyList;
use crate::fetch::{bad_data, unavailable, value_bytes, Fetched, ListRef, Round};
use crate::mapping::RegionShape;
use crate::mapping::{Mapping, NodeSpace, PropertyType, RelSpace};
use crate::region::{Band, RegionAsk, RegionList, RegionRows};
use futures_util::future::try_join_all;
use rhizome_common::{Error, ErrorKind, Result, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, Row, Statement};

/// Sent once on each new connection. Generic plans: a prepared statement
/// is planned once per connection instead of on each of its first five
/// runs (PostgreSQL's default plans it again for every run while a plan
/// for the parameters' values looks cheaper). Every statement of a source
/// looks rows up by key arrays or, for the `ellipse` prefetcher, by a box
/// computed inside the statement, so the parameters' values do not change
/// the best plan; planning a region statement took 0.35–0.5 ms of a cold
/// route's 2–4 ms of server time (`EXPLAIN ANALYZE`, route 1, Luxembourg;
/// docs/benchmarks.md).
pub const SESSION_SETTINGS: &str = "SET plan_cache_mode = force_generic_plan";

/// Where each needed value is in a statement's result.
#[derive(Debug, Clone)]
struct Columns {
    /// Column of each mapped property, in the mapping's order.
    properties: Vec<usize>,
    /// `node` (adjacency statements).
    node: Option<usize>,
    /// `neighbour` (adjacency statements).
    neighbour: Option<usize>,
    /// The relationship key (adjacency statements of spaces with a key).
    rel_key: Option<usize>,
    /// The node key (node statements).
    key: Option<usize>,
}

/// The SQL of the source's statements.
#[derive(Debug, Clone)]
struct Sql {
    nodes: Vec<String>,
    boxes: Vec<Option<String>>,
    lists: Vec<(ListRef, String)>,
    /// Per list (in the order of `lists`), its `*_in_box` template.
    list_boxes: Vec<Option<String>>,
    /// Mapping keys of the node spaces (`nodes.Junction`) and lists
    /// (`relationships.ROAD.outgoing`), for errors.
    node_keys: Vec<String>,
    list_keys: Vec<String>,
}

/// Statements of one client.
struct Prepared {
    client: Client,
    nodes: Vec<Statement>,
    boxes: Vec<Option<Statement>>,
    lists: Vec<(ListRef, Statement)>,
    /// Lookahead per list: (edges of depth < k, node rows of depth <= k).
    lookahead: Vec<(ListRef, Statement, Statement)>,
    /// Region statements per node space (see [`crate::region`]).
    regions: Vec<Option<RegionStatements>>,
}

/// The `ellipse` prefetcher's statements of one node space: each returns
/// one row of arrays (`array_agg` per column), so a region of any size
/// decodes with a few allocations and none per row.
struct RegionStatements {
    /// Keys, latitudes and longitudes of the nodes in a band.
    rows: Statement,
    /// The same for the first region of a route, from its ends' keys.
    rows_from_ends: Statement,
    /// Per list starting at the space: nodes, neighbours, relationship
    /// keys and the numeric properties (their indexes) of the nodes in a band.
    lists: Vec<ListRegionStatement>,
    /// The SQL of `rows_from_ends`, then of each list's from-ends
    /// statement (with its mapping key), for [`Postgres::explain_region`].
    from_ends_sql: Vec<(String, String)>,
}

/// A list's region statement, the same from a route's ends, and what
/// each of their columns holds.
type ListRegionStatement = (ListRef, Statement, Statement, Vec<RegionColumn>);

/// What one column (an array) of a list's region statement holds. Two
/// 32-bit integer columns (`integer`/`smallint` in the rows the template
/// returns) travel packed as one `int8`, the first in the high half:
/// PostgreSQL spends about as long sending an array element as testing a
/// row against the ellipse, so two elements a road instead of four halve
/// that part (route 6's roads: 18.3 ms against 25.1 ms by `COPY … (FORMAT
/// binary)`, 7 runs each, interleaved, load 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegionColumn {
    /// Start node keys.
    Node,
    /// Neighbour keys.
    Neighbour,
    /// Start node and neighbour keys, packed.
    NodeNeighbour,
    /// Relationship keys.
    Rel,
    /// Relationship keys and the integer property of this index, packed.
    RelProperty(usize),
    /// The numeric property of this index, as floats.
    Property(usize),
    /// The start nodes of the rows whose neighbour is NULL (a packed
    /// pair is NULL when either half is): their lists are left to the
    /// list template, as a list with a NULL key is. (A NULL relationship
    /// key and property pair leaves the key unknown: the same.)
    Incomplete,
}

/// Is `ty` an integer type of at most 32 bits (packs into half an `int8`)?
fn is_narrow(ty: &Type) -> bool {
    [Type::INT2, Type::INT4].contains(ty)
}

/// The SELECT list (of rows named `row`, whose columns are `columns`) of
/// a list's region statement, with what each column holds: the start
/// node, neighbour, relationship key (`rel_key`) and numeric properties
/// (of `properties`), pairs of 32-bit integers packed (see
/// [`RegionColumn`]).
fn region_list_columns(
    row: &str,
    columns: &[tokio_postgres::Column],
    rel_key: &str,
    properties: &[(String, PropertyType)],
) -> (Vec<String>, Vec<RegionColumn>) {
    let narrow = |name: &str| {
        columns
            .iter()
            .find(|c| c.name() == name)
            .is_some_and(|c| is_narrow(c.type_()))
    };
    let col = |name: &str| format!("{row}.{}", ident(name));
    let pack = |hi: &str, lo: &str| {
        format!(
            "array_agg(({}::int8 << 32) | ({}::int8 & 4294967295))",
            col(hi),
            col(lo)
        )
    };
    let mut sql = Vec::new();
    let mut kinds = Vec::new();
    // The neighbour, whose NULL a packed NULL hides.
    let mut hidden: Vec<String> = Vec::new();
    if narrow("node") && narrow("neighbour") {
        sql.push(pack("node", "neighbour"));
        kinds.push(RegionColumn::NodeNeighbour);
        hidden.push(col("neighbour"));
    } else {
        sql.push(format!("array_agg({}::int8)", col("node")));
        sql.push(format!("array_agg({}::int8)", col("neighbour")));
        kinds.extend([RegionColumn::Node, RegionColumn::Neighbour]);
    }
    let packed_property = properties
        .iter()
        .position(|(name, ty)| *ty == PropertyType::Integer && narrow(name))
        .filter(|_| narrow(rel_key));
    match packed_property {
        Some(j) => {
            sql.push(pack(rel_key, &properties[j].0));
            kinds.push(RegionColumn::RelProperty(j));
        }
        None => {
            sql.push(format!("array_agg({}::int8)", col(rel_key)));
            kinds.push(RegionColumn::Rel);
        }
    }
    for (j, (name, ty)) in properties.iter().enumerate() {
        if matches!(ty, PropertyType::Integer | PropertyType::Float) && Some(j) != packed_property {
            sql.push(format!("array_agg({}::float8)", col(name)));
            kinds.push(RegionColumn::Property(j));
        }
    }
    if !hidden.is_empty() {
        let nulls = hidden
            .iter()
            .map(|c| format!("{c} IS NULL"))
            .collect::<Vec<_>>()
            .join(" OR ");
        sql.push(format!(
            "array_agg({}::int8) FILTER (WHERE {nulls})",
            col("node")
        ));
        kinds.push(RegionColumn::Incomplete);
    }
    (sql, kinds)
}

/// A list's region from its statement's arrays (`ints` and `floats`
/// read column `i` as integers and as floats), unpacking packed pairs
/// (see [`RegionColumn`]); the values received are added to `values`.
fn region_list(
    list: ListRef,
    kinds: &[RegionColumn],
    ints: &dyn Fn(usize) -> Result<Vec<Option<i64>>>,
    floats: &dyn Fn(usize) -> Result<Vec<Option<f64>>>,
    values: &mut u64,
) -> Result<RegionList> {
    let high = |x: &Option<i64>| x.map(|x| x >> 32);
    let low = |x: &Option<i64>| x.map(|x| i64::from(x as i32));
    let mut out = RegionList {
        list,
        nodes: Vec::new(),
        neighbours: Vec::new(),
        rels: Vec::new(),
        properties: Vec::new(),
    };
    let mut incomplete = Vec::new();
    for (c, kind) in kinds.iter().enumerate() {
        match kind {
            RegionColumn::Property(j) => {
                let v = floats(c)?;
                *values += v.len() as u64;
                out.properties.push((*j, v));
                continue;
            }
            RegionColumn::Incomplete => {
                incomplete = ints(c)?;
                *values += incomplete.len() as u64;
                continue;
            }
            _ => {}
        }
        let v = ints(c)?;
        *values += v.len() as u64;
        match kind {
            RegionColumn::Node => out.nodes = v,
            RegionColumn::Neighbour => out.neighbours = v,
            RegionColumn::Rel => out.rels = v,
            RegionColumn::NodeNeighbour => {
                out.nodes = v.iter().map(high).collect();
                out.neighbours = v.iter().map(low).collect();
            }
            RegionColumn::RelProperty(j) => {
                out.rels = v.iter().map(high).collect();
                let property = v.iter().map(|x| low(x).map(|x| x as f64)).collect();
                out.properties.push((*j, property));
            }
            RegionColumn::Property(_) | RegionColumn::Incomplete => {}
        }
    }
    // A row whose start node is known but a packed half NULL: an entry
    // with no neighbour and no relationship key, so that the node's list
    // is not stored from the region.
    for node in incomplete.into_iter().flatten() {
        out.nodes.push(Some(node));
        out.neighbours.push(None);
        out.rels.push(None);
        for (_, values) in &mut out.properties {
            values.push(None);
        }
    }
    Ok(out)
}

/// A PostgreSQL source's connections.
pub struct Postgres {
    name: String,
    url: String,
    sql: Sql,
    node_columns: Vec<Columns>,
    list_columns: Vec<(ListRef, Columns)>,
    pool: Vec<Mutex<Option<Arc<Prepared>>>>,
    next: AtomicUsize,
    /// The mapping, for statements derived from it on new connections.
    mapping: Option<Mapping>,
}

fn mapping_error(at: &str, message: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InputError,
        format!("mapping key `{at}`: {message}"),
    )
    .with_code("InvalidMapping")
}

/// `name` as a quoted SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn supported(ty: &Type) -> bool {
    [
        Type::INT2,
        Type::INT4,
        Type::INT8,
        Type::FLOAT4,
        Type::FLOAT8,
        Type::TEXT,
        Type::VARCHAR,
        Type::BPCHAR,
        Type::NAME,
        Type::BOOL,
        Type::TEXT_ARRAY,
        Type::VARCHAR_ARRAY,
    ]
    .contains(ty)
}

fn is_integer(ty: &Type) -> bool {
    [Type::INT2, Type::INT4, Type::INT8].contains(ty)
}

/// Finds the columns of a prepared statement.
fn columns(
    statement: &Statement,
    at: &str,
    properties: &[(String, PropertyType)],
    extra: &[&str],
) -> Result<(Vec<usize>, Vec<usize>)> {
    let cols = statement.columns();
    let find = |name: &str| cols.iter().position(|c| c.name() == name);
    let mut props = Vec::new();
    for (name, ty) in properties {
        let i = find(name).ok_or_else(|| {
            mapping_error(
                at,
                format!(
                    "the query returns no column `{name}` (it returns {})",
                    cols.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let col_ty = cols[i].type_();
        let fits = match ty {
            PropertyType::Integer => is_integer(col_ty),
            PropertyType::Float => {
                is_integer(col_ty) || [Type::FLOAT4, Type::FLOAT8].contains(col_ty)
            }
            PropertyType::String => {
                [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME].contains(col_ty)
            }
            PropertyType::Boolean => *col_ty == Type::BOOL,
            PropertyType::StringList => [Type::TEXT_ARRAY, Type::VARCHAR_ARRAY].contains(col_ty),
        };
        if !fits || !supported(col_ty) {
            return Err(mapping_error(
                at,
                format!(
                    "column `{name}` has SQL type {col_ty}, which does not fit the declared {ty:?}"
                ),
            ));
        }
        props.push(i);
    }
    let mut more = Vec::new();
    for name in extra {
        let i = find(name)
            .ok_or_else(|| mapping_error(at, format!("the query returns no column `{name}`")))?;
        if !is_integer(cols[i].type_()) {
            return Err(mapping_error(
                at,
                format!("column `{name}` must be an integer"),
            ));
        }
        more.push(i);
    }
    Ok((props, more))
}

fn check_key_array(statement: &Statement, at: &str) -> Result<()> {
    match statement.params().first() {
        Some(t) if *t == Type::INT4_ARRAY || *t == Type::INT8_ARRAY || *t == Type::INT2_ARRAY => {
            Ok(())
        }
        Some(t) => Err(mapping_error(
            at,
            format!("$1 must be an array of integer keys, PostgreSQL reads it as {t}"),
        )),
        None => Err(mapping_error(at, "has no parameter $1")),
    }
}

/// Decodes column `i` of `row` as a value.
fn decode(row: &Row, i: usize) -> std::result::Result<Value, tokio_postgres::Error> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Value::Null, Value::Int),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map_or(Value::Null, |v| Value::Float(v.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Value::Null, Value::Float),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Value::Null, Value::Bool),
        Type::TEXT_ARRAY | Type::VARCHAR_ARRAY => row
            .try_get::<_, Option<Vec<Option<String>>>>(i)?
            .map_or(Value::Null, |items| {
                Value::List(
                    items
                        .into_iter()
                        .map(|s| s.map_or(Value::Null, Value::String))
                        .collect(),
                )
            }),
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::String),
    })
}

fn int_at(row: &Row, i: usize, source: &str, what: &str) -> Result<i64> {
    match decode(row, i).map_err(|e| unavailable(source, e))? {
        Value::Int(v) => Ok(v),
        other => Err(bad_data(
            source,
            format!("{what} is {}, not an integer", other.type_name()),
        )),
    }
}

impl Postgres {
    /// Connects `pool_size` clients lazily; checks the templates on one
    /// connection now, so a bad mapping fails at once.
    pub async fn connect(mapping: &Mapping) -> Result<Postgres> {
        let mut sql = Sql {
            nodes: Vec::new(),
            boxes: Vec::new(),
            lists: Vec::new(),
            list_boxes: Vec::new(),
            node_keys: Vec::new(),
            list_keys: Vec::new(),
        };
        for space in &mapping.nodes {
            sql.nodes.push(space.fetch.clone());
            sql.boxes.push(space.in_box.clone());
            sql.node_keys.push(format!("nodes.{}", space.label));
        }
        for (r, rel) in mapping.relationships.iter().enumerate() {
            for (outgoing, fetch) in [(true, &rel.outgoing), (false, &rel.incoming)] {
                if let Some(fetch) = fetch {
                    let list = ListRef {
                        rel: r as u16,
                        outgoing,
                    };
                    sql.lists.push((list, fetch.template.clone()));
                    sql.list_boxes.push(fetch.in_box.clone());
                    sql.list_keys.push(format!(
                        "relationships.{}.{}",
                        rel.rel_type,
                        if outgoing { "outgoing" } else { "incoming" }
                    ));
                }
            }
        }
        let mut pg = Postgres {
            name: mapping.name.clone(),
            url: mapping.connection.clone(),
            sql,
            node_columns: Vec::new(),
            list_columns: Vec::new(),
            pool: (0..mapping.pool_size).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            mapping: None,
        };
        let mut first = pg.prepare_basic().await?;
        for (s, space) in mapping.nodes.iter().enumerate() {
            let at = format!("nodes.{}.fetch", space.label);
            check_key_array(&first.nodes[s], &at)?;
            let (properties, key) = columns(
                &first.nodes[s],
                &at,
                &space.properties,
                &[space.key.as_str()],
            )?;
            if let Some(b) = &first.boxes[s] {
                let at = format!("nodes.{}.in_box", space.label);
                let (box_props, _) = columns(b, &at, &space.properties, &[space.key.as_str()])?;
                if box_props != properties {
                    return Err(mapping_error(
                        &at,
                        "must return the same columns in the same order as `fetch`",
                    ));
                }
            }
            pg.node_columns.push(Columns {
                properties,
                node: None,
                neighbour: None,
                rel_key: None,
                key: Some(key[0]),
            });
        }
        for (list, statement) in &first.lists {
            let rel = &mapping.relationships[list.rel as usize];
            let at = format!(
                "relationships.{}.{}",
                rel.rel_type,
                if list.outgoing {
                    "outgoing"
                } else {
                    "incoming"
                }
            );
            check_key_array(statement, &at)?;
            let mut extra = vec!["node", "neighbour"];
            extra.extend(rel.key.as_deref());
            let (properties, extra) = columns(statement, &at, &rel.properties, &extra)?;
            let i = pg.list_columns.len();
            if let Some(sql) = &pg.sql.list_boxes[i] {
                let at = format!("{at}_in_box");
                let start = if list.outgoing { &rel.from } else { &rel.to };
                let space = mapping.nodes.iter().find(|n| &n.label == start);
                pg.check_list_box(&first.client, sql, &at, rel, space)
                    .await?;
            }
            pg.list_columns.push((
                *list,
                Columns {
                    properties,
                    node: Some(extra[0]),
                    neighbour: Some(extra[1]),
                    rel_key: extra.get(2).copied(),
                    key: None,
                },
            ));
        }
        first.lookahead = pg.prepare_lookahead(&first).await?;
        first.regions = pg.prepare_regions(&first, mapping).await?;
        pg.mapping = Some(mapping.clone());
        *pg.pool[0].lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(first));
        Ok(pg)
    }

    /// Checks a list's `*_in_box` template (at mapping key `at`): four
    /// float parameters, the integer columns `node`, `neighbour` and the
    /// relationship key, the properties of `rel`, and the coordinates of
    /// `start` (the space where the list's relationships start) as numbers.
    async fn check_list_box(
        &self,
        client: &Client,
        sql: &str,
        at: &str,
        rel: &RelSpace,
        start: Option<&NodeSpace>,
    ) -> Result<()> {
        let statement = self.prepare_one(client, sql, at).await?;
        if statement.params().len() != 4 || statement.params().iter().any(|t| *t != Type::FLOAT8) {
            return Err(mapping_error(
                at,
                format!(
                    "$1..$4 (the box) must be double precision, PostgreSQL reads them as {}",
                    statement
                        .params()
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let mut extra = vec!["node", "neighbour"];
        extra.extend(rel.key.as_deref());
        columns(&statement, at, &rel.properties, &extra)?;
        if let Some((space, (lat, lon))) =
            start.and_then(|n| Some((n.label.as_str(), n.coordinates.as_ref()?)))
        {
            let cols = statement.columns();
            for name in [lat, lon] {
                let numeric = cols.iter().find(|c| c.name() == name).map(|c| {
                    is_integer(c.type_()) || [Type::FLOAT4, Type::FLOAT8].contains(c.type_())
                });
                match numeric {
                    Some(true) => {}
                    Some(false) => {
                        return Err(mapping_error(
                            at,
                            format!(
                                "column `{name}` (the start node's coordinate) must be a number"
                            ),
                        ))
                    }
                    None => {
                        return Err(mapping_error(
                            at,
                            format!(
                            "the query returns no column `{name}` (the start node's coordinate, \
                                 named as in `nodes.{space}.coordinates`)"
                        ),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// A new connection with every statement prepared.
    async fn prepare(&self) -> Result<Arc<Prepared>> {
        let mut prepared = self.prepare_basic().await?;
        prepared.lookahead = self.prepare_lookahead(&prepared).await?;
        if let Some(mapping) = &self.mapping {
            prepared.regions = self.prepare_regions(&prepared, mapping).await?;
        }
        Ok(Arc::new(prepared))
    }

    /// Prepares `sql` on `client`; a query PostgreSQL rejects is a mapping
    /// error at `at`.
    async fn prepare_one(&self, client: &Client, sql: &str, at: &str) -> Result<Statement> {
        client
            .prepare(sql)
            .await
            .map_err(|e| match e.as_db_error() {
                Some(db) => mapping_error(
                    at,
                    format!("PostgreSQL rejects the query: {}", db.message()),
                ),
                None => unavailable(&self.name, e),
            })
    }

    /// A new connection with the mapping's own statements prepared.
    async fn prepare_basic(&self) -> Result<Prepared> {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .map_err(|e| unavailable(&self.name, format!("cannot connect to PostgreSQL: {e}")))?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server goes away; the
            // next request then fails with a clear error.
            let _ = connection.await;
        });
        client
            .batch_execute(SESSION_SETTINGS)
            .await
            .map_err(|e| unavailable(&self.name, e))?;
        let mut nodes = Vec::new();
        let mut boxes = Vec::new();
        for (s, sql) in self.sql.nodes.iter().enumerate() {
            let at = format!("{}.fetch", self.sql.node_keys[s]);
            nodes.push(self.prepare_one(&client, sql, &at).await?);
        }
        for (s, sql) in self.sql.boxes.iter().enumerate() {
            let at = format!("{}.in_box", self.sql.node_keys[s]);
            boxes.push(match sql {
                Some(sql) => Some(self.prepare_one(&client, sql, &at).await?),
                None => None,
            });
        }
        let mut lists = Vec::new();
        for (i, (list, sql)) in self.sql.lists.iter().enumerate() {
            lists.push((
                *list,
                self.prepare_one(&client, sql, &self.sql.list_keys[i])
                    .await?,
            ));
        }
        Ok(Prepared {
            client,
            nodes,
            boxes,
            lists,
            lookahead: Vec::new(),
            regions: Vec::new(),
        })
    }

    /// The region statements of every node space with coordinates and an
    /// `in_box` template whose four parameters are floats, derived from
    /// the templates (see [`RegionStatements`]).
    async fn prepare_regions(
        &self,
        p: &Prepared,
        mapping: &Mapping,
    ) -> Result<Vec<Option<RegionStatements>>> {
        let numeric = |t: PropertyType| matches!(t, PropertyType::Integer | PropertyType::Float);
        let mut out = Vec::new();
        for (s, space) in mapping.nodes.iter().enumerate() {
            let (Some(in_box), Some((lat, lon)), Some(boxed)) =
                (&space.in_box, &space.coordinates, &p.boxes[s])
            else {
                out.push(None);
                continue;
            };
            let type_of = |name: &str| {
                space
                    .properties
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, t)| *t)
            };
            let floats =
                boxed.params().len() == 4 && boxed.params().iter().all(|t| *t == Type::FLOAT8);
            if !floats || !type_of(lat).is_some_and(numeric) || !type_of(lon).is_some_and(numeric) {
                out.push(None);
                continue;
            }
            let (key, lat, lon) = (ident(&space.key), ident(lat), ident(lon));
            // The SQL of a band's rows and of its lists, with `param(i)` in
            // place of the plain statements' parameter `$i` (1-4: the box;
            // 5-8: the foci; 9, 10: metres per degree; 11, 12: the band;
            // 13, 14: which slice of how many, see `strips`; 15: the start
            // weight).
            let band_of = |in_box: &str, param: &dyn Fn(usize) -> String| {
                let (west, east, short_of) = strip_bounds(&param(3), &param(4), &param(14));
                let (south, north) = (param(1), param(2));
                let in_box =
                    bind_params(in_box, &[(1, &south), (2, &north), (3, &west), (4, &east)]);
                let sum = ellipse_sum_sql(&lat, &lon, param);
                // The strips as a list of `STRIPS` rows, not a
                // `generate_series`: estimated at 4 rows, the strips get an
                // index scan each within their longitudes (a series,
                // estimated at 1,000, got one scan of every longitude of the
                // box, filtered per strip: route 2's roads 31 ms against 11).
                let strips = (0..STRIPS)
                    .map(|j| format!("({j})"))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "FROM (SELECT {slice} + v.j * {slices} AS i FROM (VALUES {strips}) AS v(j)) AS g \
                     CROSS JOIN LATERAL ({in_box}) AS b \
                     CROSS JOIN LATERAL (SELECT {sum} AS s) AS e WHERE {} \
                     AND b.{lon}::float8 < {short_of}",
                    band_condition(&param(11), &param(12)),
                    slice = param(13),
                    slices = param(14),
                )
            };
            let band = |param: &dyn Fn(usize) -> String| band_of(in_box, param);
            let plain = |i: usize| match i {
                13 | 14 => format!("${i}::int4"),
                _ => format!("${i}::float8"),
            };
            // From the ends: the foci and bands computed in SQL from the
            // ends' rows (`$1`, `$2` their keys, `$3` the stretch, `$6` the
            // start weight; see `ends_prefix`), so the ends need no round
            // trip of their own.
            let array = if p.nodes[s].params().first() == Some(&Type::INT8_ARRAY) {
                "bigint[]"
            } else {
                "integer[]"
            };
            let ends = bind_first(
                &self.sql.nodes[s],
                &format!("ARRAY[$1::int8, $2::int8]::{array}"),
            );
            let from_ends = |rows: bool| {
                let prefix = ends_prefix(&ends, &key, &lat, &lon, rows);
                let names = [
                    "lat0", "lat1", "lon0", "lon1", "alat", "alon", "blat", "blon", "kx", "ky",
                ];
                let param = move |i: usize| match i {
                    1..=10 => format!("(SELECT {} FROM p)", names[i - 1]),
                    11 => NO_INNER.to_string(),
                    12 => "(SELECT lim FROM p)".to_string(),
                    13 => "$4::int4".to_string(),
                    14 => "$5::int4".to_string(),
                    _ => "$6::float8".to_string(),
                };
                (prefix, param)
            };
            let at = format!("nodes.{}.in_box (its ellipse query)", space.label);
            let rows_sql = |band: String| {
                format!(
                    "SELECT array_agg(b.{key}::int8), array_agg(b.{lat}::float8), \
                     array_agg(b.{lon}::float8) {band}"
                )
            };
            let rows = self
                .prepare_one(&p.client, &rows_sql(band(&plain)), &at)
                .await?;
            let (prefix, param) = from_ends(true);
            let rows_from_ends_sql = format!("{prefix} {}", rows_sql(band(&param)));
            let rows_from_ends = self
                .prepare_one(&p.client, &rows_from_ends_sql, &at)
                .await?;
            let mut from_ends_sql = vec![(format!("nodes.{}", space.label), rows_from_ends_sql)];
            let mut lists = Vec::new();
            for (i, (list, template)) in self.sql.lists.iter().enumerate() {
                let rel = &mapping.relationships[list.rel as usize];
                let start = if list.outgoing { &rel.from } else { &rel.to };
                let Some(rel_key) = rel.key.as_deref().filter(|_| start == &space.label) else {
                    continue;
                };
                // With a `*_in_box` template the lists come from the band
                // of its rows (`b`, which carry their start node's place),
                // else from the list template over the band's node keys.
                let list_box = self.sql.list_boxes[i].as_deref();
                let row = if list_box.is_some() { "b" } else { "x" };
                // The types of the rows' columns, to pack pairs of 32-bit
                // integers into one `int8` (see [`RegionColumn`]).
                let at = format!("{} (its ellipse query)", self.sql.list_keys[i]);
                let source_columns = match list_box {
                    Some(sql) => self.prepare_one(&p.client, sql, &at).await?,
                    None => p.lists[i].1.clone(),
                };
                let (columns, kinds) =
                    region_list_columns(row, source_columns.columns(), rel_key, &rel.properties);
                let properties = kinds;
                let list_sql = |param: &dyn Fn(usize) -> String| match list_box {
                    Some(list_box) => {
                        format!("SELECT {} {}", columns.join(", "), band_of(list_box, param))
                    }
                    None => {
                        let keys = format!("ARRAY(SELECT b.{key} {})", band(param));
                        format!(
                            "SELECT {} FROM ({}) AS x",
                            columns.join(", "),
                            bind_first(template, &keys)
                        )
                    }
                };
                let statement = self.prepare_one(&p.client, &list_sql(&plain), &at).await?;
                let (prefix, param) = from_ends(false);
                let sql = format!("{prefix} {}", list_sql(&param));
                let from_ends = self.prepare_one(&p.client, &sql, &at).await?;
                from_ends_sql.push((self.sql.list_keys[i].clone(), sql));
                lists.push((*list, statement, from_ends, properties));
            }
            out.push(Some(RegionStatements {
                rows,
                rows_from_ends,
                lists,
                from_ends_sql,
            }));
        }
        Ok(out)
    }

    /// The lookahead statements, derived from the templates: keys reached
    /// from `$1` in fewer than `$2` steps (a recursive query), then the
    /// list template over all of them at once, and the first node space's
    /// template over every reached key.
    async fn prepare_lookahead(
        &self,
        p: &Prepared,
    ) -> Result<Vec<(ListRef, Statement, Statement)>> {
        let array_of = |statement: &Statement| {
            if statement.params().first() == Some(&Type::INT8_ARRAY) {
                "bigint[]"
            } else {
                "integer[]"
            }
        };
        let mut out = Vec::new();
        for (i, (list, sql)) in self.sql.lists.iter().enumerate() {
            let array = array_of(&p.lists[i].1);
            let reach = format!(
                "WITH RECURSIVE reach(n, depth) AS ( \
                   SELECT k::bigint, 0 FROM unnest($1::bigint[]) AS k \
                   UNION \
                   SELECT e.neighbour::bigint, r.depth + 1 FROM reach r, \
                     LATERAL ({}) e WHERE r.depth < $2 )",
                bind_first(sql, &format!("ARRAY[r.n]::{array}"))
            );
            let edges = format!(
                "{reach} SELECT * FROM ({}) e",
                bind_first(
                    sql,
                    &format!("(SELECT array_agg(DISTINCT n) FROM reach WHERE depth < $2)::{array}")
                )
            );
            let node_rows = format!(
                "{reach} SELECT * FROM ({}) f",
                bind_first(
                    &self.sql.nodes[0],
                    &format!(
                        "(SELECT array_agg(DISTINCT n) FROM reach)::{}",
                        array_of(&p.nodes[0])
                    )
                )
            );
            let at = format!("{} (its lookahead query)", self.sql.list_keys[i]);
            let edges = self.prepare_one(&p.client, &edges, &at).await?;
            let node_rows = self.prepare_one(&p.client, &node_rows, &at).await?;
            out.push((*list, edges, node_rows));
        }
        Ok(out)
    }

    /// A live connection from the pool (reconnecting a slot whose
    /// connection was lost).
    async fn connection(&self) -> Result<Arc<Prepared>> {
        let slot = self.next.fetch_add(1, Ordering::Relaxed) % self.pool.len();
        let current = self.pool[slot]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match current {
            Some(p) if !p.client.is_closed() => Ok(p),
            _ => {
                let fresh = self.prepare().await?;
                *self.pool[slot].lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh.clone());
                Ok(fresh)
            }
        }
    }

    fn list_columns(&self, list: ListRef) -> &Columns {
        &self
            .list_columns
            .iter()
            .find(|(l, _)| *l == list)
            .expect("every list has columns")
            .1
    }

    /// Node rows of `rows` (from a node statement of space `space`).
    fn node_rows(&self, space: u16, rows: &[Row], out: &mut Fetched) -> Result<Vec<i64>> {
        let columns = &self.node_columns[space as usize];
        let key_col = columns.key.expect("node statements have a key column");
        let mut keys = Vec::with_capacity(rows.len());
        for row in rows {
            let key = int_at(row, key_col, &self.name, "a node key")?;
            let mut props = Vec::with_capacity(columns.properties.len());
            for &c in &columns.properties {
                let v = decode(row, c).map_err(|e| unavailable(&self.name, e))?;
                out.bytes += value_bytes(&v);
                props.push(v);
            }
            out.rows += 1;
            out.nodes.push((space, key, Some(props)));
            keys.push(key);
        }
        Ok(keys)
    }

    /// Adjacency lists of `rows` grouped by node, one entry per key of `keys`.
    fn adjacency_rows(
        &self,
        list: ListRef,
        keys: &[i64],
        rows: &[Row],
        out: &mut Fetched,
    ) -> Result<()> {
        let columns = self.list_columns(list);
        let mut by_node: std::collections::HashMap<i64, AdjacencyList> = keys
            .iter()
            .map(|&k| (k, AdjacencyList::default()))
            .collect();
        for row in rows {
            let node = int_at(row, columns.node.expect("adjacency"), &self.name, "`node`")?;
            let neighbour = int_at(
                row,
                columns.neighbour.expect("adjacency"),
                &self.name,
                "`neighbour`",
            )?;
            // Without a key the query graph tells relationships apart by
            // their endpoints.
            let rel = match columns.rel_key {
                Some(c) => int_at(row, c, &self.name, "a relationship key")?,
                None => 0,
            };
            let mut props = Vec::with_capacity(columns.properties.len());
            for &c in &columns.properties {
                let v = decode(row, c).map_err(|e| unavailable(&self.name, e))?;
                out.bytes += value_bytes(&v);
                props.push(v);
            }
            out.rows += 1;
            out.bytes += 24;
            let list = by_node.entry(node).or_default();
            list.neighbours.push(neighbour);
            list.rels.push(rel);
            list.properties.push(props);
        }
        for (key, adjacency) in by_node {
            out.adjacency.push((list, key, adjacency));
        }
        Ok(())
    }

    fn query_error(&self, e: tokio_postgres::Error) -> Error {
        match e.as_db_error() {
            Some(db) => unavailable(&self.name, format!("PostgreSQL: {}", db.message())),
            None => unavailable(
                &self.name,
                format!("the connection to PostgreSQL failed: {e}"),
            ),
        }
    }

    /// Every key of a node space: the rows of its `keys` query (first
    /// column), for a label scan; `at` names the mapping key in errors.
    pub async fn keys(&self, sql: &str, at: &str) -> Result<Vec<i64>> {
        let p = self.connection().await?;
        let rows = p
            .client
            .query(sql, &[])
            .await
            .map_err(|e| match e.as_db_error() {
                Some(db) => mapping_error(
                    at,
                    format!("PostgreSQL rejects the query: {}", db.message()),
                ),
                None => self.query_error(e),
            })?;
        rows.iter()
            .map(|row| int_at(row, 0, &self.name, "a node key"))
            .collect()
    }

    /// How many keys the `keys` query `sql` lists (`SELECT count(*)` over
    /// it), for the planner's label counts.
    pub async fn count_keys(&self, sql: &str) -> Result<u64> {
        self.count_keys_sql(&format!("SELECT count(*) FROM ({sql}) AS keys"))
            .await
    }

    /// How many relationships the adjacency query `template` returns over
    /// every key the `keys` query `keys` lists (`SELECT count(*)` over the
    /// template with `$1` bound to `ARRAY(keys)`, in the server), for the
    /// planner's relationship counts.
    pub async fn count_relationships(&self, template: &str, keys: &str) -> Result<u64> {
        let sql = format!(
            "SELECT count(*) FROM ({}) AS rels",
            bind_first(template, &format!("ARRAY({keys})"))
        );
        self.count_keys_sql(&sql).await
    }

    async fn count_keys_sql(&self, sql: &str) -> Result<u64> {
        let p = self.connection().await?;
        let row = p
            .client
            .query_one(sql, &[])
            .await
            .map_err(|e| self.query_error(e))?;
        let n: i64 = row.try_get(0).map_err(|e| self.query_error(e))?;
        Ok(n.max(0) as u64)
    }

    /// Runs a round: every statement sent at once on one connection.
    pub async fn round(&self, round: &Round) -> Result<Fetched> {
        let p = self.connection().await?;
        let client = &p.client;
        let node_queries = round.nodes.iter().map(|(space, keys)| {
            let statement = p.nodes[*space as usize].clone();
            let keys = narrow(&statement, keys);
            async move { client.query(&statement, &[&keys]).await }
        });
        let list_queries = round.adjacency.iter().map(|(list, keys)| {
            let statement = p
                .lists
                .iter()
                .find(|(l, _)| l == list)
                .expect("prepared")
                .1
                .clone();
            let keys = narrow(&statement, keys);
            async move { client.query(&statement, &[&keys]).await }
        });
        let (node_rows, list_rows) = futures_util::future::try_join(
            try_join_all(node_queries.map(Box::pin)),
            try_join_all(list_queries.map(Box::pin)),
        )
        .await
        .map_err(|e| self.query_error(e))?;
        let mut out = Fetched::default();
        for ((space, keys), rows) in round.nodes.iter().zip(&node_rows) {
            let found = self.node_rows(*space, rows, &mut out)?;
            let found: std::collections::HashSet<i64> = found.into_iter().collect();
            for &k in keys {
                if !found.contains(&k) {
                    out.nodes.push((*space, k, None));
                }
            }
        }
        for ((list, keys), rows) in round.adjacency.iter().zip(&list_rows) {
            self.adjacency_rows(*list, keys, rows, &mut out)?;
        }
        Ok(out)
    }

    /// The depth-`depth` neighbourhood of `keys` along `list`: adjacency of
    /// nodes fewer than `depth` steps away, rows of nodes up to `depth`
    /// steps away (node space 0), in one round trip.
    pub async fn lookahead(&self, list: ListRef, keys: &[i64], depth: u32) -> Result<Fetched> {
        let p = self.connection().await?;
        let (_, edges, nodes) = p
            .lookahead
            .iter()
            .find(|(l, _, _)| *l == list)
            .expect("prepared");
        let depth = depth as i32;
        let (edge_rows, node_rows) = futures_util::future::try_join(
            p.client.query(edges, &[&keys, &depth]),
            p.client.query(nodes, &[&keys, &depth]),
        )
        .await
        .map_err(|e| self.query_error(e))?;
        let mut out = Fetched::default();
        self.node_rows(0, &node_rows, &mut out)?;
        // The lists of every node fewer than `depth` steps away came, but
        // a node without relationships has no rows: walk the fetched
        // edges breadth first from `keys` (they hold every list the walk
        // meets before `depth`) so such nodes get their empty list too.
        let columns = self.list_columns(list);
        let (node_col, neighbour_col) = (
            columns.node.expect("adjacency"),
            columns.neighbour.expect("adjacency"),
        );
        let mut edges: std::collections::HashMap<i64, Vec<i64>> = std::collections::HashMap::new();
        for r in &edge_rows {
            let node = int_at(r, node_col, &self.name, "`node`")?;
            let neighbour = int_at(r, neighbour_col, &self.name, "`neighbour`")?;
            edges.entry(node).or_default().push(neighbour);
        }
        let mut expanded: Vec<i64> = keys.to_vec();
        let mut seen: std::collections::HashSet<i64> = keys.iter().copied().collect();
        let mut level: Vec<i64> = keys.to_vec();
        for _ in 1..depth {
            let mut next = Vec::new();
            for n in &level {
                for &m in edges.get(n).map(Vec::as_slice).unwrap_or_default() {
                    if seen.insert(m) {
                        next.push(m);
                    }
                }
            }
            expanded.extend_from_slice(&next);
            level = next;
        }
        expanded.sort_unstable();
        expanded.dedup();
        self.adjacency_rows(list, &expanded, &edge_rows, &mut out)?;
        Ok(out)
    }

    /// The `ellipse` prefetcher's region of node space `space` (rows of
    /// the nodes in the rows band, the lists `lists` of those in the
    /// lists band; see [`RegionAsk`]), every statement sent at once: one
    /// round trip. The region is read in [`Postgres::region_slices`]
    /// slices of longitude, each statement on a connection of its own
    /// while the pool has them, so the backend reads it on several cores.
    /// `None` if the space has no region statements.
    pub async fn region(
        &self,
        space: u16,
        lists: &[ListRef],
        ask: RegionAsk<'_>,
    ) -> Result<Option<RegionRows>> {
        let slices = self.region_slices(lists.len());
        let sliced = (0..slices).map(|slice| self.region_slice(space, lists, ask, slice, slices));
        let mut parts = try_join_all(sliced).await?.into_iter();
        // The first slice's columns take the others' (one slice: no copy).
        let Some(Some(mut out)) = parts.next() else {
            return Ok(None);
        };
        for part in parts {
            let Some(part) = part else {
                return Ok(None);
            };
            out.append(part);
        }
        Ok(Some(out))
    }

    /// Into how many slices a region of `lists` lists is cut: as many as
    /// the pool has connections for all of a slice's statements (a node
    /// row statement and one per list), at least one.
    pub fn region_slices(&self, lists: usize) -> usize {
        (self.pool.len() / (1 + lists)).max(1)
    }

    /// Slice `slice` of `slices` of a region (see [`Postgres::region`]).
    async fn region_slice(
        &self,
        space: u16,
        lists: &[ListRef],
        ask: RegionAsk<'_>,
        slice: usize,
        slices: usize,
    ) -> Result<Option<RegionRows>> {
        let mut connections = Vec::with_capacity(1 + lists.len());
        for _ in 0..=lists.len() {
            connections.push(self.connection().await?);
        }
        let from_ends = matches!(ask, RegionAsk::Ends { .. });
        let statements_of = |p: &Arc<Prepared>| -> Option<(Statement, Vec<Statement>)> {
            let statements = p.regions.get(space as usize)?.as_ref()?;
            let chosen = lists
                .iter()
                .map(|l| {
                    let (_, band, ends, _) = statements.lists.iter().find(|(m, ..)| m == l)?;
                    Some(if from_ends { ends } else { band }.clone())
                })
                .collect::<Option<Vec<_>>>()?;
            let rows = if from_ends {
                &statements.rows_from_ends
            } else {
                &statements.rows
            };
            Some((rows.clone(), chosen))
        };
        let Some((rows_statement, _)) = statements_of(&connections[0]) else {
            return Ok(None);
        };
        let properties: Vec<(ListRef, Vec<RegionColumn>)> = {
            let Some(Some(statements)) = connections[0].regions.get(space as usize) else {
                return Ok(None);
            };
            lists
                .iter()
                .filter_map(|l| {
                    let (m, _, _, properties) = statements.lists.iter().find(|(m, ..)| m == l)?;
                    Some((*m, properties.clone()))
                })
                .collect()
        };
        type Param<'p> = &'p (dyn tokio_postgres::types::ToSql + Sync);
        // At most a few slices: the casts cannot truncate.
        let (slice, slices) = (slice as i32, slices as i32);
        let (band_params, ends_params, weight): ([[f64; 12]; 2], (i64, i64, f64), f64) = match ask {
            RegionAsk::Band(query) => {
                let params = |band: &Band| {
                    let f = &query.foci;
                    [
                        band.lat.0, band.lat.1, band.lon.0, band.lon.1, f.a.0, f.a.1, f.b.0, f.b.1,
                        f.kx, f.ky, band.inner, band.outer,
                    ]
                };
                (
                    [params(&query.rows), params(&query.lists)],
                    (0, 0, 0.0),
                    query.foci.start_weight,
                )
            }
            RegionAsk::Ends { a, b, shape } => {
                ([[0.0; 12]; 2], (a, b, shape.stretch), shape.weight())
            }
        };
        let which = (slice, slices);
        fn refs<'p>(
            from_ends: bool,
            band: &'p [f64; 12],
            ends: &'p (i64, i64, f64),
            which: &'p (i32, i32),
            weight: &'p f64,
        ) -> Vec<Param<'p>> {
            let mut refs: Vec<Param<'p>> = if from_ends {
                vec![&ends.0, &ends.1, &ends.2]
            } else {
                band.iter().map(|x| x as Param<'p>).collect()
            };
            refs.extend([&which.0 as Param<'p>, &which.1, weight]);
            refs
        }
        let row_refs = refs(from_ends, &band_params[0], &ends_params, &which, &weight);
        let list_refs = refs(from_ends, &band_params[1], &ends_params, &which, &weight);
        let mut list_statements = Vec::with_capacity(lists.len());
        for (i, p) in connections[1..].iter().enumerate() {
            let Some((_, theirs)) = statements_of(p) else {
                return Ok(None);
            };
            list_statements.push((p, theirs[i].clone()));
        }
        let list_queries = list_statements.iter().map(|(p, statement)| {
            let list_refs = &list_refs;
            Box::pin(async move { p.client.query_one(statement, list_refs).await })
        });
        let (rows, list_rows) = futures_util::future::try_join(
            connections[0].client.query_one(&rows_statement, &row_refs),
            try_join_all(list_queries),
        )
        .await
        .map_err(|e| self.query_error(e))?;
        let ints = |row: &Row, i: usize| -> Result<Vec<Option<i64>>> {
            Ok(row
                .try_get::<_, Option<Vec<Option<i64>>>>(i)
                .map_err(|e| self.query_error(e))?
                .unwrap_or_default())
        };
        let floats = |row: &Row, i: usize| -> Result<Vec<Option<f64>>> {
            Ok(row
                .try_get::<_, Option<Vec<Option<f64>>>>(i)
                .map_err(|e| self.query_error(e))?
                .unwrap_or_default())
        };
        let mut out = RegionRows {
            keys: ints(&rows, 0)?,
            lats: floats(&rows, 1)?,
            lons: floats(&rows, 2)?,
            lists: Vec::with_capacity(properties.len()),
            values: 0,
        };
        out.values = 3 * out.keys.len() as u64;
        for ((list, kinds), row) in properties.iter().zip(&list_rows) {
            let fetched = region_list(
                *list,
                kinds,
                &|c| ints(row, c),
                &|c| floats(row, c),
                &mut out.values,
            )?;
            out.lists.push(fetched);
        }
        let lengths_agree = out.lats.len() == out.keys.len()
            && out.lons.len() == out.keys.len()
            && out.lists.iter().all(|l| {
                l.neighbours.len() == l.nodes.len()
                    && l.rels.len() == l.nodes.len()
                    && l.properties.iter().all(|(_, v)| v.len() == l.nodes.len())
            });
        if !lengths_agree {
            return Err(bad_data(
                &self.name,
                "a region query returned columns of different lengths",
            ));
        }
        Ok(Some(out))
    }

    /// The server's own cost of the statements of a route's first region
    /// from its ends (see [`RegionAsk::Ends`]): each statement prepared
    /// again by name on one of the source's connections (so a generic
    /// plan, as the source's own statements run), run once to build its
    /// plan and then `runs` times under `EXPLAIN (ANALYZE, BUFFERS)`, the
    /// run of median execution time reported. Per slice (see
    /// [`Postgres::region`]), the node space's row statement comes first,
    /// then each list of `lists`; with more than one slice each
    /// statement's name ends in ` j/k`. `None` if the space has no region
    /// statements.
    pub async fn explain_region(
        &self,
        space: u16,
        lists: &[ListRef],
        (a, b): (i64, i64),
        shape: RegionShape,
        runs: usize,
    ) -> Result<Option<Vec<ServerCost>>> {
        let p = self.connection().await?;
        let Some(Some(statements)) = p.regions.get(space as usize) else {
            return Ok(None);
        };
        let mut chosen = vec![statements.from_ends_sql[0].clone()];
        for list in lists {
            let Some(i) = self.sql.lists.iter().position(|(l, _)| l == list) else {
                return Ok(None);
            };
            let key = &self.sql.list_keys[i];
            match statements.from_ends_sql.iter().find(|(k, _)| k == key) {
                Some(found) => chosen.push(found.clone()),
                None => return Ok(None),
            }
        }
        let slices = self.region_slices(lists.len());
        let mut out = Vec::with_capacity(chosen.len() * slices);
        for slice in 0..slices {
            for (statement, sql) in &chosen {
                let statement = if slices > 1 {
                    format!("{statement} {}/{slices}", slice + 1)
                } else {
                    statement.clone()
                };
                out.extend(
                    self.explain_one(&p, &statement, sql, (a, b, shape), (slice, slices), runs)
                        .await?,
                );
            }
        }
        Ok(Some(out))
    }

    /// The median run of `runs` of one region statement from the ends
    /// under `EXPLAIN`, for slice `slice` of `slices` (see
    /// [`Postgres::explain_region`]).
    async fn explain_one(
        &self,
        p: &Prepared,
        statement: &str,
        sql: &str,
        (a, b, shape): (i64, i64, RegionShape),
        (slice, slices): (usize, usize),
        runs: usize,
    ) -> Result<Option<ServerCost>> {
        let run = async {
            p.client
                .batch_execute(&format!(
                    "PREPARE rhizome_explain (int8, int8, float8, int4, int4, float8) AS {sql}"
                ))
                .await?;
            let (stretch, weight) = (shape.stretch, shape.weight());
            let explain = format!(
                "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) \
                 EXECUTE rhizome_explain({a}, {b}, {stretch:?}, {slice}, {slices}, {weight:?})"
            );
            let mut texts = Vec::with_capacity(runs + 1);
            for _ in 0..=runs {
                for message in p.client.simple_query(&explain).await? {
                    if let tokio_postgres::SimpleQueryMessage::Row(row) = message {
                        texts.push(row.get(0).unwrap_or_default().to_string());
                    }
                }
            }
            p.client.batch_execute("DEALLOCATE rhizome_explain").await?;
            Ok::<_, tokio_postgres::Error>(texts)
        };
        let texts = run.await.map_err(|e| self.query_error(e))?;
        let mut costs = texts
            .iter()
            .skip(1)
            .map(|t| ServerCost::from_explain(statement, t))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad_data(&self.name, "EXPLAIN gave no plan in JSON"))?;
        costs.sort_by(|x, y| x.execution_ms.total_cmp(&y.execution_ms));
        Ok((!costs.is_empty()).then(|| costs.swap_remove(costs.len() / 2)))
    }

    /// The value of the server setting `name` on one of the source's
    /// connections (`current_setting`), e.g. to check what
    /// [`SESSION_SETTINGS`] set.
    pub async fn setting(&self, name: &str) -> Result<String> {
        let p = self.connection().await?;
        let row = p
            .client
            .query_one("SELECT current_setting($1)", &[&name])
            .await
            .map_err(|e| self.query_error(e))?;
        row.try_get(0).map_err(|e| self.query_error(e))
    }

    /// Rows of the nodes of space `space` in a latitude/longitude box.
    pub async fn in_box(&self, space: u16, lat: (f64, f64), lon: (f64, f64)) -> Result<Fetched> {
        let p = self.connection().await?;
        let Some(statement) = &p.boxes[space as usize] else {
            return Ok(Fetched::default());
        };
        let rows = p
            .client
            .query(statement, &[&lat.0, &lat.1, &lon.0, &lon.1])
            .await
            .map_err(|e| self.query_error(e))?;
        let mut out = Fetched::default();
        self.node_rows(space, &rows, &mut out)?;
        Ok(out)
    }
}

/// What one statement cost the server (`EXPLAIN (ANALYZE, BUFFERS)`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCost {
    /// Which statement: the mapping key it is derived from
    /// (`nodes.Junction`, `relationships.ROAD.outgoing`).
    pub statement: String,
    /// Planning time in ms (near zero for a cached generic plan).
    pub planning_ms: f64,
    /// Execution time in ms (without sending the result).
    pub execution_ms: f64,
    /// Shared buffers hit and read by the plan.
    pub buffers: u64,
}

impl ServerCost {
    /// The cost in the JSON of `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`.
    pub fn from_explain(statement: &str, json: &str) -> Option<ServerCost> {
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        let top = value.get(0)?;
        let plan = top.get("Plan")?;
        let blocks = |name: &str| plan.get(name).and_then(|v| v.as_u64()).unwrap_or(0);
        Some(ServerCost {
            statement: statement.to_string(),
            planning_ms: top.get("Planning Time")?.as_f64()?,
            execution_ms: top.get("Execution Time")?.as_f64()?,
            buffers: blocks("Shared Hit Blocks") + blocks("Shared Read Blocks"),
        })
    }

    /// The statement's whole server time in ms.
    pub fn total_ms(&self) -> f64 {
        self.planning_ms + self.execution_ms
    }
}

/// Keys as the statement's array type wants them.
fn narrow(statement: &Statement, keys: &[i64]) -> KeyArray {
    if statement.params().first() == Some(&Type::INT8_ARRAY) {
        KeyArray::Big(keys.to_vec())
    } else {
        KeyArray::Int(
            keys.iter()
                .map(|&k| k.clamp(i32::MIN.into(), i32::MAX.into()) as i32)
                .collect(),
        )
    }
}

/// An array parameter of the right width.
#[derive(Debug)]
enum KeyArray {
    Int(Vec<i32>),
    Big(Vec<i64>),
}

impl tokio_postgres::types::ToSql for KeyArray {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut tokio_postgres::types::private::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        match self {
            KeyArray::Int(v) => v.to_sql(ty, out),
            KeyArray::Big(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Vec<i32> as tokio_postgres::types::ToSql>::accepts(ty)
            || <Vec<i64> as tokio_postgres::types::ToSql>::accepts(ty)
    }

    tokio_postgres::types::to_sql_checked!();
}

/// The `WITH` clause of a route's first region computed from its ends:
/// `ends` (the node template over `$1`, `$2`, the ends' keys) gives their
/// places, and the CTE `p` the foci, metres per degree, the sum `lim` up
/// to which the band reaches (the first region's outer sum,
/// `max($3 × span, span + 2 × MARGIN_M)`, plus for the `rows` band the
/// reach of a road of `ROWS_MARGIN_M` with the start weighted `$6`) and
/// the box around it (`lat0`..`lon1`), by the formulas of [`Foci`] and
/// [`crate::region::RegionQuery::ring`], so Rust and SQL agree on the
/// region (`$4` and `$5`, which slice of how many, and `$6`, the start
/// weight, are read by the statement after it). No row when an end is missing or has no place. Every step is
/// `MATERIALIZED` (PostgreSQL 12 and later): inlined, each reference
/// repeats the expressions before it, and planning the statement took
/// 4–14 ms against 0.6–1.7 ms (`EXPLAIN ANALYZE`, route 1).
///
/// [`Foci`]: crate::region::Foci
fn ends_prefix(ends: &str, key: &str, lat: &str, lon: &str, rows: bool) -> String {
    let metres = crate::region::METRES_PER_DEGREE;
    let margin = crate::region::MARGIN_M;
    let extra = if rows {
        format!(
            "(1 + $6::float8) * ({:e})::float8",
            crate::region::ROWS_MARGIN_M
        )
    } else {
        "0".to_string()
    };
    format!(
        "WITH f AS MATERIALIZED (SELECT t.{key}::int8 AS k, t.{lat}::float8 AS lat, t.{lon}::float8 AS lon \
                    FROM ({ends}) AS t), \
         q AS MATERIALIZED (SELECT a.lat AS alat, a.lon AS alon, z.lat AS blat, z.lon AS blon, \
                 ({metres:e})::float8 * greatest(abs(cos(radians((a.lat + z.lat) / 2))), 1e-6) AS kx, \
                 ({metres:e})::float8 AS ky \
               FROM f AS a, f AS z WHERE a.k = $1::int8 AND z.k = $2::int8 \
                 AND a.lat IS NOT NULL AND a.lon IS NOT NULL \
                 AND z.lat IS NOT NULL AND z.lon IS NOT NULL LIMIT 1), \
         r AS MATERIALIZED (SELECT q.*, (blon - alon) * kx AS dx, (blat - alat) * ky AS dy FROM q), \
         s AS MATERIALIZED (SELECT r.*, sqrt(dx * dx + dy * dy) AS span FROM r), \
         l AS MATERIALIZED (SELECT s.*, greatest($3::float8 * span, span + ({two_margin:e})::float8) \
                 + {extra} AS lim FROM s), \
         m AS MATERIALIZED (SELECT l.*, greatest(lim, span) / 2 + 1 AS major FROM l), \
         n AS MATERIALIZED (SELECT m.*, sqrt(greatest(major * major - (span / 2) * (span / 2), 0)) AS minor, \
                 CASE WHEN span > 0 THEN dx / span ELSE 1 END AS c, \
                 CASE WHEN span > 0 THEN dy / span ELSE 0 END AS si, \
                 (greatest(lim, span) + span) / ($6::float8 + 1) + 1 AS reach FROM m), \
         o AS MATERIALIZED (SELECT alat, alon, blat, blon, kx, ky, lim, reach, \
                 (alat + blat) / 2 - sqrt(major * major * si * si + minor * minor * c * c) / ky AS lat0, \
                 (alat + blat) / 2 + sqrt(major * major * si * si + minor * minor * c * c) / ky AS lat1, \
                 (alon + blon) / 2 - sqrt(major * major * c * c + minor * minor * si * si) / kx AS lon0, \
                 (alon + blon) / 2 + sqrt(major * major * c * c + minor * minor * si * si) / kx AS lon1 \
               FROM n), \
         p AS MATERIALIZED (SELECT alat, alon, blat, blon, kx, ky, lim, \
                 CASE WHEN $6::float8 > 1 THEN greatest(lat0, alat - reach / ky) ELSE lat0 END AS lat0, \
                 CASE WHEN $6::float8 > 1 THEN least(lat1, alat + reach / ky) ELSE lat1 END AS lat1, \
                 CASE WHEN $6::float8 > 1 THEN greatest(lon0, alon - reach / kx) ELSE lon0 END AS lon0, \
                 CASE WHEN $6::float8 > 1 THEN least(lon1, alon + reach / kx) ELSE lon1 END AS lon1 \
               FROM o)",
        two_margin = 2.0 * margin,
    )
}

/// The inner sum of a band that excludes nothing (a route's first region).
const NO_INNER: &str = "(-1)::float8";

/// The condition on a band's sum `e.s`: above `inner` and at most
/// `outer`. Without an inner sum ([`NO_INNER`]) only the outer test:
/// PostgreSQL pulls the sum's subquery up into each test that names it,
/// so every test computes the sum again (the region's row statement of
/// route 6 took 9–19 ms with one test against 18–29 ms with two, `EXPLAIN
/// ANALYZE`, 6 runs each, interleaved).
fn band_condition(inner: &str, outer: &str) -> String {
    if inner == NO_INNER {
        format!("e.s <= {outer}")
    } else {
        format!("e.s > {inner} AND e.s <= {outer}")
    }
}

/// The SQL of [`Foci::sum`] for the row `b` (columns `lat`, `lon`, quoted),
/// with `param(5..=10)` the foci and metres per degree and `param(15)` the
/// start weight (see the band of
/// [`Postgres::prepare_regions`]). Squares are products, not `power(x,
/// 2)`: the same value (both correctly rounded, as Rust's `dx * dx`), and
/// the region's row statement ran 23% faster (route 6, `EXPLAIN ANALYZE`,
/// 5 runs each, interleaved).
///
/// [`Foci::sum`]: crate::region::Foci::sum
fn ellipse_sum_sql(lat: &str, lon: &str, param: &dyn Fn(usize) -> String) -> String {
    let square = |x: String| format!("(({x}) * ({x}))");
    format!(
        "{} * sqrt({} + {}) + sqrt({} + {})",
        param(15),
        square(format!("(b.{lon}::float8 - {}) * {}", param(6), param(9))),
        square(format!("(b.{lat}::float8 - {}) * {}", param(5), param(10))),
        square(format!("(b.{lon}::float8 - {}) * {}", param(8), param(9))),
        square(format!("(b.{lat}::float8 - {}) * {}", param(7), param(10))),
    )
}

/// Strips of longitude per slice of a region: a region's box is cut
/// into `STRIPS × slices` strips of equal width, and slice `j` reads
/// strips `j`, `j + slices`, ... (a node row statement and one per list
/// each), so every slice gets a like share of a region whose density
/// changes from west to east.
const STRIPS: usize = 4;

/// The SQL of strip `g.i`'s west and east borders within the box from
/// longitude `west` to `east` (cut into `STRIPS × slices` strips), and of
/// the longitude its rows stay below: the east border, infinite for the
/// last strip, so two strips never both return a row on their border.
fn strip_bounds(west: &str, east: &str, slices: &str) -> (String, String, String) {
    let strips = format!("({STRIPS} * {slices})");
    let at = |i: &str| format!("({west} + ({east} - {west}) * ({i})::float8 / {strips}::float8)");
    let last = format!("g.i + 1 >= {strips}");
    (
        format!("(CASE WHEN g.i = 0 THEN {west} ELSE {} END)", at("g.i")),
        format!("(CASE WHEN {last} THEN {east} ELSE {} END)", at("g.i + 1")),
        format!(
            "(CASE WHEN {last} THEN 'Infinity'::float8 ELSE {} END)",
            at("g.i + 1")
        ),
    )
}

/// `sql` with every parameter `$1` (not `$10`...) replaced by `with`.
fn bind_first(sql: &str, with: &str) -> String {
    bind_params(sql, &[(1, with)])
}

/// `sql` with each parameter `$n` of `withs` (not `$n0`...) replaced by
/// its text, in one pass: a replacement's own `$n` stays as it is.
fn bind_params(sql: &str, withs: &[(usize, &str)]) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let bound = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|n| withs.iter().find(|(m, _)| *m == n));
        match bound {
            Some((_, with)) => out.push_str(with),
            None => out.push_str(&rest[at..at + 1 + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod bind_tests {

    #[test]
    fn parameters_are_bound_in_one_pass() {
        assert_eq!(
            super::bind_params(
                "x BETWEEN $3 AND $4 OR y = $34",
                &[(3, "($3 + $4)"), (4, "$3")]
            ),
            "x BETWEEN ($3 + $4) AND $3 OR y = $34"
        );
    }
    #[test]
    fn a_first_region_tests_its_sum_once() {
        assert_eq!(
            super::band_condition(super::NO_INNER, "(SELECT lim FROM p)"),
            "e.s <= (SELECT lim FROM p)"
        );
        assert_eq!(
            super::band_condition("$11::float8", "$12::float8"),
            "e.s > $11::float8 AND e.s <= $12::float8"
        );
    }

    #[test]
    fn the_ellipse_sum_squares_by_products() {
        let sql = super::ellipse_sum_sql("\"lat\"", "\"lon\"", &|i| format!("${i}"));
        assert_eq!(
            sql,
            "$15 * sqrt((((b.\"lon\"::float8 - $6) * $9) * ((b.\"lon\"::float8 - $6) * $9)) \
             + (((b.\"lat\"::float8 - $5) * $10) * ((b.\"lat\"::float8 - $5) * $10))) \
             + sqrt((((b.\"lon\"::float8 - $8) * $9) * ((b.\"lon\"::float8 - $8) * $9)) \
             + (((b.\"lat\"::float8 - $7) * $10) * ((b.\"lat\"::float8 - $7) * $10)))"
        );
        assert!(!sql.contains("power"));
    }

    #[test]
    fn server_costs_come_from_explains_json() {
        let json = r#"[{"Plan": {"Node Type": "Aggregate", "Shared Hit Blocks": 3315, "Shared Read Blocks": 2},
            "Planning Time": 0.052, "Triggers": [], "Execution Time": 1.988}]"#;
        let cost = super::ServerCost::from_explain("nodes.Junction", json).unwrap();
        assert_eq!(cost.buffers, 3317);
        assert_eq!((cost.planning_ms, cost.execution_ms), (0.052, 1.988));
        assert!((cost.total_ms() - 2.04).abs() < 1e-9);
        assert_eq!(
            super::ServerCost::from_explain("x", "Aggregate (cost=...)"),
            None
        );
        assert_eq!(super::ServerCost::from_explain("x", "[{}]"), None);
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(super::ident("lat"), "\"lat\"");
        assert_eq!(super::ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn only_the_first_parameter_is_bound() {
        assert_eq!(
            super::bind_first("WHERE a = ANY($1) AND b = $10 OR c = $1", "X"),
            "WHERE a = ANY(X) AND b = $10 OR c = X"
        );
        assert_eq!(super::bind_first("no parameter", "X"), "no parameter");
        assert_eq!(super::bind_first("costs $ and $$1", "X"), "costs $ and $X");
        assert_eq!(
            super::bind_first("SELECT a FROM t WHERE s = ANY($1) AND x <> $10", "ARRAY(k)"),
            "SELECT a FROM t WHERE s = ANY(ARRAY(k)) AND x <> $10"
        );
    }
}
