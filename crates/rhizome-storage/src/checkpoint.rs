//! Full checkpoint: merge base + delta into a new immutable segment (an
//! incremental checkpoint writes only the delta: see [`crate::deltafile`]).
//!
//! A frozen state (a [`Snapshot`]) is written with the bulk
//! [`GraphBuilder`] as a new segment `segment-NNNNNN.rhz` (NNNNNN = the new
//! manifest generation), fsynced, without the writer lock: commits go on
//! meanwhile. The manifest naming the segment is returned, not written: the
//! caller installs it under the writer lock, after carrying the commits made
//! meanwhile over to the new log (see `relog`, which renumbers their ids with
//! the map returned here). Snapshots still reading the old segment keep its
//! mapping alive.
//!
//! A crash before the manifest is installed leaves the old manifest, the old
//! segment and the whole log: recovery replays the log (the new segment is
//! removed as debris).
//!
//! **Ids are renumbered.** The builder assigns dense node ids grouped by
//! label set and relationship ids in adjacency order, so a node's or
//! relationship's id may change at a checkpoint; catalog ids (labels, types,
//! keys) are kept. Ids held across a checkpoint (outside a snapshot) are
//! therefore not stable — as in Neo4j, ids are not meant as external keys.
//! The whole graph is loaded into memory while the segment is written.

use crate::builder::{GraphBuilder, NodeGroupInput, RelGroupInput, RowLabels};
use crate::catalog::{PropertyKeyId, RelTypeId};
use crate::column::{ColumnBuilder, ColumnData};
use crate::manifest::Manifest;
use crate::snapshot::{Direction, GraphRead, Snapshot};
use rhizome_common::{NodeId, Result, Value};
use std::collections::HashMap;
use std::path::Path;

/// Property columns filled row by row; a key first seen at row r gets r nulls first.
#[derive(Default)]
struct Columns {
    rows: u64,
    keys: Vec<PropertyKeyId>,
    builders: Vec<ColumnBuilder>,
}

impl Columns {
    fn push_row(&mut self, props: &[(PropertyKeyId, Value)]) {
        for (key, value) in props {
            let i = match self.keys.iter().position(|k| k == key) {
                Some(i) => i,
                None => {
                    let mut b = ColumnBuilder::new();
                    (0..self.rows).for_each(|_| b.push_null());
                    self.keys.push(*key);
                    self.builders.push(b);
                    self.keys.len() - 1
                }
            };
            self.builders[i].push(value);
        }
        self.rows += 1;
        for b in &mut self.builders {
            // Keys this row lacks get a null.
            while b.rows() < self.rows {
                b.push_null();
            }
        }
    }

    fn finish(self, snap: &Snapshot) -> Vec<(String, ColumnData)> {
        let catalog = snap.catalog();
        self.keys
            .into_iter()
            .zip(self.builders)
            .map(|(k, b)| (catalog.property_key_name(k).to_string(), b.finish()))
            .collect()
    }
}

/// A checkpoint syncs its segment every this many bytes (see
/// [`crate::segment::SegmentWriter::sync_every`]).
const SYNC_EVERY: u64 = 8 << 20;

/// A segment written by [`write`], not yet installed.
pub(crate) struct Written {
    /// The manifest naming the new segment.
    pub(crate) manifest: Manifest,
    /// New id of every node id of the written state (`NodeId::MAX`: no node).
    pub(crate) node_map: Vec<NodeId>,
}

/// Writes the state of `snap` as the segment of generation `generation` of
/// the database in `dir` (fsynced); the manifest is the caller's to install.
pub(crate) fn write(dir: &Path, snap: &Snapshot, generation: u64) -> Result<Written> {
    let catalog = snap.catalog();
    let mut b = GraphBuilder::with_catalog(catalog.clone());

    // Nodes: one group, labels per row.
    let mut sets: Vec<Vec<String>> = Vec::new();
    let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut row_set = Vec::new();
    let mut old_ids = Vec::new();
    let mut columns = Columns::default();
    let mut props = Vec::new();
    for range in snap.node_ranges().iter() {
        for node in range.clone() {
            let labels = snap.node_labels(node);
            let id = *set_ids.entry(labels.to_vec()).or_insert_with(|| {
                sets.push(
                    labels
                        .iter()
                        .map(|&l| catalog.label_name(l).to_string())
                        .collect(),
                );
                sets.len() as u32 - 1
            });
            row_set.push(id);
            props.clear();
            snap.node_properties(node, &mut props);
            columns.push_row(&props);
            old_ids.push(node);
        }
    }
    let rows = old_ids.len() as u64;
    let new_ids = b.add_nodes(NodeGroupInput {
        rows,
        labels: Vec::new(),
        row_labels: Some(RowLabels { sets, row_set }),
        properties: columns.finish(snap),
    })?;
    let mut map = vec![NodeId::MAX; snap.node_bound() as usize];
    for (old, new) in old_ids.iter().zip(&new_ids) {
        map[*old as usize] = *new;
    }

    // Relationships, per type, from the outgoing lists.
    for t in 0..catalog.rel_types.len() as RelTypeId {
        let mut sources = Vec::new();
        let mut targets = Vec::new();
        let mut columns = Columns::default();
        for &node in &old_ids {
            let adj = snap.adjacency(node, t, Direction::Outgoing);
            for i in 0..adj.len() {
                sources.push(map[node as usize]);
                targets.push(map[adj.neighbour(i) as usize]);
                props.clear();
                snap.rel_properties(adj.rel_id(i), &mut props);
                columns.push_row(&props);
            }
        }
        if sources.is_empty() {
            continue;
        }
        b.add_relationships(
            catalog.rel_type_name(t),
            RelGroupInput {
                sources,
                targets,
                properties: columns.finish(snap),
            },
        )?;
    }
    let schema = snap.schema();
    for def in &schema.indexes {
        b.add_index(
            catalog.label_name(def.label),
            catalog.property_key_name(def.key),
        );
    }
    let (manifest, _) = b.write_segment(
        dir,
        format!("segment-{generation:06}.rhz"),
        generation,
        schema.clone(),
        Some(SYNC_EVERY),
    )?;
    Ok(Written {
        manifest,
        node_map: map,
    })
}
