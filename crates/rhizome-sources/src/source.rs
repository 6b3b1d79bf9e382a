//! A connected source: the backend, its runtime, the shared cache and the
//! counters; and [`SourceGraph`], the source seen as a [`RouteGraph`] with a
//! prefetcher.

use crate::cache::{AdjacencyList, Cache, CacheKey, CacheValue};
use crate::counters::{CounterSnapshot, Counters};
use crate::fetch::{Fetched, ListRef, Round};
use crate::mapping::{Backend, Mapping, Prefetch};
use crate::postgres::Postgres;
use crate::query_graph::node_id;
use crate::redis_backend::Redis;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_routes::{ExpandSpec, RouteGraph, TypeDirection, WeightedBatch};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

enum Connection {
    Postgres(Postgres),
    Redis(Redis),
}

/// A graph that lives in PostgreSQL or Redis.
///
/// Every method may be called from any thread; requests run on the
/// source's own I/O runtime (two threads), so callers block only for their
/// own requests. Several requests from several queries are in flight at
/// once over the pool.
pub struct Source {
    mapping: Mapping,
    connection: Connection,
    /// Always `Some` until dropped (see the `Drop` impl).
    runtime: Option<tokio::runtime::Runtime>,
    pub(crate) cache: Cache,
    pub(crate) counters: Counters,
    /// Names, indexes and statistics the planner sees (made on first use).
    schema: std::sync::OnceLock<Arc<crate::query_graph::SourceSchema>>,
}

impl Drop for Source {
    /// A source dropped on a thread of another tokio runtime (a server's
    /// registry going away as the server stops) must not wait for its own
    /// runtime's threads there: they are told to stop and left to end.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                runtime.shutdown_background();
            }
        }
    }
}

impl Source {
    /// Connects to the backend the mapping names and checks the mapping
    /// against it (a template the backend rejects, a missing column or a
    /// wrong column type fails here, naming the mapping key).
    pub fn connect(mapping: Mapping) -> Result<Arc<Source>> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rhizome-source-io")
            .enable_all()
            .build()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Internal,
                    format!("cannot start the source runtime: {e}"),
                )
            })?;
        let timeout = mapping.request_timeout;
        let name = mapping.name.clone();
        let connection = runtime.block_on(async {
            let connecting = async {
                Ok::<_, Error>(match mapping.backend {
                    Backend::Postgres => Connection::Postgres(Postgres::connect(&mapping).await?),
                    Backend::Redis => Connection::Redis(Redis::connect(&mapping).await?),
                })
            };
            match tokio::time::timeout(timeout, connecting).await {
                Ok(result) => result,
                Err(_) => Err(crate::fetch::unavailable(
                    &name,
                    format!(
                        "no answer within {} ms while connecting",
                        timeout.as_millis()
                    ),
                )),
            }
        })?;
        Ok(Arc::new(Source {
            cache: Cache::new(mapping.cache.max_entries, mapping.cache.ttl),
            mapping,
            connection,
            runtime: Some(runtime),
            counters: Counters::default(),
            schema: std::sync::OnceLock::new(),
        }))
    }

    /// The mapping.
    pub fn mapping(&self) -> &Mapping {
        &self.mapping
    }

    /// The counters so far.
    pub fn counters(&self) -> CounterSnapshot {
        self.counters.snapshot()
    }

    /// Empties the cache (for cold measurements, or after the backend changed).
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    /// "graph source `NAME` (PostgreSQL)": for `EXPLAIN` and errors.
    pub fn describe(&self) -> String {
        let backend = match self.mapping.backend {
            Backend::Postgres => "PostgreSQL",
            Backend::Redis => "Redis",
        };
        format!("graph source `{}` ({backend})", self.mapping.name)
    }

    /// A snapshot over this source for one query: the planner and runtime
    /// read it like native storage (see [`crate::query_graph`]). `empty` is a
    /// snapshot of an empty native database; `deadline` bounds every
    /// round trip. Returns the query's graph too, whose
    /// [`QueryGraph::finish`](crate::QueryGraph::finish) gives the error a
    /// read met.
    pub fn snapshot(
        self: &Arc<Source>,
        empty: &rhizome_storage::Snapshot,
        deadline: Option<Instant>,
    ) -> (rhizome_storage::Snapshot, Arc<crate::QueryGraph>) {
        let schema = self
            .schema
            .get_or_init(|| Arc::new(crate::query_graph::SourceSchema::new(self)))
            .clone();
        let graph = Arc::new(crate::QueryGraph::new(
            self.clone(),
            schema.clone(),
            deadline,
        ));
        let snapshot = rhizome_storage::Snapshot::over_external(
            empty,
            schema.catalog.clone(),
            schema.indexes.clone(),
            graph.clone(),
        );
        (snapshot, graph)
    }

    /// Every key of node space `space` (one round trip), for a label scan;
    /// fails if the mapping names no `keys` for it.
    pub fn keys(&self, space: u16, deadline: Option<Instant>) -> Result<Vec<i64>> {
        let node = &self.mapping.nodes[space as usize];
        let Some(keys) = &node.keys else {
            return Err(Error::new(
                ErrorKind::SemanticError,
                format!(
                    "graph source `{}` cannot scan label `{}`: the mapping names no `nodes.{}.keys` \
                     (a query listing every key, or for Redis a sorted set of them); \
                     look nodes up by their key (`{{{}: ...}}`) instead",
                    self.mapping.name, node.label, node.label, node.key
                ),
            ));
        };
        let at = format!("nodes.{}.keys", node.label);
        let found = match &self.connection {
            Connection::Postgres(pg) => self.wait(deadline, 1, pg.keys(keys, &at))?,
            Connection::Redis(r) => self.wait(deadline, 1, r.keys(keys))?,
        };
        self.counters
            .received(found.len() as u64, 8 * found.len() as u64);
        Ok(found)
    }

    /// Entries in the cache.
    pub fn cached_entries(&self) -> usize {
        self.cache.len()
    }

    /// Runs `request` (one round trip) on the I/O runtime, waiting at most
    /// until `deadline` and the mapping's request timeout.
    fn wait<T>(
        &self,
        deadline: Option<Instant>,
        requests: u64,
        request: impl Future<Output = Result<T>> + Send,
    ) -> Result<T>
    where
        T: Send,
    {
        let mut limit = self.mapping.request_timeout;
        if let Some(deadline) = deadline {
            limit = limit.min(deadline.saturating_duration_since(Instant::now()));
        }
        let started = Instant::now();
        let result = self.block_on(async { tokio::time::timeout(limit, request).await });
        let waited = started.elapsed();
        match result {
            Ok(Ok(value)) => {
                self.counters.round_trip(requests, waited);
                Ok(value)
            }
            Ok(Err(e)) => Err(e),
            Err(_) if deadline.is_some_and(|d| Instant::now() >= d) => Err(Error::new(
                ErrorKind::QueryAborted,
                format!(
                    "the query exceeded its timeout while waiting for graph source `{}`",
                    self.mapping.name
                ),
            )),
            Err(_) => Err(crate::fetch::unavailable(
                &self.mapping.name,
                format!("no answer within {} ms", limit.as_millis()),
            )),
        }
    }

    /// Runs `future` on the I/O runtime and waits for it, from any thread:
    /// a plain thread (the engine's workers) waits directly; a thread of
    /// another tokio runtime (a server rendering a result's entities on
    /// its connection task) must not block it unannounced, so a worker of
    /// a multi-threaded runtime hands its tasks on first
    /// (`block_in_place`) and any other runtime thread waits on a scoped
    /// thread of its own.
    fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let runtime = self
            .runtime
            .as_ref()
            .expect("a source's runtime lives as long as the source");
        match Handle::try_current().map(|h| h.runtime_flavor()) {
            Err(_) => runtime.block_on(future),
            Ok(RuntimeFlavor::MultiThread) => {
                tokio::task::block_in_place(|| runtime.block_on(future))
            }
            Ok(_) => std::thread::scope(|scope| {
                scope
                    .spawn(|| runtime.block_on(future))
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }),
        }
    }

    /// One round: node rows and adjacency lists, one round trip.
    pub fn fetch_round(&self, round: &Round, deadline: Option<Instant>) -> Result<Fetched> {
        let fetched = match &self.connection {
            Connection::Postgres(pg) => self.wait(deadline, round.requests(), pg.round(round))?,
            Connection::Redis(r) => self.wait(deadline, round.requests(), r.round(round))?,
        };
        self.counters.received(fetched.rows, fetched.bytes);
        Ok(fetched)
    }

    fn fetch_lookahead(
        &self,
        list: ListRef,
        keys: &[i64],
        depth: u32,
        deadline: Option<Instant>,
    ) -> Result<Fetched> {
        let fetched = match &self.connection {
            Connection::Postgres(pg) => self.wait(deadline, 2, pg.lookahead(list, keys, depth))?,
            Connection::Redis(r) => self.wait(deadline, 1, r.lookahead(list, keys, depth))?,
        };
        self.counters.received(fetched.rows, fetched.bytes);
        Ok(fetched)
    }

    fn fetch_box(
        &self,
        space: u16,
        lat: (f64, f64),
        lon: (f64, f64),
        deadline: Option<Instant>,
    ) -> Result<Fetched> {
        let fetched = match &self.connection {
            Connection::Postgres(pg) => self.wait(deadline, 1, pg.in_box(space, lat, lon))?,
            Connection::Redis(_) => Fetched::default(),
        };
        self.counters.received(fetched.rows, fetched.bytes);
        Ok(fetched)
    }

    /// Puts fetched entries into the cache; `requested` entries are not
    /// counted as prefetched.
    pub(crate) fn remember(&self, fetched: &Fetched, requested: &dyn Fn(&CacheKey) -> bool) {
        for (space, key, values) in &fetched.nodes {
            let k = CacheKey::Node {
                space: *space,
                key: *key,
            };
            let v = CacheValue::Node(values.clone().map(Arc::new));
            self.cache.insert(k, v, !requested(&k), &self.counters);
        }
        for (list, key, adjacency) in &fetched.adjacency {
            let k = CacheKey::Adjacency {
                rel: list.rel,
                outgoing: list.outgoing,
                key: *key,
            };
            let v = CacheValue::Adjacency(Arc::new(adjacency.clone()));
            self.cache.insert(k, v, !requested(&k), &self.counters);
        }
    }
}

/// Which relationships a route search follows over a source, and how.
pub struct SourceGraph<'a> {
    source: &'a Source,
    /// Followed lists and the index of the weight property in each.
    lists: Vec<(ListRef, Option<usize>)>,
    /// Node space of the nodes (index into the mapping).
    space: u16,
    /// Indexes of (lat, lon) in the node space's properties.
    coordinates: Option<(usize, usize)>,
    prefetch: Prefetch,
    deadline: Option<Instant>,
    cancelled: Option<&'a (dyn Fn() -> Result<()> + 'a)>,
}

fn argument(message: String) -> Error {
    Error::new(ErrorKind::ArgumentError, message)
}

impl<'a> SourceGraph<'a> {
    /// Follows `specs` over `source`, weighing relationships by property
    /// `weight`; A* reads the node space's mapped coordinates. Types the
    /// mapping lacks, or directions it has no template for, are errors
    /// (unlike native storage, where they are just empty).
    pub fn new(source: &'a Source, specs: &[ExpandSpec], weight: &str) -> Result<SourceGraph<'a>> {
        let mapping = source.mapping();
        let mut lists = Vec::new();
        let mut space: Option<u16> = None;
        for spec in specs {
            let rels: Vec<usize> = match &spec.rel_type {
                Some(name) => vec![mapping
                    .relationships
                    .iter()
                    .position(|r| &r.rel_type == name)
                    .ok_or_else(|| {
                        argument(format!(
                            "graph source `{}` maps no relationship type `{name}`",
                            mapping.name
                        ))
                    })?],
                None => (0..mapping.relationships.len()).collect(),
            };
            for r in rels {
                let rel = &mapping.relationships[r];
                let directions: &[bool] = match spec.direction {
                    TypeDirection::Outgoing => &[true],
                    TypeDirection::Incoming => &[false],
                    TypeDirection::Both => &[true, false],
                };
                for &outgoing in directions {
                    let present = if outgoing {
                        rel.outgoing.is_some()
                    } else {
                        rel.incoming.is_some()
                    };
                    if !present {
                        return Err(argument(format!(
                            "graph source `{}`: relationships.{} has no `{}` template, so it cannot be followed {}",
                            mapping.name,
                            rel.rel_type,
                            if outgoing { "outgoing" } else { "incoming" },
                            if outgoing { "forwards" } else { "backwards" }
                        )));
                    }
                    let label = if outgoing { &rel.from } else { &rel.to };
                    let s = mapping
                        .nodes
                        .iter()
                        .position(|n| &n.label == label)
                        .expect("validated") as u16;
                    if space.is_some_and(|sp| sp != s) {
                        return Err(argument("route searches over a source follow relationships between the nodes of one label".into()));
                    }
                    space = Some(s);
                    let list = ListRef {
                        rel: r as u16,
                        outgoing,
                    };
                    if !lists.iter().any(|(l, _)| *l == list) {
                        lists.push((list, rel.property_index(weight)));
                    }
                }
            }
        }
        let space = space.unwrap_or(0);
        let node_space = &mapping.nodes[space as usize];
        let coordinates = node_space.coordinates.as_ref().and_then(|(lat, lon)| {
            Some((
                node_space.property_index(lat)?,
                node_space.property_index(lon)?,
            ))
        });
        Ok(SourceGraph {
            source,
            lists,
            space,
            coordinates,
            prefetch: mapping.prefetch,
            deadline: None,
            cancelled: None,
        })
    }

    /// Uses `prefetch` instead of the mapping's default.
    pub fn with_prefetch(mut self, prefetch: Prefetch) -> SourceGraph<'a> {
        self.prefetch = prefetch;
        self
    }

    /// Fails requests that would end after `deadline` (the query's timeout).
    pub fn with_deadline(mut self, deadline: Option<Instant>) -> SourceGraph<'a> {
        self.deadline = deadline;
        self
    }

    /// Asks `check` every few hundred settled nodes whether to stop.
    pub fn with_cancel(mut self, check: &'a (dyn Fn() -> Result<()> + 'a)) -> SourceGraph<'a> {
        self.cancelled = Some(check);
        self
    }

    fn adjacency_key(list: ListRef, key: i64) -> CacheKey {
        CacheKey::Adjacency {
            rel: list.rel,
            outgoing: list.outgoing,
            key,
        }
    }

    /// The adjacency lists of `keys` for every followed list, fetching the
    /// missing ones (with the prefetcher) in as few round trips as it can.
    fn lists_of(&self, keys: &[i64]) -> Result<HashMap<CacheKey, Arc<AdjacencyList>>> {
        let mut found = HashMap::new();
        let mut missing: Vec<i64> = Vec::new();
        for &key in keys {
            for &(list, _) in &self.lists {
                let k = Self::adjacency_key(list, key);
                match self.source.cache.get(&k, &self.source.counters) {
                    Some(CacheValue::Adjacency(a)) => {
                        found.insert(k, a);
                    }
                    _ => {
                        if !missing.contains(&key) {
                            missing.push(key);
                        }
                    }
                }
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        let wanted: std::collections::HashSet<CacheKey> = missing
            .iter()
            .flat_map(|&k| {
                self.lists
                    .iter()
                    .map(move |&(l, _)| Self::adjacency_key(l, k))
            })
            .collect();
        let fetched = self.fetch_missing(&missing)?;
        self.source.remember(&fetched, &|k| wanted.contains(k));
        for (list, key, adjacency) in fetched.adjacency {
            let k = Self::adjacency_key(list, key);
            if wanted.contains(&k) {
                found.insert(k, Arc::new(adjacency));
            }
        }
        // A list the prefetcher did not bring (it cannot happen with the
        // strategies here, but a backend may drop keys): fetch it plainly.
        let still: Vec<i64> = missing
            .iter()
            .copied()
            .filter(|&k| {
                self.lists
                    .iter()
                    .any(|&(l, _)| !found.contains_key(&Self::adjacency_key(l, k)))
            })
            .collect();
        if !still.is_empty() {
            let round = Round {
                nodes: Vec::new(),
                adjacency: self
                    .lists
                    .iter()
                    .map(|&(l, _)| (l, still.clone()))
                    .collect(),
            };
            let fetched = self.source.fetch_round(&round, self.deadline)?;
            self.source.remember(&fetched, &|_| true);
            for (list, key, adjacency) in fetched.adjacency {
                found.insert(Self::adjacency_key(list, key), Arc::new(adjacency));
            }
        }
        Ok(found)
    }

    /// Fetches the lists of `missing` with the prefetcher in use.
    fn fetch_missing(&self, missing: &[i64]) -> Result<Fetched> {
        let plain = || Round {
            nodes: Vec::new(),
            adjacency: self
                .lists
                .iter()
                .map(|&(l, _)| (l, missing.to_vec()))
                .collect(),
        };
        match self.prefetch {
            Prefetch::Lookahead(depth) if self.lists.len() == 1 && self.space == 0 => self
                .source
                .fetch_lookahead(self.lists[0].0, missing, depth, self.deadline),
            Prefetch::KeyBlock(size) => {
                let size = size as i64;
                let mut keys: Vec<i64> = Vec::new();
                for &m in missing {
                    let start = m.div_euclid(size) * size;
                    keys.extend(start..start + size);
                }
                keys.sort_unstable();
                keys.dedup();
                let round = Round {
                    nodes: vec![(self.space, keys.clone())],
                    adjacency: self.lists.iter().map(|&(l, _)| (l, keys.clone())).collect(),
                };
                self.source.fetch_round(&round, self.deadline)
            }
            Prefetch::BoxBlock(half) if self.coordinates.is_some() => {
                let places = self.node_rows(missing)?;
                let (lat_i, lon_i) = self.coordinates.expect("checked");
                let mut keys: Vec<i64> = missing.to_vec();
                let mut all = Fetched::default();
                for (_, row) in places {
                    let Some(row) = row else { continue };
                    let (Some(lat), Some(lon)) = (number(&row[lat_i]), number(&row[lon_i])) else {
                        continue;
                    };
                    let boxed = self.source.fetch_box(
                        self.space,
                        (lat - half, lat + half),
                        (lon - half, lon + half),
                        self.deadline,
                    )?;
                    keys.extend(boxed.nodes.iter().map(|n| n.1));
                    all.nodes.extend(boxed.nodes);
                }
                keys.sort_unstable();
                keys.dedup();
                let round = Round {
                    nodes: Vec::new(),
                    adjacency: self.lists.iter().map(|&(l, _)| (l, keys.clone())).collect(),
                };
                let mut fetched = self.source.fetch_round(&round, self.deadline)?;
                fetched.nodes.extend(all.nodes);
                Ok(fetched)
            }
            _ => self.source.fetch_round(&plain(), self.deadline),
        }
    }

    /// Node rows of `keys` (from the cache, else one round trip).
    fn node_rows(&self, keys: &[i64]) -> Result<Vec<(i64, Option<NodeRow>)>> {
        let mut out = Vec::with_capacity(keys.len());
        let mut missing = Vec::new();
        for &key in keys {
            let k = CacheKey::Node {
                space: self.space,
                key,
            };
            match self.source.cache.get(&k, &self.source.counters) {
                Some(CacheValue::Node(row)) => out.push((key, row)),
                _ => {
                    out.push((key, None));
                    missing.push(key);
                }
            }
        }
        if missing.is_empty() {
            return Ok(out);
        }
        missing.sort_unstable();
        missing.dedup();
        let round = Round {
            nodes: vec![(self.space, missing)],
            adjacency: Vec::new(),
        };
        let fetched = self.source.fetch_round(&round, self.deadline)?;
        self.source.remember(&fetched, &|_| true);
        let rows: HashMap<i64, Option<Vec<Value>>> =
            fetched.nodes.into_iter().map(|(_, k, v)| (k, v)).collect();
        for (key, row) in out.iter_mut() {
            if row.is_none() {
                if let Some(Some(values)) = rows.get(key) {
                    *row = Some(Arc::new(values.clone()));
                }
            }
        }
        Ok(out)
    }
}

/// A node's properties in the mapping's order, shared with the cache.
type NodeRow = Arc<Vec<Value>>;

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Float(x) if x.is_finite() => Some(*x),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// The key of a node id (see [`crate::query_graph`] for the id layout).
fn key_of(node: NodeId) -> i64 {
    crate::query_graph::split_id(node).1
}

impl RouteGraph for SourceGraph<'_> {
    fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
        out.clear();
        let keys: Vec<i64> = nodes.iter().map(|&n| key_of(n)).collect();
        let lists = self.lists_of(&keys)?;
        for &key in &keys {
            for &(list, weight) in &self.lists {
                if let Some(adjacency) = lists.get(&Self::adjacency_key(list, key)) {
                    for i in 0..adjacency.neighbours.len() {
                        let w = weight
                            .and_then(|w| adjacency.properties[i].get(w))
                            .and_then(number)
                            .unwrap_or(f64::NAN);
                        let (Some(n), Some(r)) = (
                            node_id(self.space, adjacency.neighbours[i]),
                            node_id(list.rel, adjacency.rels[i]),
                        ) else {
                            return Err(crate::fetch::bad_data(
                                &self.source.mapping().name,
                                format!(
                                    "node {key}: neighbour {} or relationship key {} is negative or above 2^48",
                                    adjacency.neighbours[i], adjacency.rels[i]
                                ),
                            ));
                        };
                        out.push(n, r as RelId, w);
                    }
                }
            }
            out.end_node();
        }
        Ok(())
    }

    fn coordinates(&self, nodes: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
        let Some((lat, lon)) = self.coordinates else {
            out.extend(nodes.iter().map(|_| None));
            return Ok(());
        };
        let keys: Vec<i64> = nodes.iter().map(|&n| key_of(n)).collect();
        for (_, row) in self.node_rows(&keys)? {
            out.push(row.and_then(|r| Some((number(r.get(lat)?)?, number(r.get(lon)?)?))));
        }
        Ok(())
    }

    fn check_cancelled(&self) -> Result<()> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Error::new(
                ErrorKind::QueryAborted,
                "the query exceeded its timeout and was stopped",
            ));
        }
        self.cancelled.map_or(Ok(()), |check| check())
    }

    fn describe_rel(&self, rel: RelId) -> String {
        let names: Vec<&str> = self
            .lists
            .iter()
            .map(|(l, _)| {
                self.source.mapping().relationships[l.rel as usize]
                    .rel_type
                    .as_str()
            })
            .collect();
        format!(
            "relationship {} {} of source `{}`",
            names.join("|"),
            key_of(rel),
            self.source.mapping().name
        )
    }

    fn describe_node(&self, node: NodeId) -> String {
        let space = &self.source.mapping().nodes[self.space as usize];
        format!(
            "node :{} {{{}: {}}} of source `{}`",
            space.label,
            space.key,
            key_of(node),
            self.source.mapping().name
        )
    }
}
