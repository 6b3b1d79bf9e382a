//! Reading one input group: header handling, then blocks parsed in parallel
//! and merged in file order.
//!
//! Threads: one reader cuts the files into blocks of whole records
//! ([`crate::csv_reader::FileBlocks`]); `threads` workers parse blocks into
//! chunks (typed column pieces); the calling thread merges chunks strictly
//! in input order, so ids, errors and row order are the same as a sequential
//! read. Channels are bounded, so at most about `4 * threads` blocks are in
//! memory at once whatever the file size. The first error in input order
//! wins; the others stop at their next send.

use crate::csv_reader::{Block, FileBlocks, BLOCK_SIZE};
use crate::header::{looks_like_header, EntityKind, Header};
use crate::progress::ImportProgress;
use rhizome_common::{Error, ErrorKind, Position, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

/// How files are read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadSettings {
    /// Field delimiter.
    pub delimiter: u8,
    /// Quote character.
    pub quote: u8,
    /// Parsing threads (at least 1).
    pub threads: usize,
    /// Target block size in bytes.
    pub block_size: usize,
}

impl ReadSettings {
    /// Settings with the default block size.
    pub(crate) fn new(delimiter: u8, quote: u8, threads: usize) -> ReadSettings {
        ReadSettings {
            delimiter,
            quote,
            threads: threads.max(1),
            block_size: BLOCK_SIZE,
        }
    }
}

/// Reads and validates the header of a group: the first record of its first file.
pub(crate) fn read_group_header(
    files: &[PathBuf],
    entity: EntityKind,
    settings: ReadSettings,
) -> Result<(Header, Vec<String>)> {
    let first = files.first().ok_or_else(|| {
        Error::new(
            ErrorKind::ArgumentError,
            "an input group needs at least one file",
        )
    })?;
    let mut blocks = FileBlocks::open(
        first,
        0,
        settings.delimiter,
        settings.quote,
        settings.block_size,
    )?;
    let (fields, _) = blocks.peek_first_record()?.ok_or_else(|| {
        Error::new(
            ErrorKind::InputError,
            "the file is empty, but the first file of a group must start with a header line",
        )
        .in_source(first.display().to_string())
        .at(Position {
            offset: 0,
            line: 1,
            column: 1,
        })
    })?;
    let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
    let header = Header::parse(first, &refs, entity)?;
    Ok((header, fields))
}

/// Total size in bytes of `files` (missing files count 0; opening reports them).
pub(crate) fn total_bytes<'a>(files: impl IntoIterator<Item = &'a PathBuf>) -> u64 {
    files
        .into_iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum()
}

type Parsed<C> = (u64, Result<(C, u64)>, u64);

/// Reads every file of a group (skipping the header of the first file, and
/// the first line of later files when it equals `header_fields` or looks like
/// a header), parses blocks with `parse` on worker threads and hands the
/// chunks to `merge` in input order. `parse` returns a chunk and its row count.
pub(crate) fn run_group<C, P, M>(
    files: &[PathBuf],
    header_fields: &[String],
    settings: ReadSettings,
    progress: &dyn ImportProgress,
    parse: P,
    mut merge: M,
) -> Result<()>
where
    C: Send,
    P: Fn(&Block) -> Result<(C, u64)> + Sync,
    M: FnMut(C) -> Result<()>,
{
    let threads = settings.threads.max(1);
    std::thread::scope(|scope| {
        let (work_tx, work_rx) = sync_channel::<(u64, Block)>(threads * 2);
        let work_rx: Arc<Mutex<Receiver<(u64, Block)>>> = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = sync_channel::<Parsed<C>>(threads * 2);
        let reader_tx = done_tx.clone();
        scope.spawn(move || {
            let mut seq = 0u64;
            if let Err(e) = read_blocks(files, header_fields, settings, |block| {
                let ok = work_tx.send((seq, block)).is_ok();
                seq += 1;
                ok
            }) {
                let _ = reader_tx.send((seq, Err(e), 0));
            }
        });
        let parse = &parse;
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let work_rx = Arc::clone(&work_rx);
            scope.spawn(move || loop {
                let next = match work_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok((seq, block)) = next else { return };
                let bytes = block.data.len() as u64 + block.skipped;
                let parsed = parse(&block);
                drop(block);
                if done_tx.send((seq, parsed, bytes)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        drop(work_rx);
        let mut pending: BTreeMap<u64, (Result<(C, u64)>, u64)> = BTreeMap::new();
        let mut next = 0u64;
        for (seq, parsed, bytes) in done_rx.iter() {
            pending.insert(seq, (parsed, bytes));
            while let Some((parsed, bytes)) = pending.remove(&next) {
                let (chunk, rows) = parsed?;
                merge(chunk)?;
                progress.advance(bytes, rows);
                next += 1;
            }
        }
        if let Some((_, (parsed, _))) = pending.into_iter().next() {
            parsed?;
            return Err(Error::internal(
                "a block of the input was lost between threads",
            ));
        }
        Ok(())
    })
}

/// The reader thread's loop: blocks of every file in order; stops early
/// (returning `Ok`) when `send` reports that nobody listens any more.
fn read_blocks(
    files: &[PathBuf],
    header_fields: &[String],
    settings: ReadSettings,
    mut send: impl FnMut(Block) -> bool,
) -> Result<()> {
    for (index, path) in files.iter().enumerate() {
        let mut blocks = open_skipping_header(path, index, header_fields, settings)?;
        while let Some(block) = blocks.next_block()? {
            if !send(block) {
                return Ok(());
            }
        }
    }
    Ok(())
}

fn open_skipping_header(
    path: &Path,
    index: usize,
    header_fields: &[String],
    settings: ReadSettings,
) -> Result<FileBlocks> {
    let mut blocks = FileBlocks::open(
        path,
        index,
        settings.delimiter,
        settings.quote,
        settings.block_size,
    )?;
    if let Some((fields, len)) = blocks.peek_first_record()? {
        let same = |a: &[String], b: &[String]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.trim() == y.trim())
        };
        let is_header = index == 0
            || same(&fields, header_fields)
            || {
                let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
                if looks_like_header(&refs) {
                    // A different header would silently shift columns: refuse it.
                    return Err(Error::new(
                    ErrorKind::InputError,
                    format!(
                        "this file starts with a header (`{}`) that differs from the group's header (`{}`); every file of a group uses the header of the first file",
                        fields.join(","),
                        header_fields.join(",")
                    ),
                )
                .in_source(path.display().to_string())
                .at(Position { offset: 0, line: 1, column: 1 }));
                }
                false
            };
        if is_header {
            blocks.skip_first_record(len);
        }
    }
    Ok(blocks)
}

/// An `InputError` at a row of a block.
pub(crate) fn row_error(
    files: &[PathBuf],
    block: &Block,
    line: u64,
    record_offset: usize,
    field: usize,
    message: String,
) -> Error {
    Error::new(ErrorKind::InputError, message)
        .in_source(files[block.file_index].display().to_string())
        .at(Position {
            offset: (block.file_offset + record_offset as u64) as usize,
            line: line as u32,
            column: field as u32,
        })
}

/// Checks a record's field count against the header's.
#[inline]
pub(crate) fn check_field_count(
    files: &[PathBuf],
    block: &Block,
    line: u64,
    offset: usize,
    found: usize,
    expected: usize,
) -> Result<()> {
    if found == expected {
        return Ok(());
    }
    field_count_error(files, block, line, offset, found, expected)
}

#[cold]
fn field_count_error(
    files: &[PathBuf],
    block: &Block,
    line: u64,
    offset: usize,
    found: usize,
    expected: usize,
) -> Result<()> {
    let field = found.min(expected) + 1;
    let detail = if found < expected {
        format!("field {field} is missing")
    } else {
        format!("field {field} is one too many")
    };
    Err(row_error(
        files,
        block,
        line,
        offset,
        field,
        format!(
            "wrong number of fields: the header has {expected}, this row has {found} ({detail})"
        ),
    ))
}
