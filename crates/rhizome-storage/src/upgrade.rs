//! Upgrading a database of an older on-disk format on request
//! (`rhizome upgrade DB_DIR`, [`upgrade`]).
//!
//! Formats 1 and 2 differ from 3 and 4 only in their adjacency: neighbour
//! ids of 8 bytes instead of 4, and incoming lists that keep each entry's
//! outgoing *position* (8 bytes) instead of its rank in its source's
//! outgoing list (see [`crate::csr`]); the segment header says layout 1.
//! Everything else — columns, labels, indexes, statistics, the delta file
//! of format 2 and the write-ahead log — is the same, and so are node and
//! relationship ids (a relationship's id is its type's base plus its
//! outgoing position, which does not change). So an upgrade rewrites the
//! segment only:
//!
//! 1. take the checkpoint lock and the writer lock (an older Rhizome still
//!    writing the database finishes first; nobody writes while it runs);
//! 2. write the new segment `segment-NNNNNN-v3.rhz` (NNNNNN = the manifest
//!    generation, kept, so that the log and the delta file still apply; the
//!    name cannot be that of a later checkpoint's segment) beside the old
//!    one: columns and indexes copied, adjacency converted and checked;
//!    fsync it and the directory;
//! 3. stage the new manifest (format 3, or 4 with a delta file) as
//!    `manifest.json.tmp`, fsynced;
//! 4. rename it over `manifest.json` and fsync the directory: the switch;
//! 5. delete the old segment if no process maps it (else the next writer
//!    collects it).
//!
//! A crash before step 4 leaves the old database as it was (the new
//! segment and the staged manifest are debris that the next upgrade
//! overwrites and a writer collects); a crash after it leaves the upgraded
//! database. Either opens: the old one with the Rhizome that wrote it, or
//! after running the upgrade again.

use crate::catalog::{PropertyKeyId, RelTypeId};
use crate::column::view::{ColumnMeta, ValuesMeta};
use crate::csr::{BackLinks, Csr, CsrData, RankData, MAX_NODE_ID};
use crate::index::IndexMeta;
use crate::lock::{CheckpointLock, WriterLock};
use crate::manifest::{
    manifest_read_error, sync_dir, Manifest, RelTypeMeta, FORMAT_NAME, FORMAT_VERSION,
    FORMAT_VERSION_MIN, MANIFEST_FILE,
};
use crate::segment::{ArrayRef, Segment, SegmentWriter};
use bytemuck::Pod;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The segment layout (header byte) of manifest formats 1 and 2.
const OLD_LAYOUT: u8 = 1;

/// Where [`upgrade`] calls [`UpgradeOptions::hook`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeStep {
    /// Both locks are held; nothing is written yet.
    Locked,
    /// The new segment is written and synced; the manifest still names the
    /// old one.
    SegmentWritten,
    /// The new manifest is staged as `manifest.json.tmp`, not yet renamed.
    ManifestStaged,
    /// The new manifest is in place; the old segment is not yet deleted.
    ManifestInstalled,
}

/// See [`UpgradeOptions::hook`].
pub type UpgradeHook = Arc<dyn Fn(UpgradeStep) -> Result<()> + Send + Sync>;

/// How [`upgrade`] runs.
#[derive(Clone)]
pub struct UpgradeOptions {
    /// How long to wait for a checkpoint or a writer of another process
    /// (an older Rhizome) before failing with `TransientError` /
    /// `LockAcquisitionTimeout`.
    pub lock_timeout: Duration,
    /// Called at each [`UpgradeStep`]; an error stops the upgrade right
    /// there, leaving the files as a crash at that point would (tests).
    pub hook: Option<UpgradeHook>,
}

impl Default for UpgradeOptions {
    fn default() -> UpgradeOptions {
        UpgradeOptions {
            lock_timeout: Duration::from_secs(5),
            hook: None,
        }
    }
}

/// What [`upgrade`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeReport {
    /// The format version found.
    pub from_version: u32,
    /// The format version now (equal to `from_version` if there was
    /// nothing to do).
    pub to_version: u32,
    /// The segment before and after (the same name if nothing was done).
    pub segments: (String, String),
    /// Their sizes in bytes.
    pub segment_bytes: (u64, u64),
    /// False if a process still maps the old segment, which then stays
    /// until a later writer collects it.
    pub old_segment_removed: bool,
}

/// The adjacency of one type and direction in formats 1 and 2.
#[derive(Deserialize)]
struct OldCsrMeta {
    lo: NodeId,
    hi: NodeId,
    offsets: ArrayRef,
    /// `u64` neighbour ids.
    neighbours: ArrayRef,
    /// Incoming only: each entry's outgoing position (`u64`).
    perm: Option<ArrayRef>,
}

/// A relationship type in formats 1 and 2.
#[derive(Deserialize)]
struct OldRelTypeMeta {
    rel_type: RelTypeId,
    base: RelId,
    count: u64,
    outgoing: OldCsrMeta,
    incoming: OldCsrMeta,
    columns: Vec<(PropertyKeyId, ColumnMeta)>,
}

fn corrupt(dir: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::CorruptDatabase,
        format!("{}: cannot upgrade: {why}", dir.display()),
    )
}

/// The manifest of `dir` as JSON and its format version (checked to be a
/// Rhizome manifest).
fn read_manifest_json(dir: &Path) -> Result<(serde_json::Value, u32)> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read(&path).map_err(|e| manifest_read_error(dir, &path, e))?;
    let json: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        Error::new(
            ErrorKind::CorruptDatabase,
            format!("{}: {e}", path.display()),
        )
    })?;
    if json["format"] != FORMAT_NAME {
        return Err(Error::new(
            ErrorKind::CorruptDatabase,
            format!("{}: not a Rhizome database manifest", path.display()),
        ));
    }
    let version = json["version"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| corrupt(dir, "the manifest has no format version"))?;
    Ok((json, version))
}

/// Rewrites the database in `dir` from on-disk format 1 or 2 into the
/// current one (see the module documentation for the steps and why a crash
/// at any of them leaves a database that opens). A database already in a
/// format this binary reads is left alone (`from_version == to_version`);
/// a newer one is refused. Takes the checkpoint lock and the writer lock
/// for the whole run.
pub fn upgrade(dir: &Path, options: &UpgradeOptions) -> Result<UpgradeReport> {
    let hook = |step| match &options.hook {
        Some(hook) => hook(step),
        None => Ok(()),
    };
    // Cheap refusals first, without locks.
    let (_, version) = read_manifest_json(dir)?;
    if version > FORMAT_VERSION {
        return Err(Error::new(
            ErrorKind::CorruptDatabase,
            format!(
                "{}: on-disk format version {version} was written by a newer Rhizome; \
                 this binary reads versions {FORMAT_VERSION_MIN} to {FORMAT_VERSION} \
                 and cannot convert it",
                dir.display()
            ),
        ));
    }
    let deadline = Instant::now() + options.lock_timeout;
    let _ckpt = CheckpointLock::take(dir, deadline)?;
    let mut writer = WriterLock::new(dir);
    writer.acquire(deadline, options.lock_timeout)?;
    let result = (|| {
        hook(UpgradeStep::Locked)?;
        // Read again under the locks: nobody changes it from here on.
        let (mut json, version) = read_manifest_json(dir)?;
        if version >= FORMAT_VERSION_MIN {
            let m = Manifest::read(dir)?;
            return Ok(UpgradeReport {
                from_version: version,
                to_version: version,
                segments: (m.segment.clone(), m.segment),
                segment_bytes: (m.segment_len, m.segment_len),
                old_segment_removed: false,
            });
        }
        if version == 0 {
            return Err(corrupt(dir, "format version 0 does not exist"));
        }
        let old_types: Vec<OldRelTypeMeta> =
            serde_json::from_value(json["rel_types"].take()).map_err(|e| corrupt(dir, e))?;
        json["rel_types"] = serde_json::Value::Array(Vec::new());
        json["version"] = FORMAT_VERSION_MIN.into();
        let mut manifest: Manifest = serde_json::from_value(json).map_err(|e| corrupt(dir, e))?;
        let old = Segment::open_layout(
            &dir.join(&manifest.segment),
            manifest.segment_len,
            OLD_LAYOUT,
        )?;
        let name = format!("segment-{:06}-v3.rhz", manifest.generation);
        if name == manifest.segment {
            return Err(corrupt(dir, format!("the old segment is named {name}")));
        }
        let path = dir.join(&name);
        let mut w = SegmentWriter::create(&path)?;
        for group in &mut manifest.node_groups {
            for (_, column) in &mut group.columns {
                *column = copy_column(&old, &mut w, column)?;
            }
        }
        for t in old_types {
            let meta = convert_rel_type(dir, &old, &mut w, t, manifest.node_bound)?;
            manifest.rel_types.push(meta);
        }
        for index in &mut manifest.indexes {
            *index = IndexMeta {
                sorted: copy::<u64>(&old, &mut w, index.sorted)?,
                int_keys: index
                    .int_keys
                    .map(|k| copy::<i64>(&old, &mut w, k))
                    .transpose()?,
                ..index.clone()
            };
        }
        let new_len = w.finish()?;
        sync_dir(dir)?;
        hook(UpgradeStep::SegmentWritten)?;
        let old_name = std::mem::replace(&mut manifest.segment, name.clone());
        let old_len = std::mem::replace(&mut manifest.segment_len, new_len);
        manifest.stage(dir)?;
        hook(UpgradeStep::ManifestStaged)?;
        Manifest::install_staged(dir)?;
        hook(UpgradeStep::ManifestInstalled)?;
        drop(old);
        let removed = crate::lock::remove_if_unused(&dir.join(&old_name));
        Ok(UpgradeReport {
            from_version: version,
            to_version: manifest.needed_version(),
            segments: (old_name, name),
            segment_bytes: (old_len, new_len),
            old_segment_removed: removed,
        })
    })();
    writer.release();
    result
}

/// Copies array `r` of `T`s from `old` into `w`.
fn copy<T: Pod>(old: &Segment, w: &mut SegmentWriter, r: ArrayRef) -> Result<ArrayRef> {
    w.write(old.slice::<T>(r)?)
}

fn copy_values(old: &Segment, w: &mut SegmentWriter, values: &ValuesMeta) -> Result<ValuesMeta> {
    Ok(match values {
        ValuesMeta::Empty => ValuesMeta::Empty,
        ValuesMeta::Fixed { ty, lanes } => ValuesMeta::Fixed {
            ty: *ty,
            lanes: lanes
                .iter()
                .map(|&l| copy::<i64>(old, w, l))
                .collect::<Result<_>>()?,
        },
        ValuesMeta::Str { offsets, bytes } => ValuesMeta::Str {
            offsets: copy::<u64>(old, w, *offsets)?,
            bytes: copy::<u8>(old, w, *bytes)?,
        },
        ValuesMeta::List {
            elem,
            offsets,
            items,
        } => ValuesMeta::List {
            elem: *elem,
            offsets: copy::<u64>(old, w, *offsets)?,
            items: Box::new(copy_values(old, w, items)?),
        },
        ValuesMeta::Any { offsets, bytes } => ValuesMeta::Any {
            offsets: copy::<u64>(old, w, *offsets)?,
            bytes: copy::<u8>(old, w, *bytes)?,
        },
    })
}

fn copy_column(old: &Segment, w: &mut SegmentWriter, column: &ColumnMeta) -> Result<ColumnMeta> {
    Ok(match column {
        ColumnMeta::Dense {
            rows,
            validity,
            values,
        } => ColumnMeta::Dense {
            rows: *rows,
            validity: validity.map(|v| copy::<u64>(old, w, v)).transpose()?,
            values: copy_values(old, w, values)?,
        },
        ColumnMeta::Sparse {
            rows,
            positions,
            values,
        } => ColumnMeta::Sparse {
            rows: *rows,
            positions: copy::<u64>(old, w, *positions)?,
            values: copy_values(old, w, values)?,
        },
    })
}

/// The neighbour ids `ids` in 32 bits, each checked to lie below `node_bound`.
fn narrow_ids(dir: &Path, ids: &[u64], node_bound: NodeId) -> Result<Vec<u32>> {
    ids.iter()
        .map(|&n| {
            if n > MAX_NODE_ID {
                Err(crate::csr::too_many_nodes(n))
            } else if n >= node_bound {
                Err(corrupt(dir, format!("neighbour id {n} is not a node")))
            } else {
                Ok(n as u32)
            }
        })
        .collect()
}

/// Converts one relationship type's adjacency to the compact layout
/// (columns copied), checking it as `rhizome check` would.
fn convert_rel_type(
    dir: &Path,
    old: &Segment,
    w: &mut SegmentWriter,
    t: OldRelTypeMeta,
    node_bound: NodeId,
) -> Result<RelTypeMeta> {
    let (o, i) = (&t.outgoing, &t.incoming);
    let (Some(perm), None) = (i.perm, o.perm) else {
        return Err(corrupt(
            dir,
            format!(
                "relationship type {}: incoming adjacency without positions, or outgoing with",
                t.rel_type
            ),
        ));
    };
    let out_offsets: &[u64] = old.slice(o.offsets)?;
    let in_neighbours: &[u64] = old.slice(i.neighbours)?;
    let perm: &[u64] = old.slice(perm)?;
    if perm.len() != in_neighbours.len() {
        return Err(corrupt(
            dir,
            "incoming positions differ in number from the entries",
        ));
    }
    // rank = outgoing position - the offset of the source's outgoing list.
    let mut ranks = Vec::with_capacity(perm.len());
    for (&source, &p) in in_neighbours.iter().zip(perm) {
        let k = source.wrapping_sub(o.lo) as usize;
        match (out_offsets.get(k), out_offsets.get(k.wrapping_add(1))) {
            (Some(&a), Some(&b)) if a <= p && p < b => ranks.push(p - a),
            _ => {
                return Err(corrupt(
                    dir,
                    format!(
                        "relationship type {}: an incoming entry of source {source} leads to \
                         outgoing position {p}, outside the source's list",
                        t.rel_type
                    ),
                ))
            }
        }
    }
    let out = CsrData {
        lo: o.lo,
        hi: o.hi,
        offsets: out_offsets.to_vec(),
        neighbours: narrow_ids(dir, old.slice(o.neighbours)?, node_bound)?,
        ranks: None,
    };
    let inc = CsrData {
        lo: i.lo,
        hi: i.hi,
        offsets: old.slice::<u64>(i.offsets)?.to_vec(),
        neighbours: narrow_ids(dir, in_neighbours, node_bound)?,
        ranks: Some(RankData::narrowest(ranks)),
    };
    let out_csr = Csr::new(out.lo, out.hi, &out.offsets, &out.neighbours, None);
    let back = inc
        .ranks
        .as_ref()
        .map(|r| BackLinks::new(r.view(), out.lo, &out.offsets));
    let in_csr = Csr::new(inc.lo, inc.hi, &inc.offsets, &inc.neighbours, back);
    for (csr, dir_name) in [(&out_csr, "outgoing"), (&in_csr, "incoming")] {
        csr.validate(node_bound, out.neighbours.len())
            .map_err(|why| {
                corrupt(
                    dir,
                    format!("relationship type {} ({dir_name}): {why}", t.rel_type),
                )
            })?;
    }
    if out.neighbours.len() as u64 != t.count || inc.neighbours.len() as u64 != t.count {
        return Err(corrupt(
            dir,
            format!(
                "relationship type {}: {} relationships, but {} outgoing and {} incoming entries",
                t.rel_type,
                t.count,
                out.neighbours.len(),
                inc.neighbours.len()
            ),
        ));
    }
    Ok(RelTypeMeta {
        rel_type: t.rel_type,
        base: t.base,
        count: t.count,
        outgoing: crate::builder::write_csr(w, &out)?,
        incoming: crate::builder::write_csr(w, &inc)?,
        columns: t
            .columns
            .iter()
            .map(|(k, c)| Ok((*k, copy_column(old, w, c)?)))
            .collect::<Result<_>>()?,
    })
}
