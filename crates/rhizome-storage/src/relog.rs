//! Carrying the log over a checkpoint that ran while commits went on.
//!
//! A checkpoint writes its delta file or segment from a frozen state without
//! the writer lock (see `database/checkpoint.rs`), so commits made meanwhile sit in the
//! log after the frozen position: the *tail*. The checkpoint switches files
//! in this order:
//! 1. still without the writer lock, `wal.next` is written (temporary file,
//!    fsync, rename, fsync of the directory): the header of the new
//!    generation and the tail's whole records so far — verbatim after an
//!    incremental checkpoint (ids are kept), renumbered after a full one
//!    ([`Renumbering`]) — and the new manifest is staged as
//!    `manifest.json.tmp` (fsynced); then, under the writer lock, the log is
//!    checked to still hold the bytes carried, and the records appended
//!    since are added to `wal.next` ([`append_next`], one sync);
//! 2. the manifest of the new generation is installed (rename, fsync of the
//!    directory);
//! 3. `wal.next` is renamed to `wal.log` (the directory is not synced for
//!    it: see [`rename_next`]).
//!
//! A crash before 2 leaves the old manifest and the whole old log: `wal.next`
//! is debris. A crash between 2 and 3 leaves a new manifest, a stale
//! `wal.log` and a `wal.next` of the manifest's generation: a reader takes
//! `wal.next` as the live log ([`live_next`]) and the next writer finishes
//! the rename ([`finish_switch`]). No acknowledged commit is lost at any
//! step: each is in the log the manifest on disk applies to.

use crate::io::StorageIo;
use crate::lock::{CheckpointLock, FileId};
use crate::manifest::Manifest;
use crate::snapshot::{Direction, GraphRead, Snapshot};
use crate::wal::{self, Op, Record, WAL_FILE};
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use std::path::Path;

/// File name of the log a checkpoint prepares for its new manifest.
pub(crate) const NEXT_WAL_FILE: &str = "wal.next";

/// The ids of a frozen state and of the segment a full checkpoint wrote of
/// it: maps the ids in log records written after the freeze to the new ones.
pub(crate) struct Renumbering<'a> {
    /// The frozen state (old ids).
    pub(crate) old: &'a Snapshot,
    /// The new segment with no changes over it (new ids).
    pub(crate) new: &'a Snapshot,
    /// New id of each old node id below `old.node_bound()`.
    pub(crate) node_map: &'a [NodeId],
}

impl Renumbering<'_> {
    /// The new id of old node `n`: mapped if it existed when frozen, else
    /// created since, in the same order (ids are handed out one after the other).
    fn node(&self, n: NodeId) -> Option<NodeId> {
        let old_bound = self.old.node_bound();
        if n >= old_bound {
            return Some(self.new.node_bound() + (n - old_bound));
        }
        self.node_map
            .get(n as usize)
            .copied()
            .filter(|&m| m != NodeId::MAX)
    }

    /// The new id of old relationship `r`. One the frozen state holds is
    /// found in its start node's new list: the checkpoint keeps the
    /// relative order of the relationships between two nodes, so it is
    /// the k-th to its end node there as it was in the old list.
    fn rel(&self, r: RelId) -> Option<RelId> {
        let old_bound = self.old.delta().rel_bound;
        if r >= old_bound {
            return Some(self.new.delta().rel_bound + (r - old_bound));
        }
        let info = self.old.relationship(r)?;
        let old = self
            .old
            .adjacency(info.start, info.rel_type, Direction::Outgoing);
        let mut k = 0usize;
        let mut found = false;
        for i in 0..old.len() {
            if old.rel_id(i) == r {
                found = true;
                break;
            }
            k += usize::from(old.neighbour(i) == info.end);
        }
        if !found {
            return None;
        }
        let (start, end) = (self.node(info.start)?, self.node(info.end)?);
        let new = self
            .new
            .adjacency(start, info.rel_type, Direction::Outgoing);
        (0..new.len())
            .filter(|&i| new.neighbour(i) == end)
            .nth(k)
            .map(|i| new.rel_id(i))
    }

    /// `op` with its ids renumbered; `None` if an id has no new one.
    fn op(&self, op: &Op) -> Option<Op> {
        let mut op = op.clone();
        match &mut op {
            Op::CreateRel { start, end, .. } => {
                *start = self.node(*start)?;
                *end = self.node(*end)?;
            }
            Op::SetNodeProperty { node, .. }
            | Op::AddLabel { node, .. }
            | Op::RemoveLabel { node, .. }
            | Op::DeleteNode { node } => *node = self.node(*node)?,
            Op::SetRelProperty { rel, .. } | Op::DeleteRel { rel } => *rel = self.rel(*rel)?,
            Op::CreateNode { .. }
            | Op::CreateIndex { .. }
            | Op::DropIndex { .. }
            | Op::CreateConstraint { .. }
            | Op::DropConstraint { .. } => {}
        }
        Some(op)
    }

    /// The framed records of `records` with their ids renumbered, commit
    /// numbers kept; `None` if an id has no new one (the caller then
    /// checkpoints again under the writer lock).
    pub(crate) fn records(&self, records: &[Record]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        for r in records {
            let ops = r
                .ops
                .iter()
                .map(|op| self.op(op))
                .collect::<Option<Vec<_>>>()?;
            out.extend_from_slice(&wal::encode_record(r.commit, &ops));
        }
        Some(out)
    }
}

/// The whole valid records of the log `wal_id` from byte `from` to byte
/// `to` (the tail a checkpoint carries over), raw and parsed.
pub(crate) fn read_tail(
    dir: &Path,
    io: &dyn StorageIo,
    wal_id: Option<FileId>,
    from: u64,
    to: u64,
) -> Result<(Vec<u8>, Vec<Record>)> {
    if to <= from {
        return Ok((Vec::new(), Vec::new()));
    }
    let path = dir.join(WAL_FILE);
    let changed = || {
        Error::new(
            ErrorKind::IoError,
            format!(
                "{}: the log changed under a checkpoint; it was abandoned",
                path.display()
            ),
        )
    };
    let (id, mut bytes) = io
        .read_from(&path, from)
        .map_err(|e| Error::io(path.display(), e))?
        .ok_or_else(changed)?;
    if Some(id) != wal_id || (bytes.len() as u64) < to - from {
        return Err(changed());
    }
    bytes.truncate((to - from) as usize);
    let tail = wal::parse_records(&bytes, from);
    if tail.valid_len != bytes.len() as u64 {
        return Err(changed());
    }
    Ok((bytes, tail.records))
}

/// Writes `wal.next`: the header of `generation` and `records` (step 1).
pub(crate) fn write_next(
    dir: &Path,
    io: &dyn StorageIo,
    generation: u64,
    records: &[u8],
) -> Result<()> {
    let mut bytes = wal::header(generation);
    bytes.extend_from_slice(records);
    let path = dir.join(NEXT_WAL_FILE);
    io.replace(&path, &bytes)
        .map_err(|e| Error::io(path.display(), e))
}

/// Appends `records` to `wal.next` and syncs it (the commits made after
/// it was written, under the writer lock).
pub(crate) fn append_next(dir: &Path, io: &dyn StorageIo, records: &[u8]) -> Result<()> {
    let path = dir.join(NEXT_WAL_FILE);
    let err = |e| Error::io(path.display(), e);
    let end = wal::find_end(io, &path, wal::HEADER_LEN)?;
    let mut file = io.open_append(&path, end).map_err(err)?;
    file.append(records).map_err(err)?;
    file.sync().map_err(err)
}

/// Renames `wal.next` to `wal.log` (step 3). The directory is not synced:
/// until a later sync makes the rename durable, a crash leaves the file
/// under its old name, where [`live_next`] finds it with every commit
/// appended (and synced) since — the file is the same.
pub(crate) fn rename_next(dir: &Path) -> Result<()> {
    let path = dir.join(WAL_FILE);
    std::fs::rename(dir.join(NEXT_WAL_FILE), &path).map_err(|e| Error::io(path.display(), e))
}

/// The generation in the header of the file at `path`, if it has one.
fn generation_of(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut header = [0u8; wal::HEADER_LEN as usize];
    let mut f = std::fs::File::open(path).ok()?;
    f.read_exact(&mut header).ok()?;
    wal::header_generation(&header)
}

/// For a reader whose manifest is of `generation` and whose `wal.log` is
/// not: the log a checkpoint interrupted between steps 2 and 3 left, as
/// `(identity, whole file)`, if `wal.next` is of that generation.
pub(crate) fn live_next(
    dir: &Path,
    io: &dyn StorageIo,
    generation: u64,
) -> Result<Option<(FileId, Vec<u8>)>> {
    let path = dir.join(NEXT_WAL_FILE);
    let Some((id, bytes)) = io
        .read_from(&path, 0)
        .map_err(|e| Error::io(path.display(), e))?
    else {
        return Ok(None);
    };
    Ok((wal::header_generation(&bytes) == Some(generation)).then_some((id, bytes)))
}

/// Under the writer lock, before anything else: finishes the switch of an
/// interrupted checkpoint (step 3) if the manifest on disk is of the
/// generation of `wal.next` and `wal.log` is not, else removes `wal.next`
/// (debris of a checkpoint interrupted before step 2).
pub(crate) fn finish_switch(dir: &Path) -> Result<()> {
    let next = dir.join(NEXT_WAL_FILE);
    if !next.exists() {
        return Ok(());
    }
    let manifest = Manifest::read(dir)?.generation;
    let next_generation = generation_of(&next);
    if next_generation == Some(manifest) && generation_of(&dir.join(WAL_FILE)) != Some(manifest) {
        return rename_next(dir);
    }
    // Debris — unless a running checkpoint has just written it (it holds
    // the checkpoint lock from before until after its install).
    if let Some(_ckpt) = CheckpointLock::try_take(dir)? {
        std::fs::remove_file(&next).map_err(|e| Error::io(next.display(), e))?;
        crate::manifest::sync_dir(dir)?;
    }
    Ok(())
}
