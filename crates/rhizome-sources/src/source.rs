//! A connected source: the backend, its runtime, the shared cache and the
//! counters. [`SourceGraph`], the source seen as a route search's graph,
//! is in [`crate::source_graph`].

use crate::cache::{Cache, CacheKey, CacheValue};
use crate::counters::{CounterSnapshot, Counters};
use crate::fetch::{Fetched, ListRef, Round};
use crate::mapping::{Backend, Mapping};
use crate::postgres::Postgres;
use crate::redis_backend::Redis;
use rhizome_common::{Error, ErrorKind, Result};
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
    /// Located lists of route searches, per view (see [`crate::route_arena`]).
    pub(crate) routes: crate::route_arena::RouteArenas,
    /// Keys of relationships without a key column (see [`crate::row_keys`]).
    row_keys: crate::row_keys::RowKeys,
    /// Names, indexes and statistics the planner sees (made on first use).
    schema: std::sync::OnceLock<Arc<crate::query_graph::SourceSchema>>,
    /// Keys per node space, counted when the source connected (`None`
    /// without `keys`, or if the backend did not answer).
    node_counts: Vec<Option<u64>>,
    /// Relationships per relationship space, counted when the source
    /// connected over the keys of its start (else end) space (`None`
    /// without such `keys`, or if the backend did not answer).
    rel_counts: Vec<Option<u64>>,
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
        // Planner statistics: the size of each node space's key set, once
        // (not on the counters: statements did not ask for it).
        let node_counts = runtime.block_on(async {
            let mut counts = Vec::with_capacity(mapping.nodes.len());
            for node in &mapping.nodes {
                let Some(keys) = &node.keys else {
                    counts.push(None);
                    continue;
                };
                let counting = async {
                    match &connection {
                        Connection::Postgres(pg) => pg.count_keys(keys).await,
                        Connection::Redis(r) => r.count_keys(keys).await,
                    }
                };
                counts.push(match tokio::time::timeout(timeout, counting).await {
                    Ok(Ok(n)) => Some(n),
                    _ => None,
                });
            }
            counts
        });
        let rel_counts = runtime.block_on(async {
            let mut counts = Vec::with_capacity(mapping.relationships.len());
            for (r, rel) in mapping.relationships.iter().enumerate() {
                let keys_of = |label: &str| {
                    mapping
                        .nodes
                        .iter()
                        .find(|n| n.label == label)
                        .and_then(|n| n.keys.as_deref())
                };
                // Outgoing lists over the start space's keys, else
                // incoming ones over the end space's.
                let side = match (&rel.outgoing, &rel.incoming) {
                    (Some(out), _) if keys_of(&rel.from).is_some() => {
                        keys_of(&rel.from).map(|k| (true, out, k))
                    }
                    (_, Some(inc)) => keys_of(&rel.to).map(|k| (false, inc, k)),
                    _ => None,
                };
                let Some((outgoing, fetch, keys)) = side else {
                    counts.push(None);
                    continue;
                };
                let list = ListRef {
                    rel: r as u16,
                    outgoing,
                };
                let counting = async {
                    match &connection {
                        Connection::Postgres(pg) => {
                            pg.count_relationships(&fetch.template, keys).await
                        }
                        Connection::Redis(redis) => redis.count_relationships(list, keys).await,
                    }
                };
                counts.push(match tokio::time::timeout(timeout, counting).await {
                    Ok(Ok(n)) => Some(n),
                    _ => None,
                });
            }
            counts
        });
        Ok(Arc::new(Source {
            node_counts,
            rel_counts,
            cache: Cache::new(mapping.cache.max_entries, mapping.cache.ttl),
            routes: crate::route_arena::RouteArenas::new(
                mapping.cache.max_entries,
                mapping.cache.ttl,
            ),
            mapping,
            connection,
            runtime: Some(runtime),
            counters: Counters::default(),
            row_keys: Default::default(),
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
        self.routes.clear();
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
            .get_or_init(|| {
                Arc::new(crate::query_graph::SourceSchema::new(
                    &self.mapping,
                    &self.node_counts,
                    &self.rel_counts,
                ))
            })
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

    /// Entries in the cache, counting each located list a route search
    /// keeps in its arena as one.
    pub fn cached_entries(&self) -> usize {
        self.cache.len() + self.routes.len()
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
        self.number_rows(fetched)
    }

    pub(crate) fn fetch_lookahead(
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
        self.number_rows(fetched)
    }

    pub(crate) fn fetch_box(
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
        self.number_rows(fetched)
    }

    /// The `ellipse` prefetcher's region (see [`crate::region`]) in one
    /// round trip; `None` (no round trip) if the backend or the node
    /// space cannot answer it (Redis; no `in_box` or coordinates).
    pub(crate) fn fetch_region(
        &self,
        space: u16,
        lists: &[ListRef],
        query: &crate::region::RegionQuery,
        deadline: Option<Instant>,
    ) -> Result<Option<crate::region::RegionRows>> {
        let Connection::Postgres(pg) = &self.connection else {
            return Ok(None);
        };
        let requests = 1 + lists.len() as u64;
        let fetched = self.wait(
            deadline,
            requests,
            pg.region(space, lists, crate::region::RegionAsk::Band(query)),
        )?;
        if let Some(region) = &fetched {
            self.counters.received(region.rows(), region.bytes());
        }
        Ok(fetched)
    }

    /// What the statements of a route's first region cost the server
    /// (see [`crate::postgres::Postgres::explain_region`]); `None` on
    /// Redis or where a region cannot be asked. Diagnostics for
    /// `rhizome bench roads`: not counted as round trips.
    pub(crate) fn explain_region(
        &self,
        space: u16,
        lists: &[ListRef],
        ends: (i64, i64),
        shape: crate::mapping::RegionShape,
        runs: usize,
    ) -> Result<Option<Vec<crate::postgres::ServerCost>>> {
        let Connection::Postgres(pg) = &self.connection else {
            return Ok(None);
        };
        self.block_on(pg.explain_region(space, lists, ends, shape, runs))
    }

    /// A route's first region from its ends' keys (see
    /// [`crate::region::RegionAsk::Ends`]) together with the ends' own
    /// rows, all in one round trip; `None` (no round trip) if the backend
    /// or the node space cannot answer a region.
    pub(crate) fn fetch_region_from_ends(
        &self,
        space: u16,
        lists: &[ListRef],
        ends: (i64, i64),
        shape: crate::mapping::RegionShape,
        deadline: Option<Instant>,
    ) -> Result<Option<(Fetched, crate::region::RegionRows)>> {
        let Connection::Postgres(pg) = &self.connection else {
            return Ok(None);
        };
        let round = Round {
            nodes: vec![(space, vec![ends.0, ends.1])],
            adjacency: Vec::new(),
        };
        let ask = crate::region::RegionAsk::Ends {
            a: ends.0,
            b: ends.1,
            shape,
        };
        let requests = 2 + lists.len() as u64;
        let (rows, region) = self.wait(
            deadline,
            requests,
            futures_util::future::try_join(pg.round(&round), pg.region(space, lists, ask)),
        )?;
        self.counters.received(rows.rows, rows.bytes);
        let Some(region) = region else {
            return Ok(None);
        };
        self.counters.received(region.rows(), region.bytes());
        Ok(Some((rows, region)))
    }

    /// Gives relationships without a key column their row-number keys
    /// (see [`crate::row_keys`]).
    fn number_rows(&self, mut fetched: Fetched) -> Result<Fetched> {
        let relationships = &self.mapping.relationships;
        self.row_keys.number(
            &self.mapping.name,
            &|rel| relationships[rel as usize].key.is_none(),
            &mut fetched.adjacency,
        )?;
        Ok(fetched)
    }

    /// Relationships given row-number keys so far (see [`crate::row_keys`]).
    pub fn row_keys(&self) -> usize {
        self.row_keys.len()
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

pub use crate::source_graph::SourceGraph;
