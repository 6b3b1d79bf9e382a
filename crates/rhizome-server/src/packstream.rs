//! PackStream, Bolt's binary value format: an encoder that writes values
//! straight into an output buffer and a decoder that never trusts a
//! declared length.
//!
//! The decoder checks every declared size (string, list, map, structure)
//! against the bytes that are actually left before it allocates anything,
//! and limits nesting, so a hostile message costs at most its own size.

use std::fmt;

/// The deepest nesting of lists, maps and structures a message may have.
pub const MAX_DEPTH: usize = 64;

/// A decoded PackStream value.
#[derive(Debug, Clone, PartialEq)]
pub enum PackValue {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed 64-bit integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A byte array.
    Bytes(Vec<u8>),
    /// A UTF-8 string.
    String(String),
    /// A list.
    List(Vec<PackValue>),
    /// A map, in the order its entries came (a repeated key: the last wins
    /// when it is looked up with [`PackValue::get`]).
    Map(Vec<(String, PackValue)>),
    /// A structure: a tag byte and fields.
    Struct(u8, Vec<PackValue>),
}

impl PackValue {
    /// The value of `key` in a map (`None` for other values or a missing key).
    pub fn get(&self, key: &str) -> Option<&PackValue> {
        match self {
            PackValue::Map(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|e| &e.1),
            _ => None,
        }
    }

    /// The PackStream type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            PackValue::Null => "Null",
            PackValue::Bool(_) => "Boolean",
            PackValue::Int(_) => "Integer",
            PackValue::Float(_) => "Float",
            PackValue::Bytes(_) => "Bytes",
            PackValue::String(_) => "String",
            PackValue::List(_) => "List",
            PackValue::Map(_) => "Dictionary",
            PackValue::Struct(..) => "Structure",
        }
    }

    /// Encodes the value at the end of `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            PackValue::Null => write_null(out),
            PackValue::Bool(b) => write_bool(out, *b),
            PackValue::Int(i) => write_int(out, *i),
            PackValue::Float(x) => write_float(out, *x),
            PackValue::Bytes(b) => write_bytes(out, b),
            PackValue::String(s) => write_string(out, s),
            PackValue::List(items) => {
                write_list_header(out, items.len());
                for item in items {
                    item.encode(out);
                }
            }
            PackValue::Map(entries) => {
                write_map_header(out, entries.len());
                for (k, v) in entries {
                    write_string(out, k);
                    v.encode(out);
                }
            }
            PackValue::Struct(tag, fields) => {
                write_struct_header(out, *tag, fields.len());
                for field in fields {
                    field.encode(out);
                }
            }
        }
    }
}

/// Builds a [`PackValue::Map`] from string keys.
pub fn map<const N: usize>(entries: [(&str, PackValue); N]) -> PackValue {
    PackValue::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

impl From<&str> for PackValue {
    fn from(s: &str) -> PackValue {
        PackValue::String(s.to_string())
    }
}

impl From<String> for PackValue {
    fn from(s: String) -> PackValue {
        PackValue::String(s)
    }
}

impl From<i64> for PackValue {
    fn from(i: i64) -> PackValue {
        PackValue::Int(i)
    }
}

impl From<bool> for PackValue {
    fn from(b: bool) -> PackValue {
        PackValue::Bool(b)
    }
}

/// Writes `null`.
pub fn write_null(out: &mut Vec<u8>) {
    out.push(0xC0);
}

/// Writes a boolean.
pub fn write_bool(out: &mut Vec<u8>, b: bool) {
    out.push(if b { 0xC3 } else { 0xC2 });
}

/// Writes an integer in its smallest form.
pub fn write_int(out: &mut Vec<u8>, i: i64) {
    if (-16..=127).contains(&i) {
        out.push(i as i8 as u8);
    } else if i8::try_from(i).is_ok() {
        out.extend_from_slice(&[0xC8, i as i8 as u8]);
    } else if let Ok(v) = i16::try_from(i) {
        out.push(0xC9);
        out.extend_from_slice(&v.to_be_bytes());
    } else if let Ok(v) = i32::try_from(i) {
        out.push(0xCA);
        out.extend_from_slice(&v.to_be_bytes());
    } else {
        out.push(0xCB);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

/// Writes a float.
pub fn write_float(out: &mut Vec<u8>, x: f64) {
    out.push(0xC1);
    out.extend_from_slice(&x.to_bits().to_be_bytes());
}

/// Writes the marker of a sized value: tiny form (`tiny | len`) below 16
/// if the type has one, else the 8/16/32-bit size forms starting at `sized`.
fn write_size(out: &mut Vec<u8>, tiny: Option<u8>, sized: u8, len: usize) {
    match tiny {
        Some(tiny) if len < 16 => out.push(tiny | len as u8),
        _ if len <= u8::MAX as usize => out.extend_from_slice(&[sized, len as u8]),
        _ if len <= u16::MAX as usize => {
            out.push(sized + 1);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            out.push(sized + 2);
            out.extend_from_slice(&(len as u32).to_be_bytes());
        }
    }
}

/// Writes a byte array.
pub fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_size(out, None, 0xCC, bytes.len());
    out.extend_from_slice(bytes);
}

/// Writes a string.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    write_size(out, Some(0x80), 0xD0, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// Writes the header of a list of `len` items (the items follow).
pub fn write_list_header(out: &mut Vec<u8>, len: usize) {
    write_size(out, Some(0x90), 0xD4, len);
}

/// Writes the header of a map of `len` entries (key, value pairs follow).
pub fn write_map_header(out: &mut Vec<u8>, len: usize) {
    write_size(out, Some(0xA0), 0xD8, len);
}

/// Writes the header of a structure with `fields` fields (at most 15).
pub fn write_struct_header(out: &mut Vec<u8>, tag: u8, fields: usize) {
    debug_assert!(fields < 16);
    out.extend_from_slice(&[0xB0 | fields as u8, tag]);
}

/// Why bytes are not valid PackStream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset in the message where decoding failed.
    pub offset: usize,
    /// What was wrong.
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid PackStream at byte {}: {}",
            self.offset, self.reason
        )
    }
}

impl std::error::Error for DecodeError {}

/// Decodes one value that must fill `bytes` exactly.
pub fn decode(bytes: &[u8]) -> Result<PackValue, DecodeError> {
    let mut decoder = Decoder { bytes, pos: 0 };
    let value = decoder.value(0)?;
    if decoder.pos != bytes.len() {
        return Err(decoder.error(format!(
            "{} unexpected byte(s) after the value",
            bytes.len() - decoder.pos
        )));
    }
    Ok(value)
}

/// Reads values from a byte slice.
struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Decoder<'_> {
    fn error(&self, reason: impl Into<String>) -> DecodeError {
        DecodeError {
            offset: self.pos,
            reason: reason.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| {
                self.error(format!(
                    "needs {n} more byte(s), the message has {}",
                    self.bytes.len() - self.pos
                ))
            })?;
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A size of `width` bytes (1, 2 or 4) after a marker.
    fn size(&mut self, width: u8) -> Result<usize, DecodeError> {
        Ok(match width {
            0 => self.byte()? as usize,
            1 => u16::from_be_bytes(self.array()?) as usize,
            _ => u32::from_be_bytes(self.array()?) as usize,
        })
    }

    /// Fails unless `count` items of at least `min_bytes` each can still follow.
    fn check_room(&self, count: usize, min_bytes: usize, what: &str) -> Result<(), DecodeError> {
        let left = self.bytes.len() - self.pos;
        if count.saturating_mul(min_bytes) > left {
            return Err(self.error(format!(
                "declares a {what} of {count} item(s) but only {left} byte(s) follow"
            )));
        }
        Ok(())
    }

    fn string(&mut self, len: usize) -> Result<String, DecodeError> {
        let start = self.pos;
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes)
            .map(str::to_string)
            .map_err(|e| DecodeError {
                offset: start + e.valid_up_to(),
                reason: "a string is not valid UTF-8".into(),
            })
    }

    fn value(&mut self, depth: usize) -> Result<PackValue, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("values nest deeper than {MAX_DEPTH} levels")));
        }
        let marker = self.byte()?;
        Ok(match marker {
            0x00..=0x7F => PackValue::Int(marker as i64),
            0xF0..=0xFF => PackValue::Int(marker as i8 as i64),
            0x80..=0x8F => PackValue::String(self.string((marker & 0x0F) as usize)?),
            0x90..=0x9F => self.list((marker & 0x0F) as usize, depth)?,
            0xA0..=0xAF => self.map((marker & 0x0F) as usize, depth)?,
            0xB0..=0xBF => {
                let tag = self.byte()?;
                let count = (marker & 0x0F) as usize;
                self.check_room(count, 1, "structure")?;
                let mut fields = Vec::with_capacity(count);
                for _ in 0..count {
                    fields.push(self.value(depth + 1)?);
                }
                PackValue::Struct(tag, fields)
            }
            0xC0 => PackValue::Null,
            0xC1 => PackValue::Float(f64::from_bits(u64::from_be_bytes(self.array()?))),
            0xC2 => PackValue::Bool(false),
            0xC3 => PackValue::Bool(true),
            0xC8 => PackValue::Int(i8::from_be_bytes(self.array()?) as i64),
            0xC9 => PackValue::Int(i16::from_be_bytes(self.array()?) as i64),
            0xCA => PackValue::Int(i32::from_be_bytes(self.array()?) as i64),
            0xCB => PackValue::Int(i64::from_be_bytes(self.array()?)),
            0xCC..=0xCE => {
                let len = self.size(marker - 0xCC)?;
                PackValue::Bytes(self.take(len)?.to_vec())
            }
            0xD0..=0xD2 => {
                let len = self.size(marker - 0xD0)?;
                PackValue::String(self.string(len)?)
            }
            0xD4..=0xD6 => {
                let len = self.size(marker - 0xD4)?;
                self.list(len, depth)?
            }
            0xD8..=0xDA => {
                let len = self.size(marker - 0xD8)?;
                self.map(len, depth)?
            }
            _ => {
                self.pos -= 1;
                return Err(self.error(format!("unknown marker byte 0x{marker:02X}")));
            }
        })
    }

    fn list(&mut self, len: usize, depth: usize) -> Result<PackValue, DecodeError> {
        self.check_room(len, 1, "list")?;
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            items.push(self.value(depth + 1)?);
        }
        Ok(PackValue::List(items))
    }

    fn map(&mut self, len: usize, depth: usize) -> Result<PackValue, DecodeError> {
        self.check_room(len, 2, "map")?;
        let mut entries = Vec::with_capacity(len);
        for _ in 0..len {
            let key = match self.value(depth + 1)? {
                PackValue::String(s) => s,
                other => {
                    return Err(self.error(format!(
                        "a map key must be a String, not a {}",
                        other.type_name()
                    )))
                }
            };
            entries.push((key, self.value(depth + 1)?));
        }
        Ok(PackValue::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(v: &PackValue) -> Vec<u8> {
        let mut out = Vec::new();
        v.encode(&mut out);
        out
    }

    #[test]
    fn integers_take_their_smallest_form() {
        let cases: [(i64, &[u8]); 9] = [
            (0, &[0x00]),
            (127, &[0x7F]),
            (-16, &[0xF0]),
            (-17, &[0xC8, 0xEF]),
            (-128, &[0xC8, 0x80]),
            (128, &[0xC9, 0x00, 0x80]),
            (32768, &[0xCA, 0x00, 0x00, 0x80, 0x00]),
            (
                i64::MAX,
                &[0xCB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
            (i64::MIN, &[0xCB, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        ];
        for (i, expected) in cases {
            assert_eq!(bytes(&PackValue::Int(i)), expected, "{i}");
            assert_eq!(decode(expected), Ok(PackValue::Int(i)));
        }
    }

    #[test]
    fn values_round_trip() {
        let long = "x".repeat(70_000);
        let values = [
            PackValue::Null,
            PackValue::Bool(true),
            PackValue::Float(1.5),
            PackValue::Bytes(vec![1, 2, 3]),
            PackValue::String("héllo".into()),
            PackValue::String(long),
            PackValue::List((0..300).map(PackValue::Int).collect()),
            map([("a", PackValue::Int(1)), ("b", PackValue::List(vec![]))]),
            PackValue::Struct(0x4E, vec![PackValue::Int(1), PackValue::Null]),
        ];
        for v in values {
            assert_eq!(decode(&bytes(&v)), Ok(v));
        }
    }

    #[test]
    fn spec_examples_decode() {
        // From the PackStream specification.
        assert_eq!(decode(&[0x81, 0x41]), Ok(PackValue::from("A")));
        assert_eq!(
            decode(&[0x93, 0x01, 0x02, 0x03]),
            Ok(PackValue::List(vec![1.into(), 2.into(), 3.into()]))
        );
        assert_eq!(
            decode(&[0xA1, 0x83, 0x6F, 0x6E, 0x65, 0x84, 0x65, 0x69, 0x6E, 0x73]),
            Ok(map([("one", "eins".into())]))
        );
        assert_eq!(
            decode(&[0xC1, 0x3F, 0xF1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A]),
            Ok(PackValue::Float(1.1))
        );
    }

    #[test]
    fn declared_lengths_beyond_the_bytes_fail_before_allocating() {
        // A list declaring 4 billion items in a 5-byte message.
        let err = decode(&[0xD6, 0xFF, 0xFF, 0xFF, 0xFF]).unwrap_err();
        assert!(err.reason.contains("4294967295"), "{err}");
        assert!(decode(&[0xDA, 0x7F, 0xFF, 0xFF, 0xFF]).is_err());
        assert!(decode(&[0xD2, 0x7F, 0xFF, 0xFF, 0xFF, 0x41]).is_err());
        assert!(decode(&[0xCE, 0x7F, 0xFF, 0xFF, 0xFF]).is_err());
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[0xC7]).unwrap_err().reason.contains("0xC7"));
        assert!(decode(&[0x82, 0xC3, 0x28])
            .unwrap_err()
            .reason
            .contains("UTF-8"));
        assert!(decode(&[0xA1, 0x01, 0x01])
            .unwrap_err()
            .reason
            .contains("map key"));
        assert!(decode(&[0x01, 0x02])
            .unwrap_err()
            .reason
            .contains("after the value"));
        let deep = vec![0x91; MAX_DEPTH + 2];
        assert!(decode(&deep).unwrap_err().reason.contains("nest"));
    }
}
