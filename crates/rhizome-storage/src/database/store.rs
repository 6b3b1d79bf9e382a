//! The base store of a version: the segment's arrays resolved once into
//! views of its label groups and relationship types.

use super::*;

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

/// Maps a CSR's arrays; an incoming CSR (`meta.ranks` set) needs the
/// outgoing CSR `out` of its type.
fn resolve_csr(
    src: &Detached<'_>,
    meta: &CsrMeta,
    out: Option<&Csr<'static>>,
) -> Result<Csr<'static>> {
    let offsets: &'static [u64] = src.get(meta.offsets)?;
    let neighbours: &'static [u32] = src.get(meta.neighbours)?;
    let corrupt = |why: &str| Error::new(ErrorKind::CorruptDatabase, why.to_string());
    let back = match (meta.ranks, out) {
        (None, None) => None,
        (Some(r), Some(out)) => {
            let ranks = match r.width {
                1 => Ranks::U8(src.get(r.array)?),
                2 => Ranks::U16(src.get(r.array)?),
                4 => Ranks::U32(src.get(r.array)?),
                8 => Ranks::U64(src.get(r.array)?),
                w => return Err(corrupt(&format!("adjacency ranks of width {w}"))),
            };
            if ranks.len() != neighbours.len() {
                return Err(corrupt("adjacency ranks differ in number from the entries"));
            }
            Some(BackLinks::new(ranks, out.node_range().start, out.offsets()))
        }
        _ => {
            return Err(corrupt(
                "incoming adjacency without ranks, or outgoing with",
            ))
        }
    };
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
    Ok(Csr::new(meta.lo, meta.hi, offsets, neighbours, back))
}

impl Store {
    /// Every relationship id of the base is below this.
    pub(crate) fn rel_bound(&self) -> RelId {
        self.manifest
            .rel_types
            .iter()
            .map(|r| r.base + r.count)
            .max()
            .unwrap_or(0)
    }

    /// The schema recorded in the manifest.
    pub(crate) fn schema(&self) -> Schema {
        Schema {
            indexes: self
                .manifest
                .indexes
                .iter()
                .map(|i| IndexDef {
                    label: i.label,
                    key: i.key,
                })
                .collect(),
            constraints: self.manifest.constraints.clone(),
            names: self.manifest.schema_names.clone(),
        }
    }

    /// Maps the segment `manifest` names and resolves every array.
    pub(crate) fn from_manifest(dir: &Path, manifest: Manifest) -> Result<Store> {
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
            let outgoing = resolve_csr(&src, &r.outgoing, None)?;
            let view = RelView {
                rel_type: r.rel_type,
                base: r.base,
                count: r.count,
                incoming: resolve_csr(&src, &r.incoming, Some(&outgoing))?,
                outgoing,
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
