//! A source as one Cypher query reads it: [`QueryGraph`], the
//! [`ExternalGraph`] behind a [`Snapshot`] over a source (see
//! [`Source::snapshot`]).
//!
//! **Ids.** A node's id is its node space index in the top 16 bits and
//! its key in the low 48 (`(space << 48) | key`), so over a mapping with
//! one node space the node ids are the keys themselves. A relationship's
//! id is built the same way from its relationship space index and its
//! relationship key; spaces without keys number their relationships by
//! (start, end) as the query meets them. Keys must lie in `0 .. 2^48`; a
//! negative or larger key is a `SourceDataError`.
//!
//! **Labels and types.** A label is read from every node space that has
//! it (its own or an extra label), a type from every relationship space
//! of that type: a node's list of one type and direction is the merge of
//! the lists of the spaces that start (or end) at its node space, fetched
//! in one round.
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
use crate::mapping::Prefetch;
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
    /// Per relationship space: property key id -> index.
    rel_props: Vec<HashMap<PropertyKeyId, usize>>,
    /// Per relationship space: (key id, index) sorted by key id.
    rel_order: Vec<Vec<(PropertyKeyId, usize)>>,
    /// Per relationship space: (from node space, to node space).
    rel_spaces: Vec<(u16, u16)>,
    /// Per relationship space: its type.
    rel_type_of: Vec<RelTypeId>,
    /// Per relationship type: its spaces.
    type_spaces: Vec<Vec<u16>>,
    /// Per node space: its labels (its own first, then the extra ones).
    labels: Vec<Vec<LabelId>>,
    /// Per label: the node spaces whose nodes have it (or may have it,
    /// from a label column), ascending.
    label_spaces: Vec<Vec<u16>>,
    /// Per node space: its label column, if it has one.
    column_labels: Vec<Option<ColumnLabels>>,
}

/// The labels a node space reads from a column: each node's labels are
/// the space's own and extra ones plus a subset of these, interned once
/// per subset so that `node_labels` can lend them.
struct ColumnLabels {
    /// Index of the column's property.
    property: usize,
    /// The declared labels, in the mapping's order, with their ids.
    declared: Vec<(String, LabelId)>,
    /// Per subset of `declared` (a bit mask): the node's sorted labels.
    subsets: Box<[OnceLock<Box<[LabelId]>>]>,
}

impl ColumnLabels {
    /// The labels of a node of `base` labels whose column holds the
    /// labels of `mask`.
    fn labels(&self, base: &[LabelId], mask: usize) -> &[LabelId] {
        self.subsets[mask].get_or_init(|| {
            let mut all: Vec<LabelId> = base.to_vec();
            for (i, (_, id)) in self.declared.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    all.push(*id);
                }
            }
            all.sort_unstable();
            all.dedup();
            all.into_boxed_slice()
        })
    }

    /// The mask of the labels `value` names; `Err(name)` for a value that
    /// names a label not declared.
    fn mask(&self, value: &Value) -> std::result::Result<usize, String> {
        let mut mask = 0;
        let mut add = |name: &str| -> std::result::Result<(), String> {
            if name.is_empty() {
                return Ok(());
            }
            match self.declared.iter().position(|(n, _)| n == name) {
                Some(i) => {
                    mask |= 1 << i;
                    Ok(())
                }
                None => Err(name.to_string()),
            }
        };
        match value {
            Value::String(s) => add(s)?,
            Value::List(items) => {
                for item in items {
                    match item {
                        Value::String(s) => add(s)?,
                        Value::Null => {}
                        other => return Err(format!("{other:?}")),
                    }
                }
            }
            Value::Null => {}
            other => return Err(format!("{other:?}")),
        }
        Ok(mask)
    }

    /// True if the label `label` is one this column gives.
    fn gives(&self, label: LabelId) -> bool {
        self.declared.iter().any(|(_, id)| *id == label)
    }
}

/// Planner estimates for a source: a node space whose keys were not
/// counted (no `keys` in the mapping) counts as a large table, and a
/// relationship space that was not counted as two relationships per node
/// of its start space (the planner then prefers key lookups and expansions
/// from bound nodes to scans).
const ESTIMATED_NODES: u64 = 1_000_000;

/// Relationships per start node of an uncounted relationship space.
const ESTIMATED_DEGREE: u64 = 2;

impl SourceSchema {
    /// The schema of `mapping`; `node_counts` are the keys per node space
    /// counted at connect (`None`, or missing, for [`ESTIMATED_NODES`]),
    /// the planner's label counts; `rel_counts` the relationships per
    /// relationship space counted at connect (`None`, or missing, for
    /// [`ESTIMATED_DEGREE`] per node of the start space), the planner's
    /// type and (label, type, label) counts and mean degrees.
    pub(crate) fn new(
        mapping: &crate::mapping::Mapping,
        node_counts: &[Option<u64>],
        rel_counts: &[Option<u64>],
    ) -> SourceSchema {
        let space_count = |s: u16| -> u64 {
            node_counts
                .get(s as usize)
                .copied()
                .flatten()
                .unwrap_or(ESTIMATED_NODES)
        };
        let mut catalog = Catalog::default();
        // A space's extra labels come before its own (`Message` before
        // `Comment`), and each node's labels are sorted by id, as a native
        // import of the same data names them.
        let labels: Vec<Vec<LabelId>> = mapping
            .nodes
            .iter()
            .map(|space| {
                let mut ids: Vec<LabelId> = space
                    .labels
                    .iter()
                    .chain(std::iter::once(&space.label))
                    .map(|l| catalog.labels.intern(l))
                    .collect();
                ids.sort_unstable();
                ids
            })
            .collect();
        let own_label: Vec<LabelId> = mapping
            .nodes
            .iter()
            .map(|space| catalog.labels.intern(&space.label))
            .collect();
        let column_labels: Vec<Option<ColumnLabels>> = mapping
            .nodes
            .iter()
            .map(|space| {
                space.label_column.as_ref().map(|c| ColumnLabels {
                    property: c.index,
                    declared: c
                        .labels
                        .iter()
                        .map(|l| (l.clone(), catalog.labels.intern(l)))
                        .collect(),
                    subsets: (0..1usize << c.labels.len())
                        .map(|_| OnceLock::new())
                        .collect(),
                })
            })
            .collect();
        let mut label_spaces = vec![Vec::new(); catalog.labels.len()];
        for (space, ls) in labels.iter().enumerate() {
            let column = column_labels[space]
                .iter()
                .flat_map(|c| c.declared.iter().map(|d| &d.1));
            for &l in ls.iter().chain(column) {
                label_spaces[l as usize].push(space as u16);
            }
        }
        let rel_type_of: Vec<RelTypeId> = mapping
            .relationships
            .iter()
            .map(|r| catalog.rel_types.intern(&r.rel_type))
            .collect();
        let mut type_spaces = vec![Vec::new(); catalog.rel_types.len()];
        for (space, &t) in rel_type_of.iter().enumerate() {
            type_spaces[t as usize].push(space as u16);
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
        let label_of = |label: &str| own_label[space_of(label) as usize];
        // A label is indexed on its key when all its spaces share the key.
        let indexes = label_spaces
            .iter()
            .enumerate()
            .filter_map(|(label, spaces)| {
                let key = &mapping.nodes[*spaces.first()? as usize].key;
                spaces
                    .iter()
                    .all(|&s| &mapping.nodes[s as usize].key == key)
                    .then_some(())?;
                Some(IndexDef {
                    label: label as LabelId,
                    key: catalog.property_key_id(key)?,
                })
            })
            .collect();
        let rel_count = |r: usize| -> u64 {
            rel_counts.get(r).copied().flatten().unwrap_or_else(|| {
                ESTIMATED_DEGREE * space_count(space_of(&mapping.relationships[r].from))
            })
        };
        // Mean degree of one side: the type's relationships over the nodes
        // of the spaces they start (or end) at.
        let degree = |count: u64, nodes: u64| {
            let mean = count as f64 / nodes.max(1) as f64;
            DegreeStats {
                nodes,
                max: (mean.ceil() as u64).max(1) * 8,
                mean,
                p50: mean.round() as u64,
                p90: (mean.ceil() as u64) * 2,
                p99: (mean.ceil() as u64) * 4,
            }
        };
        let spaces_of = |spaces: &[u16], end: &dyn Fn(&crate::mapping::RelSpace) -> &str| {
            let mut of: Vec<u16> = spaces
                .iter()
                .map(|&r| space_of(end(&mapping.relationships[r as usize])))
                .collect();
            of.sort_unstable();
            of.dedup();
            of.into_iter().map(space_count).sum::<u64>()
        };
        let statistics = Statistics {
            node_count: (0..mapping.nodes.len() as u16).map(space_count).sum(),
            relationship_count: (0..mapping.relationships.len()).map(rel_count).sum(),
            // A label from a column counts a space's nodes shared out
            // evenly among the column's labels (an estimate).
            label_counts: label_spaces
                .iter()
                .enumerate()
                .map(|(label, s)| {
                    s.iter()
                        .map(|&x| match &column_labels[x as usize] {
                            Some(c) if c.gives(label as LabelId) => {
                                (space_count(x) / c.declared.len() as u64).max(1)
                            }
                            _ => space_count(x),
                        })
                        .sum()
                })
                .collect(),
            rel_types: type_spaces
                .iter()
                .map(|s| {
                    let count = s.iter().map(|&r| rel_count(r as usize)).sum();
                    RelTypeStats {
                        count,
                        outgoing: degree(count, spaces_of(s, &|r| &r.from)),
                        incoming: degree(count, spaces_of(s, &|r| &r.to)),
                    }
                })
                .collect(),
            // The mapping says which labels each type joins (schema views
            // read these; the counts are the relationship spaces' counts).
            triples: mapping
                .relationships
                .iter()
                .zip(&rel_type_of)
                .enumerate()
                .map(|(r, (space, &rel_type))| TripleCount {
                    source: label_of(&space.from),
                    rel_type,
                    target: label_of(&space.to),
                    count: rel_count(r),
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
            rel_type_of,
            type_spaces,
            labels,
            label_spaces,
            column_labels,
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
    /// The prefetcher the statement chose (`CYPHER prefetch=...`), if any.
    prefetch: OnceLock<Prefetch>,
    error: Mutex<Option<Error>>,
}

impl QueryGraph {
    pub(crate) fn new(
        source: Arc<Source>,
        schema: Arc<SourceSchema>,
        deadline: Option<Instant>,
    ) -> QueryGraph {
        let labels = schema.label_spaces.len();
        QueryGraph {
            source,
            schema,
            deadline,
            nodes: RwLock::new(HashMap::new()),
            lists: Arena::new(),
            rels: RwLock::new(HashMap::new()),
            scans: (0..labels).map(|_| OnceLock::new()).collect(),
            prefetch: OnceLock::new(),
            error: Mutex::new(None),
        }
    }

    /// Sets the statement's prefetcher (`CYPHER prefetch=...`): route
    /// procedures use it instead of the mapping's, and with a lookahead
    /// the statement's expansions fetch the depth-k neighbourhood of the
    /// nodes they miss. Set once, before the statement runs; a second
    /// call is ignored.
    pub fn set_prefetch(&self, prefetch: Prefetch) {
        let _ = self.prefetch.set(prefetch);
    }

    /// The prefetcher the statement chose, if it chose one.
    pub fn prefetch(&self) -> Option<Prefetch> {
        self.prefetch.get().copied()
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

    /// The lists (relationship space, direction) a (type, direction)
    /// reads for nodes of `space`: none if such nodes have no such
    /// relationships, several if the type joins them to several spaces.
    fn lists_for(&self, space: u16, rel_type: RelTypeId, outgoing: bool) -> Vec<ListRef> {
        let Some(spaces) = self.schema.type_spaces.get(rel_type as usize) else {
            return Vec::new();
        };
        spaces
            .iter()
            .filter(|&&r| {
                let (from, to) = self.schema.rel_spaces[r as usize];
                space == if outgoing { from } else { to }
            })
            .map(|&rel| ListRef { rel, outgoing })
            .collect()
    }

    /// Pins the `rel_type` lists in one direction of the nodes `keys` of
    /// node space `space`: every list of `lists` (one per relationship
    /// space) fetched in one round, merged per node.
    fn fetch_lists(
        &self,
        space: u16,
        rel_type: RelTypeId,
        lists: &[ListRef],
        keys: Vec<i64>,
    ) -> Result<()> {
        let mapping = self.source.mapping();
        let name = &mapping.name;
        for list in lists {
            let rel = &mapping.relationships[list.rel as usize];
            let present = if list.outgoing {
                rel.outgoing.is_some()
            } else {
                rel.incoming.is_some()
            };
            if !present {
                return Err(Error::new(
                    ErrorKind::SemanticError,
                    format!(
                        "graph source `{name}`: relationships.{} has no `{}` template, so {} cannot be followed {}",
                        rel.name,
                        if list.outgoing { "outgoing" } else { "incoming" },
                        rel.rel_type,
                        if list.outgoing { "forwards" } else { "backwards" }
                    ),
                ));
            }
        }
        let mut found: HashMap<(u16, i64), Arc<AdjacencyList>> =
            HashMap::with_capacity(keys.len() * lists.len());
        let mut round = Round::default();
        for list in lists {
            let mut missing = Vec::new();
            for &key in &keys {
                let k = CacheKey::Adjacency {
                    rel: list.rel,
                    outgoing: list.outgoing,
                    key,
                };
                match self.source.cache.get(&k, &self.source.counters) {
                    Some(CacheValue::Adjacency(a)) => {
                        found.insert((list.rel, key), a);
                    }
                    _ => missing.push(key),
                }
            }
            if !missing.is_empty() {
                round.adjacency.push((*list, missing));
            }
        }
        if let Some(depth) = self.lookahead_depth(&round) {
            // The statement's lookahead: the missing nodes' depth-k
            // neighbourhood in one round trip, the deeper lists into the
            // cache as prefetched.
            let (list, missing) = round.adjacency.pop().expect("one list");
            let fetched = self
                .source
                .fetch_lookahead(list, &missing, depth, self.deadline)?;
            let asked: std::collections::HashSet<i64> = missing.iter().copied().collect();
            self.source.remember(&fetched, &|k| match k {
                CacheKey::Adjacency { key, .. } => asked.contains(key),
                _ => false,
            });
            for (l, key, a) in fetched.adjacency {
                if l == list && asked.contains(&key) {
                    found.insert((l.rel, key), Arc::new(a));
                }
            }
            // Every asked list comes back; should one not, ask for it.
            let left: Vec<i64> = missing
                .into_iter()
                .filter(|&k| !found.contains_key(&(list.rel, k)))
                .collect();
            if !left.is_empty() {
                round.adjacency.push((list, left));
            }
        }
        if !round.adjacency.is_empty() {
            let fetched = self.source.fetch_round(&round, self.deadline)?;
            self.source.remember(&fetched, &|_| true);
            for (list, key, a) in fetched.adjacency {
                found.insert((list.rel, key), Arc::new(a));
            }
        }
        let mut entries: Vec<(NodeId, RelId, usize, usize)> = Vec::new();
        let mut sources: Vec<Arc<AdjacencyList>> = Vec::with_capacity(lists.len());
        for key in keys {
            let node = node_id(space, key).expect("asked for ids that fit");
            entries.clear();
            sources.clear();
            for list in lists {
                let Some(a) = found.get(&(list.rel, key)) else {
                    continue;
                };
                let (from_space, to_space) = self.schema.rel_spaces[list.rel as usize];
                let there = if list.outgoing { to_space } else { from_space };
                for i in 0..a.neighbours.len() {
                    let neighbour = a.neighbours[i];
                    // Spaces without a key column carry row-number keys
                    // (crate::row_keys), given as the lists were fetched.
                    let rel_key = a.rels[i];
                    match (node_id(there, neighbour), node_id(list.rel, rel_key)) {
                        (Some(n), Some(r)) => entries.push((n, r, sources.len(), i)),
                        _ => {
                            return Err(bad_data(
                                name,
                                format!(
                                    "relationship {} from node {key}: neighbour {neighbour} or relationship key {rel_key} is negative or above 2^48",
                                    mapping.relationships[list.rel as usize].rel_type
                                ),
                            ))
                        }
                    }
                }
                sources.push(a.clone());
            }
            entries.sort_unstable();
            {
                let mut rels = self.rels.write().unwrap_or_else(|p| p.into_inner());
                for &(n, r, list, i) in &entries {
                    let (start, end) = if lists[0].outgoing {
                        (node, n)
                    } else {
                        (n, node)
                    };
                    rels.entry(r).or_insert_with(|| SeenRel {
                        start,
                        end,
                        list: sources[list].clone(),
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
                .pin((node, rel_type, lists[0].outgoing), pinned)
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

    /// The depth of the statement's lookahead for `round`, if it has one
    /// and the round asks for one list from the first node space to
    /// itself (what a backend's lookahead follows).
    fn lookahead_depth(&self, round: &Round) -> Option<u32> {
        let Some(Prefetch::Lookahead(depth)) = self.prefetch() else {
            return None;
        };
        match round.adjacency.as_slice() {
            [(list, _)] if self.schema.rel_spaces.get(list.rel as usize) == Some(&(0, 0)) => {
                Some(depth)
            }
            _ => None,
        }
    }

    /// The node ids of a label: the keys of each of its node spaces (of
    /// a space that reads the label from a column, the keys of the nodes
    /// whose column names it: their rows are read a chunk at a time).
    fn scan(&self, label: LabelId) -> Result<Vec<Range<NodeId>>> {
        let mut out: Vec<Range<NodeId>> = Vec::new();
        for &space in &self.schema.label_spaces[label as usize] {
            let keys = self.source.keys(space, self.deadline)?;
            let mut ids = Vec::with_capacity(keys.len());
            for key in keys {
                let Some(id) = node_id(space, key) else {
                    return Err(bad_data(
                        &self.source.mapping().name,
                        format!("node key {key} is negative or above 2^48"),
                    ));
                };
                ids.push(id);
            }
            let from_column = self.schema.column_labels[space as usize]
                .as_ref()
                .is_some_and(|c| c.gives(label));
            if from_column {
                for chunk in ids.chunks(SCAN_CHUNK) {
                    self.prefetch_nodes(chunk);
                    if self.failed() {
                        return Ok(Vec::new());
                    }
                }
                ids.retain(|&id| self.node_labels(id).contains(&label));
            }
            for id in ids {
                match out.last_mut() {
                    Some(last) if last.end == id => last.end += 1,
                    _ => out.push(id..id + 1),
                }
            }
        }
        Ok(out)
    }
}

/// Node ids a label scan reads the rows of per round trip, for labels
/// read from a column.
const SCAN_CHUNK: usize = 4096;

fn column_name(space: &crate::mapping::NodeSpace) -> &str {
    space
        .label_column
        .as_ref()
        .map_or("", |c| c.column.as_str())
}

impl ExternalGraph for QueryGraph {
    fn describe(&self) -> String {
        self.source.describe()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
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
        cell.get_or_init(|| match self.scan(label) {
            Ok(ranges) => ranges,
            Err(e) => {
                self.fail(e);
                Vec::new()
            }
        })
    }

    fn node_labels(&self, node: NodeId) -> &[LabelId] {
        let space = split_id(node).0 as usize;
        let Some(base) = self.schema.labels.get(space) else {
            return &[];
        };
        let Some(column) = &self.schema.column_labels[space] else {
            return base.as_slice();
        };
        let value = self
            .row(node)
            .and_then(|r| r.get(column.property).cloned())
            .unwrap_or(Value::Null);
        match column.mask(&value) {
            Ok(mask) => column.labels(base, mask),
            Err(name) => {
                let node_space = &self.source.mapping().nodes[space];
                self.fail(bad_data(
                    &self.source.mapping().name,
                    format!(
                        "node :{} {{{}: {}}}: its label column `{}` holds `{name}`, which `nodes.{}.label_column.labels` does not declare",
                        node_space.label,
                        node_space.key,
                        split_id(node).1,
                        column_name(node_space),
                        node_space.label
                    ),
                ));
                base.as_slice()
            }
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
            rel_type: *self.schema.rel_type_of.get(split_id(rel).0 as usize)?,
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
        let spaces = self.schema.label_spaces.get(label as usize)?;
        let ids: Vec<NodeId> = spaces.iter().filter_map(|&s| node_id(s, k)).collect();
        self.prefetch_nodes(&ids);
        // A node of a space that reads the label from a column has it
        // only if its column names it.
        Some(
            ids.into_iter()
                .filter(|&n| self.row(n).is_some())
                .filter(|&n| {
                    let column = &self.schema.column_labels[split_id(n).0 as usize];
                    !column.as_ref().is_some_and(|c| c.gives(label))
                        || self.node_labels(n).contains(&label)
                })
                .collect(),
        )
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
        // Per node space met: its lists and the keys to fetch.
        let mut by_space: Vec<(u16, Vec<ListRef>, Vec<i64>)> = Vec::new();
        for &node in nodes {
            if self.lists.contains(&(node, rel_type, outgoing)) {
                continue;
            }
            let (space, key) = split_id(node);
            let at = match by_space.iter().position(|(s, _, _)| *s == space) {
                Some(at) => at,
                None => {
                    by_space.push((space, self.lists_for(space, rel_type, outgoing), Vec::new()));
                    by_space.len() - 1
                }
            };
            if by_space[at].1.is_empty() {
                // Nodes of this space have no such relationships.
                let empty = Pinned {
                    neighbours: Vec::new(),
                    rels: Vec::new(),
                };
                let _ = self.lists.pin((node, rel_type, outgoing), empty);
                continue;
            }
            by_space[at].2.push(key);
        }
        for (space, lists, mut keys) in by_space {
            if keys.is_empty() {
                continue;
            }
            keys.sort_unstable();
            keys.dedup();
            if let Err(e) = self.fetch_lists(space, rel_type, &lists, keys) {
                return self.fail(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::Mapping;

    fn ldbc() -> SourceSchema {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/sources/ldbc-postgres.json"
        ))
        .unwrap();
        SourceSchema::new(
            &Mapping::parse_with_env(&text, &|_| None).unwrap(),
            &[],
            &[],
        )
    }

    #[test]
    fn counted_node_spaces_give_the_label_counts() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/sources/ldbc-postgres.json"
        ))
        .unwrap();
        let mapping = Mapping::parse_with_env(&text, &|_| None).unwrap();
        let counts: Vec<Option<u64>> = (0..mapping.nodes.len() as u64)
            .map(|i| (i != 0).then_some(100 + i))
            .collect();
        let schema = SourceSchema::new(&mapping, &counts, &[]);
        let count = |label: &str| {
            schema.statistics.label_counts[schema.catalog.label_id(label).unwrap() as usize]
        };
        let space =
            |label: &str| mapping.nodes.iter().position(|n| n.label == label).unwrap() as u64;
        let of = |i: u64| if i == 0 { ESTIMATED_NODES } else { 100 + i };
        assert_eq!(count("Person"), of(space("Person")));
        // A label over two spaces counts both.
        assert_eq!(count("Message"), of(space("Comment")) + of(space("Post")));
        assert_eq!(
            schema.statistics.node_count,
            (0..mapping.nodes.len() as u64).map(of).sum::<u64>()
        );
    }

    #[test]
    fn counted_relationship_spaces_give_type_triple_and_degree_counts() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/sources/ldbc-postgres.json"
        ))
        .unwrap();
        let mapping = Mapping::parse_with_env(&text, &|_| None).unwrap();
        let nodes: Vec<Option<u64>> = (0..mapping.nodes.len()).map(|_| Some(10)).collect();
        // Every space counted but the first.
        let rels: Vec<Option<u64>> = (0..mapping.relationships.len() as u64)
            .map(|i| (i != 0).then_some(1_000 + i))
            .collect();
        let schema = SourceSchema::new(&mapping, &nodes, &rels);
        let of = |r: usize| {
            if r == 0 {
                ESTIMATED_DEGREE * 10
            } else {
                1_000 + r as u64
            }
        };
        assert_eq!(
            schema.statistics.relationship_count,
            (0..mapping.relationships.len()).map(of).sum::<u64>()
        );
        for (r, triple) in schema.statistics.triples.iter().enumerate() {
            assert_eq!(triple.count, of(r), "{}", mapping.relationships[r].name);
        }
        // HAS_CREATOR over Comment and Post: the type sums its spaces, and
        // its mean out-degree is over both start spaces' nodes.
        let t = schema.catalog.rel_type_id("HAS_CREATOR").unwrap();
        let spaces = &schema.type_spaces[t as usize];
        assert_eq!(spaces.len(), 2);
        let count: u64 = spaces.iter().map(|&r| of(r as usize)).sum();
        let stats = &schema.statistics.rel_types[t as usize];
        assert_eq!(stats.count, count);
        assert!((stats.outgoing.mean - count as f64 / 20.0).abs() < 1e-9);
        // Both end at Person: one space of 10 nodes.
        assert!((stats.incoming.mean - count as f64 / 10.0).abs() < 1e-9);
        // Uncounted, a type is two relationships per start node.
        let guessed = SourceSchema::new(&mapping, &nodes, &[]);
        assert_eq!(
            guessed.statistics.relationship_count,
            ESTIMATED_DEGREE * 10 * mapping.relationships.len() as u64
        );
    }

    fn names(schema: &SourceSchema, labels: &[LabelId]) -> Vec<String> {
        labels
            .iter()
            .map(|&l| schema.catalog.label_name(l).to_string())
            .collect()
    }

    #[test]
    fn extra_labels_come_first_and_span_their_spaces() {
        let schema = ldbc();
        let comment = schema.catalog.label_id("Comment").unwrap() as usize;
        let message = schema.catalog.label_id("Message").unwrap();
        // The one space whose own label is Comment.
        let space = schema.label_spaces[comment][0] as usize;
        assert_eq!(
            names(&schema, &schema.labels[space]),
            ["Message", "Comment"]
        );
        let spaces: Vec<u16> = schema.label_spaces[message as usize].clone();
        assert_eq!(spaces.len(), 2);
        assert!(spaces.windows(2).all(|w| w[0] < w[1]));
        // Message is indexed on id: both spaces share the key.
        let id = schema.catalog.property_key_id("id").unwrap();
        assert!(schema.indexes.contains(&IndexDef {
            label: message,
            key: id
        }));
        assert_eq!(
            schema.statistics.label_counts.len(),
            schema.catalog.labels.len()
        );
        assert_eq!(
            schema.statistics.label_counts[message as usize],
            2 * ESTIMATED_NODES
        );
    }

    #[test]
    fn a_type_reads_every_space_of_it() {
        let schema = ldbc();
        assert_eq!(schema.catalog.rel_types.len(), 15);
        assert_eq!(schema.rel_type_of.len(), 25);
        let located = schema.catalog.rel_type_id("IS_LOCATED_IN").unwrap();
        assert_eq!(schema.type_spaces[located as usize].len(), 5);
        for &space in &schema.type_spaces[located as usize] {
            assert_eq!(schema.rel_type_of[space as usize], located);
        }
        assert_eq!(schema.statistics.rel_types.len(), 15);
        assert_eq!(schema.statistics.triples.len(), 25);
        let likes = schema.catalog.rel_type_id("LIKES").unwrap();
        let person = schema.catalog.label_id("Person").unwrap();
        let targets: Vec<String> = schema
            .statistics
            .triples
            .iter()
            .filter(|t| t.rel_type == likes)
            .map(|t| {
                assert_eq!(t.source, person);
                schema.catalog.label_name(t.target).to_string()
            })
            .collect();
        assert_eq!(targets, ["Comment", "Post"]);
    }
}
