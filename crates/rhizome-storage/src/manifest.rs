//! The manifest: the one small file that says what a database directory holds.
//!
//! `manifest.json` names the segment file and records where every array lies
//! in it, the catalog and the statistics. It is replaced atomically (write a
//! temporary file, fsync, rename, fsync the directory), so a reader sees
//! either the old or the new database, never a mix.

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::view::ColumnMeta;
use crate::csr::CsrMeta;
use crate::index::IndexMeta;
use crate::labels::LabelRun;
use crate::lock::FileId;
use crate::stats::Statistics;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{Read, Write};
use std::path::Path;

/// File name of the manifest inside a database directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Value of [`Manifest::format`].
pub const FORMAT_NAME: &str = "rhizome-database";
/// Newest on-disk format version this binary reads and writes. History:
/// 1 — the first segment layout; 2 — 1 plus delta files (incremental
/// checkpoints, [`Manifest::delta`]); 3 — the compact adjacency (incoming
/// lists keep ranks instead of 8-byte outgoing positions, segment header
/// version 2); 4 — 3 plus delta files.
pub const FORMAT_VERSION: u32 = 4;
/// Oldest on-disk format version this binary reads. A manifest without a
/// delta file is written as this version, so a binary that reads only it
/// keeps reading databases that use nothing newer. Versions 1 and 2 are
/// refused with a message naming `rhizome upgrade`, which converts them
/// ([`mod@crate::upgrade`]).
pub const FORMAT_VERSION_MIN: u32 = 3;

/// A contiguous range of node ids imported together, with its property columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeGroupMeta {
    /// First node id.
    pub start: NodeId,
    /// Number of nodes.
    pub count: u64,
    /// Label runs, sorted by start, the first starting at `start`.
    pub label_runs: Vec<LabelRun>,
    /// Property columns (row = node id - start).
    pub columns: Vec<(PropertyKeyId, ColumnMeta)>,
}

/// All relationships of one type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelTypeMeta {
    /// The type.
    pub rel_type: RelTypeId,
    /// Id of the relationship at outgoing position 0.
    pub base: RelId,
    /// Number of relationships.
    pub count: u64,
    /// Outgoing adjacency.
    pub outgoing: CsrMeta,
    /// Incoming adjacency (with ranks into the outgoing lists).
    pub incoming: CsrMeta,
    /// Property columns in outgoing order.
    pub columns: Vec<(PropertyKeyId, ColumnMeta)>,
}

/// The two fields every format version keeps, read first so that a binary
/// meeting a format it does not know says so instead of failing on a field.
#[derive(Deserialize)]
struct FormatHeader {
    format: String,
    version: u32,
}

/// The manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// On-disk format version.
    pub version: u32,
    /// Increases with every new manifest of this database.
    pub generation: u64,
    /// File name of the segment.
    pub segment: String,
    /// Length of the segment in bytes.
    pub segment_len: u64,
    /// Names.
    pub catalog: Catalog,
    /// Node ids are `0..node_bound`.
    pub node_bound: NodeId,
    /// Label sets referred to by label runs.
    pub label_sets: Vec<Vec<LabelId>>,
    /// Node groups sorted by start.
    pub node_groups: Vec<NodeGroupMeta>,
    /// Relationship types sorted by base.
    pub rel_types: Vec<RelTypeMeta>,
    /// Property indexes.
    pub indexes: Vec<IndexMeta>,
    /// Uniqueness constraints (each backed by one of `indexes`).
    #[serde(default)]
    pub constraints: Vec<crate::schema::IndexDef>,
    /// Names given to indexes and constraints at creation.
    #[serde(default)]
    pub schema_names: Vec<crate::schema::SchemaName>,
    /// Statistics.
    pub statistics: Statistics,
    /// The delta file of an incremental checkpoint (changes since the
    /// segment was written, read over it; see `deltafile`); absent after a
    /// full checkpoint. Present only in format versions 2 and 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<DeltaFileMeta>,
}

/// The delta file a manifest names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaFileMeta {
    /// File name inside the database directory.
    pub file: String,
    /// Its length in bytes.
    pub len: u64,
}

impl Manifest {
    /// The lowest format version that can represent this manifest: what
    /// [`Manifest::write`] records.
    pub fn needed_version(&self) -> u32 {
        if self.delta.is_some() {
            FORMAT_VERSION
        } else {
            FORMAT_VERSION_MIN
        }
    }
}

impl Manifest {
    /// Reads and checks the manifest of the database in `dir`.
    pub fn read(dir: &Path) -> Result<Manifest> {
        Manifest::read_with_id(dir).map(|(m, _)| m)
    }

    /// Reads and checks the manifest of the database in `dir`, with the
    /// identity of the file read (a new manifest is a new file, renamed over
    /// the old one, so its identity tells whether a checkpoint happened since).
    pub fn read_with_id(dir: &Path) -> Result<(Manifest, FileId)> {
        let path = dir.join(MANIFEST_FILE);
        let read = fs::File::open(&path).and_then(|mut f| {
            let (id, _) = FileId::stat_file(&f)?;
            let mut text = String::new();
            f.read_to_string(&mut text)?;
            Ok((text, id))
        });
        let (text, id) = read.map_err(|e| manifest_read_error(dir, &path, e))?;
        let header: FormatHeader = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                ErrorKind::CorruptDatabase,
                format!("{}: {e}", path.display()),
            )
        })?;
        if header.format != FORMAT_NAME {
            return Err(Error::new(
                ErrorKind::CorruptDatabase,
                format!(
                    "{}: format `{}` is not a Rhizome database (expected `{FORMAT_NAME}`)",
                    path.display(),
                    header.format
                ),
            ));
        }
        if !(FORMAT_VERSION_MIN..=FORMAT_VERSION).contains(&header.version) {
            let who = if header.version > FORMAT_VERSION {
                "a newer Rhizome; upgrade this binary to open it".to_string()
            } else {
                format!(
                    "an older Rhizome whose adjacency layout this binary no longer \
                     reads; convert it with `rhizome upgrade {}` (rewrites the segment \
                     beside the old one and switches over atomically; the Rhizome \
                     that wrote it cannot open it afterwards)",
                    dir.display()
                )
            };
            return Err(Error::new(
                ErrorKind::CorruptDatabase,
                format!(
                    "{}: the database has on-disk format version {}, written by {who} \
                     (this binary reads versions {FORMAT_VERSION_MIN} to {FORMAT_VERSION})",
                    path.display(),
                    header.version
                ),
            ));
        }
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                ErrorKind::CorruptDatabase,
                format!("{}: {e}", path.display()),
            )
        })?;
        Ok((manifest, id))
    }

    /// Writes the manifest into `dir` atomically and durably.
    pub fn write(&self, dir: &Path) -> Result<()> {
        self.stage(dir)?;
        Manifest::install_staged(dir)
    }

    /// The first half of [`Manifest::write`]: writes and fsyncs the
    /// temporary file `manifest.json.tmp` (a checkpoint does this before it
    /// takes the writer lock).
    pub fn stage(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let mut this = self.clone();
        this.version = self.needed_version();
        let json = serde_json::to_vec(&this).map_err(|e| Error::internal(e.to_string()))?;
        let mut file = fs::File::create(&tmp).map_err(|e| Error::io(tmp.display(), e))?;
        file.write_all(&json)
            .map_err(|e| Error::io(tmp.display(), e))?;
        file.sync_all().map_err(|e| Error::io(tmp.display(), e))
    }

    /// The second half of [`Manifest::write`]: renames the staged temporary
    /// file over `manifest.json` and fsyncs the directory.
    pub fn install_staged(dir: &Path) -> Result<()> {
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let path = dir.join(MANIFEST_FILE);
        fs::rename(&tmp, &path).map_err(|e| Error::io(path.display(), e))?;
        sync_dir(dir)
    }
}

/// Fsyncs a directory so that renames inside it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir.display(), e))
}

/// The error for a manifest that could not be read: "not a Rhizome
/// database" when `dir` has none, else the I/O error at `path`.
pub(crate) fn manifest_read_error(dir: &Path, path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        Error::new(
            ErrorKind::IoError,
            format!(
                "{} is not a Rhizome database (no {MANIFEST_FILE})",
                dir.display()
            ),
        )
    } else {
        Error::io(path.display(), e)
    }
}
