//! File I/O of the write-ahead log behind a small trait, so tests can inject
//! failures (a full disk, a failing fsync) without touching the real file
//! system's behaviour.
//!
//! [`StdIo`] is the real implementation. [`FaultyIo`] wraps it with a byte
//! budget: once the budget is spent, appends write what still fits and fail
//! with `StorageFull` — the shape of a real out-of-disk error, torn record
//! included — and syncs can be made to fail.

use crate::lock::FileId;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// An open log file, positioned at the end of its records for appending.
pub trait WalFile: Send {
    /// Appends `bytes` after the records (not yet durable).
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes everything appended so far durable (fdatasync).
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts the file to `len` bytes (used to drop a torn record).
    fn truncate(&mut self, len: u64) -> io::Result<()>;
    /// Current length in bytes.
    fn len(&self) -> u64;
    /// True if the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A second handle that syncs the file from another thread while this
    /// one goes on appending (group commit).
    fn sync_handle(&self) -> io::Result<Arc<dyn WalSync>>;
}

/// Makes everything appended to a log file so far durable (fdatasync);
/// usable from any thread.
pub trait WalSync: Send + Sync {
    /// Syncs the file's data.
    fn sync(&self) -> io::Result<()>;
}

struct StdSync(File);

impl WalSync for StdSync {
    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

/// The file operations the log needs.
pub trait StorageIo: Send + Sync {
    /// Opens an existing log file for appending after its first `end`
    /// bytes (the end of its records, which the caller found). What
    /// follows `end` is kept if it is all zeros (space reserved ahead, see
    /// [`crate::wal`]) and cut off otherwise (debris of a torn write).
    fn open_append(&self, path: &Path, end: u64) -> io::Result<Box<dyn WalFile>>;
    /// Reads a whole file; `None` if it does not exist.
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;
    /// Replaces `path` atomically and durably by a file holding `bytes`
    /// (write a temporary file, fsync, rename, fsync the directory).
    fn replace(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Reads `path` from byte `offset` to its end, with the identity of the
    /// file read; `None` if it does not exist.
    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Option<(FileId, Vec<u8>)>> {
        read_file_from(path, offset)
    }
}

/// [`StorageIo::read_from`] on the real file system.
pub fn read_file_from(path: &Path, offset: u64) -> io::Result<Option<(FileId, Vec<u8>)>> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let (id, _) = FileId::stat_file(&f)?;
    f.seek(io::SeekFrom::Start(offset))?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)?;
    Ok(Some((id, out)))
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdIo;

/// Bytes of zeros a log file is grown by at a time, ahead of the records
/// written into them (see [`crate::wal`]).
pub const RESERVE_BYTES: u64 = 256 * 1024;

struct StdFile {
    file: File,
    /// End of the records: where the next append writes.
    len: u64,
    /// The file's size: zeros from `len` to here are reserved space.
    reserved: u64,
    /// False once the file system refused to reserve space; the file then
    /// grows by each append.
    can_reserve: bool,
}

impl StdFile {
    /// Makes sure `more` bytes after the records lie within the file's
    /// size, reserving [`RESERVE_BYTES`] (or what the append
    /// needs) of zeros at a time, so that appending does not change the
    /// size (an unchanged size is what makes `fdatasync` cheap).
    fn reserve(&mut self, more: u64) -> io::Result<()> {
        let need = self.len + more;
        if !self.can_reserve || need <= self.reserved {
            return Ok(());
        }
        let grow = (need - self.reserved).max(RESERVE_BYTES);
        if reserve_zeroed(&self.file, self.reserved, grow)? {
            self.reserved += grow;
        } else {
            // Not supported here: append by growing the file.
            self.can_reserve = false;
        }
        Ok(())
    }
}

/// Reserves `len` bytes of `file` from byte `from` and fills them with
/// zeros: `fallocate` first, so a full disk shows now and not at a later
/// sync, then written zeros, so that the blocks are written extents. A
/// record appended into an unwritten extent (what `fallocate` alone
/// leaves) makes the next `fdatasync` also convert the extent and write
/// the inode; with 16 writers committing through group commit that cost
/// one sync in several an extra synchronous write (64% against 57% of 16
/// × the raw sync rate, five alternating pairs). Returns false, writing
/// nothing, where the file system cannot reserve space.
pub fn reserve_zeroed(file: &File, from: u64, len: u64) -> io::Result<bool> {
    use rustix::fs::{fallocate, FallocateFlags};
    use std::os::unix::fs::FileExt;
    match fallocate(file, FallocateFlags::empty(), from, len) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::NOSPC => return Err(e.into()),
        Err(_) => return Ok(false),
    }
    static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
    let mut at = from;
    while at < from + len {
        let n = ((from + len - at) as usize).min(ZEROS.len());
        file.write_all_at(&ZEROS[..n], at)?;
        at += n as u64;
    }
    Ok(true)
}

impl WalFile for StdFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.reserve(bytes.len() as u64)?;
        let outcome = self.file.write_all_at(bytes, self.len);
        if outcome.is_ok() {
            self.len += bytes.len() as u64;
        }
        // A partial write leaves bytes after `len`: the caller cuts them off.
        self.reserved = self.reserved.max(self.len);
        outcome
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.file.sync_data()?;
        self.len = len;
        self.reserved = len;
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn WalSync>> {
        Ok(Arc::new(StdSync(self.file.try_clone()?)))
    }
}

impl StorageIo for StdIo {
    fn open_append(&self, path: &Path, end: u64) -> io::Result<Box<dyn WalFile>> {
        use std::os::unix::fs::FileExt;
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let (_, size) = crate::lock::FileId::stat_file(&file)?;
        if end > size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the log ends at byte {end} but the file holds {size}"),
            ));
        }
        // Whether anything but zeros follows `end` (read a piece at a time:
        // a torn record can be large).
        let mut piece = vec![0u8; (size - end).min(64 * 1024) as usize];
        let mut at = end;
        let mut debris = false;
        while at < size && !debris {
            let n = piece.len().min((size - at) as usize);
            file.read_exact_at(&mut piece[..n], at)?;
            debris = piece[..n].iter().any(|&b| b != 0);
            at += n as u64;
        }
        let mut reserved = size;
        if debris {
            file.set_len(end)?;
            file.sync_data()?;
            reserved = end;
        }
        Ok(Box::new(StdFile {
            file,
            len: end,
            reserved,
            can_reserve: true,
        }))
    }

    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match File::open(path) {
            Ok(mut f) => {
                let mut out = Vec::new();
                f.read_to_end(&mut out)?;
                Ok(Some(out))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn replace(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

/// Failure injection over [`StdIo`]: a shared budget of bytes that appends
/// may still write, and a switch that makes syncs fail. Clones share state.
#[derive(Debug, Clone)]
pub struct FaultyIo {
    budget: Arc<AtomicU64>,
    fail_sync: Arc<AtomicBool>,
}

impl Default for FaultyIo {
    fn default() -> Self {
        FaultyIo {
            budget: Arc::new(AtomicU64::new(u64::MAX)),
            fail_sync: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl FaultyIo {
    /// No faults until configured.
    pub fn new() -> FaultyIo {
        FaultyIo::default()
    }

    /// Lets appends write `bytes` more bytes in total (`u64::MAX`: unlimited).
    pub fn set_space(&self, bytes: u64) {
        self.budget.store(bytes, Ordering::SeqCst);
    }

    /// Makes every sync fail (or succeed again).
    pub fn set_fail_sync(&self, fail: bool) {
        self.fail_sync.store(fail, Ordering::SeqCst);
    }
}

struct FaultyFile {
    inner: Box<dyn WalFile>,
    io: FaultyIo,
}

fn disk_full() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        "No space left on device (injected)",
    )
}

impl WalFile for FaultyFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let budget = self.io.budget.load(Ordering::SeqCst);
        if budget >= bytes.len() as u64 {
            if budget != u64::MAX {
                self.io
                    .budget
                    .fetch_sub(bytes.len() as u64, Ordering::SeqCst);
            }
            return self.inner.append(bytes);
        }
        self.io.budget.store(0, Ordering::SeqCst);
        self.inner.append(&bytes[..budget as usize])?;
        Err(disk_full())
    }

    fn sync(&mut self) -> io::Result<()> {
        if self.io.fail_sync.load(Ordering::SeqCst) {
            return Err(io::Error::other("fsync failed (injected)"));
        }
        self.inner.sync()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.inner.truncate(len)
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn WalSync>> {
        Ok(Arc::new(FaultySync {
            inner: self.inner.sync_handle()?,
            io: self.io.clone(),
        }))
    }
}

struct FaultySync {
    inner: Arc<dyn WalSync>,
    io: FaultyIo,
}

impl WalSync for FaultySync {
    fn sync(&self) -> io::Result<()> {
        if self.io.fail_sync.load(Ordering::SeqCst) {
            return Err(io::Error::other("fsync failed (injected)"));
        }
        self.inner.sync()
    }
}

impl StorageIo for FaultyIo {
    fn open_append(&self, path: &Path, end: u64) -> io::Result<Box<dyn WalFile>> {
        Ok(Box::new(FaultyFile {
            inner: StdIo.open_append(path, end)?,
            io: self.clone(),
        }))
    }

    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        StdIo.read(path)
    }

    fn replace(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        if self.budget.load(Ordering::SeqCst) < bytes.len() as u64 {
            return Err(disk_full());
        }
        StdIo.replace(path, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_for_append_keeps_reserved_zeros_and_cuts_debris() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w");
        StdIo.replace(&path, b"head").unwrap();
        let mut f = StdIo.open_append(&path, 4).unwrap();
        f.append(b"abc").unwrap();
        drop(f);
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size >= 4 + RESERVE_BYTES, "space reserved: {size}");
        let bytes = StdIo.read(&path).unwrap().unwrap();
        assert_eq!(&bytes[..7], b"headabc");
        assert!(bytes[7..].iter().all(|&b| b == 0));
        // Zeros after the end stay; the next append goes after "abc".
        let mut f = StdIo.open_append(&path, 7).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
        f.append(b"de").unwrap();
        drop(f);
        // Anything else after the end is cut off.
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(b"xx", 20).unwrap();
        let f = StdIo.open_append(&path, 9).unwrap();
        assert_eq!(f.len(), 9);
        assert_eq!(StdIo.read(&path).unwrap().unwrap(), b"headabcde");
        assert!(
            StdIo.open_append(&path, 10).is_err(),
            "an end past the file"
        );
    }

    #[test]
    fn reserved_space_is_written_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        let file = File::create(&path).unwrap();
        assert!(reserve_zeroed(&file, 0, 100_000).unwrap());
        assert_eq!(file.metadata().unwrap().len(), 100_000);
        // Written, not only allocated: no hole (an unwritten extent reads as
        // one on ext4) before the end.
        let hole = rustix::fs::seek(&file, rustix::fs::SeekFrom::Hole(0)).unwrap();
        assert_eq!(hole, 100_000);
        let bytes = StdIo.read(&path).unwrap().unwrap();
        assert!(bytes.iter().all(|&b| b == 0));
    }

    #[test]
    fn faulty_io_tears_appends_when_full() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w");
        let io = FaultyIo::new();
        io.replace(&path, b"head").unwrap();
        let mut f = io.open_append(&path, 4).unwrap();
        f.append(b"abc").unwrap();
        io.set_space(2);
        let err = f.append(b"defg").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(f.len(), 9);
        f.truncate(7).unwrap();
        assert_eq!(io.read(&path).unwrap().unwrap(), b"headabc");
        io.set_fail_sync(true);
        assert!(f.sync().is_err());
        assert_eq!(io.read(&dir.path().join("none")).unwrap(), None);
    }
}
