//! Write transactions.
//!
//! ## Lock protocol
//! One write transaction at a time per database directory, across threads
//! and processes: [`crate::Database::begin_write`] takes the writer lock
//! (this handle's slot, then the `flock` of [`crate::lock`]), waiting up to
//! [`crate::DatabaseOptions::lock_timeout`], then failing with
//! `TransientError` / `LockAcquisitionTimeout` (which a client may retry;
//! the message names the holding process). With the lock it catches up with
//! what other processes committed. The lock is held by the [`WriteTxn`] value
//! and released when it commits, rolls back, is dropped, or is open longer
//! than [`crate::DatabaseOptions::transaction_timeout`] (its commit then
//! fails with `TransactionTimedOut`). Checkpoints take the same lock. Readers
//! never take it: they read the published version through an atomic
//! pointer swap.
//!
//! ## Isolation
//! A transaction starts from the latest published version and changes a
//! private copy of the delta (copy-on-write pages, so the copy costs what it
//! touches). It reads its own writes ([`WriteTxn`] implements [`GraphRead`];
//! [`WriteTxn::snapshot`] hands out an immutable view of its current state).
//! Nothing is visible to others until [`WriteTxn::commit`] has made the
//! commit's log record durable and then published the new version in one
//! atomic store. Rolling back (or dropping) discards the private copy.
//!
//! Every operation is validated before it changes anything, so a failed
//! operation leaves the transaction as it was and the caller may go on or
//! roll back.

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::database::Shared;
use crate::delta::{set_prop, AdjList, Delta, IndexSet, NodeDelta, Props, RelDelta};
use crate::index::index_order;
use crate::schema::{IndexDef, Schema, SchemaName, SchemaObjectKind};
use crate::snapshot::{Direction, GraphRead, NeighbourBatch, RelInfo, Snapshot};
use crate::stats::Statistics;
use crate::wal::Op;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use std::ops::Range;
use std::sync::Arc;

/// Side effects of a transaction, as the engine reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteCounters {
    /// Nodes created.
    pub nodes_created: u64,
    /// Nodes deleted.
    pub nodes_deleted: u64,
    /// Relationships created.
    pub relationships_created: u64,
    /// Relationships deleted (including by detach delete).
    pub relationships_deleted: u64,
    /// Properties set or removed (including those given at creation).
    pub properties_set: u64,
    /// Labels added (including those given at creation).
    pub labels_added: u64,
    /// Labels removed.
    pub labels_removed: u64,
    /// Indexes created.
    pub indexes_added: u64,
    /// Indexes dropped.
    pub indexes_removed: u64,
    /// Constraints created.
    pub constraints_added: u64,
    /// Constraints dropped.
    pub constraints_removed: u64,
}

/// What a successful commit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitInfo {
    /// The commit's number (increasing; 0 when nothing was written and no
    /// record was logged).
    pub commit: u64,
    /// The transaction's side effects.
    pub counters: WriteCounters,
}

/// The state of a transaction without its lock (also used by recovery to
/// replay logged operations through the same code).
pub(crate) struct TxnState {
    pub(crate) snap: Snapshot,
    pub(crate) ops: Vec<Op>,
    pub(crate) counters: WriteCounters,
    /// Replaying the log: operations are applied but not recorded again.
    pub(crate) replaying: bool,
}

fn not_found(what: &str, id: u64) -> Error {
    Error::new(
        ErrorKind::EntityNotFound,
        format!("{what} {id} does not exist (it may have been deleted)"),
    )
    .with_code("EntityNotFound")
}

fn check_storable(key: &str, value: &Value) -> Result<()> {
    if value.is_null() || value.is_storable() {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::TypeError,
        format!(
            "property `{key}` cannot be set to a value of type {}: only numbers, strings, \
             booleans, temporal values and lists of them (without nulls) can be stored",
            value.type_name()
        ),
    )
    .with_code("InvalidPropertyType"))
}

impl TxnState {
    pub(crate) fn new(snap: Snapshot) -> TxnState {
        TxnState {
            snap,
            ops: Vec::new(),
            counters: WriteCounters::default(),
            replaying: false,
        }
    }

    /// A state that replays log records on `snap` (see `follow::replay`):
    /// it applies operations without recording them again.
    pub(crate) fn replaying(snap: Snapshot) -> TxnState {
        TxnState {
            replaying: true,
            ..TxnState::new(snap)
        }
    }

    /// The delta for writing; invalidates the lazily computed caches.
    fn delta(&mut self) -> &mut Delta {
        let d = self.snap.delta_mut();
        d.changed = true;
        d.label_cache = Default::default();
        d.stats_cache = Default::default();
        d.node_ranges_cache = Default::default();
        d.rel_runs_cache = Default::default();
        d
    }

    /// Counts a relationship created (`by` = 1) or deleted (-1) in the
    /// triple statistics, with its endpoints' current labels.
    fn count_triples(&mut self, start: NodeId, t: RelTypeId, end: NodeId, by: i64) {
        let source = self.snap.node_labels(start).to_vec();
        let target = self.snap.node_labels(end).to_vec();
        self.delta().count_triples(&source, t, &target, by);
    }

    /// A label of `node` changes: if it has relationships, the triple
    /// counts of their types are no longer exact.
    fn labels_changing(&mut self, node: NodeId) {
        if self.snap.delta().triples_inexact {
            return;
        }
        let connected = (0..self.snap.catalog().rel_types.len() as RelTypeId).any(|t| {
            [Direction::Outgoing, Direction::Incoming]
                .into_iter()
                .any(|dir| !self.snap.adjacency(node, t, dir).is_empty())
        });
        if connected {
            self.delta().triples_inexact = true;
        }
    }

    fn catalog_mut(&mut self) -> &mut Catalog {
        Arc::make_mut(&mut self.delta().catalog)
    }

    fn label_id(&mut self, name: &str) -> LabelId {
        match self.snap.catalog().label_id(name) {
            Some(id) => id,
            None => self.catalog_mut().labels.intern(name),
        }
    }

    fn key_id(&mut self, name: &str) -> PropertyKeyId {
        match self.snap.catalog().property_key_id(name) {
            Some(id) => id,
            None => self.catalog_mut().property_keys.intern(name),
        }
    }

    fn type_id(&mut self, name: &str) -> RelTypeId {
        match self.snap.catalog().rel_type_id(name) {
            Some(id) => id,
            None => self.catalog_mut().rel_types.intern(name),
        }
    }

    fn require_node(&self, node: NodeId) -> Result<()> {
        if self.snap.node_exists(node) {
            Ok(())
        } else {
            Err(not_found("node", node))
        }
    }

    /// Current values of every index for `node` (`None`: not indexed).
    fn index_values(&self, node: NodeId) -> Vec<Option<Value>> {
        let exists = self.snap.node_exists(node);
        self.snap
            .delta()
            .index_sets
            .iter()
            .map(|s| {
                if !exists || !self.snap.has_label(node, s.def.label) {
                    return None;
                }
                Some(self.snap.node_property(node, s.def.key)).filter(|v| !v.is_null())
            })
            .collect()
    }

    /// Replaces `node`'s index entries given the values before a change.
    fn reindex(&mut self, node: NodeId, before: Vec<Option<Value>>) {
        let after = self.index_values(node);
        let sets = &mut self.delta().index_sets;
        for ((set, b), a) in sets.iter_mut().zip(before).zip(after) {
            if b != a {
                if let Some(b) = b {
                    set.remove(b, node);
                }
                if let Some(a) = a {
                    set.insert(a, node);
                }
            }
        }
    }

    /// The node's delta entry, created from the base the first time (with its
    /// index entries copied into the delta, since base entries of touched
    /// nodes no longer count).
    fn node_delta(&mut self, node: NodeId) -> &mut NodeDelta {
        if self.snap.delta().nodes.get(node).is_none() {
            let labels = self.snap.node_labels(node).into();
            let entries = self.index_values(node);
            let d = self.delta();
            d.nodes.entry(node, || NodeDelta {
                labels,
                ..NodeDelta::default()
            });
            for (set, v) in d.index_sets.iter_mut().zip(entries) {
                if let Some(v) = v {
                    set.insert(v, node);
                }
            }
        }
        self.delta().nodes.entry(node, NodeDelta::default)
    }

    fn rel_delta(&mut self, rel: RelId, info: RelInfo) -> &mut RelDelta {
        self.delta().rels.entry(rel, || RelDelta {
            created: false,
            deleted: false,
            rel_type: info.rel_type,
            start: info.start,
            end: info.end,
            props: Props::new(),
        })
    }

    /// The node's complete list of a type and direction, copied from the base the first time.
    fn adj_list(&mut self, rel_type: RelTypeId, dir: Direction, node: NodeId) -> &mut AdjList {
        let store = self.snap.store().clone();
        let d = self.delta();
        d.touch_type(rel_type);
        d.adj[rel_type as usize][usize::from(dir == Direction::Incoming)].entry(node, || {
            let base = store.adjacency(node, rel_type, dir);
            AdjList {
                neighbours: base.neighbours().to_vec(),
                rels: (0..base.len()).map(|i| base.rel_id(i)).collect(),
            }
        })
    }

    /// Fails if another node with `label` has `key` = `value` under a uniqueness constraint.
    fn check_unique(
        &self,
        label: LabelId,
        key: PropertyKeyId,
        value: &Value,
        node: Option<NodeId>,
    ) -> Result<()> {
        if value.is_null() || !self.snap.schema().is_unique(label, key) {
            return Ok(());
        }
        let hits = self.snap.index_seek(label, key, value).unwrap_or_default();
        if let Some(other) = hits.into_iter().find(|&n| Some(n) != node) {
            let c = self.snap.catalog();
            return Err(Error::new(
                ErrorKind::ConstraintValidationFailed,
                format!(
                    "Node({other}) already exists with label `{}` and property `{}` = {value}",
                    c.label_name(label),
                    c.property_key_name(key)
                ),
            )
            .with_code("UniquenessConstraintViolation"));
        }
        Ok(())
    }

    fn record(&mut self, op: impl FnOnce() -> Op) {
        if !self.replaying {
            self.ops.push(op());
        }
    }

    pub(crate) fn create_node(
        &mut self,
        labels: &[&str],
        props: &[(&str, Value)],
    ) -> Result<NodeId> {
        for (k, v) in props {
            check_storable(k, v)?;
        }
        let mut label_ids: Vec<LabelId> = labels.iter().map(|l| self.label_id(l)).collect();
        label_ids.sort_unstable();
        label_ids.dedup();
        let mut key_props = Props::new();
        for (k, v) in props {
            let key = self.key_id(k);
            if v.is_null() {
                key_props.retain(|p| p.0 != key);
            } else {
                set_prop(&mut key_props, key, v.clone());
            }
        }
        for &l in &label_ids {
            for (k, v) in &key_props {
                self.check_unique(l, *k, v, None)?;
            }
        }
        let d = self.delta();
        let id = d.node_bound;
        d.node_bound += 1;
        d.node_diff += 1;
        for &l in &label_ids {
            d.count_label(l, id, 1, false);
        }
        let n_labels = label_ids.len() as u64;
        let n_props = key_props.len() as u64;
        d.nodes.entry(id, || NodeDelta {
            created: true,
            deleted: false,
            labels: label_ids.into_iter().collect(),
            props: key_props,
        });
        let before = vec![None; self.snap.delta().index_sets.len()];
        self.reindex(id, before);
        self.counters.nodes_created += 1;
        self.counters.labels_added += n_labels;
        self.counters.properties_set += n_props;
        self.record(|| Op::CreateNode {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            props: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        });
        Ok(id)
    }

    pub(crate) fn create_relationship(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: &str,
        props: &[(&str, Value)],
    ) -> Result<RelId> {
        self.require_node(start)?;
        self.require_node(end)?;
        for (k, v) in props {
            check_storable(k, v)?;
        }
        let t = self.type_id(rel_type);
        let mut key_props = Props::new();
        for (k, v) in props {
            let key = self.key_id(k);
            if v.is_null() {
                key_props.retain(|p| p.0 != key);
            } else {
                set_prop(&mut key_props, key, v.clone());
            }
        }
        let n_props = key_props.len() as u64;
        let d = self.delta();
        let id = d.rel_bound;
        d.rel_bound += 1;
        d.rel_diff += 1;
        d.touch_type(t);
        d.type_diff[t as usize] += 1;
        for (key, value) in &key_props {
            d.note_rel_value(id, *key, Some(value));
        }
        d.rels.entry(id, || RelDelta {
            created: true,
            deleted: false,
            rel_type: t,
            start,
            end,
            props: key_props,
        });
        self.adj_list(t, Direction::Outgoing, start).insert(end, id);
        self.adj_list(t, Direction::Incoming, end).insert(start, id);
        self.count_triples(start, t, end, 1);
        self.counters.relationships_created += 1;
        self.counters.properties_set += n_props;
        self.record(|| Op::CreateRel {
            start,
            end,
            rel_type: rel_type.to_string(),
            props: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        });
        Ok(id)
    }

    pub(crate) fn set_node_property(
        &mut self,
        node: NodeId,
        key: &str,
        value: Value,
    ) -> Result<()> {
        self.require_node(node)?;
        check_storable(key, &value)?;
        let k = self.key_id(key);
        if value.is_null() && self.snap.node_property(node, k).is_null() {
            return Ok(());
        }
        for &l in self.snap.node_labels(node) {
            self.check_unique(l, k, &value, Some(node))?;
        }
        let before = self.index_values(node);
        let d = self.node_delta(node);
        if d.created && value.is_null() {
            d.props.retain(|p| p.0 != k);
        } else {
            set_prop(&mut d.props, k, value.clone());
        }
        self.reindex(node, before);
        self.counters.properties_set += 1;
        self.record(|| Op::SetNodeProperty {
            node,
            key: key.to_string(),
            value,
        });
        Ok(())
    }

    pub(crate) fn set_rel_property(&mut self, rel: RelId, key: &str, value: Value) -> Result<()> {
        let info = self
            .snap
            .relationship(rel)
            .ok_or_else(|| not_found("relationship", rel))?;
        check_storable(key, &value)?;
        let k = self.key_id(key);
        if value.is_null() && self.snap.rel_property(rel, k).is_null() {
            return Ok(());
        }
        let delta = self.delta();
        delta.touch_type(info.rel_type);
        delta.note_rel_value(rel, k, Some(&value));
        let d = self.rel_delta(rel, info);
        if d.created && value.is_null() {
            d.props.retain(|p| p.0 != k);
        } else {
            set_prop(&mut d.props, k, value.clone());
        }
        self.counters.properties_set += 1;
        self.record(|| Op::SetRelProperty {
            rel,
            key: key.to_string(),
            value,
        });
        Ok(())
    }

    pub(crate) fn add_label(&mut self, node: NodeId, label: &str) -> Result<bool> {
        self.require_node(node)?;
        let l = self.label_id(label);
        if self.snap.has_label(node, l) {
            return Ok(false);
        }
        let constrained: Vec<PropertyKeyId> = self
            .snap
            .schema()
            .constraints
            .iter()
            .filter(|c| c.label == l)
            .map(|c| c.key)
            .collect();
        for k in constrained {
            let v = self.snap.node_property(node, k);
            self.check_unique(l, k, &v, Some(node))?;
        }
        self.labels_changing(node);
        let before = self.index_values(node);
        let d = self.node_delta(node);
        if let Err(at) = d.labels.binary_search(&l) {
            d.labels.insert(at, l);
        }
        let in_base = self.snap.store().labels.has_label(node, l);
        self.delta().count_label(l, node, 1, in_base);
        self.reindex(node, before);
        self.counters.labels_added += 1;
        self.record(|| Op::AddLabel {
            node,
            label: label.to_string(),
        });
        Ok(true)
    }

    pub(crate) fn remove_label(&mut self, node: NodeId, label: &str) -> Result<bool> {
        self.require_node(node)?;
        let Some(l) = self.snap.catalog().label_id(label) else {
            return Ok(false);
        };
        if !self.snap.has_label(node, l) {
            return Ok(false);
        }
        self.labels_changing(node);
        let before = self.index_values(node);
        let d = self.node_delta(node);
        d.labels.retain(|x| *x != l);
        let in_base = self.snap.store().labels.has_label(node, l);
        self.delta().count_label(l, node, -1, in_base);
        self.reindex(node, before);
        self.counters.labels_removed += 1;
        self.record(|| Op::RemoveLabel {
            node,
            label: label.to_string(),
        });
        Ok(true)
    }

    pub(crate) fn delete_relationship(&mut self, rel: RelId) -> Result<()> {
        let info = self
            .snap
            .relationship(rel)
            .ok_or_else(|| not_found("relationship", rel))?;
        self.count_triples(info.start, info.rel_type, info.end, -1);
        let d = self.rel_delta(rel, info);
        d.deleted = true;
        // Not `clear`: a tombstone must not keep a spilled property buffer.
        d.props = Default::default();
        let d = self.delta();
        d.touch_type(info.rel_type);
        d.type_diff[info.rel_type as usize] -= 1;
        d.rel_diff -= 1;
        self.adj_list(info.rel_type, Direction::Outgoing, info.start)
            .remove(info.end, rel);
        self.adj_list(info.rel_type, Direction::Incoming, info.end)
            .remove(info.start, rel);
        self.counters.relationships_deleted += 1;
        self.record(|| Op::DeleteRel { rel });
        Ok(())
    }

    /// Every relationship of `node`, each once.
    fn relationships_of(&self, node: NodeId) -> Vec<RelId> {
        let mut rels = Vec::new();
        for t in 0..self.snap.catalog().rel_types.len() as RelTypeId {
            for dir in [Direction::Outgoing, Direction::Incoming] {
                let adj = self.snap.adjacency(node, t, dir);
                rels.extend((0..adj.len()).map(|i| adj.rel_id(i)));
            }
        }
        rels.sort_unstable();
        rels.dedup();
        rels
    }

    pub(crate) fn delete_node(&mut self, node: NodeId, detach: bool) -> Result<()> {
        self.require_node(node)?;
        let rels = self.relationships_of(node);
        if !rels.is_empty() && !detach {
            return Err(Error::new(
                ErrorKind::ConstraintVerificationFailed,
                format!(
                    "Cannot delete node<{node}>, because it still has {} relationship(s). \
                     To delete this node, you must first delete its relationships \
                     (or use DETACH DELETE).",
                    rels.len()
                ),
            )
            .with_code("DeleteConnectedNode"));
        }
        for rel in rels {
            self.delete_relationship(rel)?;
        }
        let before = self.index_values(node);
        let d = self.node_delta(node);
        let labels = std::mem::take(&mut d.labels);
        d.deleted = true;
        // Not `clear`: a tombstone must not keep a spilled property buffer.
        d.props = Default::default();
        let store = self.snap.store().clone();
        let delta = self.delta();
        delta.node_diff -= 1;
        delta.deleted_nodes.insert(node);
        for l in labels {
            delta.count_label(l, node, -1, store.labels.has_label(node, l));
        }
        self.reindex(node, before);
        self.counters.nodes_deleted += 1;
        self.record(|| Op::DeleteNode { node });
        Ok(())
    }

    /// Live nodes carrying `label` with their value of `key` (non-null only).
    fn values_of(&self, label: LabelId, key: PropertyKeyId) -> Vec<(Value, NodeId)> {
        self.snap
            .label_range_slice(label)
            .iter()
            .flat_map(|r| r.clone())
            .filter_map(|n| {
                let v = self.snap.node_property(n, key);
                (!v.is_null()).then_some((v, n))
            })
            .collect()
    }

    pub(crate) fn create_index(
        &mut self,
        label: &str,
        key: &str,
        name: Option<&str>,
    ) -> Result<bool> {
        let Some(def) = self.new_schema_object(SchemaObjectKind::Index, label, key, name)? else {
            return Ok(false);
        };
        let base = self.snap.store().index(def.label, def.key).is_some();
        let mut set = IndexSet::new(def, base);
        if base {
            // Untouched nodes are answered by the base index.
            for (n, d) in self.snap.delta().nodes.iter() {
                if !d.deleted && d.labels.binary_search(&def.label).is_ok() {
                    let v = self.snap.node_property(n, def.key);
                    if !v.is_null() {
                        set.insert(v, n);
                    }
                }
            }
        } else {
            for (v, n) in self.values_of(def.label, def.key) {
                set.insert(v, n);
            }
        }
        let d = self.delta();
        let schema = Arc::make_mut(&mut d.schema);
        schema.indexes.push(def);
        add_name(schema, name, SchemaObjectKind::Index, def);
        d.index_sets.push(set);
        self.counters.indexes_added += 1;
        self.record(|| Op::CreateIndex {
            label: label.to_string(),
            key: key.to_string(),
            name: name.map(str::to_string),
        });
        Ok(true)
    }

    /// The (label, key) pair of an object of `kind` about to be created, or
    /// `None` if it exists; `SchemaError` if `name` names another object.
    fn new_schema_object(
        &mut self,
        kind: SchemaObjectKind,
        label: &str,
        key: &str,
        name: Option<&str>,
    ) -> Result<Option<IndexDef>> {
        let def = IndexDef {
            label: self.label_id(label),
            key: self.key_id(key),
        };
        if self.snap.schema().objects(kind).contains(&def) {
            return Ok(None);
        }
        let Some(name) = name else {
            return Ok(Some(def));
        };
        match self.snap.schema().find(name, self.snap.catalog()) {
            Some((holder, held)) => Err(Error::new(
                ErrorKind::SchemaError,
                format!(
                    "the name `{name}` is taken by the {} on {}",
                    holder.noun(),
                    held.describe(self.snap.catalog())
                ),
            )
            .with_code("SchemaNameTaken")),
            None => Ok(Some(def)),
        }
    }

    pub(crate) fn drop_index(&mut self, label: &str, key: &str) -> Result<bool> {
        let c = self.snap.catalog();
        let (Some(l), Some(k)) = (c.label_id(label), c.property_key_id(key)) else {
            return Ok(false);
        };
        let def = IndexDef { label: l, key: k };
        if !self.snap.schema().indexes.contains(&def) {
            return Ok(false);
        }
        if self.snap.schema().constraints.contains(&def) {
            return Err(Error::new(
                ErrorKind::SchemaError,
                format!(
                    "the index on :{label}({key}) backs a uniqueness constraint; drop the constraint first"
                ),
            )
            .with_code("IndexDropFailed"));
        }
        let d = self.delta();
        let schema = Arc::make_mut(&mut d.schema);
        schema.indexes.retain(|x| *x != def);
        remove_name(schema, SchemaObjectKind::Index, def);
        d.index_sets.retain(|s| s.def != def);
        self.counters.indexes_removed += 1;
        self.record(|| Op::DropIndex {
            label: label.to_string(),
            key: key.to_string(),
        });
        Ok(true)
    }

    pub(crate) fn create_unique_constraint(
        &mut self,
        label: &str,
        key: &str,
        name: Option<&str>,
    ) -> Result<bool> {
        let Some(def) = self.new_schema_object(SchemaObjectKind::Constraint, label, key, name)?
        else {
            return Ok(false);
        };
        let mut values = self.values_of(def.label, def.key);
        values.sort_by(|a, b| index_order(&a.0, &b.0).then(a.1.cmp(&b.1)));
        if let Some(w) = values
            .windows(2)
            .find(|w| index_order(&w[0].0, &w[1].0).is_eq())
        {
            return Err(Error::new(
                ErrorKind::ConstraintVerificationFailed,
                format!(
                    "Unable to create a uniqueness constraint on :{label}({key}): Node({}) and \
                     Node({}) both have `{key}` = {}",
                    w[0].1, w[1].1, w[0].0
                ),
            )
            .with_code("ConstraintCreationFailed"));
        }
        // The index is created inside the constraint's log record.
        let ops = self.ops.len();
        let counters = self.counters;
        self.create_index(label, key, None)?;
        self.ops.truncate(ops);
        self.counters = counters;
        let schema = Arc::make_mut(&mut self.delta().schema);
        schema.constraints.push(def);
        add_name(schema, name, SchemaObjectKind::Constraint, def);
        self.counters.constraints_added += 1;
        self.record(|| Op::CreateConstraint {
            label: label.to_string(),
            key: key.to_string(),
            name: name.map(str::to_string),
        });
        Ok(true)
    }

    pub(crate) fn drop_constraint(&mut self, label: &str, key: &str) -> Result<bool> {
        let c = self.snap.catalog();
        let (Some(l), Some(k)) = (c.label_id(label), c.property_key_id(key)) else {
            return Ok(false);
        };
        let def = IndexDef { label: l, key: k };
        if !self.snap.schema().constraints.contains(&def) {
            return Ok(false);
        }
        let schema = Arc::make_mut(&mut self.delta().schema);
        schema.constraints.retain(|x| *x != def);
        remove_name(schema, SchemaObjectKind::Constraint, def);
        self.counters.constraints_removed += 1;
        self.record(|| Op::DropConstraint {
            label: label.to_string(),
            key: key.to_string(),
        });
        Ok(true)
    }

    /// Applies one logged operation (recovery).
    pub(crate) fn apply(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::CreateNode { labels, props: p } => {
                let labels: Vec<&str> = labels.iter().map(|s| s.as_str()).collect();
                let p: Vec<(&str, Value)> =
                    p.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                self.create_node(&labels, &p).map(|_| ())
            }
            Op::CreateRel {
                start,
                end,
                rel_type,
                props: p,
            } => {
                let p: Vec<(&str, Value)> =
                    p.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                self.create_relationship(*start, *end, rel_type, &p)
                    .map(|_| ())
            }
            Op::SetNodeProperty { node, key, value } => {
                self.set_node_property(*node, key, value.clone())
            }
            Op::SetRelProperty { rel, key, value } => {
                self.set_rel_property(*rel, key, value.clone())
            }
            Op::AddLabel { node, label } => self.add_label(*node, label).map(|_| ()),
            Op::RemoveLabel { node, label } => self.remove_label(*node, label).map(|_| ()),
            Op::DeleteRel { rel } => self.delete_relationship(*rel),
            Op::DeleteNode { node } => self.delete_node(*node, false),
            Op::CreateIndex { label, key, name } => {
                self.create_index(label, key, name.as_deref()).map(|_| ())
            }
            Op::DropIndex { label, key } => self.drop_index(label, key).map(|_| ()),
            Op::CreateConstraint { label, key, name } => self
                .create_unique_constraint(label, key, name.as_deref())
                .map(|_| ()),
            Op::DropConstraint { label, key } => self.drop_constraint(label, key).map(|_| ()),
        }
    }
}

/// A write transaction: holds the writer lock until it commits, rolls back
/// or is dropped (dropping an uncommitted transaction rolls it back). Reads
/// through [`GraphRead`] see the transaction's own writes.
///
/// Entity ids handed out continue after the current ones: a new node gets
/// the next id after [`GraphRead::node_bound`], a new relationship the next
/// after the largest relationship id. Ids of a rolled-back transaction are
/// reused.
pub struct WriteTxn {
    pub(crate) state: TxnState,
    pub(crate) shared: Arc<Shared>,
    /// Which holder of the writer lock this transaction is (see `Database::begin_write`).
    pub(crate) ticket: u64,
}

impl WriteTxn {
    /// An immutable view of the transaction's current state (its own writes
    /// included), shareable by every worker of a query; later writes of the
    /// transaction copy what they change instead of altering the view. Costs
    /// a packing of the adjacency pages the transaction wrote to (O(their
    /// size)): take one per statement, not one per row.
    pub fn snapshot(&self) -> Snapshot {
        let mut snap = self.state.snap.clone();
        if snap.delta().has_loose() {
            snap.delta_mut().pack();
        }
        snap
    }

    /// Like [`WriteTxn::snapshot`] but without packing: O(1), and reads of
    /// the adjacency pages the transaction wrote to go through one vector
    /// per node. For per-row evaluation between writes. Drop it before the
    /// next write, or that write copies the pages the view shares.
    pub fn view(&self) -> Snapshot {
        self.state.snap.clone()
    }

    /// Side effects so far.
    pub fn counters(&self) -> WriteCounters {
        self.state.counters
    }

    /// Creates a node with `labels` and `props` (null values are skipped;
    /// a repeated key keeps its last value). Fails with `TypeError` on a
    /// value that cannot be stored and `ConstraintValidationFailed` if a
    /// uniqueness constraint would be broken.
    pub fn create_node(&mut self, labels: &[&str], props: &[(&str, Value)]) -> Result<NodeId> {
        self.state.create_node(labels, props)
    }

    /// Creates a relationship `start -[rel_type]-> end`. Fails with
    /// `EntityNotFound` if an endpoint does not exist, `TypeError` on a value
    /// that cannot be stored.
    pub fn create_relationship(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: &str,
        props: &[(&str, Value)],
    ) -> Result<RelId> {
        self.state.create_relationship(start, end, rel_type, props)
    }

    /// Sets (or with `Value::Null` removes) a node property.
    pub fn set_node_property(&mut self, node: NodeId, key: &str, value: Value) -> Result<()> {
        self.state.set_node_property(node, key, value)
    }

    /// Sets (or with `Value::Null` removes) a relationship property.
    pub fn set_rel_property(&mut self, rel: RelId, key: &str, value: Value) -> Result<()> {
        self.state.set_rel_property(rel, key, value)
    }

    /// Adds a label; `Ok(false)` if the node already had it.
    pub fn add_label(&mut self, node: NodeId, label: &str) -> Result<bool> {
        self.state.add_label(node, label)
    }

    /// Removes a label; `Ok(false)` if the node did not have it.
    pub fn remove_label(&mut self, node: NodeId, label: &str) -> Result<bool> {
        self.state.remove_label(node, label)
    }

    /// Deletes a relationship; `EntityNotFound` if it does not exist (any more).
    pub fn delete_relationship(&mut self, rel: RelId) -> Result<()> {
        self.state.delete_relationship(rel)
    }

    /// Deletes a node. With `detach`, its relationships are deleted first;
    /// without, a node that has relationships is refused with
    /// `ConstraintVerificationFailed` / `DeleteConnectedNode` (the openCypher
    /// TCK's classification). `EntityNotFound` if the node does not exist.
    pub fn delete_node(&mut self, node: NodeId, detach: bool) -> Result<()> {
        self.state.delete_node(node, detach)
    }

    /// Creates a property index on (label, key), filled from existing data,
    /// called `name` if given (else `index_<Label>_<key>`); `Ok(false)` if it
    /// exists. `SchemaError` if another index or constraint has that name.
    pub fn create_index(&mut self, label: &str, key: &str, name: Option<&str>) -> Result<bool> {
        self.state.create_index(label, key, name)
    }

    /// Drops the index on (label, key); `Ok(false)` if there is none. An
    /// index backing a constraint cannot be dropped.
    pub fn drop_index(&mut self, label: &str, key: &str) -> Result<bool> {
        self.state.drop_index(label, key)
    }

    /// Creates a uniqueness constraint (and its index if missing), called
    /// `name` if given (else `constraint_<Label>_<key>`); fails with
    /// `ConstraintVerificationFailed` if existing nodes already share a value
    /// and with `SchemaError` if the name is taken. `Ok(false)` if it exists.
    pub fn create_unique_constraint(
        &mut self,
        label: &str,
        key: &str,
        name: Option<&str>,
    ) -> Result<bool> {
        self.state.create_unique_constraint(label, key, name)
    }

    /// Drops a uniqueness constraint (its index stays); `Ok(false)` if there is none.
    pub fn drop_constraint(&mut self, label: &str, key: &str) -> Result<bool> {
        self.state.drop_constraint(label, key)
    }

    /// Makes the transaction's writes durable (its log record is synced
    /// before this returns) and visible to new snapshots. On failure
    /// (`IoError`: disk full, failed sync) nothing of the transaction remains
    /// and the database stays usable. May run a checkpoint afterwards when
    /// the log has grown past its threshold (a failed checkpoint does not
    /// fail the commit: the log still holds everything).
    pub fn commit(self) -> Result<CommitInfo> {
        let shared = self.shared.clone();
        shared.commit(self)
    }

    /// Discards every write of the transaction.
    pub fn rollback(self) {}
}

impl Drop for WriteTxn {
    fn drop(&mut self) {
        self.shared.release_writer(self.ticket);
    }
}

impl GraphRead for WriteTxn {
    fn catalog(&self) -> &Catalog {
        self.state.snap.catalog()
    }
    fn statistics(&self) -> &Statistics {
        self.state.snap.statistics()
    }
    fn node_bound(&self) -> NodeId {
        self.state.snap.node_bound()
    }
    fn node_exists(&self, node: NodeId) -> bool {
        self.state.snap.node_exists(node)
    }
    fn label_ranges(&self, label: LabelId) -> Vec<Range<NodeId>> {
        self.state.snap.label_ranges(label)
    }
    fn node_labels(&self, node: NodeId) -> &[LabelId] {
        self.state.snap.node_labels(node)
    }
    fn has_label(&self, node: NodeId, label: LabelId) -> bool {
        self.state.snap.has_label(node, label)
    }
    fn node_property(&self, node: NodeId, key: PropertyKeyId) -> Value {
        self.state.snap.node_property(node, key)
    }
    fn node_properties(&self, node: NodeId, out: &mut Vec<(PropertyKeyId, Value)>) {
        self.state.snap.node_properties(node, out)
    }
    fn neighbours_batch(
        &self,
        nodes: &[NodeId],
        rel_type: RelTypeId,
        dir: Direction,
        out: &mut NeighbourBatch,
    ) {
        self.state.snap.neighbours_batch(nodes, rel_type, dir, out)
    }
    fn relationship(&self, rel: RelId) -> Option<RelInfo> {
        self.state.snap.relationship(rel)
    }
    fn rel_property(&self, rel: RelId, key: PropertyKeyId) -> Value {
        self.state.snap.rel_property(rel, key)
    }
    fn rel_properties(&self, rel: RelId, out: &mut Vec<(PropertyKeyId, Value)>) {
        self.state.snap.rel_properties(rel, out)
    }
    fn index_seek(&self, label: LabelId, key: PropertyKeyId, value: &Value) -> Option<Vec<NodeId>> {
        self.state.snap.index_seek(label, key, value)
    }
}

/// Records `name` (if given) for the object of `kind` on `def`.
fn add_name(schema: &mut Schema, name: Option<&str>, kind: SchemaObjectKind, def: IndexDef) {
    if let Some(name) = name {
        schema.names.push(SchemaName {
            name: name.to_string(),
            kind,
            def,
        });
    }
}

/// Forgets the given name of the object of `kind` on `def`.
fn remove_name(schema: &mut Schema, kind: SchemaObjectKind, def: IndexDef) {
    schema.names.retain(|n| !(n.kind == kind && n.def == def));
}
