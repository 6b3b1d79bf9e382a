//! Following a database directory that other processes write.
//!
//! A published state remembers where it stands in the files
//! ([`LogPosition`]): which manifest it was loaded from, which log file and
//! how many bytes of it were replayed. Before a statement takes a snapshot,
//! [`news`] compares that with two `stat` calls: if the log has grown, the
//! new records are read and replayed on top of the state ([`read_tail`]); if
//! the manifest or the log was replaced (another process checkpointed),
//! the database is loaded again ([`load`]). Loading retries when it races a
//! checkpoint (the manifest it read names a segment that is being deleted,
//! or the log is already of a newer generation), so a reader never sees an
//! error caused by another process's checkpoint.

use crate::database::Store;
use crate::delta::Delta;
use crate::io::StorageIo;
use crate::lock::FileId;
use crate::manifest::{Manifest, MANIFEST_FILE};
use crate::relog::{self, NEXT_WAL_FILE};
use crate::snapshot::Snapshot;
use crate::txn::TxnState;
use crate::wal::{self, WAL_FILE};
use rhizome_common::{Error, ErrorKind, Result};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Where a published state stands in the database's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogPosition {
    /// The manifest the base was loaded from.
    pub(crate) manifest: FileId,
    /// The log file looked at (`None`: there was none).
    pub(crate) wal: Option<FileId>,
    /// Bytes of the log accounted for: the valid prefix replayed, or the
    /// whole length of a stale log.
    pub(crate) wal_len: u64,
    /// True if the log applies to the manifest (same generation); false if
    /// it is stale (older generation, bad header) or absent.
    pub(crate) live: bool,
}

/// What changed in the files since a [`LogPosition`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum News {
    /// Nothing.
    None,
    /// The live log grew (or was cut): read what follows the known prefix.
    Tail,
    /// The manifest or the log was replaced: load again.
    Reload,
}

fn file_id(path: &Path) -> Option<(FileId, u64)> {
    FileId::stat(path).ok()
}

/// An open handle of the log file, kept between statements for the look
/// [`news`] takes past the records read (opening the file for every
/// statement cost two more system calls and a path lookup).
#[derive(Default)]
pub(crate) struct LogPeek(arc_swap::ArcSwapOption<(FileId, std::fs::File)>);

impl LogPeek {
    /// Whether the log file `id` at `path`, `len` bytes long, holds more
    /// than the `at` bytes read so far: it does unless it is that long or
    /// an end marker (see [`crate::wal`]) follows, the rest being space the
    /// writer reserved.
    fn grew(&self, path: &Path, id: FileId, len: u64, at: u64) -> bool {
        len != at && (len < at || self.appended(path, id, at))
    }

    /// True unless the file `id` at `path` has an end marker at byte `at`.
    fn appended(&self, path: &Path, id: FileId, at: u64) -> bool {
        let records_at = |file: &std::fs::File| {
            let mut head = [0u8; 8];
            match std::os::unix::fs::FileExt::read_at(file, &mut head, at) {
                Ok(n) => !wal::ends_log(&head[..n]),
                Err(_) => true,
            }
        };
        if let Some(held) = self.0.load().as_deref().filter(|held| held.0 == id) {
            return records_at(&held.1);
        }
        // The path may name a newer file by now: keep the handle only if
        // it is the file looked at.
        let opened = open_without_atime(path).and_then(|f| Ok((FileId::stat_file(&f)?.0, f)));
        match opened {
            Ok((opened_id, file)) if opened_id == id => {
                let new_records = records_at(&file);
                self.0.store(Some(Arc::new((id, file))));
                new_records
            }
            _ => true,
        }
    }
}

/// Opens `path` for reading without updating its access time (when this
/// process owns the file): storing it would give the writer's next sync
/// an inode change to journal.
fn open_without_atime(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |flags| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)
    };
    open(rustix::fs::OFlags::NOATIME.bits() as i32).or_else(|_| open(0))
}

/// Compares `pos` with the files of `dir` (two `stat` calls, and a read of
/// eight bytes when the log file is longer than what was read of it).
pub(crate) fn news(dir: &Path, pos: &LogPosition, peek: &LogPeek) -> News {
    match file_id(&dir.join(MANIFEST_FILE)) {
        Some((id, _)) if id == pos.manifest => {}
        _ => return News::Reload,
    }
    match (file_id(&dir.join(WAL_FILE)), pos.wal) {
        (None, None) => News::None,
        (Some((id, len)), Some(known)) if id == known => {
            if len == pos.wal_len
                || (pos.live && !peek.grew(&dir.join(WAL_FILE), id, len, pos.wal_len))
            {
                News::None
            } else if pos.live {
                News::Tail
            } else {
                News::Reload
            }
        }
        // The live log is a `wal.next` an interrupted checkpoint left (see
        // `relog`): nobody appends to it before renaming it.
        (_, Some(known))
            if pos.live
                && file_id(&dir.join(NEXT_WAL_FILE)).is_some_and(|(id, len)| {
                    id == known && !peek.grew(&dir.join(NEXT_WAL_FILE), id, len, pos.wal_len)
                }) =>
        {
            News::None
        }
        _ => News::Reload,
    }
}

/// A state read from the files.
pub(crate) struct Loaded {
    pub(crate) store: Arc<Store>,
    pub(crate) delta: Arc<Delta>,
    pub(crate) pos: LogPosition,
    pub(crate) last_commit: u64,
    /// The log goes on past `pos.wal_len` with bytes that are not a whole
    /// valid record: a record being written right now, or the torn tail of
    /// a writer that died (which the next writer cuts off).
    pub(crate) torn: bool,
}

/// Replays the records of `bytes` (a part of the log starting at byte
/// `at`, a record boundary) on top of `snap`, decoding one operation at a time
/// into one private state that is packed once at the end; returns the new
/// delta, the last commit number and how far the valid records reach.
/// Nothing is published before the whole valid prefix is applied, so a
/// reader sees only complete commits.
pub(crate) fn replay(
    snap: Snapshot,
    bytes: &[u8],
    at: u64,
    last_commit: u64,
    dir: &Path,
) -> Result<(Arc<Delta>, u64, wal::Scan)> {
    let mut state = TxnState::replaying(snap);
    let mut last = last_commit;
    let scan = wal::scan_records(bytes, at, |commit, ops| {
        for op in ops {
            op.and_then(|op| state.apply(&op)).map_err(|e| {
                Error::new(
                    ErrorKind::CorruptDatabase,
                    format!(
                        "{}: replaying commit {commit} failed: {e}",
                        dir.join(WAL_FILE).display(),
                    ),
                )
            })?;
        }
        last = commit;
        Ok(())
    })?;
    if state.snap.delta().has_loose() {
        state.snap.delta_mut().pack();
    }
    Ok((state.snap.delta().clone(), last, scan))
}

/// Loads the database in `dir`: its manifest, segment and live log.
/// Retries (for up to about a second) while it races a checkpoint of
/// another process.
pub(crate) fn load(dir: &Path, io: &dyn StorageIo) -> Result<Loaded> {
    let mut attempt = 0u32;
    loop {
        match load_once(dir, io)? {
            Some(loaded) => return Ok(loaded),
            None if attempt < 200 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(u64::from(attempt.min(10))));
            }
            None => {
                return Err(Error::new(
                    ErrorKind::TransientError,
                    format!(
                        "{}: the database kept changing while it was being opened \
                         (checkpoints of other processes); retry",
                        dir.display()
                    ),
                )
                .with_code("DatabaseChanging"))
            }
        }
    }
}

/// One attempt of [`load`]; `None` if it raced a checkpoint.
fn load_once(dir: &Path, io: &dyn StorageIo) -> Result<Option<Loaded>> {
    let (manifest, manifest_id) = Manifest::read_with_id(dir)?;
    let store = match Store::from_manifest(dir, manifest) {
        Ok(store) => Arc::new(store),
        Err(e) => {
            // A checkpoint replaced the manifest and deleted the segment it named.
            return match file_id(&dir.join(MANIFEST_FILE)) {
                Some((id, _)) if id == manifest_id => Err(e),
                _ => Ok(None),
            };
        }
    };
    // An incremental checkpoint's delta file: the changes the segment lacks.
    let saved = match &store.manifest.delta {
        None => crate::database::empty_delta(&store),
        Some(meta) => match crate::database::read_delta_file(dir, &store, meta) {
            Ok(delta) => delta,
            // A later checkpoint replaced the manifest and deleted the file.
            Err(e) => {
                return match file_id(&dir.join(MANIFEST_FILE)) {
                    Some((id, _)) if id == manifest_id => Err(e),
                    _ => Ok(None),
                };
            }
        },
    };
    let wal_path = dir.join(WAL_FILE);
    let log = io
        .read_from(&wal_path, 0)
        .map_err(|e| Error::io(wal_path.display(), e))?;
    let saved = Arc::new(saved);
    let generation = store.manifest.generation;
    let log_generation = log.as_ref().and_then(|(_, b)| wal::header_generation(b));
    let log = if log_generation.is_some_and(|g| g >= generation) {
        log
    } else {
        // A checkpoint interrupted between installing its manifest and
        // renaming its log left the live log as `wal.next` (see `relog`).
        match relog::live_next(dir, io, generation)? {
            Some(next) => Some(next),
            // Renamed just now: read again.
            None if file_id(&wal_path).map(|(id, _)| id) != log.as_ref().map(|(id, _)| *id) => {
                return Ok(None)
            }
            None => log,
        }
    };
    let Some((wal_id, bytes)) = log else {
        return Ok(Some(Loaded {
            store,
            delta: saved,
            pos: LogPosition {
                manifest: manifest_id,
                wal: None,
                wal_len: 0,
                live: false,
            },
            last_commit: 0,
            torn: false,
        }));
    };
    match wal::header_generation(&bytes) {
        Some(g) if g == generation => {
            let snap = Snapshot::new(store.clone(), saved);
            let at = wal::HEADER_LEN;
            let (delta, last_commit, scan) = replay(snap, &bytes[at as usize..], at, 0, dir)?;
            let wal_len = at + scan.valid_len;
            Ok(Some(Loaded {
                store,
                delta,
                pos: LogPosition {
                    manifest: manifest_id,
                    wal: Some(wal_id),
                    wal_len,
                    live: true,
                },
                last_commit,
                torn: wal_len < bytes.len() as u64,
            }))
        }
        // The log is of a newer checkpoint than the manifest read: read again.
        Some(g) if g > generation => Ok(None),
        // A stale log (a checkpoint died before resetting it) or a bad header:
        // everything in it is in the segment already.
        _ => Ok(Some(Loaded {
            store,
            delta: saved,
            pos: LogPosition {
                manifest: manifest_id,
                wal: Some(wal_id),
                wal_len: bytes.len() as u64,
                live: false,
            },
            last_commit: 0,
            torn: false,
        })),
    }
}

/// Reads what the live log holds past `pos` and replays it on `snap`.
/// `None` if the log file is not the one `pos` knows (load again).
pub(crate) fn read_tail(
    dir: &Path,
    io: &dyn StorageIo,
    snap: Snapshot,
    pos: &LogPosition,
    last_commit: u64,
) -> Result<Option<Loaded>> {
    let wal_path = dir.join(WAL_FILE);
    let Some((id, bytes)) = io
        .read_from(&wal_path, pos.wal_len)
        .map_err(|e| Error::io(wal_path.display(), e))?
    else {
        return Ok(None);
    };
    if Some(id) != pos.wal || !pos.live {
        return Ok(None);
    }
    let store = snap.store().clone();
    let (delta, last_commit, tail) = replay(snap, &bytes, pos.wal_len, last_commit, dir)?;
    Ok(Some(Loaded {
        store,
        delta,
        pos: LogPosition {
            wal_len: pos.wal_len + tail.valid_len,
            ..*pos
        },
        last_commit,
        torn: tail.valid_len < bytes.len() as u64,
    }))
}
