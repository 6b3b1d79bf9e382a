//! Delta files: the incremental checkpoint.
//!
//! An incremental checkpoint does not rewrite the base segment. It saves the
//! current [`Delta`] — every change since the last *full* checkpoint — as
//! one file `delta-NNNNNN.rhd` (NNNNNN = the new manifest generation) and
//! writes a manifest naming the same segment plus that file; the log is
//! then reset as after a full checkpoint. Opening reads the file back into
//! the in-memory delta (a bulk decode, no operation replay) and replays the
//! log on top of it. Node and relationship ids do not change: the delta
//! refers to the base's ids and continues after them.
//!
//! Layout: a 24-byte header — `RHZDELTA`, the delta format version (u32
//! LE), crc32c of the body (u32 LE), body length (u64 LE) — and the body, a
//! sequence of varints (signed numbers zigzag-encoded, ids of sorted lists
//! as gaps, property values in the [`crate::codec`] encoding, the schema as
//! JSON). The reader checks the checksum and then every structural rule the
//! readers rely on (ids inside their bounds, lists sorted, every created id
//! present exactly once, adjacency entries of created relationships
//! matching their endpoints, catalog extending the base's), so a damaged or
//! crafted file is refused with `CorruptDatabase`, never read.

use crate::catalog::{Catalog, NameTable};
use crate::codec;
use crate::database::Store;
use crate::delta::{AdjList, Delta, IndexSet, IndexValue, LabelChanges, NodeDelta, RelDelta};
use crate::numbers::{NumberPages, PAGE_SLOTS};
use crate::schema::{IndexDef, Schema};
use crate::snapshot::Direction;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// First bytes of a delta file.
pub const MAGIC: &[u8; 8] = b"RHZDELTA";
/// Version of the delta file layout this binary writes and reads.
pub const DELTA_FORMAT: u32 = 1;
const HEADER_LEN: usize = 24;

/// File name of the delta file of manifest generation `generation`.
pub(crate) fn file_name(generation: u64) -> String {
    format!("delta-{generation:06}.rhd")
}

/// What a delta file is read against: the base segment it was written over.
pub(crate) struct Base<'a> {
    /// The base's node bound.
    pub(crate) node_bound: NodeId,
    /// The base's relationship id bound.
    pub(crate) rel_bound: RelId,
    /// The base's catalog (the delta's extends it).
    pub(crate) catalog: &'a Catalog,
    /// The base's adjacency (lists saved as differences from it); `None`:
    /// no relationships.
    pub(crate) store: Option<&'a Store>,
}

/// A node's base list of one type and direction as (neighbour, id) pairs,
/// sorted like delta lists.
fn base_list(
    store: Option<&Store>,
    node: NodeId,
    t: usize,
    outgoing: bool,
) -> Vec<(NodeId, RelId)> {
    let Some(store) = store else {
        return Vec::new();
    };
    let dir = if outgoing {
        Direction::Outgoing
    } else {
        Direction::Incoming
    };
    let adj = store.adjacency(node, t as u32, dir);
    let mut list: Vec<(NodeId, RelId)> = (0..adj.len())
        .map(|i| (adj.neighbour(i), adj.rel_id(i)))
        .collect();
    list.sort_unstable();
    list
}

/// Lists saved whole.
const LIST_WHOLE: u64 = 0;
/// Lists saved as (removed positions of the sorted base list, added entries).
const LIST_DIFF: u64 = 1;

// ---------------------------------------------------------------- writing

struct Out(Vec<u8>);

impl Out {
    fn u(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn i(&mut self, v: i64) {
        self.u(((v << 1) ^ (v >> 63)) as u64);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn value(&mut self, v: &Value) {
        let mut buf = Vec::new();
        codec::encode(v, &mut buf);
        self.bytes(&buf);
    }
    fn props(&mut self, props: &[(u32, Value)]) {
        self.u(props.len() as u64);
        for (k, v) in props {
            self.u(u64::from(*k));
            self.value(v);
        }
    }
    fn names(&mut self, t: &NameTable) {
        self.u(t.len() as u64);
        for n in t.names() {
            self.bytes(n.as_bytes());
        }
    }
    /// Strictly increasing ids as gaps (first absolute + 0).
    fn gap(&mut self, prev: &mut Option<u64>, id: u64) {
        self.u(match *prev {
            None => id,
            Some(p) => id - p - 1,
        });
        *prev = Some(id);
    }
}

/// Writes `neighbours`/`rels` (sorted by neighbour) as a count, neighbour
/// gaps and ids.
fn put_entries(o: &mut Out, entries: impl ExactSizeIterator<Item = (NodeId, RelId)> + Clone) {
    o.u(entries.len() as u64);
    let mut last = 0;
    for (n, _) in entries.clone() {
        o.u(n - last);
        last = n;
    }
    entries.for_each(|(_, r)| o.u(r));
}

/// One delta list: whole, or as its difference from the node's base list
/// when that is shorter (a node that gained a few relationships keeps
/// thousands of base ones: only the few are saved).
fn put_list(o: &mut Out, base: &[(NodeId, RelId)], neighbours: &[NodeId], rels: &[RelId]) {
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < base.len() || j < neighbours.len() {
        let d = (j < neighbours.len()).then(|| (neighbours[j], rels[j]));
        match (base.get(i), d) {
            (Some(&b), Some(d)) if b == d => {
                i += 1;
                j += 1;
            }
            (Some(&b), Some(d)) if b < d => {
                removed.push(i);
                i += 1;
            }
            (Some(_), None) => {
                removed.push(i);
                i += 1;
            }
            (_, Some(d)) => {
                added.push(d);
                j += 1;
            }
            (None, None) => unreachable!("loop condition"),
        }
    }
    if removed.len() + added.len() < neighbours.len() {
        o.u(LIST_DIFF);
        o.u(removed.len() as u64);
        let mut prev = None;
        removed.iter().for_each(|&p| o.gap(&mut prev, p as u64));
        put_entries(o, added.iter().copied());
    } else {
        o.u(LIST_WHOLE);
        put_entries(o, neighbours.iter().copied().zip(rels.iter().copied()));
    }
}

/// The complete file (header and body) for `delta` over `store`.
pub(crate) fn encode(delta: &Delta, store: &Store) -> Vec<u8> {
    let mut o = Out(Vec::with_capacity(4096));
    o.u(delta.base_nodes);
    o.u(delta.base_rels);
    o.u(delta.node_bound);
    o.u(delta.rel_bound);
    o.u(u64::from(delta.changed));
    let c = &delta.catalog;
    o.names(&c.labels);
    o.names(&c.rel_types);
    o.names(&c.property_keys);
    o.bytes(&serde_json::to_vec(&*delta.schema).expect("a schema serializes"));

    let nodes: Vec<_> = delta.nodes.iter().collect();
    o.u(nodes.len() as u64);
    let mut prev = None;
    for (id, n) in nodes {
        o.gap(&mut prev, id);
        o.u(u64::from(n.created) | u64::from(n.deleted) << 1);
        o.u(n.labels.len() as u64);
        n.labels.iter().for_each(|&l| o.u(u64::from(l)));
        o.props(&n.props);
    }
    let rels: Vec<_> = delta.rels.iter().collect();
    o.u(rels.len() as u64);
    let mut prev = None;
    for (id, r) in rels {
        o.gap(&mut prev, id);
        o.u(u64::from(r.created) | u64::from(r.deleted) << 1);
        o.u(u64::from(r.rel_type));
        o.u(r.start);
        o.u(r.end);
        o.props(&r.props);
    }

    o.u(delta.adj.len() as u64);
    for (t, maps) in delta.adj.iter().enumerate() {
        for (dir, map) in maps.iter().enumerate() {
            let lists: Vec<_> = map.iter().collect();
            o.u(lists.len() as u64);
            let mut prev = None;
            for (node, neighbours, rels) in lists {
                o.gap(&mut prev, node);
                let base = base_list(Some(store), node, t, dir == 0);
                put_list(&mut o, &base, neighbours, rels);
            }
        }
    }

    o.u(delta.rel_numbers.len() as u64);
    for numbers in &delta.rel_numbers {
        let (pages, low) = numbers.raw();
        o.u(low);
        o.u(pages.len() as u64);
        let mut prev = None;
        for (p, slots) in pages {
            o.gap(&mut prev, p as u64);
            slots
                .iter()
                .for_each(|s| o.0.extend_from_slice(&s.to_le_bytes()));
        }
    }

    o.u(delta.types_touched.len() as u64);
    delta.types_touched.iter().for_each(|&t| o.u(u64::from(t)));

    o.u(delta.index_sets.len() as u64);
    for set in &delta.index_sets {
        o.u(u64::from(set.base));
        match set.span() {
            None => o.u(0),
            Some((lo, hi)) => {
                o.u(1);
                o.value(lo);
                o.value(hi);
            }
        }
        o.u(set.entries.len() as u64);
        for (v, n) in &set.entries {
            o.value(&v.0);
            o.u(*n);
        }
    }

    o.i(delta.node_diff);
    o.i(delta.rel_diff);
    o.u(delta.label_diff.len() as u64);
    delta.label_diff.iter().for_each(|&d| o.i(d));
    o.u(delta.label_changes.len() as u64);
    for ch in &delta.label_changes {
        o.u(ch.added.len() as u64);
        for (&s, &e) in &ch.added {
            o.u(s);
            o.u(e);
        }
        o.u(ch.removed.len() as u64);
        ch.removed.iter().for_each(|&n| o.u(n));
    }
    o.u(delta.type_diff.len() as u64);
    delta.type_diff.iter().for_each(|&d| o.i(d));
    o.u(delta.triple_diff.len() as u64);
    for (&(s, t, e), &d) in delta.triple_diff.iter() {
        o.u(u64::from(s));
        o.u(u64::from(t));
        o.u(u64::from(e));
        o.i(d);
    }
    o.u(u64::from(delta.triples_inexact));

    let body = o.0;
    let mut file = Vec::with_capacity(HEADER_LEN + body.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&DELTA_FORMAT.to_le_bytes());
    file.extend_from_slice(&crc32c::crc32c(&body).to_le_bytes());
    file.extend_from_slice(&(body.len() as u64).to_le_bytes());
    file.extend_from_slice(&body);
    file
}

/// Writes `bytes` (from [`encode`]) as `name` in `dir` and fsyncs it.
pub(crate) fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(name);
    let mut f = fs::File::create(&path).map_err(|e| Error::io(path.display(), e))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(path.display(), e))
}

// ---------------------------------------------------------------- reading

struct In<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type R<T> = std::result::Result<T, String>;

impl In<'_> {
    fn err<T>(&self, what: &str) -> R<T> {
        Err(format!("{what} (at body byte {})", self.pos))
    }
    fn u(&mut self) -> R<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return self.err("unexpected end");
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return self.err("varint overflows 64 bits");
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.err("varint longer than 10 bytes")
    }
    fn u32(&mut self, bound: usize, what: &str) -> R<u32> {
        let v = self.u()?;
        if v >= bound as u64 {
            return self.err(&format!("{what} {v} out of range (< {bound})"));
        }
        Ok(v as u32)
    }
    fn below(&mut self, bound: u64, what: &str) -> R<u64> {
        let v = self.u()?;
        if v >= bound {
            return self.err(&format!("{what} {v} out of range (< {bound})"));
        }
        Ok(v)
    }
    fn flag(&mut self, what: &str) -> R<bool> {
        match self.u()? {
            0 => Ok(false),
            1 => Ok(true),
            v => self.err(&format!("{what}: {v} is not 0 or 1")),
        }
    }
    fn i(&mut self) -> R<i64> {
        let v = self.u()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }
    /// A count of items of at least `min_bytes` each (so a huge count in a
    /// small file is refused before anything is allocated).
    fn count(&mut self, min_bytes: usize, what: &str) -> R<usize> {
        let n = self.u()?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(min_bytes as u64) > left {
            return self.err(&format!("{what}: count {n} exceeds the file"));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self) -> R<&[u8]> {
        let n = self.count(1, "byte string")?;
        let b = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }
    fn value(&mut self) -> R<Value> {
        let at = self.pos;
        codec::decode(self.bytes()?).map_err(|e| format!("value at body byte {at}: {e}"))
    }
    fn names(&mut self, base: &NameTable, what: &str) -> R<NameTable> {
        let n = self.count(1, what)?;
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            let s = std::str::from_utf8(self.bytes()?)
                .map_err(|_| format!("{what}: a name is not UTF-8"))?;
            names.push(s.to_string());
        }
        if names.len() < base.len() || names[..base.len()] != *base.names() {
            return self.err(&format!("{what} do not extend the base catalog's"));
        }
        let table = NameTable::from(names);
        if (0..table.len()).any(|i| table.id(table.name(i as u32)) != Some(i as u32)) {
            return self.err(&format!("{what}: a name occurs twice"));
        }
        Ok(table)
    }
    fn props(&mut self, keys: usize) -> R<crate::delta::Props> {
        let n = self.count(2, "properties")?;
        let mut props = crate::delta::Props::with_capacity(n);
        for _ in 0..n {
            let k = self.u32(keys, "property key")?;
            if props.last().is_some_and(|(p, _)| *p >= k) {
                return self.err("property keys not strictly increasing");
            }
            props.push((k, self.value()?));
        }
        Ok(props)
    }
    /// Entries written by `put_entries`: neighbours sorted, in range.
    fn entries(&mut self, node_bound: u64, rel_bound: u64) -> R<Vec<(NodeId, RelId)>> {
        let len = self.count(2, "adjacency list")?;
        let mut entries = Vec::with_capacity(len);
        let mut last = 0u64;
        for _ in 0..len {
            last = last
                .checked_add(self.u()?)
                .filter(|&n| n < node_bound)
                .ok_or_else(|| {
                    format!(
                        "adjacency neighbour out of range (at body byte {})",
                        self.pos
                    )
                })?;
            entries.push((last, 0));
        }
        for e in &mut entries {
            e.1 = self.below(rel_bound, "adjacency relationship")?;
        }
        Ok(entries)
    }

    /// The next id of a strictly increasing list of gaps.
    fn gap(&mut self, prev: &mut Option<u64>, bound: u64, what: &str) -> R<u64> {
        let g = self.u()?;
        let id = match *prev {
            None => Some(g),
            Some(p) => p.checked_add(g).and_then(|x| x.checked_add(1)),
        };
        match id {
            Some(id) if id < bound => {
                *prev = Some(id);
                Ok(id)
            }
            _ => self.err(&format!("{what} id out of range (< {bound})")),
        }
    }
}

/// Reads a delta file's bytes over `base`.
pub(crate) fn decode(file: &[u8], base: &Base<'_>) -> R<Delta> {
    if file.len() < HEADER_LEN || &file[..8] != MAGIC {
        return Err("not a Rhizome delta file (bad magic or too short)".into());
    }
    let word = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().expect("4 bytes"));
    let format = word(8);
    if format != DELTA_FORMAT {
        return Err(format!(
            "delta file format {format}, this binary reads format {DELTA_FORMAT}"
        ));
    }
    let crc = word(12);
    let len = u64::from_le_bytes(file[16..24].try_into().expect("8 bytes"));
    let body = &file[HEADER_LEN..];
    if len != body.len() as u64 {
        return Err(format!(
            "body is {} bytes, the header says {len} (truncated or extended file)",
            body.len()
        ));
    }
    if crc32c::crc32c(body) != crc {
        return Err("checksum mismatch (the file is damaged)".into());
    }
    decode_body(body, base)
}

fn decode_body(body: &[u8], base: &Base<'_>) -> R<Delta> {
    let mut r = In {
        bytes: body,
        pos: 0,
    };
    let (base_nodes, base_rels) = (r.u()?, r.u()?);
    if base_nodes != base.node_bound || base_rels != base.rel_bound {
        return Err(format!(
            "written over a base of {base_nodes} nodes / {base_rels} relationship ids, \
             the segment has {} / {}",
            base.node_bound, base.rel_bound
        ));
    }
    let (node_bound, rel_bound) = (r.u()?, r.u()?);
    if node_bound < base_nodes || rel_bound < base_rels {
        return r.err("id bounds below the base's");
    }
    let changed = r.flag("changed")?;
    let catalog = Catalog {
        labels: r.names(&base.catalog.labels, "labels")?,
        rel_types: r.names(&base.catalog.rel_types, "relationship types")?,
        property_keys: r.names(&base.catalog.property_keys, "property keys")?,
    };
    let (n_labels, n_types, n_keys) = (
        catalog.labels.len(),
        catalog.rel_types.len(),
        catalog.property_keys.len(),
    );
    let schema: Schema = serde_json::from_slice(r.bytes()?).map_err(|e| format!("schema: {e}"))?;
    let def_ok = |d: &IndexDef| (d.label as usize) < n_labels && (d.key as usize) < n_keys;
    let schema_ok = schema.indexes.iter().all(def_ok)
        && schema
            .constraints
            .iter()
            .all(|d| schema.indexes.contains(d))
        && schema.names.iter().all(|n| def_ok(&n.def));
    if !schema_ok {
        return Err("schema names unknown labels or keys".into());
    }

    let mut delta = Delta::empty(
        Arc::new(catalog),
        base_nodes,
        base_rels,
        Schema::default(),
        &[],
    );
    delta.changed = changed;
    delta.node_bound = node_bound;
    delta.rel_bound = rel_bound;

    // Nodes: every id of base_nodes..node_bound is a created node.
    let n = r.count(3, "nodes")?;
    let (mut prev, mut created) = (None, 0u64);
    for _ in 0..n {
        let id = r.gap(&mut prev, node_bound, "node")?;
        let flags = r.below(4, "node flags")?;
        let is_created = flags & 1 != 0;
        if is_created != (id >= base_nodes) {
            return r.err(&format!("node {id}: created flag disagrees with the base"));
        }
        created += u64::from(is_created);
        let k = r.count(1, "labels")?;
        let mut labels = crate::delta::NodeLabels::with_capacity(k);
        for _ in 0..k {
            let l = r.u32(n_labels, "label")?;
            if labels.last().is_some_and(|&p| p >= l) {
                return r.err("labels not strictly increasing");
            }
            labels.push(l);
        }
        let props = r.props(n_keys)?;
        let deleted = flags & 2 != 0;
        if deleted {
            delta.deleted_nodes.insert(id);
        }
        *delta.nodes.entry(id, NodeDelta::default) = NodeDelta {
            created: is_created,
            deleted,
            labels,
            props,
        };
    }
    if created != node_bound - base_nodes {
        return r.err("created nodes missing");
    }

    let n = r.count(6, "relationships")?;
    let (mut prev, mut created) = (None, 0u64);
    for _ in 0..n {
        let id = r.gap(&mut prev, rel_bound, "relationship")?;
        let flags = r.below(4, "relationship flags")?;
        let is_created = flags & 1 != 0;
        if is_created != (id >= base_rels) {
            return r.err(&format!(
                "relationship {id}: created flag disagrees with the base"
            ));
        }
        created += u64::from(is_created);
        let rel_type = r.u32(n_types, "relationship type")?;
        let start = r.below(node_bound, "start node")?;
        let end = r.below(node_bound, "end node")?;
        let props = r.props(n_keys)?;
        *delta.rels.entry(id, || RelDelta {
            created: false,
            deleted: false,
            rel_type,
            start,
            end,
            props: Default::default(),
        }) = RelDelta {
            created: is_created,
            deleted: flags & 2 != 0,
            rel_type,
            start,
            end,
            props,
        };
    }
    if created != rel_bound - base_rels {
        return r.err("created relationships missing");
    }

    let types = r.count(2, "adjacency types")?;
    if types > n_types {
        return r.err("adjacency of unknown relationship types");
    }
    delta.adj.resize_with(types, Default::default);
    for t in 0..types {
        for dir in 0..2 {
            let lists = r.count(2, "adjacency lists")?;
            let mut prev = None;
            for _ in 0..lists {
                let node = r.gap(&mut prev, node_bound, "adjacency node")?;
                let entries = match r.u()? {
                    LIST_WHOLE => r.entries(node_bound, rel_bound)?,
                    LIST_DIFF => {
                        let base_entries = if node < base_nodes {
                            base_list(base.store, node, t, dir == 0)
                        } else {
                            Vec::new()
                        };
                        let removed = r.count(1, "removed entries")?;
                        let mut keep = vec![true; base_entries.len()];
                        let mut prev = None;
                        for _ in 0..removed {
                            let p = r.gap(&mut prev, base_entries.len() as u64, "removed entry")?;
                            keep[p as usize] = false;
                        }
                        let added = r.entries(node_bound, rel_bound)?;
                        let mut merged: Vec<(NodeId, RelId)> = base_entries
                            .into_iter()
                            .zip(keep)
                            .filter_map(|(e, k)| k.then_some(e))
                            .chain(added)
                            .collect();
                        merged.sort_unstable();
                        merged
                    }
                    v => return r.err(&format!("unknown adjacency list kind {v}")),
                };
                let len = entries.len();
                let mut list = AdjList {
                    neighbours: Vec::with_capacity(len),
                    rels: Vec::with_capacity(len),
                };
                list.neighbours.extend(entries.iter().map(|e| e.0));
                for (i, &(_, rel)) in entries.iter().enumerate() {
                    if i > 0 && entries[i - 1] >= entries[i] {
                        return r.err("adjacency list not sorted");
                    }
                    if rel >= base_rels {
                        let d = delta.rels.get(rel).expect("every created id is present");
                        let (me, other) = if dir == 0 {
                            (d.start, d.end)
                        } else {
                            (d.end, d.start)
                        };
                        if d.rel_type as usize != t || me != node || other != list.neighbours[i] {
                            return r.err(&format!(
                                "adjacency of node {node} lists relationship {rel}, which does not connect it"
                            ));
                        }
                    }
                    list.rels.push(rel);
                }
                *delta.adj[t][dir].entry(node, AdjList::default) = list;
            }
        }
    }

    let keys = r.count(2, "numeric columns")?;
    if keys > n_keys {
        return r.err("numeric columns of unknown keys");
    }
    for _ in 0..keys {
        let low = r.u()?;
        let pages = r.count(1 + 8 * PAGE_SLOTS, "numeric pages")?;
        let mut raw = Vec::with_capacity(pages);
        let mut prev = None;
        let page_bound = rel_bound.div_ceil(PAGE_SLOTS as u64);
        for _ in 0..pages {
            let p = r.gap(&mut prev, page_bound, "numeric page")?;
            if r.bytes.len() - r.pos < 8 * PAGE_SLOTS {
                return r.err("numeric page: unexpected end");
            }
            let slots = r.bytes[r.pos..r.pos + 8 * PAGE_SLOTS]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            r.pos += 8 * PAGE_SLOTS;
            raw.push((p as usize, slots));
        }
        delta.rel_numbers.push(NumberPages::from_raw(raw, low));
    }

    let n = r.count(1, "touched types")?;
    if n > n_types {
        return r.err("touched types beyond the catalog");
    }
    for _ in 0..n {
        let t = r.flag("touched type")?;
        delta.types_touched.push(t);
    }
    if delta.types_touched.len() < delta.adj.len() {
        return r.err("adjacency of a type not marked as changed");
    }

    let n = r.count(2, "index sets")?;
    if n != schema.indexes.len() {
        return r.err("index sets do not match the schema");
    }
    for &def in &schema.indexes {
        let base_index = r.flag("index base flag")?;
        let span = match r.flag("index span flag")? {
            false => None,
            true => Some((r.value()?, r.value()?)),
        };
        let entries = r.count(2, "index entries")?;
        let mut set = imbl::OrdSet::new();
        for _ in 0..entries {
            let v = r.value()?;
            let node = r.below(node_bound, "indexed node")?;
            set.insert((IndexValue(v), node));
        }
        delta
            .index_sets
            .push(IndexSet::restore(def, base_index, set, span));
    }
    delta.schema = Arc::new(schema);

    delta.node_diff = r.i()?;
    delta.rel_diff = r.i()?;
    let n = r.count(1, "label counts")?;
    if n > n_labels {
        return r.err("label counts beyond the catalog");
    }
    for _ in 0..n {
        let d = r.i()?;
        delta.label_diff.push(d);
    }
    let n = r.count(2, "label changes")?;
    if n > n_labels {
        return r.err("label changes beyond the catalog");
    }
    for _ in 0..n {
        let mut ch = LabelChanges::default();
        let ranges = r.count(2, "label ranges")?;
        let mut last_end = 0;
        for i in 0..ranges {
            let (s, e) = (r.u()?, r.u()?);
            if s >= e || e > node_bound || (i > 0 && s <= last_end) {
                return r.err("label ranges not disjoint, sorted and inside the node bound");
            }
            last_end = e;
            ch.added.insert(s, e);
        }
        let removed = r.count(1, "label removals")?;
        for _ in 0..removed {
            let n = r.below(base_nodes, "unlabelled base node")?;
            ch.removed.insert(n);
        }
        delta.label_changes.push(ch);
    }
    let n = r.count(1, "type counts")?;
    if n > n_types {
        return r.err("type counts beyond the catalog");
    }
    for _ in 0..n {
        let d = r.i()?;
        delta.type_diff.push(d);
    }
    if delta.type_diff.len() < delta.types_touched.len() {
        return r.err("type counts shorter than the touched types");
    }
    let n = r.count(4, "triple counts")?;
    let mut triples = BTreeMap::new();
    for _ in 0..n {
        let key = (
            r.u32(n_labels, "label")?,
            r.u32(n_types, "type")?,
            r.u32(n_labels, "label")?,
        );
        triples.insert(key, r.i()?);
    }
    delta.triple_diff = Arc::new(triples);
    delta.triples_inexact = r.flag("triples inexact")?;
    if r.pos != body.len() {
        return r.err("trailing bytes");
    }
    delta.pack();
    Ok(delta)
}

/// Reads and checks the delta file `name` in `dir` over `base`.
pub(crate) fn read(dir: &Path, name: &str, base: &Base<'_>) -> Result<Delta> {
    let path = dir.join(name);
    let bytes = fs::read(&path).map_err(|e| Error::io(path.display(), e))?;
    decode(&bytes, base).map_err(|why| {
        Error::new(
            ErrorKind::CorruptDatabase,
            format!("{}: {why}", path.display()),
        )
    })
}

/// Decodes `bytes` as a delta file over an empty base and reports whether
/// it is valid; for fuzzing the decoder (it must refuse, never panic).
pub fn check_bytes(bytes: &[u8]) -> std::result::Result<(), String> {
    let catalog = Catalog::default();
    let base = Base {
        node_bound: 0,
        rel_bound: 0,
        catalog: &catalog,
        store: None,
    };
    // The body decoder too, so that fuzzing reaches past the checksum.
    let body = decode_body(bytes, &base).map(|_| ());
    decode(bytes, &base).map(|_| ()).and(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::Database;
    use crate::GraphBuilder;

    /// A database whose delta has every kind of change.
    fn varied() -> (tempfile::TempDir, Database) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        // Base: a hub 0 -R-> 1..=100.
        let mut b = GraphBuilder::new();
        let ids = b
            .add_nodes(crate::NodeGroupInput {
                rows: 101,
                labels: vec!["H".into()],
                row_labels: None,
                properties: Vec::new(),
            })
            .unwrap();
        b.add_relationships(
            "R",
            crate::RelGroupInput {
                sources: vec![ids[0]; 100],
                targets: ids[1..].to_vec(),
                properties: Vec::new(),
            },
        )
        .unwrap();
        b.write(&dir).unwrap();
        let db = Database::open(&dir).unwrap();
        let mut txn = db.begin_write().unwrap();
        txn.create_index("P", "id", None).unwrap();
        let mut nodes = Vec::new();
        for i in 0..40i64 {
            let labels: &[&str] = if i % 3 == 0 { &["P", "Q"] } else { &["P"] };
            let props = [
                ("id", Value::Int(i)),
                ("s", Value::String(format!("n{i}"))),
                (
                    "l",
                    Value::List(vec![Value::Float(i as f64), Value::Float(0.5)]),
                ),
            ];
            nodes.push(txn.create_node(labels, &props).unwrap());
        }
        // 1,100 relationships: the numeric pages span two pages.
        for i in 0..1100usize {
            let (a, b) = (nodes[i % 40], nodes[(i * 7 + 1) % 40]);
            let w = if i % 5 == 0 {
                Value::from("x")
            } else {
                Value::Float(i as f64 / 3.0)
            };
            txn.create_relationship(a, b, if i % 2 == 0 { "R" } else { "S" }, &[("w", w)])
                .unwrap();
        }
        txn.commit().unwrap();
        let mut txn = db.begin_write().unwrap();
        txn.create_relationship(0, nodes[0], "R", &[]).unwrap();
        txn.create_relationship(0, 7, "R", &[]).unwrap();
        let base_rel = db.snapshot().adjacency(0, 0, Direction::Outgoing).rel_id(3);
        txn.delete_relationship(base_rel).unwrap();
        txn.delete_node(nodes[5], true).unwrap();
        txn.remove_label(nodes[6], "P").unwrap();
        txn.set_node_property(nodes[7], "id", Value::Null).unwrap();
        txn.create_unique_constraint("Q", "s", None).unwrap();
        txn.commit().unwrap();
        (tmp, db)
    }

    fn base_of(db: &Database) -> (Arc<crate::database::Store>, Arc<Delta>) {
        let s = db.snapshot();
        (s.store().clone(), s.delta().clone())
    }

    #[test]
    fn a_delta_reads_back_as_it_was_written() {
        let (_tmp, db) = varied();
        let (store, delta) = base_of(&db);
        let bytes = encode(&delta, &store);
        let base = Base {
            node_bound: store.manifest.node_bound,
            rel_bound: store.rel_bound(),
            catalog: &store.manifest.catalog,
            store: Some(&store),
        };
        let back = decode(&bytes, &base).unwrap();
        assert_eq!(encode(&back, &store), bytes);
        // The hub's lists were saved as differences from the base.
        let whole = {
            let mut o = Out(Vec::new());
            let (n, r) = delta.adj(0, true, 0).unwrap();
            put_list(&mut o, &[], n, r);
            o.0.len()
        };
        let mut o = Out(Vec::new());
        let (n, r) = delta.adj(0, true, 0).unwrap();
        put_list(&mut o, &base_list(Some(&store), 0, 0, true), n, r);
        assert_eq!(o.0[0] as u64, LIST_DIFF);
        assert!(o.0.len() * 4 < whole, "{} vs {whole}", o.0.len());
        assert_eq!(back.adj(0, true, 0), delta.adj(0, true, 0));
        assert_eq!(back.adj(0, false, 7), delta.adj(0, false, 7));
        assert_eq!(back.deleted_nodes, delta.deleted_nodes);
        assert_eq!(back.node_bound, delta.node_bound);
        // A delta over another base is refused.
        let other = Base {
            node_bound: 1,
            ..base
        };
        assert!(decode(&bytes, &other).unwrap_err().contains("base"));
    }

    /// Fuzz smoke test: damaged bodies with a valid checksum (so the
    /// structural checks are reached) are refused or read, never panic.
    #[test]
    fn damaged_bodies_never_panic() {
        let (_tmp, db) = varied();
        let (store, delta) = base_of(&db);
        let good = encode(&delta, &store);
        let base = Base {
            node_bound: store.manifest.node_bound,
            rel_bound: store.rel_bound(),
            catalog: &store.manifest.catalog,
            store: Some(&store),
        };
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let mut refused = 0;
        for round in 0..600 {
            let mut body = good[HEADER_LEN..].to_vec();
            match round % 4 {
                0 => body.truncate(next(body.len())),
                1 => {
                    let at = next(body.len());
                    body.insert(at, next(256) as u8);
                }
                _ => {
                    for _ in 0..1 + next(4) {
                        let at = next(body.len());
                        body[at] = next(256) as u8;
                    }
                }
            }
            let mut file = good[..HEADER_LEN].to_vec();
            file[12..16].copy_from_slice(&crc32c::crc32c(&body).to_le_bytes());
            file[16..24].copy_from_slice(&(body.len() as u64).to_le_bytes());
            file.extend_from_slice(&body);
            if decode(&file, &base).is_err() {
                refused += 1;
            }
            let _ = check_bytes(&file);
            let _ = check_bytes(&body);
        }
        assert!(refused > 200, "most damage is detected ({refused})");
    }
}
