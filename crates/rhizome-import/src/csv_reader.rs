//! Streaming CSV reading: files are cut into blocks of whole records (never
//! in the middle of a quoted field), and a block is split into records and
//! fields without copying unless a field is quoted.
//!
//! Quoting follows RFC 4180 as `neo4j-admin` reads it: a field that starts
//! with the quote character runs to the next lone quote, may contain
//! delimiters and newlines, and writes a quote as two quotes. A quote inside
//! an unquoted field is an ordinary character. Text after a closing quote
//! (up to the next delimiter) is appended to the field. Empty lines are
//! skipped; a `\r` before `\n` is dropped; a UTF-8 byte order mark at the
//! start of a file is ignored.

use rhizome_common::{Error, ErrorKind, Position, Result};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Default size of a block handed to a parsing thread.
pub(crate) const BLOCK_SIZE: usize = 1 << 20;

/// A run of whole records of one file.
#[derive(Debug, Default)]
pub(crate) struct Block {
    /// The records' bytes.
    pub data: Vec<u8>,
    /// Line number (1-based) of the first byte of `data`.
    pub first_line: u64,
    /// Byte offset of `data` in the file.
    pub file_offset: u64,
    /// Index of the file in its group.
    pub file_index: usize,
    /// Bytes of the file skipped just before `data` (a header line, a byte
    /// order mark), for progress: `data.len() + skipped` bytes were consumed.
    pub skipped: u64,
}

/// Position of the end of the last complete record in `data` (the index just
/// after its `\n`), scanning from a record start. `None` if no record ends in
/// `data` or the end is ambiguous (a quote at the very end).
pub(crate) fn last_record_end(data: &[u8], delimiter: u8, quote: u8) -> Option<usize> {
    if !data.contains(&quote) {
        return data.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
    }
    let mut last = None;
    let mut in_quotes = false;
    let mut field_start = true;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if in_quotes {
            if b == quote {
                match data.get(i + 1) {
                    Some(&next) if next == quote => i += 1,
                    Some(_) => in_quotes = false,
                    None => return last,
                }
            }
        } else if b == b'\n' {
            last = Some(i + 1);
            field_start = true;
        } else if b == delimiter {
            field_start = true;
        } else {
            if b == quote && field_start {
                in_quotes = true;
            }
            field_start = false;
        }
        i += 1;
    }
    last
}

/// Number of `\n` bytes in `data`, eight bytes at a time (exact: the high
/// bit of a byte of `t` is set iff that byte of `x` is zero).
pub(crate) fn count_newlines(data: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut words = data.chunks_exact(8);
    let mut count = 0u64;
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().expect("8 bytes")) ^ NEWLINES;
        let t = !(((x & LOW7) + LOW7) | x | LOW7);
        count += t.count_ones() as u64;
    }
    count + words.remainder().iter().filter(|&&b| b == b'\n').count() as u64
}

/// Index of the first `a` or `b` in `data[from..]` (as an index into
/// `data`), or `data.len()`. A plain loop: fast in release, and not slowed by
/// iterator adapters in debug builds (tests import real data sets).
#[inline]
fn find2(data: &[u8], from: usize, a: u8, b: u8) -> usize {
    let mut i = from;
    while i < data.len() {
        let c = data[i];
        if c == a || c == b {
            return i;
        }
        i += 1;
    }
    data.len()
}

/// Reads one file as blocks of whole records.
pub(crate) struct FileBlocks {
    file: File,
    path_name: String,
    buf: Vec<u8>,
    eof: bool,
    line: u64,
    offset: u64,
    delimiter: u8,
    quote: u8,
    block_size: usize,
    file_index: usize,
    skipped: u64,
}

impl FileBlocks {
    /// Opens `path`; errors are `IoError`s naming the file.
    pub(crate) fn open(
        path: &Path,
        file_index: usize,
        delimiter: u8,
        quote: u8,
        block_size: usize,
    ) -> Result<FileBlocks> {
        let file = File::open(path).map_err(|e| {
            Error::new(ErrorKind::IoError, format!("cannot open input file: {e}"))
                .in_source(path.display().to_string())
        })?;
        let mut blocks = FileBlocks {
            file,
            path_name: path.display().to_string(),
            buf: Vec::new(),
            eof: false,
            line: 1,
            offset: 0,
            delimiter,
            quote,
            block_size: block_size.max(16),
            file_index,
            skipped: 0,
        };
        blocks.fill(3)?;
        if blocks.buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            blocks.buf.drain(..3);
            blocks.offset = 3;
            blocks.skipped = 3;
        }
        Ok(blocks)
    }

    /// Reads until `buf` holds at least `want` bytes or the file ends.
    fn fill(&mut self, want: usize) -> Result<()> {
        while !self.eof && self.buf.len() < want {
            let chunk = (want - self.buf.len()).max(64 * 1024);
            self.buf.reserve(chunk);
            // `read_to_end` on a `take` appends without zero-filling first
            // and retries on `Interrupted`; fewer bytes than asked means EOF.
            let n = (&mut self.file)
                .take(chunk as u64)
                .read_to_end(&mut self.buf)
                .map_err(|e| {
                    Error::new(ErrorKind::IoError, format!("read failed: {e}"))
                        .in_source(self.path_name.clone())
                })?;
            if n < chunk {
                self.eof = true;
            }
        }
        Ok(())
    }

    /// The next block of whole records, or `None` at the end of the file.
    pub(crate) fn next_block(&mut self) -> Result<Option<Block>> {
        let mut want = self.block_size;
        let end = loop {
            self.fill(want)?;
            if self.buf.is_empty() {
                if self.skipped > 0 {
                    // A file of nothing but a header still counts its bytes.
                    return Ok(Some(Block {
                        first_line: self.line,
                        file_offset: self.offset,
                        file_index: self.file_index,
                        skipped: std::mem::take(&mut self.skipped),
                        data: Vec::new(),
                    }));
                }
                return Ok(None);
            }
            let search = &self.buf[..self.buf.len().min(want)];
            if let Some(end) = last_record_end(search, self.delimiter, self.quote) {
                break end;
            }
            if self.eof && self.buf.len() <= want {
                break self.buf.len();
            }
            want = want.saturating_mul(2);
        };
        let rest = self.buf[end..].to_vec();
        let mut data = std::mem::replace(&mut self.buf, rest);
        data.truncate(end);
        self.buf.reserve(self.block_size);
        let block = Block {
            first_line: self.line,
            file_offset: self.offset,
            file_index: self.file_index,
            skipped: std::mem::take(&mut self.skipped),
            data,
        };
        self.line += count_newlines(&block.data);
        self.offset += end as u64;
        Ok(Some(block))
    }

    /// Reads the first record of the file without consuming it, as strings
    /// (`None` for an empty file). [`FileBlocks::skip_first_record`] drops it.
    pub(crate) fn peek_first_record(&mut self) -> Result<Option<(Vec<String>, usize)>> {
        let mut want = 64 * 1024;
        loop {
            self.fill(want)?;
            let complete = last_record_end(&self.buf, self.delimiter, self.quote).is_some();
            if complete || self.eof {
                break;
            }
            want *= 2;
        }
        let mut reader = RecordReader::new(&self.buf, self.line, self.delimiter, self.quote);
        let mut record = Record::default();
        let found = reader
            .next_record(&mut record)
            .map_err(|e| e.into_error(&self.path_name, self.offset))?;
        if !found {
            return Ok(None);
        }
        let fields = (0..record.len())
            .map(|i| String::from_utf8_lossy(record.field(&self.buf, i)).into_owned())
            .collect();
        Ok(Some((fields, reader.position())))
    }

    /// Drops the first `len` bytes (the record measured by
    /// [`FileBlocks::peek_first_record`]).
    pub(crate) fn skip_first_record(&mut self, len: usize) {
        self.line += count_newlines(&self.buf[..len]);
        self.offset += len as u64;
        self.skipped += len as u64;
        self.buf.drain(..len);
    }
}

/// One field of a record: a range of the block, or of the record's scratch
/// buffer when the field was quoted and had to be unescaped.
#[derive(Debug, Clone, Copy)]
struct FieldRef {
    start: usize,
    end: usize,
    scratch: bool,
}

/// The fields of one record; reused from record to record.
#[derive(Debug, Default)]
pub(crate) struct Record {
    fields: Vec<FieldRef>,
    scratch: Vec<u8>,
    /// Line on which the record starts.
    pub line: u64,
    /// Byte offset of the record in its block.
    pub offset: usize,
}

impl Record {
    /// Number of fields.
    pub(crate) fn len(&self) -> usize {
        self.fields.len()
    }

    /// The bytes of field `i` (unquoted and unescaped); `data` is the block
    /// the record was read from.
    #[inline]
    pub(crate) fn field<'a>(&'a self, data: &'a [u8], i: usize) -> &'a [u8] {
        let f = self.fields[i];
        if f.scratch {
            &self.scratch[f.start..f.end]
        } else {
            &data[f.start..f.end]
        }
    }
}

/// A malformed record, positioned inside its block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntaxError {
    /// What is wrong.
    pub message: String,
    /// Line of the problem.
    pub line: u64,
    /// 1-based field number.
    pub field: usize,
    /// Byte offset in the block of the record.
    pub offset: usize,
}

impl SyntaxError {
    /// The error as an `InputError` in `file`, whose block starts at `block_offset`.
    pub(crate) fn into_error(self, file: &str, block_offset: u64) -> Error {
        Error::new(ErrorKind::InputError, self.message)
            .in_source(file.to_string())
            .at(Position {
                offset: (block_offset + self.offset as u64) as usize,
                line: self.line as u32,
                column: self.field as u32,
            })
    }
}

/// Splits a block into records.
pub(crate) struct RecordReader<'a> {
    data: &'a [u8],
    pos: usize,
    line: u64,
    delimiter: u8,
    quote: u8,
}

impl<'a> RecordReader<'a> {
    /// A reader over `data`, whose first byte is on line `first_line`.
    pub(crate) fn new(
        data: &'a [u8],
        first_line: u64,
        delimiter: u8,
        quote: u8,
    ) -> RecordReader<'a> {
        RecordReader {
            data,
            pos: 0,
            line: first_line,
            delimiter,
            quote,
        }
    }

    /// Byte position of the next record.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Reads the next non-empty record into `record`; `false` at the end.
    pub(crate) fn next_record(&mut self, record: &mut Record) -> Result<bool, SyntaxError> {
        let data = self.data;
        // Skip empty lines.
        loop {
            if self.pos >= data.len() {
                return Ok(false);
            }
            match data[self.pos] {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                }
                b'\r' if data.get(self.pos + 1) == Some(&b'\n') => {
                    self.pos += 2;
                    self.line += 1;
                }
                _ => break,
            }
        }
        record.fields.clear();
        record.scratch.clear();
        record.line = self.line;
        record.offset = self.pos;
        let (delimiter, quote) = (self.delimiter, self.quote);
        let mut pos = self.pos;
        loop {
            // One field per iteration.
            if pos < data.len() && data[pos] == quote {
                let field_line = self.line;
                let start = record.scratch.len();
                pos += 1;
                let mut seg = pos;
                loop {
                    let at = find2(data, pos, quote, b'\n');
                    if at == data.len() {
                        return Err(SyntaxError {
                            message: format!(
                                "unterminated quoted field: field {} opens a quote on line {field_line} that is never closed",
                                record.fields.len() + 1
                            ),
                            line: field_line,
                            field: record.fields.len() + 1,
                            offset: record.offset,
                        });
                    }
                    if data[at] == b'\n' {
                        self.line += 1;
                        pos = at + 1;
                        continue;
                    }
                    record.scratch.extend_from_slice(&data[seg..at]);
                    if data.get(at + 1) == Some(&quote) {
                        record.scratch.push(quote);
                        pos = at + 2;
                        seg = pos;
                        continue;
                    }
                    pos = at + 1;
                    break;
                }
                // Text after the closing quote belongs to the field.
                let tail_end = find2(data, pos, delimiter, b'\n');
                let mut tail = &data[pos..tail_end];
                if tail_end < data.len() && data[tail_end] == b'\n' && tail.last() == Some(&b'\r') {
                    tail = &tail[..tail.len() - 1];
                }
                record.scratch.extend_from_slice(tail);
                record.fields.push(FieldRef {
                    start,
                    end: record.scratch.len(),
                    scratch: true,
                });
                pos = tail_end;
            } else {
                let end = find2(data, pos, delimiter, b'\n');
                let mut field_end = end;
                if (end == data.len() || data[end] == b'\n')
                    && field_end > pos
                    && data[field_end - 1] == b'\r'
                {
                    field_end -= 1;
                }
                record.fields.push(FieldRef {
                    start: pos,
                    end: field_end,
                    scratch: false,
                });
                pos = end;
            }
            if pos >= data.len() {
                self.pos = pos;
                return Ok(true);
            }
            if data[pos] == b'\n' {
                self.pos = pos + 1;
                self.line += 1;
                return Ok(true);
            }
            // A delimiter: another field follows (possibly empty).
            pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn records(text: &str, delimiter: u8) -> Result<Vec<(u64, Vec<String>)>, SyntaxError> {
        let mut reader = RecordReader::new(text.as_bytes(), 1, delimiter, b'"');
        let mut record = Record::default();
        let mut out = Vec::new();
        while reader.next_record(&mut record)? {
            let fields = (0..record.len())
                .map(|i| String::from_utf8(record.field(text.as_bytes(), i).to_vec()).unwrap())
                .collect();
            out.push((record.line, fields));
        }
        Ok(out)
    }

    #[test]
    fn splits_plain_and_quoted_fields() {
        let got = records(
            "a,b,c\n1,,3\r\n\"x,y\",\"he said \"\"hi\"\"\",\"multi\nline\"\n\n4,5,6",
            b',',
        )
        .unwrap();
        assert_eq!(got[0], (1, vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(got[1], (2, vec!["1".into(), "".into(), "3".into()]));
        assert_eq!(
            got[2],
            (
                3,
                vec!["x,y".into(), "he said \"hi\"".into(), "multi\nline".into()]
            )
        );
        assert_eq!(got[3], (6, vec!["4".into(), "5".into(), "6".into()]));
        let got = records("a|b\"c|\"\"\n", b'|').unwrap();
        assert_eq!(got[0].1, vec!["a", "b\"c", ""]);
        let got = records("\"ab\"cd,e\n", b',').unwrap();
        assert_eq!(got[0].1, vec!["abcd", "e"]);
    }

    #[test]
    fn reports_unterminated_quotes() {
        let err = records("a,b\n1,\"oops\n2,3\n", b',').unwrap_err();
        assert_eq!((err.line, err.field), (2, 2));
        assert!(err.message.contains("unterminated"));
    }

    #[test]
    fn counts_newlines_exactly() {
        let mut rng = crate::generate::SplitMix64::new(5);
        for len in 0..200 {
            let data: Vec<u8> = (0..len)
                .map(|_| [b'\n', 0, 1, 0x0b, 0x8a, b'a', 0xff][rng.below(7) as usize])
                .collect();
            let expected = data.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(count_newlines(&data), expected, "{data:?}");
        }
    }

    #[test]
    fn finds_record_ends_outside_quotes() {
        assert_eq!(last_record_end(b"a,b\nc,d", b',', b'"'), Some(4));
        assert_eq!(last_record_end(b"a,\"b\nc\",d\ne", b',', b'"'), Some(10));
        assert_eq!(last_record_end(b"a,\"b\nc", b',', b'"'), None);
        assert_eq!(last_record_end(b"x\"y\nz", b',', b'"'), Some(4));
    }

    #[test]
    fn blocks_hold_whole_records_and_count_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.csv");
        let mut text = String::from("h1,h2\n");
        for i in 0..500 {
            if i % 7 == 0 {
                text.push_str(&format!("{i},\"quoted\nnewline {i}\"\n"));
            } else {
                text.push_str(&format!("{i},v{i}\n"));
            }
        }
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let mut blocks = FileBlocks::open(&path, 0, b',', b'"', 40).unwrap();
        let (header, len) = blocks.peek_first_record().unwrap().unwrap();
        assert_eq!(header, vec!["h1", "h2"]);
        blocks.skip_first_record(len);
        let mut seen = 0;
        let mut expected_line = 2;
        while let Some(block) = blocks.next_block().unwrap() {
            let mut reader = RecordReader::new(&block.data, block.first_line, b',', b'"');
            let mut record = Record::default();
            while reader.next_record(&mut record).unwrap() {
                assert_eq!(record.line, expected_line);
                assert_eq!(record.field(&block.data, 0), seen.to_string().as_bytes());
                expected_line += if seen % 7 == 0 { 2 } else { 1 };
                seen += 1;
            }
        }
        assert_eq!(seen, 500);
    }

    /// Random records with delimiters, quotes, newlines and `\r\n` inside
    /// quoted fields, written RFC 4180 style, read back through blocks of
    /// random small sizes: every field and line number must survive.
    #[test]
    fn random_quoted_records_roundtrip_through_small_blocks() {
        let mut rng = crate::generate::SplitMix64::new(11);
        let alphabet: &[u8] = b"ab,\"\n\r|x ";
        for round in 0..40 {
            let mut expected: Vec<(u64, Vec<Vec<u8>>)> = Vec::new();
            let mut text = Vec::new();
            let mut line = 1u64;
            let rows = 1 + rng.below(60) as usize;
            let width = 1 + rng.below(4) as usize;
            for _ in 0..rows {
                let mut fields = Vec::new();
                let start_line = line;
                for f in 0..width {
                    let len = rng.below(6) as usize;
                    let field: Vec<u8> = (0..len)
                        .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                        .collect();
                    if f > 0 {
                        text.push(b',');
                    }
                    let needs_quotes = field.is_empty() && width == 1
                        || field.iter().any(|b| b",\"\n\r".contains(b))
                        || rng.below(4) == 0;
                    if needs_quotes {
                        text.push(b'"');
                        for &b in &field {
                            if b == b'"' {
                                text.push(b'"');
                            }
                            if b == b'\n' {
                                line += 1;
                            }
                            text.push(b);
                        }
                        text.push(b'"');
                    } else {
                        text.extend_from_slice(&field);
                    }
                    fields.push(field);
                }
                text.push(b'\n');
                line += 1;
                expected.push((start_line, fields));
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("r.csv");
            std::fs::write(&path, &text).unwrap();
            let block_size = 16 + rng.below(200) as usize;
            let mut blocks = FileBlocks::open(&path, 0, b',', b'"', block_size).unwrap();
            let mut got = Vec::new();
            while let Some(block) = blocks.next_block().unwrap() {
                let mut reader = RecordReader::new(&block.data, block.first_line, b',', b'"');
                let mut record = Record::default();
                while reader.next_record(&mut record).unwrap() {
                    let fields = (0..record.len())
                        .map(|i| record.field(&block.data, i).to_vec())
                        .collect();
                    got.push((record.line, fields));
                }
            }
            assert_eq!(
                got,
                expected,
                "round {round}, block size {block_size}, text {:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}
