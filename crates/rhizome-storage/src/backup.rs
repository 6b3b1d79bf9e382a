//! `Database::backup`: a consistent copy of a database while other
//! processes read and write it.
//!
//! The copy is of one published state: the manifest it was loaded from,
//! its segment (pinned by the state's shared lock, so no checkpoint can
//! delete it while it is copied) and the prefix of the live log that state
//! replayed. Writers are never blocked: if a checkpoint replaces the log
//! before it was read, the caller takes a newer state and tries again.

use crate::database::Store;
use crate::follow::LogPosition;
use crate::io::StorageIo;
use crate::manifest::sync_dir;
use crate::wal::WAL_FILE;
use rhizome_common::{Error, ErrorKind, Result};
use std::fs;
use std::io::Write;
use std::path::Path;

/// Creates `dest` (which must not exist, or be an empty directory) for a copy.
pub(crate) fn prepare(dest: &Path) -> Result<()> {
    if dest.exists() {
        let empty = fs::read_dir(dest)
            .map_err(|e| Error::io(dest.display(), e))?
            .next()
            .is_none();
        if !empty {
            return Err(Error::new(
                ErrorKind::IoError,
                format!(
                    "{} exists and is not empty: a backup goes into a new directory",
                    dest.display()
                ),
            ));
        }
    }
    fs::create_dir_all(dest).map_err(|e| Error::io(dest.display(), e))
}

/// The log bytes `pos` accounts for, if the log file is still the one `pos`
/// knows; `Ok(None)` if it was replaced (take a newer state and retry).
pub(crate) fn log_prefix(
    dir: &Path,
    io: &dyn StorageIo,
    pos: &LogPosition,
) -> Result<Option<Option<Vec<u8>>>> {
    if !pos.live {
        return Ok(Some(None));
    }
    // The log is `wal.next` while a checkpoint is between installing its
    // manifest and renaming it (see `relog`).
    for name in [WAL_FILE, crate::relog::NEXT_WAL_FILE] {
        let path = dir.join(name);
        match io
            .read_from(&path, 0)
            .map_err(|e| Error::io(path.display(), e))?
        {
            Some((id, mut bytes)) if Some(id) == pos.wal && bytes.len() as u64 >= pos.wal_len => {
                bytes.truncate(pos.wal_len as usize);
                return Ok(Some(Some(bytes)));
            }
            _ => {}
        }
    }
    Ok(None)
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = fs::File::create(path).map_err(|e| Error::io(path.display(), e))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(path.display(), e))
}

/// The bytes of `store`'s delta file, if its manifest names one: `Ok(None)`
/// inside if a checkpoint removed it (take a newer state and retry). Read
/// before the log prefix: a log still unreplaced after this read proves the
/// file was not yet superseded when it was read.
pub(crate) fn delta_bytes(dir: &Path, store: &Store) -> Result<Option<Option<Vec<u8>>>> {
    let Some(meta) = &store.manifest.delta else {
        return Ok(Some(None));
    };
    let path = dir.join(&meta.file);
    match fs::read(&path) {
        Ok(bytes) => Ok(Some(Some(bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// Writes the copy: segment, delta file, log prefix, and last the manifest (so an
/// interrupted backup is not a database).
pub(crate) fn write(
    dir: &Path,
    dest: &Path,
    store: &Store,
    delta: Option<&[u8]>,
    log: Option<&[u8]>,
) -> Result<()> {
    let segment = &store.manifest.segment;
    let (from, to) = (dir.join(segment), dest.join(segment));
    fs::copy(&from, &to).map_err(|e| Error::io(from.display(), e))?;
    fs::File::open(&to)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(to.display(), e))?;
    if let (Some(meta), Some(bytes)) = (&store.manifest.delta, delta) {
        write_synced(&dest.join(&meta.file), bytes)?;
    }
    if let Some(log) = log {
        write_synced(&dest.join(WAL_FILE), log)?;
    }
    store.manifest.write(dest)?;
    sync_dir(dest)
}
