//! Segment files: immutable files of aligned arrays, read by memory mapping.
//!
//! A segment starts with a 64-byte header (`RHZSEG` magic and layout
//! version) followed by arrays, each starting at a 64-byte aligned offset. The
//! manifest records every array as an [`ArrayRef`] (offset and element count);
//! the element type is implied by what the array is for. Opening a segment maps
//! it without reading it, so opening a database costs the same whatever its
//! size; the operating system pages data in as queries touch it.

use bytemuck::Pod;
use rhizome_common::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The magic of a segment file: `RHZSEG`, a zero byte and the layout version
/// (2 since the compact adjacency of manifest format 3).
const MAGIC: &[u8; 8] = b"RHZSEG\0\x02";
/// The layout version this binary writes and reads (the last byte of [`MAGIC`]).
const LAYOUT: u8 = MAGIC[7];
const ALIGN: u64 = 64;
const HEADER_LEN: u64 = 64;

/// Where an array lies in a segment: byte offset and number of elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ArrayRef {
    /// Byte offset from the start of the segment (a multiple of 64).
    pub offset: u64,
    /// Number of elements.
    pub len: u64,
}

/// Writes a new segment file. Arrays are appended in the order written; the
/// file is flushed and synced by [`SegmentWriter::finish`].
pub struct SegmentWriter {
    out: BufWriter<File>,
    pos: u64,
    path: PathBuf,
    /// Sync the file every this many bytes (see [`SegmentWriter::sync_every`]).
    sync_every: Option<u64>,
    /// Bytes written when the file was last synced.
    synced: u64,
}

impl SegmentWriter {
    /// Creates (truncating) the segment file at `path` and writes its header.
    pub fn create(path: &Path) -> Result<SegmentWriter> {
        let file = File::create(path).map_err(|e| Error::io(path.display(), e))?;
        let mut writer = SegmentWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            pos: 0,
            path: path.to_path_buf(),
            sync_every: None,
            synced: 0,
        };
        let mut header = [0u8; HEADER_LEN as usize];
        header[..8].copy_from_slice(MAGIC);
        writer.put(&header)?;
        Ok(writer)
    }

    /// Makes the writer sync what it wrote every `bytes` bytes, so that the
    /// file never holds much unsynced data: a checkpoint writing beside
    /// commits uses it, because a log sync (`fdatasync`) can have to wait
    /// for the dirty pages of every file of the file system (ext4 in
    /// `data=ordered` mode), and one large burst at the end would stall the
    /// commits behind it.
    pub fn sync_every(mut self, bytes: u64) -> SegmentWriter {
        self.sync_every = Some(bytes.max(1));
        self
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let err = |e| Error::io(self.path.display(), e);
        self.out.write_all(bytes).map_err(err)?;
        self.pos += bytes.len() as u64;
        if let Some(every) = self.sync_every {
            if self.pos - self.synced >= every {
                self.out.flush().map_err(err)?;
                self.out.get_ref().sync_data().map_err(err)?;
                self.synced = self.pos;
            }
        }
        Ok(())
    }

    /// Appends `data` at the next aligned offset and returns where it lies.
    pub fn write<T: Pod>(&mut self, data: &[T]) -> Result<ArrayRef> {
        let pad = (ALIGN - self.pos % ALIGN) % ALIGN;
        self.put(&[0u8; ALIGN as usize][..pad as usize])?;
        let offset = self.pos;
        self.put(bytemuck::cast_slice(data))?;
        Ok(ArrayRef {
            offset,
            len: data.len() as u64,
        })
    }

    /// Flushes and fsyncs the file; returns its length in bytes.
    pub fn finish(self) -> Result<u64> {
        let path = self.path.clone();
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io(path.display(), e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(path.display(), e))?;
        Ok(self.pos)
    }
}

/// A memory-mapped segment.
pub struct Segment {
    map: memmap2::Mmap,
    path: PathBuf,
    /// The open file, holding a shared `flock` while the segment is mapped so
    /// that no checkpoint of any process deletes it (see [`crate::lock`]).
    _pin: File,
}

impl Segment {
    /// Maps the segment at `path`, checking its header and that its length is
    /// the `expected_len` the manifest recorded (a shorter file is damaged).
    /// Holds a shared lock on the file while the segment lives.
    pub fn open(path: &Path, expected_len: u64) -> Result<Segment> {
        Segment::open_layout(path, expected_len, LAYOUT)
    }

    /// Like [`Segment::open`], for a segment of layout version `layout`
    /// (`crate::upgrade` reads the layout of manifest formats 1 and 2).
    pub(crate) fn open_layout(path: &Path, expected_len: u64, layout: u8) -> Result<Segment> {
        let file = File::open(path).map_err(|e| Error::io(path.display(), e))?;
        // A segment is deleted only under an exclusive lock; if a checkpoint
        // holds one right now the file is being deleted and the caller retries.
        if !crate::lock::try_lock(&file, false).map_err(|e| Error::io(path.display(), e))? {
            return Err(Error::new(
                ErrorKind::IoError,
                format!("segment {} is being deleted", path.display()),
            ));
        }
        let len = file
            .metadata()
            .map_err(|e| Error::io(path.display(), e))?
            .len();
        let corrupt = |why: &str| {
            Error::new(
                ErrorKind::CorruptDatabase,
                format!("segment {}: {why}", path.display()),
            )
        };
        if len != expected_len {
            return Err(corrupt(&format!(
                "is {len} bytes long, the manifest expects {expected_len}"
            )));
        }
        // SAFETY: segments are immutable once written: Rhizome never modifies
        // or truncates a segment file that a manifest refers to.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path.display(), e))?;
        if map.len() < HEADER_LEN as usize || map[..7] != MAGIC[..7] {
            return Err(corrupt("not a Rhizome segment (bad magic)"));
        }
        if map[7] != layout {
            return Err(corrupt(&format!(
                "segment layout version {} (expected version {layout})",
                map[7]
            )));
        }
        Ok(Segment {
            map,
            path: path.to_path_buf(),
            _pin: file,
        })
    }

    /// The array `r` as a slice of `T`, checked to lie inside the file and be aligned.
    pub fn slice<T: Pod>(&self, r: ArrayRef) -> Result<&[T]> {
        let size = std::mem::size_of::<T>() as u64;
        let end = r
            .len
            .checked_mul(size)
            .and_then(|n| n.checked_add(r.offset));
        match end {
            Some(end) if end <= self.map.len() as u64 && r.offset.is_multiple_of(ALIGN) => Ok(
                bytemuck::cast_slice(&self.map[r.offset as usize..end as usize]),
            ),
            _ => Err(Error::new(
                ErrorKind::CorruptDatabase,
                format!(
                    "segment {}: array at {} of {} elements lies outside the file",
                    self.path.display(),
                    r.offset,
                    r.len
                ),
            )),
        }
    }

    /// Like [`Segment::slice`] but detached from the borrow of `self`.
    ///
    /// # Safety
    /// The caller must keep this segment alive (not dropped) for as long as the
    /// returned slice is used. [`crate::Database`] upholds this by keeping the
    /// segment in the same reference-counted store as every view into it.
    pub(crate) unsafe fn slice_detached<T: Pod>(&self, r: ArrayRef) -> Result<&'static [T]> {
        let slice = self.slice::<T>(r)?;
        // SAFETY: the mapping lives as long as `self`, which the caller keeps alive.
        Ok(unsafe { std::slice::from_raw_parts(slice.as_ptr(), slice.len()) })
    }

    /// Size of the mapped file in bytes.
    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// True if the segment holds only its header.
    pub fn is_empty(&self) -> bool {
        self.len() <= HEADER_LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_map() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.seg");
        let mut w = SegmentWriter::create(&path).unwrap();
        let a = w.write(&[1u8, 2, 3]).unwrap();
        let b = w.write(&[10i64, -20, 30]).unwrap();
        let len = w.finish().unwrap();
        let seg = Segment::open(&path, len).unwrap();
        assert_eq!(seg.slice::<u8>(a).unwrap(), &[1, 2, 3]);
        assert_eq!(seg.slice::<i64>(b).unwrap(), &[10, -20, 30]);
        let bad = ArrayRef {
            offset: b.offset,
            len: 1000,
        };
        assert_eq!(
            seg.slice::<i64>(bad).unwrap_err().kind,
            ErrorKind::CorruptDatabase
        );
        assert!(Segment::open(&path, len + 1).is_err());
    }
}
