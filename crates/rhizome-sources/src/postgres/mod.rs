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

mod prepare;
mod region_read;
mod region_sql;
mod types;

pub use region_read::ServerCost;
use region_sql::*;
use types::*;

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

    /// The values of `row`'s property columns `at`, counted in `out`'s bytes.
    fn properties(&self, row: &Row, at: &[usize], out: &mut Fetched) -> Result<Vec<Value>> {
        let mut props = Vec::with_capacity(at.len());
        for &c in at {
            let v = decode(row, c).map_err(|e| unavailable(&self.name, e))?;
            out.bytes += value_bytes(&v);
            props.push(v);
        }
        Ok(props)
    }

    /// Node rows of `rows` (from a node statement of space `space`).
    fn node_rows(&self, space: u16, rows: &[Row], out: &mut Fetched) -> Result<Vec<i64>> {
        let columns = &self.node_columns[space as usize];
        let key_col = columns.key.expect("node statements have a key column");
        let mut keys = Vec::with_capacity(rows.len());
        for row in rows {
            let key = int_at(row, key_col, &self.name, "a node key")?;
            let props = self.properties(row, &columns.properties, out)?;
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
            let props = self.properties(row, &columns.properties, out)?;
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
