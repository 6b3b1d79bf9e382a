//! Cross-process file locks (`flock`), the one mechanism by which processes
//! sharing a database directory coordinate.
//!
//! - **The writer lock** is an exclusive `flock` on the file `lock` in the
//!   database directory, held from the start of a write transaction (or a
//!   checkpoint) to its end. The file itself is permanent and means nothing:
//!   only the lock on it does, and the kernel drops that lock when its holder
//!   exits or is killed, so a crash never leaves a stale lock behind. The
//!   holder writes its pid and command line into the file so that a process
//!   that times out waiting can say who holds it.
//! - **Segment pins**: every process that maps a segment holds a shared
//!   `flock` on it for as long as the mapping lives. A checkpoint deletes a
//!   superseded segment only if it can take an exclusive lock on it (nobody
//!   maps it any more); otherwise the file stays and a later checkpoint or
//!   write collects it.
//!
//! - **The checkpoint lock** is an exclusive `flock` on the database
//!   directory itself, held by a checkpoint from the moment it freezes the
//!   state it writes until its manifest is installed (most of that time
//!   without the writer lock). It keeps two checkpoints from running at
//!   once, and a writer collects leftover files only while it can take it,
//!   so no file a checkpoint is writing is mistaken for debris.
//!
//! `flock` locks belong to an open file description, so two handles opened
//! separately in one process exclude each other exactly like two processes.

use rhizome_common::{Error, ErrorKind, Result};
use rustix::fs::{flock, FlockOperation};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// File name of the writer lock inside a database directory.
pub const LOCK_FILE: &str = "lock";

/// The identity of a file (device, inode and, where the file system
/// records it, birth time): a file replaced by a rename has a new identity
/// even if its name is the same. The birth time matters because the inode
/// number of a file replaced and freed can be given to the next file
/// created (ext4 does this readily): by device and inode alone a process
/// could take a manifest or log two checkpoints newer for the one it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
    born: Option<std::time::SystemTime>,
}

impl FileId {
    /// The identity and size of the file at `path`.
    pub fn stat(path: &Path) -> io::Result<(FileId, u64)> {
        let stx = rustix::fs::statx(
            rustix::fs::CWD,
            path,
            rustix::fs::AtFlags::empty(),
            ID_FIELDS,
        )?;
        Ok(FileId::of_statx(&stx))
    }

    /// The identity and size of the open `file`.
    pub fn stat_file(file: &File) -> io::Result<(FileId, u64)> {
        let stx = rustix::fs::statx(file, "", rustix::fs::AtFlags::EMPTY_PATH, ID_FIELDS)?;
        Ok(FileId::of_statx(&stx))
    }

    fn of_statx(stx: &rustix::fs::Statx) -> (FileId, u64) {
        let born = (stx.stx_mask & rustix::fs::StatxFlags::BTIME.bits() != 0).then(|| {
            let t = stx.stx_btime;
            let since = Duration::new(t.tv_sec.unsigned_abs(), t.tv_nsec);
            match t.tv_sec >= 0 {
                true => std::time::UNIX_EPOCH + since,
                false => std::time::UNIX_EPOCH - since,
            }
        });
        let id = FileId {
            dev: rustix::fs::makedev(stx.stx_dev_major, stx.stx_dev_minor),
            ino: stx.stx_ino,
            born,
        };
        (id, stx.stx_size)
    }
}

/// What [`FileId::stat`] asks for: not the modification or change time.
/// On a file system with fine-grained timestamps (ext4 since Linux 6.13),
/// a stat that reads them makes the file's next write store a new time,
/// and the log's next `fdatasync` then has an inode change to journal:
/// a follower stat-ing the log after every commit made each sync cost as
/// much as one that grows the file (measured on ext4, Linux 6.18).
const ID_FIELDS: rustix::fs::StatxFlags = rustix::fs::StatxFlags::INO
    .union(rustix::fs::StatxFlags::SIZE)
    .union(rustix::fs::StatxFlags::BTIME);

/// Tries to take a lock on `file` without waiting; false if another open
/// file holds a conflicting one.
pub(crate) fn try_lock(file: &File, exclusive: bool) -> io::Result<bool> {
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    match flock(file, op) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Deletes the segment at `path` if no process maps it (it can be locked
/// exclusively). Returns true if the file is gone.
pub(crate) fn remove_if_unused(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return !path.exists();
    };
    match try_lock(&file, true) {
        Ok(true) => std::fs::remove_file(path).is_ok(),
        _ => false,
    }
}

/// The checkpoint lock of a database directory, held while the value lives.
pub(crate) struct CheckpointLock {
    _dir: File,
}

impl CheckpointLock {
    /// Takes the lock if no checkpoint (of any process or handle) holds it.
    pub(crate) fn try_take(dir: &Path) -> Result<Option<CheckpointLock>> {
        let file = File::open(dir).map_err(|e| Error::io(dir.display(), e))?;
        match try_lock(&file, true) {
            Ok(true) => Ok(Some(CheckpointLock { _dir: file })),
            Ok(false) => Ok(None),
            Err(e) => Err(Error::io(dir.display(), e)),
        }
    }

    /// Takes the lock, waiting until `deadline`; then fails with
    /// `TransientError` / `LockAcquisitionTimeout`.
    pub(crate) fn take(dir: &Path, deadline: Instant) -> Result<CheckpointLock> {
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(lock) = CheckpointLock::try_take(dir)? {
                return Ok(lock);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::new(
                    ErrorKind::TransientError,
                    format!(
                        "another checkpoint of the database {} ran for longer than the lock \
                         timeout; retry later",
                        dir.display()
                    ),
                )
                .with_code("LockAcquisitionTimeout"));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
}

/// The database's writer lock, as one handle sees it.
pub(crate) struct WriterLock {
    path: PathBuf,
    /// The lock file, opened at the first acquisition and kept open so that
    /// taking the lock again costs one `flock` (the file is permanent).
    file: Option<File>,
    /// This handle holds the lock now.
    held: bool,
}

impl WriterLock {
    /// The lock of the database in `dir` (nothing is opened yet).
    pub(crate) fn new(dir: &Path) -> WriterLock {
        WriterLock {
            path: dir.join(LOCK_FILE),
            file: None,
            held: false,
        }
    }

    /// Takes the lock, waiting until `deadline`; then fails with
    /// `TransientError` / `LockAcquisitionTimeout` naming the holder.
    pub(crate) fn acquire(&mut self, deadline: Instant, waited_for: Duration) -> Result<()> {
        let io_err = |e: io::Error| {
            Error::new(
                ErrorKind::IoError,
                format!("writer lock {}: {e}", self.path.display()),
            )
        };
        if self.held {
            return Ok(());
        }
        let file = match self.file.take() {
            Some(file) => file,
            None => OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&self.path)
                .map_err(io_err)?,
        };
        let file = self.file.insert(file);
        let mut pause = Duration::from_micros(500);
        while !try_lock(file, true).map_err(io_err)? {
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::new(
                    ErrorKind::TransientError,
                    format!(
                        "the database {} is being written by {}, which held the writer lock \
                         for longer than the lock timeout ({:?}); retry later, or wait longer \
                         with --lock-timeout",
                        self.path.parent().unwrap_or(&self.path).display(),
                        holder_of(&self.path),
                        waited_for
                    ),
                )
                .with_code("LockAcquisitionTimeout"));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(5));
        }
        // Best effort: who holds the lock is only a hint for error messages.
        // Rewritten only if another holder wrote its own (a read is cheaper
        // than a metadata change the next log sync would journal).
        let me = describe_self();
        let mut text = Vec::with_capacity(me.len() + 1);
        let current = file
            .rewind()
            .and_then(|_| (&*file).take(me.len() as u64 + 1).read_to_end(&mut text));
        if current.is_err() || text != me.as_bytes() {
            let _ = file
                .set_len(0)
                .and_then(|_| file.rewind())
                .and_then(|_| file.write_all(me.as_bytes()));
        }
        self.held = true;
        Ok(())
    }

    /// True while this handle holds the lock.
    pub(crate) fn is_held(&self) -> bool {
        self.held
    }

    /// Releases the lock if this handle holds it (the file stays open).
    pub(crate) fn release(&mut self) {
        if !self.held {
            return;
        }
        self.held = false;
        let unlocked = self
            .file
            .as_ref()
            .is_some_and(|f| flock(f, FlockOperation::Unlock).is_ok());
        if !unlocked {
            // Closing the file drops the flock in any case.
            self.file = None;
        }
    }
}

/// `process <pid> (<command line>)` of this process, as written into the lock file.
/// Computed once per process (again in a forked child, whose pid differs).
fn describe_self() -> Arc<str> {
    static SELF: Mutex<Option<(u32, Arc<str>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut cached = SELF.lock().unwrap_or_else(|e| e.into_inner());
    match &*cached {
        Some((p, text)) if *p == pid => text.clone(),
        _ => {
            let args: Vec<String> = std::env::args().collect();
            let text: Arc<str> = format!("{pid}\n{}\n", args.join(" ")).into();
            *cached = Some((pid, text.clone()));
            text
        }
    }
}

/// Who holds the lock at `path`, as its holder described itself.
fn holder_of(path: &Path) -> String {
    let mut text = String::new();
    let read = File::open(path).and_then(|mut f| f.read_to_string(&mut text));
    let mut lines = text.lines();
    match (read, lines.next(), lines.next()) {
        (Ok(_), Some(pid), cmd) if !pid.is_empty() => {
            format!("process {pid} (`{}`)", cmd.unwrap_or("?"))
        }
        _ => "another process".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A file replaced twice by renames (as two checkpoints replace the
    /// manifest) often gets its old inode number back on ext4; its identity
    /// must still differ, or a process would take the files two checkpoints
    /// on for the ones it knows.
    #[test]
    fn a_file_replaced_twice_is_another_file_even_with_its_old_inode_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest");
        let tmp = dir.path().join("manifest.tmp");
        let (mut reused, rounds) = (0, 20);
        for round in 0..rounds {
            std::fs::write(&path, format!("{round} a")).unwrap();
            let meta = std::fs::metadata(&path).unwrap();
            let (before, _) = FileId::stat(&path).unwrap();
            assert_eq!(
                FileId::stat_file(&File::open(&path).unwrap()).unwrap().0,
                before
            );
            for step in ["b", "c"] {
                std::fs::write(&tmp, format!("{round} {step}")).unwrap();
                std::fs::rename(&tmp, &path).unwrap();
            }
            let after = std::fs::metadata(&path).unwrap();
            reused += usize::from(after.ino() == meta.ino());
            assert_ne!(FileId::stat(&path).unwrap().0, before, "round {round}");
        }
        eprintln!("inode number came back in {reused} of {rounds} rounds");
    }

    #[test]
    fn second_handle_times_out_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = WriterLock::new(dir.path());
        let mut b = WriterLock::new(dir.path());
        a.acquire(Instant::now(), Duration::ZERO).unwrap();
        let t0 = Instant::now();
        let err = b
            .acquire(t0 + Duration::from_millis(50), Duration::from_millis(50))
            .unwrap_err();
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert_eq!(err.kind, ErrorKind::TransientError);
        assert!(
            err.message
                .contains(&format!("process {}", std::process::id())),
            "{}",
            err.message
        );
        a.release();
        b.acquire(Instant::now(), Duration::ZERO).unwrap();
    }

    #[test]
    fn pinned_segments_are_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("segment-000001.rhz");
        std::fs::write(&path, b"x").unwrap();
        let pin = File::open(&path).unwrap();
        assert!(try_lock(&pin, false).unwrap());
        assert!(!remove_if_unused(&path));
        assert!(path.exists());
        drop(pin);
        assert!(remove_if_unused(&path));
        assert!(!path.exists());
    }
}
