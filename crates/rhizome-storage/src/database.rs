//! Opening a database directory: read the manifest, map the segment, resolve
//! every array once. Nothing is parsed or copied, so opening takes
//! milliseconds whatever the database's size.

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::view::SliceSource;
use crate::column::ColumnView;
use crate::csr::{Csr, CsrMeta};
use crate::index::PropertyIndex;
use crate::labels::LabelIndex;
use crate::manifest::Manifest;
use crate::segment::{ArrayRef, Segment};
use crate::snapshot::Snapshot;
use crate::stats::Statistics;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Slices detached from the segment's borrow; see [`Segment::slice_detached`].
struct Detached<'s>(&'s Segment);

impl SliceSource<'static> for Detached<'_> {
    fn get<T: bytemuck::Pod>(&self, r: ArrayRef) -> Result<&'static [T]> {
        // SAFETY: every detached slice is stored in the same `Store` as the
        // `Arc<Segment>` it points into, and `Store` never hands the slices
        // out with a lifetime longer than a borrow of itself.
        unsafe { self.0.slice_detached(r) }
    }
}

/// Property columns of a node group, indexed by property key id.
pub(crate) struct GroupView {
    pub(crate) start: NodeId,
    pub(crate) count: u64,
    pub(crate) columns: Vec<Option<ColumnView<'static>>>,
}

/// One relationship type's adjacency and columns.
pub(crate) struct RelView {
    pub(crate) rel_type: RelTypeId,
    pub(crate) base: RelId,
    pub(crate) count: u64,
    pub(crate) outgoing: Csr<'static>,
    pub(crate) incoming: Csr<'static>,
    pub(crate) columns: Vec<Option<ColumnView<'static>>>,
}

/// Everything a snapshot reads. Field order matters: the views (which
/// borrow the mapping) are declared before the segment so they are dropped first.
pub(crate) struct Store {
    pub(crate) manifest: Manifest,
    pub(crate) labels: LabelIndex,
    pub(crate) groups: Vec<GroupView>,
    /// Indexed by relationship type id; `None` for types without relationships.
    pub(crate) rels: Vec<Option<RelView>>,
    pub(crate) indexes: Vec<PropertyIndex<'static>>,
    pub(crate) _segment: Arc<Segment>,
}

fn resolve_columns(
    src: &Detached<'_>,
    metas: &[(PropertyKeyId, crate::column::ColumnMeta)],
    key_count: usize,
    rows: u64,
) -> Result<Vec<Option<ColumnView<'static>>>> {
    let mut columns: Vec<Option<ColumnView<'static>>> = vec![None; key_count];
    for (key, meta) in metas {
        let view = ColumnView::resolve(src, meta)?;
        let slot = columns.get_mut(*key as usize).ok_or_else(|| {
            Error::new(
                ErrorKind::CorruptDatabase,
                format!("property key {key} is not in the catalog"),
            )
        })?;
        if view.rows() != rows {
            return Err(Error::new(
                ErrorKind::CorruptDatabase,
                "column row count differs from its owner",
            ));
        }
        *slot = Some(view);
    }
    Ok(columns)
}

fn resolve_csr(src: &Detached<'_>, meta: &CsrMeta) -> Result<Csr<'static>> {
    let offsets: &'static [u64] = src.get(meta.offsets)?;
    let neighbours: &'static [NodeId] = src.get(meta.neighbours)?;
    let perm = meta.perm.map(|p| src.get::<u64>(p)).transpose()?;
    let expected = if meta.hi >= meta.lo {
        meta.hi - meta.lo + 1
    } else {
        0
    };
    if offsets.len() as u64 != expected && !(meta.hi == meta.lo && offsets.len() == 1) {
        return Err(Error::new(
            ErrorKind::CorruptDatabase,
            "adjacency offsets do not match their node range",
        ));
    }
    Ok(Csr::new(meta.lo, meta.hi, offsets, neighbours, perm))
}

impl Store {
    fn open(dir: &Path) -> Result<Store> {
        let manifest = Manifest::read(dir)?;
        let segment = Arc::new(Segment::open(
            &dir.join(&manifest.segment),
            manifest.segment_len,
        )?);
        let src = Detached(&segment);
        let key_count = manifest.catalog.property_keys.len();
        let labels = LabelIndex::new(
            manifest
                .node_groups
                .iter()
                .flat_map(|g| g.label_runs.iter().copied())
                .collect(),
            manifest.node_bound,
            manifest.label_sets.clone(),
            manifest.catalog.labels.len(),
        );
        let groups = manifest
            .node_groups
            .iter()
            .map(|g| {
                Ok(GroupView {
                    start: g.start,
                    count: g.count,
                    columns: resolve_columns(&src, &g.columns, key_count, g.count)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut rels: Vec<Option<RelView>> = (0..manifest.catalog.rel_types.len())
            .map(|_| None)
            .collect();
        for r in &manifest.rel_types {
            let view = RelView {
                rel_type: r.rel_type,
                base: r.base,
                count: r.count,
                outgoing: resolve_csr(&src, &r.outgoing)?,
                incoming: resolve_csr(&src, &r.incoming)?,
                columns: resolve_columns(&src, &r.columns, key_count, r.count)?,
            };
            let slot = rels.get_mut(r.rel_type as usize).ok_or_else(|| {
                Error::new(
                    ErrorKind::CorruptDatabase,
                    "relationship type is not in the catalog",
                )
            })?;
            *slot = Some(view);
        }
        let indexes = manifest
            .indexes
            .iter()
            .map(|i| {
                Ok(PropertyIndex {
                    label: i.label,
                    key: i.key,
                    distinct: i.distinct,
                    sorted: src.get(i.sorted)?,
                    int_keys: i.int_keys.map(|k| src.get::<i64>(k)).transpose()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Store {
            manifest,
            labels,
            groups,
            rels,
            indexes,
            _segment: segment,
        })
    }
}

/// An open database. Cheap to clone; all clones share the mapping.
#[derive(Clone)]
pub struct Database {
    dir: PathBuf,
    store: Arc<Store>,
}

impl Database {
    /// Opens the database in `dir` by mapping its segment. Fails with
    /// `IoError` if `dir` is not a database and `CorruptDatabase` if its files
    /// are damaged (a manifest naming arrays outside the segment, a truncated segment).
    pub fn open(dir: &Path) -> Result<Database> {
        Ok(Database {
            dir: dir.to_path_buf(),
            store: Arc::new(Store::open(dir)?),
        })
    }

    /// The directory the database lives in.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// A read snapshot of the current state; share it across threads freely.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.store.clone())
    }

    /// The catalog (names of labels, types and keys).
    pub fn catalog(&self) -> &Catalog {
        &self.store.manifest.catalog
    }

    /// The statistics recorded when the database was written.
    pub fn statistics(&self) -> &Statistics {
        &self.store.manifest.statistics
    }

    /// Checks every structure of the database: adjacency in both directions
    /// agrees, columns are consistent, indexes are sorted and match the data.
    /// Returns the list of problems found (empty when healthy).
    pub fn check(&self) -> Vec<String> {
        crate::check::check(&self.snapshot())
    }

    /// Labels that exist, with their ids (convenience for tools).
    pub fn labels(&self) -> Vec<(LabelId, &str)> {
        let names = self.catalog().labels.names();
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (i as LabelId, n.as_str()))
            .collect()
    }
}
