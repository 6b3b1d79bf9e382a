//! The write-ahead log: one append-only file, `wal.log`, in the database directory.
//!
//! ## Format
//! ```text
//! header : "RHZWAL\0\x01" (8 bytes) | generation: u64 LE
//! record : payload length: u32 LE | crc32c(payload): u32 LE | payload
//! payload: commit number: u64 LE | op count: varint | ops
//! ```
//! The file may go on past the last record with zero bytes: space the
//! writer reserved and zeroed ahead ([`crate::io::RESERVE_BYTES`] at a time,
//! [`crate::io::reserve_zeroed`]), so that appending a record neither
//! changes the file's size nor converts an extent, and `fdatasync` has no
//! metadata to write (on ext4 it then costs about two thirds as much).
//! Eight zero bytes where a record would start (or fewer, all zero, at the
//! end of the file) end the log; no record starts that way, as a payload
//! holds at least its commit number.
//! A record holds the logical operations of one commit ([`Op`], names rather
//! than catalog ids so a record is self-contained). The header's generation
//! is the manifest generation the log applies on top of: a checkpoint writes
//! a new manifest (generation + 1) and then resets the log, so a log whose
//! generation differs from the manifest's is stale and ignored.
//!
//! ## Durability and recovery
//! A commit is acknowledged only after its record was appended and the file
//! synced (`fdatasync`). Recovery reads records in order and stops at the
//! first one that is short (a torn write), fails its checksum or does not
//! decode; that record and everything after it are cut off. Because a commit
//! that failed to append is truncated away before the next one is written,
//! only the tail can ever be damaged, and every acknowledged commit lies in
//! the valid prefix.

use crate::codec;
use crate::io::{StorageIo, WalFile, WalSync};
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use std::sync::Arc;

/// File name of the log inside a database directory.
pub const WAL_FILE: &str = "wal.log";
const MAGIC: &[u8; 8] = b"RHZWAL\0\x01";
/// Length of the file header.
pub const HEADER_LEN: u64 = 16;

/// True if the log ends at the start of `rest` (the bytes from a record
/// boundary to the end of what was read): an end marker (eight zero bytes,
/// or fewer at the end of the file) or nothing.
pub fn ends_log(rest: &[u8]) -> bool {
    rest[..rest.len().min(8)].iter().all(|&b| b == 0)
}

/// One logical write operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `WriteTxn::create_node`.
    CreateNode {
        /// Label names.
        labels: Vec<String>,
        /// Properties.
        props: Vec<(String, Value)>,
    },
    /// `WriteTxn::create_relationship`.
    CreateRel {
        /// Start node.
        start: NodeId,
        /// End node.
        end: NodeId,
        /// Type name.
        rel_type: String,
        /// Properties.
        props: Vec<(String, Value)>,
    },
    /// `WriteTxn::set_node_property`.
    SetNodeProperty {
        /// Node.
        node: NodeId,
        /// Key name.
        key: String,
        /// New value (`Null` removes).
        value: Value,
    },
    /// `WriteTxn::set_rel_property`.
    SetRelProperty {
        /// Relationship.
        rel: RelId,
        /// Key name.
        key: String,
        /// New value (`Null` removes).
        value: Value,
    },
    /// `WriteTxn::add_label`.
    AddLabel {
        /// Node.
        node: NodeId,
        /// Label name.
        label: String,
    },
    /// `WriteTxn::remove_label`.
    RemoveLabel {
        /// Node.
        node: NodeId,
        /// Label name.
        label: String,
    },
    /// `WriteTxn::delete_relationship`.
    DeleteRel {
        /// Relationship.
        rel: RelId,
    },
    /// `WriteTxn::delete_node` (relationships were logged as deleted before).
    DeleteNode {
        /// Node.
        node: NodeId,
    },
    /// `WriteTxn::create_index`.
    CreateIndex {
        /// Label name.
        label: String,
        /// Key name.
        key: String,
        /// The name given at creation, if any.
        name: Option<String>,
    },
    /// `WriteTxn::drop_index`.
    DropIndex {
        /// Label name.
        label: String,
        /// Key name.
        key: String,
    },
    /// `WriteTxn::create_unique_constraint`.
    CreateConstraint {
        /// Label name.
        label: String,
        /// Key name.
        key: String,
        /// The name given at creation, if any.
        name: Option<String>,
    },
    /// `WriteTxn::drop_constraint`.
    DropConstraint {
        /// Label name.
        label: String,
        /// Key name.
        key: String,
    },
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    let mut buf = Vec::new();
    codec::encode(v, &mut buf);
    put_varint(out, buf.len() as u64);
    out.extend_from_slice(&buf);
}

fn put_props(out: &mut Vec<u8>, props: &[(String, Value)]) {
    put_varint(out, props.len() as u64);
    for (k, v) in props {
        put_str(out, k);
        put_value(out, v);
    }
}

fn encode_op(out: &mut Vec<u8>, op: &Op) {
    match op {
        Op::CreateNode { labels, props } => {
            out.push(1);
            put_varint(out, labels.len() as u64);
            labels.iter().for_each(|l| put_str(out, l));
            put_props(out, props);
        }
        Op::CreateRel {
            start,
            end,
            rel_type,
            props,
        } => {
            out.push(2);
            put_varint(out, *start);
            put_varint(out, *end);
            put_str(out, rel_type);
            put_props(out, props);
        }
        Op::SetNodeProperty { node, key, value } => {
            out.push(3);
            put_varint(out, *node);
            put_str(out, key);
            put_value(out, value);
        }
        Op::SetRelProperty { rel, key, value } => {
            out.push(4);
            put_varint(out, *rel);
            put_str(out, key);
            put_value(out, value);
        }
        Op::AddLabel { node, label } => {
            out.push(5);
            put_varint(out, *node);
            put_str(out, label);
        }
        Op::RemoveLabel { node, label } => {
            out.push(6);
            put_varint(out, *node);
            put_str(out, label);
        }
        Op::DeleteRel { rel } => {
            out.push(7);
            put_varint(out, *rel);
        }
        Op::DeleteNode { node } => {
            out.push(8);
            put_varint(out, *node);
        }
        Op::CreateIndex { label, key, name } | Op::CreateConstraint { label, key, name } => {
            // Unnamed creations keep the short tags 9 and 11; named ones
            // (13, 14) carry the name after the key.
            let index = matches!(op, Op::CreateIndex { .. });
            out.push(match (index, name.is_some()) {
                (true, false) => 9,
                (false, false) => 11,
                (true, true) => 13,
                (false, true) => 14,
            });
            put_str(out, label);
            put_str(out, key);
            if let Some(name) = name {
                put_str(out, name);
            }
        }
        Op::DropIndex { label, key } | Op::DropConstraint { label, key } => {
            out.push(if matches!(op, Op::DropIndex { .. }) {
                10
            } else {
                12
            });
            put_str(out, label);
            put_str(out, key);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type DecodeResult<T> = std::result::Result<T, String>;

impl<'a> Reader<'a> {
    fn byte(&mut self) -> DecodeResult<u8> {
        let b = *self.bytes.get(self.pos).ok_or("truncated")?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> DecodeResult<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    fn take(&mut self, n: u64) -> DecodeResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(usize::try_from(n).map_err(|_| "length")?)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("truncated")?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn string(&mut self) -> DecodeResult<String> {
        let n = self.varint()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "bad utf-8".into())
    }

    fn value(&mut self) -> DecodeResult<Value> {
        let n = self.varint()?;
        codec::decode(self.take(n)?)
    }

    /// Capacity to reserve for `n` items that each take at least one of
    /// the bytes left (a corrupt count reserves no more than that).
    fn capacity_for(&self, n: u64) -> usize {
        (n as usize).min(self.bytes.len() - self.pos)
    }

    fn props(&mut self) -> DecodeResult<Vec<(String, Value)>> {
        let n = self.varint()?;
        let mut out = Vec::with_capacity(self.capacity_for(n));
        for _ in 0..n {
            out.push((self.string()?, self.value()?));
        }
        Ok(out)
    }

    fn op(&mut self) -> DecodeResult<Op> {
        Ok(match self.byte()? {
            1 => {
                let n = self.varint()?;
                let mut labels = Vec::with_capacity(self.capacity_for(n));
                for _ in 0..n {
                    labels.push(self.string()?);
                }
                Op::CreateNode {
                    labels,
                    props: self.props()?,
                }
            }
            2 => Op::CreateRel {
                start: self.varint()?,
                end: self.varint()?,
                rel_type: self.string()?,
                props: self.props()?,
            },
            3 => Op::SetNodeProperty {
                node: self.varint()?,
                key: self.string()?,
                value: self.value()?,
            },
            4 => Op::SetRelProperty {
                rel: self.varint()?,
                key: self.string()?,
                value: self.value()?,
            },
            5 => Op::AddLabel {
                node: self.varint()?,
                label: self.string()?,
            },
            6 => Op::RemoveLabel {
                node: self.varint()?,
                label: self.string()?,
            },
            7 => Op::DeleteRel {
                rel: self.varint()?,
            },
            8 => Op::DeleteNode {
                node: self.varint()?,
            },
            t @ 9..=14 => {
                let (label, key) = (self.string()?, self.string()?);
                let name = if t >= 13 { Some(self.string()?) } else { None };
                match t {
                    9 | 13 => Op::CreateIndex { label, key, name },
                    10 => Op::DropIndex { label, key },
                    11 | 14 => Op::CreateConstraint { label, key, name },
                    _ => Op::DropConstraint { label, key },
                }
            }
            t => return Err(format!("unknown op tag {t}")),
        })
    }
}

/// The header of a log applying on top of manifest `generation`.
pub fn header(generation: u64) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&generation.to_le_bytes());
    out
}

/// A framed record (length, checksum, payload) for one commit.
pub fn encode_record(commit: u64, ops: &[Op]) -> Vec<u8> {
    // One buffer: the 8-byte header (length, checksum) is filled in last.
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&commit.to_le_bytes());
    put_varint(&mut out, ops.len() as u64);
    ops.iter().for_each(|op| encode_op(&mut out, op));
    let payload = &out[8..];
    // A payload over 4 GiB is refused by the caller (`Shared::commit`).
    let len = (payload.len() as u32).to_le_bytes();
    let crc = crc32c::crc32c(payload).to_le_bytes();
    out[..4].copy_from_slice(&len);
    out[4..8].copy_from_slice(&crc);
    out
}

/// One recovered commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Commit number.
    pub commit: u64,
    /// Its operations.
    pub ops: Vec<Op>,
}

/// What a log file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The manifest generation in the header (`None`: no valid header).
    pub generation: Option<u64>,
    /// The records of the valid prefix.
    pub records: Vec<Record>,
    /// Length of the valid prefix in bytes.
    pub valid_len: u64,
    /// Why parsing stopped before the end of the file, if it did.
    pub damage: Option<String>,
}

/// The manifest generation in the header of log file `bytes`, if it has a
/// valid header (its records then start at byte [`HEADER_LEN`]).
pub fn header_generation(bytes: &[u8]) -> Option<u64> {
    if bytes.len() < HEADER_LEN as usize || &bytes[..8] != MAGIC {
        return None;
    }
    Some(u64::from_le_bytes(
        bytes[8..16].try_into().expect("8 bytes"),
    ))
}

/// Parses a whole log file, keeping the longest valid prefix of records.
pub fn parse(bytes: &[u8]) -> Parsed {
    let Some(generation) = header_generation(bytes) else {
        return Parsed {
            generation: None,
            records: Vec::new(),
            valid_len: 0,
            damage: (!bytes.is_empty()).then(|| "bad log header".to_string()),
        };
    };
    let tail = parse_records(&bytes[HEADER_LEN as usize..], HEADER_LEN);
    Parsed {
        generation: Some(generation),
        records: tail.records,
        valid_len: HEADER_LEN + tail.valid_len,
        damage: tail.damage,
    }
}

/// The records found in a part of a log (after its header).
#[derive(Debug, Clone, PartialEq)]
pub struct Tail {
    /// The records of the valid prefix.
    pub records: Vec<Record>,
    /// Length of the valid prefix in bytes (from the start of the part).
    pub valid_len: u64,
    /// Why parsing stopped before the end, if it did.
    pub damage: Option<String>,
}

/// Parses records from `bytes`, a part of a log starting at byte `at` of the
/// file (a record boundary), keeping the longest valid prefix. A reader
/// following the log of another process parses what was appended since it
/// last looked; a record still being written shows as damage and is read
/// again next time.
pub fn parse_records(bytes: &[u8], at: u64) -> Tail {
    let mut records = Vec::new();
    let scan = scan_records(bytes, at, |commit, ops| {
        let ops = ops.collect::<Result<Vec<Op>>>()?;
        records.push(Record { commit, ops });
        Ok(())
    })
    .expect("the operations of a scanned record decode");
    Tail {
        records,
        valid_len: scan.valid_len,
        damage: scan.damage,
    }
}

/// How far [`scan_records`] got.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// Length of the valid prefix in bytes (from the start of the part).
    pub valid_len: u64,
    /// Why scanning stopped before the end, if it did.
    pub damage: Option<String>,
}

/// The operations of one whole record, decoded one at a time as they are
/// read (see [`scan_records`]).
pub struct RecordOps<'a> {
    reader: Reader<'a>,
    left: u64,
}

impl Iterator for RecordOps<'_> {
    type Item = Result<Op>;

    fn next(&mut self) -> Option<Result<Op>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.reader.op().map_err(|e| {
            Error::new(
                ErrorKind::CorruptDatabase,
                format!("undecodable log operation: {e}"),
            )
        }))
    }
}

/// Checks that `payload` (after the commit number) is a whole record: an
/// operation count and that many operations; `Ok(false)` if bytes follow them.
fn check_ops(payload: &[u8]) -> DecodeResult<bool> {
    let mut r = Reader {
        bytes: payload,
        pos: 0,
    };
    for _ in 0..r.varint()? {
        r.op()?;
    }
    Ok(r.pos == r.bytes.len())
}

/// Like [`parse_records`], but keeps nothing: hands each record of the
/// valid prefix to `visit` (its commit number and its operations, decoded
/// as `visit` reads them), so replaying a log of any size holds one
/// operation at a time. A record is handed over only once it is known to
/// be whole (its checksum matches and all its operations decode), so
/// `visit` never sees part of a commit. Stops at the first error of
/// `visit` and returns it.
pub fn scan_records(
    bytes: &[u8],
    at: u64,
    mut visit: impl FnMut(u64, RecordOps<'_>) -> Result<()>,
) -> Result<Scan> {
    let mut pos = 0usize;
    let mut damage = None;
    while !ends_log(&bytes[pos..]) {
        let file_pos = at + pos as u64;
        let Some(frame) = bytes.get(pos..pos + 8) else {
            damage = Some(format!("torn record header at byte {file_pos}"));
            break;
        };
        let len = u32::from_le_bytes(frame[..4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(frame[4..].try_into().expect("4 bytes"));
        let Some(payload) = bytes.get(pos + 8..pos + 8 + len) else {
            damage = Some(format!("torn record at byte {file_pos}"));
            break;
        };
        if crc32c::crc32c(payload) != crc || len < 8 {
            damage = Some(format!(
                "checksum mismatch in the record at byte {file_pos}"
            ));
            break;
        }
        let commit = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
        match check_ops(&payload[8..]) {
            Ok(true) => {}
            Ok(false) => {
                damage = Some(format!("trailing bytes in the record at byte {file_pos}"));
                break;
            }
            Err(e) => {
                damage = Some(format!("undecodable record at byte {file_pos}: {e}"));
                break;
            }
        }
        let mut reader = Reader {
            bytes: &payload[8..],
            pos: 0,
        };
        let left = reader.varint().expect("checked above");
        visit(commit, RecordOps { reader, left })?;
        pos += 8 + len;
    }
    Ok(Scan {
        valid_len: pos as u64,
        damage,
    })
}

/// Where the records of the log file at `path` end: scans from byte `from`
/// (a record boundary with only valid records before it; [`HEADER_LEN`]
/// when nothing better is known) to the first end marker or damaged
/// record. What a writer passes to [`StorageIo::open_append`].
pub fn find_end(io: &dyn StorageIo, path: &std::path::Path, from: u64) -> Result<u64> {
    let (_, bytes) = io
        .read_from(path, from)
        .map_err(|e| Error::io(path.display(), e))?
        .ok_or_else(|| {
            Error::new(
                ErrorKind::IoError,
                format!("{}: the write-ahead log is missing", path.display()),
            )
        })?;
    let scan = scan_records(&bytes, from, |_, _| Ok(()))?;
    Ok(from + scan.valid_len)
}

fn poisoned() -> Error {
    Error::new(
        ErrorKind::IoError,
        "an earlier write-ahead log sync failed; reopen the database to write again",
    )
}

/// The open log of a database (owned by whoever holds the writer lock).
pub struct Wal {
    file: Box<dyn WalFile>,
    /// Set when a sync failed: the file's durable state is unknown, so no
    /// further commit may be acknowledged until the database is reopened.
    poisoned: bool,
}

impl Wal {
    /// Wraps an open file whose content is a valid prefix.
    pub fn new(file: Box<dyn WalFile>) -> Wal {
        Wal {
            file,
            poisoned: false,
        }
    }

    /// Current length in bytes.
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// True if the log holds no record.
    pub fn is_empty(&self) -> bool {
        self.file.len() <= HEADER_LEN
    }

    /// Appends one record without making it durable (group commit syncs
    /// through [`Wal::sync_handle`] later). On a failed append the file is
    /// cut back to its previous length, so the log stays a valid prefix.
    pub fn append_unsynced(&mut self, record: &[u8]) -> Result<()> {
        if self.poisoned {
            return Err(poisoned());
        }
        let before = self.file.len();
        if let Err(e) = self.file.append(record) {
            if self.file.truncate(before).is_err() {
                self.poisoned = true;
            }
            return Err(Error::new(
                ErrorKind::IoError,
                format!("writing the write-ahead log failed, the transaction was rolled back: {e}"),
            ));
        }
        Ok(())
    }

    /// A handle that syncs this log from another thread.
    pub fn sync_handle(&self) -> Result<Arc<dyn WalSync>> {
        self.file.sync_handle().map_err(|e| {
            Error::new(
                ErrorKind::IoError,
                format!("opening the write-ahead log for syncing: {e}"),
            )
        })
    }

    /// A sync failed: whether the bytes from `from` on are durable is
    /// unknown, so they are cut off and no further commit is accepted until
    /// the database is reopened.
    pub fn sync_failed(&mut self, from: u64) {
        self.poisoned = true;
        let _ = self.file.truncate(from);
    }

    /// Appends one record and makes it durable. On a failed append the file
    /// is cut back to its previous length, so the log stays a valid prefix.
    pub fn append(&mut self, record: &[u8]) -> Result<()> {
        if self.poisoned {
            return Err(poisoned());
        }
        let before = self.file.len();
        if let Err(e) = self.file.append(record) {
            if self.file.truncate(before).is_err() {
                self.poisoned = true;
            }
            return Err(Error::new(
                ErrorKind::IoError,
                format!("writing the write-ahead log failed, the transaction was rolled back: {e}"),
            ));
        }
        if let Err(e) = self.file.sync() {
            // After a failed fsync the kernel may have dropped the dirty pages:
            // whether the record is on disk is unknown.
            self.poisoned = true;
            let _ = self.file.truncate(before);
            return Err(Error::new(
                ErrorKind::IoError,
                format!("syncing the write-ahead log failed, the transaction was rolled back: {e}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops() -> Vec<Op> {
        vec![
            Op::CreateNode {
                labels: vec!["A".into()],
                props: vec![("k".into(), Value::Int(-3))],
            },
            Op::CreateRel {
                start: 0,
                end: 1,
                rel_type: "R".into(),
                props: vec![],
            },
            Op::SetNodeProperty {
                node: 7,
                key: "s".into(),
                value: Value::String("x".into()),
            },
            Op::SetRelProperty {
                rel: 1,
                key: "s".into(),
                value: Value::Null,
            },
            Op::AddLabel {
                node: 1,
                label: "B".into(),
            },
            Op::RemoveLabel {
                node: 1,
                label: "B".into(),
            },
            Op::DeleteRel { rel: 3 },
            Op::DeleteNode { node: 300 },
            Op::CreateIndex {
                label: "A".into(),
                key: "k".into(),
                name: None,
            },
            Op::CreateIndex {
                label: "A".into(),
                key: "k".into(),
                name: Some("a_k".into()),
            },
            Op::DropIndex {
                label: "A".into(),
                key: "k".into(),
            },
            Op::CreateConstraint {
                label: "A".into(),
                key: "k".into(),
                name: None,
            },
            Op::CreateConstraint {
                label: "A".into(),
                key: "k".into(),
                name: Some("unique_a_k".into()),
            },
            Op::DropConstraint {
                label: "A".into(),
                key: "k".into(),
            },
        ]
    }

    #[test]
    fn records_round_trip_and_damage_is_cut_off() {
        let mut file = header(4);
        file.extend(encode_record(1, &ops()));
        let good = file.len();
        file.extend(encode_record(2, &ops()[..2]));
        let parsed = parse(&file);
        assert_eq!(parsed.generation, Some(4));
        assert_eq!(parsed.records.len(), 2);
        assert_eq!(parsed.records[0].ops, ops());
        assert_eq!(parsed.valid_len, file.len() as u64);
        assert!(parsed.damage.is_none());
        // Torn tail: every cut point inside the second record keeps the first.
        for cut in good..file.len() {
            let p = parse(&file[..cut]);
            assert_eq!(p.records.len(), 1, "cut at {cut}");
            assert_eq!(p.valid_len, good as u64);
        }
        // A flipped byte anywhere in the second record drops it.
        for at in good..file.len() {
            let mut bad = file.clone();
            bad[at] ^= 0x40;
            let p = parse(&bad);
            assert_eq!(p.records.len(), 1, "flip at {at}");
        }
        assert_eq!(parse(b"junk").generation, None);
    }

    /// Reserved space: zeros after the records end the log wherever the
    /// file ends, and a record torn inside it (its last bytes still zeros)
    /// is cut off like any torn record.
    #[test]
    fn zeros_end_the_log() {
        let mut file = header(2);
        file.extend(encode_record(1, &ops()));
        let good = file.len();
        file.extend(encode_record(2, &ops()[..1]));
        let whole = file.len();
        for zeros in [0, 3, 8, 4096] {
            let mut f = file.clone();
            f.resize(whole + zeros, 0);
            let p = parse(&f);
            assert_eq!(p.records.len(), 2, "{zeros} zeros");
            assert_eq!((p.valid_len, p.damage), (whole as u64, None));
        }
        for kept in good + 1..whole {
            let mut f = file.clone();
            f[kept..].fill(0);
            f.resize(whole + 4096, 0);
            let p = parse(&f);
            assert_eq!(p.records.len(), 1, "kept {kept}");
            assert_eq!(p.valid_len, good as u64);
        }
    }

    /// A correctly framed record (checksum matching) whose last operation
    /// does not decode: scanning hands over the whole records before it and
    /// none of its operations, so replay never applies part of a commit.
    #[test]
    fn scanning_hands_over_only_whole_records() {
        let mut file = header(1);
        file.extend(encode_record(1, &ops()));
        let good = file.len();
        let mut payload = 2u64.to_le_bytes().to_vec();
        put_varint(&mut payload, 2);
        encode_op(&mut payload, &ops()[0]);
        payload.push(0xEE); // an unknown op tag
        file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        file.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
        file.extend_from_slice(&payload);
        let mut seen = Vec::new();
        let body = &file[HEADER_LEN as usize..];
        let scan = scan_records(body, HEADER_LEN, |commit, ops| {
            seen.push((commit, ops.count()));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![(1, ops().len())]);
        assert_eq!(HEADER_LEN + scan.valid_len, good as u64);
        assert!(scan.damage.unwrap().contains("undecodable record"));
        // An error of the visitor stops the scan and is returned.
        let err = scan_records(body, HEADER_LEN, |_, _| {
            Err(Error::new(ErrorKind::CorruptDatabase, "stop"))
        });
        assert!(err.is_err());
    }

    proptest::proptest! {
        /// Any payload in a correctly framed record (the checksum does not
        /// hide the operation decoder) parses without panicking.
        #[test]
        fn framed_garbage_never_panics(payload in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96)) {
            let mut file = header(1);
            file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            file.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
            file.extend_from_slice(&payload);
            let parsed = parse(&file);
            proptest::prop_assert!(parsed.valid_len <= file.len() as u64);
        }
    }
}
