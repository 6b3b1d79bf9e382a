//! Builds a new database directory from in-memory node groups and
//! relationship lists (the bulk-import path; no log is written).
//!
//! Node groups get contiguous id ranges in the order they are added; inside a
//! group, rows are ordered by label set so every label is a few id ranges.
//! Relationships of one type are merged, sorted into CSRs, and their property
//! columns reordered into outgoing order. Indexes and statistics are computed
//! before anything is written, and the manifest is written last: a directory
//! without a manifest is not a database.

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::view::write_column;
use crate::column::{ColumnBuilder, ColumnData};
use crate::csr::{CsrData, CsrMeta, RankData, RankMeta};
use crate::index::{index_order, IndexMeta};
use crate::labels::{LabelIndex, LabelRun};
use crate::manifest::{
    sync_dir, Manifest, NodeGroupMeta, RelTypeMeta, FORMAT_NAME, FORMAT_VERSION_MIN,
};
use crate::segment::SegmentWriter;
use crate::stats::{DegreeStats, IndexStats, RelTypeStats, Statistics, TripleCount};
use rhizome_common::{Error, ErrorKind, NodeId, Result, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Extra labels per row (from an import file's `:LABEL` column).
#[derive(Debug, Clone, Default)]
pub struct RowLabels {
    /// The distinct extra-label sets.
    pub sets: Vec<Vec<String>>,
    /// For each row, an index into `sets`.
    pub row_set: Vec<u32>,
}

/// A group of nodes to add.
#[derive(Debug, Clone, Default)]
pub struct NodeGroupInput {
    /// Number of rows (nodes).
    pub rows: u64,
    /// Labels every node of the group carries.
    pub labels: Vec<String>,
    /// Labels that vary per row, if any.
    pub row_labels: Option<RowLabels>,
    /// Property columns, each with `rows` rows.
    pub properties: Vec<(String, ColumnData)>,
}

/// Relationships of one type to add: `sources[i] -> targets[i]`.
#[derive(Debug, Clone, Default)]
pub struct RelGroupInput {
    /// Source node ids.
    pub sources: Vec<NodeId>,
    /// Target node ids.
    pub targets: Vec<NodeId>,
    /// Property columns, each with one row per relationship.
    pub properties: Vec<(String, ColumnData)>,
}

/// What [`GraphBuilder::write`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WriteSummary {
    /// Size of the database directory's files in bytes.
    pub bytes_on_disk: u64,
    /// Number of nodes.
    pub node_count: u64,
    /// Number of relationships.
    pub relationship_count: u64,
    /// Nodes per label name, in label id order.
    pub label_counts: Vec<(String, u64)>,
    /// Relationships per type name, in type id order.
    pub type_counts: Vec<(String, u64)>,
}

struct NodeGroup {
    start: NodeId,
    count: u64,
    runs: Vec<LabelRun>,
    columns: Vec<(PropertyKeyId, ColumnData)>,
}

/// Collects a whole graph in memory and writes it as a new database.
#[derive(Default)]
pub struct GraphBuilder {
    catalog: Catalog,
    label_sets: Vec<Vec<LabelId>>,
    label_set_ids: HashMap<Vec<LabelId>, u32>,
    groups: Vec<NodeGroup>,
    next_node: NodeId,
    rels: BTreeMap<RelTypeId, Vec<RelGroupInput>>,
    indexes: Vec<(LabelId, PropertyKeyId)>,
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// Number of nodes added so far (node ids handed out are below it).
    pub fn node_count(&self) -> u64 {
        self.next_node
    }

    fn label_set(&mut self, names: impl IntoIterator<Item = impl AsRef<str>>) -> u32 {
        let mut ids: Vec<LabelId> = names
            .into_iter()
            .map(|n| self.catalog.labels.intern(n.as_ref()))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        if let Some(&id) = self.label_set_ids.get(&ids) {
            return id;
        }
        let id = self.label_sets.len() as u32;
        self.label_sets.push(ids.clone());
        self.label_set_ids.insert(ids, id);
        id
    }

    /// Adds a group of nodes and returns the id of each input row
    /// (`ids[i]` for row `i`). Rows are reordered by label set.
    pub fn add_nodes(&mut self, group: NodeGroupInput) -> Result<Vec<NodeId>> {
        let rows = group.rows;
        for (key, column) in &group.properties {
            if column.rows() != rows {
                return Err(Error::internal(format!(
                    "column {key} has {} rows, the group {rows}",
                    column.rows()
                )));
            }
        }
        let start = self.next_node;
        // Label set of each row, then a stable order of rows by set.
        let (row_sets, order): (Vec<u32>, Option<Vec<u64>>) = match &group.row_labels {
            None => {
                let set = self.label_set(&group.labels);
                (vec![set; rows as usize], None)
            }
            Some(extra) => {
                if extra.row_set.len() as u64 != rows {
                    return Err(Error::internal(
                        "row label count differs from the row count",
                    ));
                }
                let set_ids: Vec<u32> = extra
                    .sets
                    .iter()
                    .map(|s| self.label_set(group.labels.iter().chain(s.iter())))
                    .collect();
                let row_sets: Vec<u32> = extra
                    .row_set
                    .iter()
                    .map(|&s| {
                        set_ids
                            .get(s as usize)
                            .copied()
                            .ok_or_else(|| Error::internal("row label set out of range"))
                    })
                    .collect::<Result<_>>()?;
                let mut order: Vec<u64> = (0..rows).collect();
                order.sort_by_key(|&r| row_sets[r as usize]);
                (row_sets, Some(order))
            }
        };
        let mut ids = vec![0; rows as usize];
        let mut runs: Vec<LabelRun> = Vec::new();
        for position in 0..rows {
            let row = order.as_ref().map_or(position, |o| o[position as usize]);
            let id = start + position;
            ids[row as usize] = id;
            let set = row_sets[row as usize];
            if runs.last().is_none_or(|r| r.label_set != set) {
                runs.push(LabelRun {
                    start: id,
                    label_set: set,
                });
            }
        }
        let columns = group
            .properties
            .into_iter()
            .map(|(key, column)| {
                let key = self.catalog.property_keys.intern(&key);
                let column = match &order {
                    Some(o) => column.permuted(o),
                    None => column,
                };
                (key, column)
            })
            .collect();
        self.groups.push(NodeGroup {
            start,
            count: rows,
            runs,
            columns,
        });
        self.next_node += rows;
        Ok(ids)
    }

    /// Adds relationships of `rel_type`; several calls for one type are merged.
    /// Every endpoint must be a node id handed out by [`GraphBuilder::add_nodes`].
    pub fn add_relationships(&mut self, rel_type: &str, group: RelGroupInput) -> Result<()> {
        if group.sources.len() != group.targets.len() {
            return Err(Error::internal("sources and targets differ in length"));
        }
        if let Some(&bad) = group
            .sources
            .iter()
            .chain(&group.targets)
            .find(|&&n| n >= self.next_node)
        {
            return Err(Error::internal(format!(
                "relationship endpoint {bad} is not a node"
            )));
        }
        for (key, column) in &group.properties {
            if column.rows() != group.sources.len() as u64 {
                return Err(Error::internal(format!(
                    "relationship column {key} has the wrong row count"
                )));
            }
        }
        let id = self.catalog.rel_types.intern(rel_type);
        for (key, _) in &group.properties {
            self.catalog.property_keys.intern(key);
        }
        self.rels.entry(id).or_default().push(group);
        Ok(())
    }

    /// Requests a property index on (`label`, `key`), built by [`GraphBuilder::write`].
    pub fn add_index(&mut self, label: &str, key: &str) {
        let label = self.catalog.labels.intern(label);
        let key = self.catalog.property_keys.intern(key);
        if !self.indexes.contains(&(label, key)) {
            self.indexes.push((label, key));
        }
    }

    /// Writes the database into `dir`, which must not exist yet. Everything is
    /// fsynced before this returns.
    pub fn write(self, dir: &Path) -> Result<WriteSummary> {
        if dir.exists() {
            return Err(Error::new(
                ErrorKind::IoError,
                format!(
                    "{} already exists; a new database needs a new directory",
                    dir.display()
                ),
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        self.write_files(
            dir,
            "segment-000001.rhz".to_string(),
            1,
            crate::schema::Schema::default(),
        )
    }

    /// A builder whose catalog starts as `catalog` (ids are kept).
    pub(crate) fn with_catalog(catalog: Catalog) -> GraphBuilder {
        GraphBuilder {
            catalog,
            ..GraphBuilder::default()
        }
    }

    /// Writes a segment named `segment_name` into the existing directory
    /// `dir`, then replaces its manifest atomically.
    pub(crate) fn write_files(
        self,
        dir: &Path,
        segment_name: String,
        generation: u64,
        schema: crate::schema::Schema,
    ) -> Result<WriteSummary> {
        let (manifest, summary) =
            self.write_segment(dir, segment_name, generation, schema, None)?;
        manifest.write(dir)?;
        sync_dir(dir)?;
        Ok(WriteSummary {
            bytes_on_disk: directory_size(dir)?,
            ..summary
        })
    }

    /// Writes a segment named `segment_name` into the existing directory
    /// `dir` (fsynced, its directory entry too) and returns the manifest
    /// that names it, not yet written (the checkpoint path: the manifest is
    /// installed later, under the writer lock). `bytes_on_disk` of the
    /// summary is 0. `sync_every`: see [`SegmentWriter::sync_every`].
    pub(crate) fn write_segment(
        self,
        dir: &Path,
        segment_name: String,
        generation: u64,
        schema: crate::schema::Schema,
        sync_every: Option<u64>,
    ) -> Result<(Manifest, WriteSummary)> {
        let mut w = SegmentWriter::create(&dir.join(&segment_name))?;
        if let Some(bytes) = sync_every {
            w = w.sync_every(bytes);
        }
        let node_bound = self.next_node;
        let labels = LabelIndex::new(
            self.groups
                .iter()
                .flat_map(|g| g.runs.iter().copied())
                .collect(),
            node_bound,
            self.label_sets.clone(),
            self.catalog.labels.len(),
        );

        let mut node_groups = Vec::with_capacity(self.groups.len());
        for g in &self.groups {
            let columns = g
                .columns
                .iter()
                .map(|(k, c)| Ok((*k, write_column(&mut w, c)?)))
                .collect::<Result<_>>()?;
            node_groups.push(NodeGroupMeta {
                start: g.start,
                count: g.count,
                label_runs: g.runs.clone(),
                columns,
            });
        }

        let mut statistics = Statistics {
            node_count: node_bound,
            label_counts: (0..self.catalog.labels.len() as LabelId)
                .map(|l| labels.count(l))
                .collect(),
            rel_types: vec![RelTypeStats::default(); self.catalog.rel_types.len()],
            ..Statistics::default()
        };
        let mut rel_types = Vec::new();
        let mut base = 0u64;
        let mut triples: HashMap<(u32, RelTypeId, u32), u64> = HashMap::new();
        for (type_id, groups) in self.rels {
            let (sources, targets, columns) = merge_rel_groups(groups, &self.catalog);
            let (out, order) = CsrData::build_outgoing(&sources, &targets)?;
            for (&s, &t) in sources.iter().zip(&targets) {
                let key = (label_set_of(&labels, s), type_id, label_set_of(&labels, t));
                *triples.entry(key).or_default() += 1;
            }
            drop((sources, targets));
            let inc = CsrData::build_incoming(&out);
            let count = out.neighbours.len() as u64;
            statistics.rel_types[type_id as usize] = RelTypeStats {
                count,
                outgoing: DegreeStats::from_degrees(
                    out.offsets.windows(2).map(|w| w[1] - w[0]).collect(),
                ),
                incoming: DegreeStats::from_degrees(
                    inc.offsets.windows(2).map(|w| w[1] - w[0]).collect(),
                ),
            };
            let columns = columns
                .into_iter()
                .map(|(k, c)| Ok((k, write_column(&mut w, &c.permuted(&order))?)))
                .collect::<Result<_>>()?;
            rel_types.push(RelTypeMeta {
                rel_type: type_id,
                base,
                count,
                outgoing: write_csr(&mut w, &out)?,
                incoming: write_csr(&mut w, &inc)?,
                columns,
            });
            base += count;
        }
        statistics.relationship_count = base;
        let mut triple_list: BTreeMap<(LabelId, RelTypeId, LabelId), u64> = BTreeMap::new();
        for ((ss, t, ts), n) in triples {
            for &a in &self.label_sets[ss as usize] {
                for &b in &self.label_sets[ts as usize] {
                    *triple_list.entry((a, t, b)).or_default() += n;
                }
            }
        }
        statistics.triples = triple_list
            .into_iter()
            .map(|((source, rel_type, target), count)| TripleCount {
                source,
                rel_type,
                target,
                count,
            })
            .collect();

        let mut indexes = Vec::new();
        for &(label, key) in &self.indexes {
            let (meta, stats) = build_index(&mut w, &self.groups, &labels, label, key)?;
            indexes.push(meta);
            statistics.indexes.push(stats);
        }

        let segment_len = w.finish()?;
        let manifest = Manifest {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION_MIN,
            generation,
            segment: segment_name,
            segment_len,
            catalog: self.catalog.clone(),
            node_bound,
            label_sets: self.label_sets.clone(),
            node_groups,
            rel_types,
            indexes,
            constraints: schema.constraints,
            schema_names: schema.names,
            statistics: statistics.clone(),
            delta: None,
        };
        // The segment's directory entry is durable before the manifest names it.
        sync_dir(dir)?;
        let summary = WriteSummary {
            bytes_on_disk: 0,
            node_count: node_bound,
            relationship_count: base,
            label_counts: self
                .catalog
                .labels
                .names()
                .iter()
                .cloned()
                .zip(statistics.label_counts.iter().copied())
                .collect(),
            type_counts: self
                .catalog
                .rel_types
                .names()
                .iter()
                .cloned()
                .zip(statistics.rel_types.iter().map(|t| t.count))
                .collect(),
        };
        Ok((manifest, summary))
    }
}

fn label_set_of(labels: &LabelIndex, node: NodeId) -> u32 {
    let runs = labels.runs();
    let i = runs.partition_point(|r| r.start <= node);
    runs[i - 1].label_set
}

/// Concatenates the groups of one type; keys missing from a group are null there.
fn merge_rel_groups(
    mut groups: Vec<RelGroupInput>,
    catalog: &Catalog,
) -> (Vec<NodeId>, Vec<NodeId>, Vec<(PropertyKeyId, ColumnData)>) {
    let key_id = |k: &str| catalog.property_key_id(k).expect("interned when added");
    if groups.len() == 1 {
        let g = groups.pop().expect("one group");
        let columns = g
            .properties
            .into_iter()
            .map(|(k, c)| (key_id(&k), c))
            .collect();
        return (g.sources, g.targets, columns);
    }
    let mut keys: Vec<String> = Vec::new();
    for g in &groups {
        for (k, _) in &g.properties {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut builders: Vec<ColumnBuilder> = keys.iter().map(|_| ColumnBuilder::new()).collect();
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    for g in groups {
        let rows = g.sources.len();
        for (k, b) in keys.iter().zip(builders.iter_mut()) {
            match g.properties.iter().find(|(name, _)| name == k) {
                Some((_, column)) => b.append(column),
                None => (0..rows).for_each(|_| b.push_null()),
            }
        }
        sources.extend(g.sources);
        targets.extend(g.targets);
    }
    let columns = keys
        .iter()
        .zip(builders)
        .map(|(k, b)| (key_id(k), b.finish()))
        .collect();
    (sources, targets, columns)
}

fn write_ranks(w: &mut SegmentWriter, ranks: &RankData) -> Result<RankMeta> {
    Ok(match ranks {
        RankData::U8(r) => RankMeta {
            array: w.write(r)?,
            width: 1,
        },
        RankData::U16(r) => RankMeta {
            array: w.write(r)?,
            width: 2,
        },
        RankData::U32(r) => RankMeta {
            array: w.write(r)?,
            width: 4,
        },
        RankData::U64(r) => RankMeta {
            array: w.write(r)?,
            width: 8,
        },
    })
}

pub(crate) fn write_csr(w: &mut SegmentWriter, csr: &CsrData) -> Result<CsrMeta> {
    Ok(CsrMeta {
        lo: csr.lo,
        hi: csr.hi,
        offsets: w.write(&csr.offsets)?,
        neighbours: w.write(&csr.neighbours)?,
        ranks: csr.ranks.as_ref().map(|r| write_ranks(w, r)).transpose()?,
    })
}

/// Sorts the nodes carrying `label` that have `key` by value and writes the index.
fn build_index(
    w: &mut SegmentWriter,
    groups: &[NodeGroup],
    labels: &LabelIndex,
    label: LabelId,
    key: PropertyKeyId,
) -> Result<(IndexMeta, IndexStats)> {
    let mut entries: Vec<(Value, NodeId)> = Vec::new();
    for range in labels.ranges(label) {
        for g in groups
            .iter()
            .filter(|g| g.start < range.end && g.start + g.count > range.start)
        {
            let Some((_, column)) = g.columns.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            let lo = range.start.max(g.start);
            let hi = range.end.min(g.start + g.count);
            for node in lo..hi {
                let value = column.get(node - g.start);
                if !value.is_null() {
                    entries.push((value, node));
                }
            }
        }
    }
    entries.sort_by(|a, b| index_order(&a.0, &b.0).then(a.1.cmp(&b.1)));
    let distinct = entries
        .windows(2)
        .filter(|p| index_order(&p[0].0, &p[1].0) != std::cmp::Ordering::Equal)
        .count() as u64
        + u64::from(!entries.is_empty());
    let sorted: Vec<NodeId> = entries.iter().map(|e| e.1).collect();
    let int_keys: Option<Vec<i64>> = entries
        .iter()
        .map(|e| match e.0 {
            Value::Int(i) => Some(i),
            _ => None,
        })
        .collect();
    let meta = IndexMeta {
        label,
        key,
        sorted: w.write(&sorted)?,
        int_keys: int_keys.map(|k| w.write(&k)).transpose()?,
        distinct,
    };
    let stats = IndexStats {
        label,
        key,
        entries: sorted.len() as u64,
        distinct,
    };
    Ok((meta, stats))
}

/// Total size of the regular files directly inside `dir`.
pub fn directory_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))? {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        let meta = entry
            .metadata()
            .map_err(|e| Error::io(entry.path().display(), e))?;
        if meta.is_file() {
            total += meta.len();
        }
    }
    Ok(total)
}
