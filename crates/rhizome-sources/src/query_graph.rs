//! A source as one Cypher query reads it: [`QueryGraph`], the
//! [`ExternalGraph`] behind a [`Snapshot`] over a source (see
//! [`Source::snapshot`]).
//!
//! **Ids.** A node's id is its node space (label) index in the top 16 bits
//! and its key in the low 48 (`(space << 48) | key`), so over a mapping
//! with one node space the node ids are the keys themselves. A
//! relationship's id is built the same way from its type index and its
//! relationship key. Keys must lie in `0 .. 2^48`; a negative or larger
//! key is a `SourceDataError`.
//!
//! **Reads.** What the query reads is pinned for the query's lifetime (node
//! rows and adjacency lists in the query's own maps, looked up in the
//! source's shared cache once per query), so borrowed neighbour slices stay
//! valid while operators hold them. Operators announce the nodes of a
//! chunk ([`ExternalGraph::prefetch_nodes`],
//! [`ExternalGraph::prefetch_adjacency`]) and what the cache lacks comes in
//! one round trip; a read nobody announced fetches on its own.
//!
//! **Errors.** The read interface is infallible, so a failed fetch is
//! recorded, reads answer as if the data were absent, and
//! [`QueryGraph::finish`] returns the first error: the query fails with it.

use crate::cache::{AdjacencyList, CacheKey, CacheValue};
use crate::fetch::{bad_data, ListRef, Round};
use crate::source::Source;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_storage::catalog::{LabelId, PropertyKeyId, RelTypeId};
use rhizome_storage::stats::{DegreeStats, RelTypeStats, TripleCount};
use rhizome_storage::{Catalog, Direction, ExternalGraph, IndexDef, RelInfo, Statistics};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

/// Bits of an id that hold the key.
const KEY_BITS: u32 = 48;
const KEY_MASK: u64 = (1 << KEY_BITS) - 1;

/// The node id of `key` in node space `space`, if the key fits.
pub fn node_id(space: u16, key: i64) -> Option<NodeId> {
    (0..=KEY_MASK as i64)
        .contains(&key)
        .then_some(((space as u64) << KEY_BITS) | key as u64)
}

/// (space, key) of a node id.
pub fn split_id(id: u64) -> (u16, i64) {
    ((id >> KEY_BITS) as u16, (id & KEY_MASK) as i64)
}

/// Names, indexes and statistics of a source: what the planner sees.
pub(crate) struct SourceSchema {
    pub(crate) catalog: Catalog,
    pub(crate) indexes: Vec<IndexDef>,
    statistics: Statistics,
    /// Per node space: property key id -> index in the space's properties.
    node_props: Vec<HashMap<PropertyKeyId, usize>>,
    /// Per node space: (key id, index) sorted by key id.
    node_order: Vec<Vec<(PropertyKeyId, usize)>>,
    /// Per relationship type: property key id -> index.
    rel_props: Vec<HashMap<PropertyKeyId, usize>>,
    /// Per relationship type: (key id, index) sorted by key id.
    rel_order: Vec<Vec<(PropertyKeyId, usize)>>,
    /// Per relationship type: (from space, to space).
    rel_spaces: Vec<(u16, u16)>,
    /// Per node space: the one-label slice of its nodes.
    labels: Vec<[LabelId; 1]>,
}

/// Planner estimates for a source: the backend keeps no counts the
/// mapping could name, so every label counts as a large table and every
/// type as two relationships per node (the planner then prefers key
/// lookups and expansions from bound nodes to scans).
const ESTIMATED_NODES: u64 = 1_000_000;

impl SourceSchema {
    pub(crate) fn new(source: &Source) -> SourceSchema {
        let mapping = source.mapping();
        let mut catalog = Catalog::default();
        for space in &mapping.nodes {
            catalog.labels.intern(&space.label);
        }
        for rel in &mapping.relationships {
            catalog.rel_types.intern(&rel.rel_type);
        }
        let mut order = |props: &[(String, crate::mapping::PropertyType)]| {
            let mut v: Vec<(PropertyKeyId, usize)> = props
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (catalog.property_keys.intern(name), i))
                .collect();
            v.sort_unstable();
            v
        };
        let node_order: Vec<_> = mapping.nodes.iter().map(|s| order(&s.properties)).collect();
        let rel_order: Vec<_> = mapping
            .relationships
            .iter()
            .map(|r| order(&r.properties))
            .collect();
        let space_of = |label: &str| {
            mapping
                .nodes
                .iter()
                .position(|n| n.label == label)
                .unwrap_or(0) as u16
        };
        let indexes = mapping
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                Some(IndexDef {
                    label: i as LabelId,
                    key: catalog.property_key_id(&s.key)?,
                })
            })
            .collect();
        let degree = DegreeStats {
            nodes: ESTIMATED_NODES,
            max: 16,
            mean: 2.0,
            p50: 2,
            p90: 4,
            p99: 8,
        };
        let statistics = Statistics {
            node_count: ESTIMATED_NODES * mapping.nodes.len() as u64,
            relationship_count: 2 * ESTIMATED_NODES * mapping.relationships.len() as u64,
            label_counts: vec![ESTIMATED_NODES; mapping.nodes.len()],
            rel_types: vec![
                RelTypeStats {
                    count: 2 * ESTIMATED_NODES,
                    outgoing: degree,
                    incoming: degree,
                };
                mapping.relationships.len()
            ],
            // The mapping says which labels each type joins (schema views
            // read these; the counts are the same estimates as above).
            triples: mapping
                .relationships
                .iter()
                .filter_map(|r| {
                    Some(TripleCount {
                        source: space_of(&r.from) as LabelId,
                        rel_type: catalog.rel_type_id(&r.rel_type)?,
                        target: space_of(&r.to) as LabelId,
                        count: 2 * ESTIMATED_NODES,
                    })
                })
                .collect(),
            indexes: Vec::new(),
        };
        SourceSchema {
            node_props: node_order
                .iter()
                .map(|o| o.iter().copied().collect())
                .collect(),
            rel_props: rel_order
                .iter()
                .map(|o| o.iter().copied().collect())
                .collect(),
            node_order,
            rel_order,
            rel_spaces: mapping
                .relationships
                .iter()
                .map(|r| (space_of(&r.from), space_of(&r.to)))
                .collect(),
            labels: (0..mapping.nodes.len()).map(|i| [i as LabelId]).collect(),
            catalog,
            indexes,
            statistics,
        }
    }
}

/// Adjacency lists a query pinned, converted to ids and sorted by neighbour.
struct Pinned {
    neighbours: Vec<NodeId>,
    rels: Vec<RelId>,
}

const PAGE: usize = 4096;
const PAGES: usize = 16384;

/// An append-only store whose entries stay where they are while the
/// query runs, so readers may borrow them (pages are allocated on first
/// use).
struct Arena {
    index: RwLock<HashMap<(NodeId, RelTypeId, bool), usize>>,
    pages: Vec<OnceLock<Box<[OnceLock<Pinned>]>>>,
    next: AtomicUsize,
}

impl Arena {
    fn new() -> Arena {
        Arena {
            index: RwLock::new(HashMap::new()),
            pages: (0..PAGES).map(|_| OnceLock::new()).collect(),
            next: AtomicUsize::new(0),
        }
    }

    fn slot(&self, i: usize) -> Option<&OnceLock<Pinned>> {
        let page = self.pages.get(i / PAGE)?;
        Some(&page.get_or_init(|| (0..PAGE).map(|_| OnceLock::new()).collect())[i % PAGE])
    }

    fn get(&self, key: &(NodeId, RelTypeId, bool)) -> Option<&Pinned> {
        let i = *self
            .index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)?;
        self.slot(i)?.get()
    }

    fn contains(&self, key: &(NodeId, RelTypeId, bool)) -> bool {
        self.index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(key)
    }

    /// Pins `value` under `key` (a key pinned already keeps its value);
    /// `None` once the arena is full.
    fn pin(&self, key: (NodeId, RelTypeId, bool), value: Pinned) -> Option<&Pinned> {
        let mut index = self.index.write().unwrap_or_else(|p| p.into_inner());
        if let Some(&i) = index.get(&key) {
            return self.slot(i)?.get();
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = self.slot(i)?;
        let _ = slot.set(value);
        index.insert(key, i);
        slot.get()
    }
}

/// A relationship the query has seen: its endpoints and where its
/// properties are.
#[derive(Clone)]
struct SeenRel {
    start: NodeId,
    end: NodeId,
    list: Arc<AdjacencyList>,
    at: usize,
}

/// One query's view of a source (see the module documentation).
pub struct QueryGraph {
    source: Arc<Source>,
    schema: Arc<SourceSchema>,
    deadline: Option<Instant>,
    nodes: RwLock<HashMap<NodeId, Option<Arc<Vec<Value>>>>>,
    lists: Arena,
    rels: RwLock<HashMap<RelId, SeenRel>>,
    /// Label ranges, computed on the first scan of each label.
    scans: Vec<OnceLock<Vec<Range<NodeId>>>>,
    error: Mutex<Option<Error>>,
}

impl QueryGraph {
    pub(crate) fn new(
        source: Arc<Source>,
        schema: Arc<SourceSchema>,
        deadline: Option<Instant>,
    ) -> QueryGraph {
        let spaces = source.mapping().nodes.len();
        QueryGraph {
            source,
            schema,
            deadline,
            nodes: RwLock::new(HashMap::new()),
            lists: Arena::new(),
            rels: RwLock::new(HashMap::new()),
            scans: (0..spaces).map(|_| OnceLock::new()).collect(),
            error: Mutex::new(None),
        }
    }

    /// The first error a read met, if any (the query must fail with it).
    pub fn finish(&self) -> Result<()> {
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Records `e` unless an error was recorded before.
    fn fail(&self, e: Error) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    fn failed(&self) -> bool {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    fn space_ok(&self, space: u16) -> bool {
        (space as usize) < self.schema.labels.len()
    }

    /// The row of `node`, fetching it if this query has not seen it.
    fn row(&self, node: NodeId) -> Option<Arc<Vec<Value>>> {
        if let Some(row) = self
            .nodes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&node)
        {
            return row.clone();
        }
        self.prefetch_nodes(&[node]);
        self.nodes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&node)
            .cloned()
            .flatten()
    }

    /// The (rel index, outgoing) list a (type, direction) reads for nodes
    /// of `space`, or `None` if such nodes have none.
    fn list_for(&self, space: u16, rel_type: RelTypeId, dir: Direction) -> Option<ListRef> {
        let &(from, to) = self.schema.rel_spaces.get(rel_type as usize)?;
        let outgoing = dir == Direction::Outgoing;
        let at = if outgoing { from } else { to };
        (at == space).then_some(ListRef {
            rel: rel_type as u16,
            outgoing,
        })
    }

    fn fetch_lists(&self, list: ListRef, keys: Vec<i64>) -> Result<()> {
        let rel = &self.source.mapping().relationships[list.rel as usize];
        let present = if list.outgoing {
            rel.outgoing.is_some()
        } else {
            rel.incoming.is_some()
        };
        if !present {
            return Err(Error::new(
                ErrorKind::SemanticError,
                format!(
                    "graph source `{}`: relationships.{} has no `{}` template, so it cannot be followed {}",
                    self.source.mapping().name,
                    rel.rel_type,
                    if list.outgoing { "outgoing" } else { "incoming" },
                    if list.outgoing { "forwards" } else { "backwards" }
                ),
            ));
        }
        let mut found: Vec<(i64, Arc<AdjacencyList>)> = Vec::with_capacity(keys.len());
        let mut missing = Vec::new();
        for key in keys {
            let k = CacheKey::Adjacency {
                rel: list.rel,
                outgoing: list.outgoing,
                key,
            };
            match self.source.cache.get(&k, &self.source.counters) {
                Some(CacheValue::Adjacency(a)) => found.push((key, a)),
                _ => missing.push(key),
            }
        }
        if !missing.is_empty() {
            let round = Round {
                nodes: Vec::new(),
                adjacency: vec![(list, missing)],
            };
            let fetched = self.source.fetch_round(&round, self.deadline)?;
            self.source.remember(&fetched, &|_| true);
            for (_, key, a) in fetched.adjacency {
                found.push((key, Arc::new(a)));
            }
        }
        let (from_space, to_space) = self.schema.rel_spaces[list.rel as usize];
        let (here, there) = if list.outgoing {
            (from_space, to_space)
        } else {
            (to_space, from_space)
        };
        let name = &self.source.mapping().name;
        for (key, a) in found {
            let node = node_id(here, key).expect("asked for ids that fit");
            let mut entries: Vec<(NodeId, RelId, usize)> = Vec::with_capacity(a.neighbours.len());
            for i in 0..a.neighbours.len() {
                let n = node_id(there, a.neighbours[i]);
                let r = node_id(list.rel, a.rels[i]);
                match (n, r) {
                    (Some(n), Some(r)) => entries.push((n, r, i)),
                    _ => {
                        return Err(bad_data(
                            name,
                            format!(
                                "relationship {} from node {key}: neighbour {} or relationship key {} is negative or above 2^48",
                                rel.rel_type, a.neighbours[i], a.rels[i]
                            ),
                        ))
                    }
                }
            }
            entries.sort_unstable();
            {
                let mut rels = self.rels.write().unwrap_or_else(|p| p.into_inner());
                for &(n, r, i) in &entries {
                    let (start, end) = if list.outgoing { (node, n) } else { (n, node) };
                    rels.entry(r).or_insert_with(|| SeenRel {
                        start,
                        end,
                        list: a.clone(),
                        at: i,
                    });
                }
            }
            let pinned = Pinned {
                neighbours: entries.iter().map(|e| e.0).collect(),
                rels: entries.iter().map(|e| e.1).collect(),
            };
            if self
                .lists
                .pin((node, list.rel as RelTypeId, list.outgoing), pinned)
                .is_none()
            {
                return Err(Error::new(
                    ErrorKind::QueryAborted,
                    format!(
                        "the query read more than {} adjacency lists of graph source `{name}`",
                        PAGE * PAGES
                    ),
                ));
            }
        }
        Ok(())
    }

    fn scan(&self, space: u16) -> Result<Vec<Range<NodeId>>> {
        let keys = self.source.keys(space, self.deadline)?;
        let mut out: Vec<Range<NodeId>> = Vec::new();
        for key in keys {
            let Some(id) = node_id(space, key) else {
                return Err(bad_data(
                    &self.source.mapping().name,
                    format!("node key {key} is negative or above 2^48"),
                ));
            };
            match out.last_mut() {
                Some(last) if last.end == id => last.end += 1,
                _ => out.push(id..id + 1),
            }
        }
        Ok(out)
    }
}

impl ExternalGraph for QueryGraph {
    fn describe(&self) -> String {
        self.source.describe()
    }

    fn statistics(&self) -> &Statistics {
        &self.schema.statistics
    }

    fn node_exists(&self, node: NodeId) -> bool {
        // Dangling neighbour keys read as nodes without properties.
        self.space_ok(split_id(node).0)
    }

    fn label_ranges(&self, label: LabelId) -> &[Range<NodeId>] {
        let Some(cell) = self.scans.get(label as usize) else {
            return &[];
        };
        cell.get_or_init(|| match self.scan(label as u16) {
            Ok(ranges) => ranges,
            Err(e) => {
                self.fail(e);
                Vec::new()
            }
        })
    }

    fn node_labels(&self, node: NodeId) -> &[LabelId] {
        match self.schema.labels.get(split_id(node).0 as usize) {
            Some(l) => l,
            None => &[],
        }
    }

    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value {
        let space = split_id(node).0 as usize;
        let Some(&i) = self.schema.node_props.get(space).and_then(|p| p.get(&key)) else {
            return Value::Null;
        };
        self.row(node)
            .and_then(|r| r.get(i).cloned())
            .unwrap_or(Value::Null)
    }

    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>) {
        let space = split_id(node).0 as usize;
        let (Some(order), Some(row)) = (self.schema.node_order.get(space), self.row(node)) else {
            return;
        };
        for &(k, i) in order {
            if let Some(v) = row.get(i).filter(|v| !v.is_null()) {
                out.push((k, v.clone()));
            }
        }
    }

    fn adjacency(
        &self,
        node: NodeId,
        rel_type: RelTypeId,
        dir: Direction,
    ) -> (&[NodeId], &[RelId]) {
        let outgoing = dir == Direction::Outgoing;
        let key = (node, rel_type, outgoing);
        if self.lists.get(&key).is_none() {
            self.prefetch_adjacency(&[node], rel_type, dir);
        }
        match self.lists.get(&key) {
            Some(p) => (&p.neighbours, &p.rels),
            None => (&[], &[]),
        }
    }

    fn relationship(&self, rel: RelId) -> Option<RelInfo> {
        let rels = self.rels.read().unwrap_or_else(|p| p.into_inner());
        let seen = rels.get(&rel)?;
        Some(RelInfo {
            rel_type: split_id(rel).0 as RelTypeId,
            start: seen.start,
            end: seen.end,
        })
    }

    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value {
        let t = split_id(rel).0 as usize;
        let Some(&i) = self.schema.rel_props.get(t).and_then(|p| p.get(&key)) else {
            return Value::Null;
        };
        let rels = self.rels.read().unwrap_or_else(|p| p.into_inner());
        rels.get(&rel)
            .and_then(|s| s.list.properties.get(s.at)?.get(i).cloned())
            .unwrap_or(Value::Null)
    }

    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>) {
        let t = split_id(rel).0 as usize;
        let Some(order) = self.schema.rel_order.get(t) else {
            return;
        };
        let rels = self.rels.read().unwrap_or_else(|p| p.into_inner());
        let Some(row) = rels.get(&rel).and_then(|s| s.list.properties.get(s.at)) else {
            return;
        };
        for &(k, i) in order {
            if let Some(v) = row.get(i).filter(|v| !v.is_null()) {
                out.push((k, v.clone()));
            }
        }
    }

    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>> {
        let def = IndexDef { label, key };
        if !self.schema.indexes.contains(&def) {
            return None;
        }
        let k = match value {
            Value::Int(k) => *k,
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => *f as i64,
            _ => return Some(Vec::new()),
        };
        let Some(node) = node_id(label as u16, k) else {
            return Some(Vec::new());
        };
        Some(self.row(node).map(|_| vec![node]).unwrap_or_default())
    }

    fn prefetch_nodes(&self, nodes: &[NodeId]) {
        if self.failed() {
            return;
        }
        let mut wanted: Vec<(u16, i64)> = {
            let seen = self.nodes.read().unwrap_or_else(|p| p.into_inner());
            nodes
                .iter()
                .filter(|n| !seen.contains_key(n))
                .map(|&n| split_id(n))
                .filter(|&(s, _)| self.space_ok(s))
                .collect()
        };
        if wanted.is_empty() {
            return;
        }
        wanted.sort_unstable();
        wanted.dedup();
        let mut found: Vec<(NodeId, Option<Arc<Vec<Value>>>)> = Vec::new();
        let mut round = Round::default();
        for (space, key) in wanted {
            let k = CacheKey::Node { space, key };
            match self.source.cache.get(&k, &self.source.counters) {
                Some(CacheValue::Node(row)) => {
                    found.push((node_id(space, key).expect("from an id"), row))
                }
                _ => match round.nodes.last_mut() {
                    Some((s, keys)) if *s == space => keys.push(key),
                    _ => round.nodes.push((space, vec![key])),
                },
            }
        }
        if !round.nodes.is_empty() {
            match self.source.fetch_round(&round, self.deadline) {
                Ok(fetched) => {
                    self.source.remember(&fetched, &|_| true);
                    for (space, key, row) in fetched.nodes {
                        if let Some(id) = node_id(space, key) {
                            found.push((id, row.map(Arc::new)));
                        }
                    }
                }
                Err(e) => return self.fail(e),
            }
        }
        let mut seen = self.nodes.write().unwrap_or_else(|p| p.into_inner());
        for (id, row) in found {
            seen.entry(id).or_insert(row);
        }
    }

    fn prefetch_adjacency(&self, nodes: &[NodeId], rel_type: RelTypeId, dir: Direction) {
        if self.failed() {
            return;
        }
        let outgoing = dir == Direction::Outgoing;
        let mut by_list: Vec<(ListRef, Vec<i64>)> = Vec::new();
        for &node in nodes {
            if self.lists.contains(&(node, rel_type, outgoing)) {
                continue;
            }
            let (space, key) = split_id(node);
            let Some(list) = self.list_for(space, rel_type, dir) else {
                // Nodes of another label have no such relationships.
                let empty = Pinned {
                    neighbours: Vec::new(),
                    rels: Vec::new(),
                };
                let _ = self.lists.pin((node, rel_type, outgoing), empty);
                continue;
            };
            match by_list.iter_mut().find(|(l, _)| *l == list) {
                Some((_, keys)) => keys.push(key),
                None => by_list.push((list, vec![key])),
            }
        }
        for (list, mut keys) in by_list {
            keys.sort_unstable();
            keys.dedup();
            if let Err(e) = self.fetch_lists(list, keys) {
                return self.fail(e);
            }
        }
    }
}
