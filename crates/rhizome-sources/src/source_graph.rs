//! [`SourceGraph`]: a source seen as a [`RouteGraph`], with a prefetcher.
//!
//! **Hot path.** A* asks, per expanded node, for its relationships and the
//! coordinates of its neighbours ([`RouteGraph::expand_located`]). The
//! cache keeps for that a *located list* per node, list and weight
//! property ([`LocatedList`](crate::cache::LocatedList): neighbour and
//! relationship ids, the weight and the neighbour's coordinates per
//! relationship, in one allocation), so a search over a warm cache makes
//! one shared-lock lookup per expanded node and list and copies what it
//! finds, allocating nothing. The first search
//! that expands a node reads its adjacency list and its neighbours' rows
//! (fetching what is missing with the prefetcher) and derives the located
//! list from them; it expires with the oldest of those entries. Located
//! lists live in the source's [`RouteArena`] for the search's view,
//! indexed by node key (no lock, hash or reference count per lookup; see
//! [`crate::route_arena`]), or in the cache where the arena cannot take
//! them (keys out of its range, a full or expired arena).

use crate::cache::{AdjacencyList, CacheKey, CacheValue, LocatedRel};
use crate::fetch::{Fetched, ListRef, Round};
use crate::mapping::Prefetch;
use crate::query_graph::node_id;
use crate::route_arena::{RouteArena, View};
use crate::source::Source;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_routes::{ExpandSpec, RouteGraph, TypeDirection, WeightedBatch};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

mod ellipse;

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
    /// The located lists of this search's view (with coordinates only).
    arena: Option<(View, Arc<RouteArena>)>,
    /// When the statement started: the arena's lists are fresh if they
    /// were fresh then.
    started: Instant,
    /// The `ellipse` prefetcher's region of the current route.
    region: Mutex<Option<ellipse::RouteRegion>>,
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
            let rels: Vec<usize> = (0..mapping.relationships.len())
                .filter(|&r| {
                    spec.rel_type
                        .as_ref()
                        .is_none_or(|name| &mapping.relationships[r].rel_type == name)
                })
                .collect();
            if let (Some(name), true) = (&spec.rel_type, rels.is_empty()) {
                return Err(argument(format!(
                    "graph source `{}` maps no relationship type `{name}`",
                    mapping.name
                )));
            }
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
        let arena = coordinates.map(|coordinates| {
            let view = View {
                lists: lists.clone(),
                space,
                coordinates,
            };
            let arena = source.routes.of(&view);
            (view, arena)
        });
        Ok(SourceGraph {
            source,
            lists,
            space,
            coordinates,
            prefetch: mapping.prefetch,
            deadline: None,
            cancelled: None,
            arena,
            started: Instant::now(),
            region: Mutex::new(None),
        })
    }

    /// What the statements of the `ellipse` prefetcher's first region of
    /// this `shape` for a route from `start` to `end` cost the PostgreSQL
    /// server (`EXPLAIN (ANALYZE, BUFFERS)`, the median of `runs` after a
    /// warm-up; see [`crate::postgres::Postgres::explain_region`]): the
    /// node rows' statement, then one per followed list. `None` on Redis
    /// or where the search could not use a region.
    pub fn explain_region(
        &self,
        start: NodeId,
        end: NodeId,
        shape: crate::mapping::RegionShape,
        runs: usize,
    ) -> Result<Option<Vec<crate::postgres::ServerCost>>> {
        if self.coordinates.is_none() {
            return Ok(None);
        }
        let lists: Vec<_> = self.lists.iter().map(|(l, _)| *l).collect();
        self.source.explain_region(
            self.space,
            &lists,
            (key_of(start), key_of(end)),
            shape,
            runs,
        )
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

impl SourceGraph<'_> {
    /// Appends the relationships of `adjacency` (list `list` of node `key`,
    /// weighed by property `weight`) to `out`.
    fn push_list(
        &self,
        key: i64,
        list: ListRef,
        weight: Option<usize>,
        adjacency: &AdjacencyList,
        out: &mut WeightedBatch,
    ) -> Result<()> {
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
        Ok(())
    }

    /// The expansion of `nodes` from the cache alone, counting its hits;
    /// `false` (nothing counted, `out` partly filled) if a list is missing.
    fn expand_cached(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<bool> {
        out.clear();
        let mut lookups = 0;
        for &node in nodes {
            let key = key_of(node);
            for &(list, weight) in &self.lists {
                let k = Self::adjacency_key(list, key);
                match self.source.cache.peek(&k, &self.source.counters) {
                    Some((CacheValue::Adjacency(a), _)) => {
                        self.push_list(key, list, weight, &a, out)?
                    }
                    _ => return Ok(false),
                }
                lookups += 1;
            }
            out.end_node();
        }
        self.source.counters.lookups(lookups, 0);
        Ok(true)
    }

    /// The expansion of `nodes` from the route arena alone (what a region
    /// prefetched, or earlier searches derived), counting its hits;
    /// `false` (nothing counted, `out` partly filled) if a node has no
    /// fresh list there.
    fn expand_from_arena(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> bool {
        let Some((_, arena)) = &self.arena else {
            return false;
        };
        out.clear();
        for &node in nodes {
            match arena.get(key_of(node), self.started, &self.source.counters) {
                Ok(Some(rels)) => {
                    for r in rels {
                        out.push(r.neighbour, r.rel, r.weight);
                    }
                    out.end_node();
                }
                _ => return false,
            }
        }
        self.source
            .counters
            .lookups(nodes.len() as u64 * self.lists.len() as u64, 0);
        true
    }

    /// The located expansion of `nodes` from the cache alone, counting its
    /// hits; `false` (nothing counted, the outputs partly filled) if a
    /// located list is missing.
    fn expand_located_cached(
        &self,
        nodes: &[NodeId],
        out: &mut WeightedBatch,
        places: &mut Vec<Option<(f64, f64)>>,
    ) -> bool {
        out.clear();
        places.clear();
        let mut lookups = 0;
        for &node in nodes {
            let key = key_of(node);
            if let Some((view, arena)) = &self.arena {
                match arena.get(key, self.started, &self.source.counters) {
                    Ok(Some(rels)) => {
                        for r in rels {
                            out.push(r.neighbour, r.rel, r.weight);
                            places.push(r.place());
                        }
                        out.end_node();
                        lookups += self.lists.len() as u64;
                        continue;
                    }
                    Ok(None) => {}
                    Err(()) => {
                        // Expired: later statements start a new arena;
                        // this one reads the cache.
                        self.source.routes.renew(view, arena);
                    }
                }
            }
            for &(list, weight) in &self.lists {
                let k = located_key(list, weight, key);
                let Some((CacheValue::Located(l), _)) =
                    self.source.cache.peek(&k, &self.source.counters)
                else {
                    return false;
                };
                for r in l.iter() {
                    out.push(r.neighbour, r.rel, r.weight);
                    places.push(r.place());
                }
                lookups += 1;
            }
            out.end_node();
        }
        self.source.counters.lookups(lookups, 0);
        true
    }

    /// Derives and caches the located lists of `nodes` from their
    /// adjacency lists and their neighbours' rows, which the caller has
    /// just read (so they are in the cache, unless evicted since: then the
    /// list is simply not derived). Counts no lookups.
    fn remember_located(&self, nodes: &[NodeId]) {
        let Some((lat, lon)) = self.coordinates else {
            return;
        };
        let (cache, counters) = (&self.source.cache, &self.source.counters);
        let mut per_list: Vec<(CacheKey, Vec<LocatedRel>, Instant)> = Vec::new();
        for &node in nodes {
            let key = key_of(node);
            per_list.clear();
            for &(list, weight) in &self.lists {
                let Some((CacheValue::Adjacency(a), mut oldest)) =
                    cache.peek(&Self::adjacency_key(list, key), counters)
                else {
                    continue;
                };
                let mut located = Vec::with_capacity(a.neighbours.len());
                for i in 0..a.neighbours.len() {
                    let (Some(neighbour), Some(rel)) = (
                        node_id(self.space, a.neighbours[i]),
                        node_id(list.rel, a.rels[i]),
                    ) else {
                        break;
                    };
                    let row_key = CacheKey::Node {
                        space: self.space,
                        key: a.neighbours[i],
                    };
                    let Some((CacheValue::Node(row), made)) = cache.peek(&row_key, counters) else {
                        break;
                    };
                    oldest = oldest.min(made);
                    let (lat, lon) = row
                        .and_then(|r| Some((number(r.get(lat)?)?, number(r.get(lon)?)?)))
                        .unwrap_or((f64::NAN, f64::NAN));
                    let weight = weight
                        .and_then(|w| a.properties[i].get(w))
                        .and_then(number)
                        .unwrap_or(f64::NAN);
                    located.push(LocatedRel {
                        neighbour,
                        rel: rel as RelId,
                        weight,
                        lat,
                        lon,
                    });
                }
                if located.len() == a.neighbours.len() {
                    per_list.push((located_key(list, weight, key), located, oldest));
                }
            }
            // Every list derived: into the arena, as one slot per node.
            if let (Some((_, arena)), true) = (&self.arena, per_list.len() == self.lists.len()) {
                let oldest = per_list
                    .iter()
                    .map(|l| l.2)
                    .min()
                    .unwrap_or_else(Instant::now);
                let all: Vec<LocatedRel> =
                    per_list.iter().flat_map(|l| l.1.iter().copied()).collect();
                if arena.insert(key, oldest, all, false) {
                    continue;
                }
            }
            for (k, located, oldest) in per_list.drain(..) {
                cache.insert_derived(k, CacheValue::Located(Arc::from(located)), oldest, counters);
            }
        }
    }
}

fn located_key(list: ListRef, weight: Option<usize>, key: i64) -> CacheKey {
    CacheKey::Located {
        rel: list.rel,
        outgoing: list.outgoing,
        weight: weight.map_or(u16::MAX, |w| w as u16),
        key,
    }
}

impl RouteGraph for SourceGraph<'_> {
    fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
        if self.expand_from_arena(nodes, out) || self.expand_cached(nodes, out)? {
            return Ok(());
        }
        if self.extend_region(nodes)? && self.expand_from_arena(nodes, out) {
            return Ok(());
        }
        out.clear();
        let keys: Vec<i64> = nodes.iter().map(|&n| key_of(n)).collect();
        let lists = self.lists_of(&keys)?;
        for &key in &keys {
            for &(list, weight) in &self.lists {
                if let Some(adjacency) = lists.get(&Self::adjacency_key(list, key)) {
                    self.push_list(key, list, weight, adjacency, out)?;
                }
            }
            out.end_node();
        }
        Ok(())
    }

    fn expand_located(
        &self,
        nodes: &[NodeId],
        out: &mut WeightedBatch,
        places: &mut Vec<Option<(f64, f64)>>,
    ) -> Result<()> {
        if self.coordinates.is_some() && self.expand_located_cached(nodes, out, places) {
            return Ok(());
        }
        if self.extend_region(nodes)? && self.expand_located_cached(nodes, out, places) {
            return Ok(());
        }
        self.expand(nodes, out)?;
        places.clear();
        self.coordinates(&out.neighbours, places)?;
        self.remember_located(nodes);
        Ok(())
    }

    fn coordinates(&self, nodes: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
        let Some((lat, lon)) = self.coordinates else {
            out.extend(nodes.iter().map(|_| None));
            return Ok(());
        };
        let place = |row: Option<NodeRow>| {
            row.and_then(|r| Some((number(r.get(lat)?)?, number(r.get(lon)?)?)))
        };
        // From the cache alone if it holds every row, else as a batch.
        let start = out.len();
        for &node in nodes {
            let k = CacheKey::Node {
                space: self.space,
                key: key_of(node),
            };
            match self.source.cache.peek(&k, &self.source.counters) {
                Some((CacheValue::Node(row), _)) => out.push(place(row)),
                _ => break,
            }
        }
        if out.len() - start == nodes.len() {
            self.source.counters.lookups(nodes.len() as u64, 0);
            return Ok(());
        }
        out.truncate(start);
        let keys: Vec<i64> = nodes.iter().map(|&n| key_of(n)).collect();
        for (_, row) in self.node_rows(&keys)? {
            out.push(place(row));
        }
        Ok(())
    }

    fn prepare_route(&self, start: NodeId, end: NodeId) -> Result<()> {
        match self.prefetch {
            Prefetch::Ellipse(shape) => self.prepare_region(start, end, shape),
            _ => Ok(()),
        }
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
