//! A compact, self-describing binary encoding of [`Value`]s.
//!
//! Used for "any" columns (mixed-type properties) and, later, for log
//! records. Decoding checks every length and tag, so damaged bytes give an
//! error, never a panic or an unbounded allocation.

use rhizome_common::{Date, DateTime, Duration, LocalDateTime, LocalTime, PathValue, Time, Value};
use std::collections::BTreeMap;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const FLOAT: u8 = 4;
const STRING: u8 = 5;
const LIST: u8 = 6;
const MAP: u8 = 7;
const NODE: u8 = 8;
const REL: u8 = 9;
const PATH: u8 = 10;
const DATE: u8 = 11;
const LOCAL_TIME: u8 = 12;
const TIME: u8 = 13;
const LOCAL_DATE_TIME: u8 = 14;
const DATE_TIME: u8 = 15;
const DURATION: u8 = 16;

/// Nesting deeper than this is rejected when decoding.
const MAX_DEPTH: usize = 256;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Appends the encoding of `value` to `out`.
pub fn encode(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.push(NULL),
        Value::Bool(false) => out.push(FALSE),
        Value::Bool(true) => out.push(TRUE),
        Value::Int(i) => {
            out.push(INT);
            put_i64(out, *i);
        }
        Value::Float(x) => {
            out.push(FLOAT);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::String(s) => {
            out.push(STRING);
            put_str(out, s);
        }
        Value::List(items) => {
            out.push(LIST);
            put_varint(out, items.len() as u64);
            items.iter().for_each(|v| encode(v, out));
        }
        Value::Map(map) => {
            out.push(MAP);
            put_varint(out, map.len() as u64);
            for (k, v) in map {
                put_str(out, k);
                encode(v, out);
            }
        }
        Value::Node(id) => {
            out.push(NODE);
            put_varint(out, *id);
        }
        Value::Relationship(id) => {
            out.push(REL);
            put_varint(out, *id);
        }
        Value::Path(p) => {
            out.push(PATH);
            put_varint(out, p.nodes.len() as u64);
            p.nodes.iter().for_each(|n| put_varint(out, *n));
            put_varint(out, p.rels.len() as u64);
            p.rels.iter().for_each(|r| put_varint(out, *r));
        }
        Value::Date(d) => {
            out.push(DATE);
            put_i64(out, d.days);
        }
        Value::LocalTime(t) => {
            out.push(LOCAL_TIME);
            put_i64(out, t.nanos);
        }
        Value::Time(t) => {
            out.push(TIME);
            put_i64(out, t.nanos);
            put_i64(out, t.offset_seconds as i64);
        }
        Value::LocalDateTime(t) => {
            out.push(LOCAL_DATE_TIME);
            put_i64(out, t.seconds);
            put_i64(out, t.nanos as i64);
        }
        Value::DateTime(t) => {
            out.push(DATE_TIME);
            put_i64(out, t.seconds);
            put_i64(out, t.nanos as i64);
            put_i64(out, t.offset_seconds as i64);
            put_str(out, t.zone.as_deref().unwrap_or(""));
        }
        Value::Duration(d) => {
            out.push(DURATION);
            put_i64(out, d.months);
            put_i64(out, d.days);
            put_i64(out, d.seconds);
            put_i64(out, d.nanos as i64);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or("value truncated")?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    fn i64(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, String> {
        i32::try_from(self.i64()?).map_err(|_| "32-bit field out of range".to_string())
    }

    /// A count of items that each take at least one byte: bounded by what is left.
    fn count(&mut self) -> Result<usize, String> {
        let n = self.varint()?;
        if n > (self.bytes.len() - self.pos) as u64 {
            return Err("length exceeds the encoded data".into());
        }
        Ok(n as usize)
    }

    fn str(&mut self) -> Result<&'a str, String> {
        let n = self.count()?;
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        std::str::from_utf8(s).map_err(|_| "string is not UTF-8".to_string())
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("value nested too deeply".into());
        }
        Ok(match self.byte()? {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            INT => Value::Int(self.i64()?),
            FLOAT => {
                let end = self.pos + 8;
                let bytes = self.bytes.get(self.pos..end).ok_or("float truncated")?;
                self.pos = end;
                Value::Float(f64::from_le_bytes(bytes.try_into().expect("8 bytes")))
            }
            STRING => Value::String(self.str()?.to_string()),
            LIST => {
                let n = self.count()?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value(depth + 1)?);
                }
                Value::List(items)
            }
            MAP => {
                let n = self.count()?;
                let mut map = BTreeMap::new();
                for _ in 0..n {
                    let k = self.str()?.to_string();
                    map.insert(k, self.value(depth + 1)?);
                }
                Value::Map(map)
            }
            NODE => Value::Node(self.varint()?),
            REL => Value::Relationship(self.varint()?),
            PATH => {
                let n = self.count()?;
                let nodes = (0..n).map(|_| self.varint()).collect::<Result<_, _>>()?;
                let r = self.count()?;
                let rels = (0..r).map(|_| self.varint()).collect::<Result<_, _>>()?;
                Value::Path(PathValue { nodes, rels })
            }
            DATE => Value::Date(Date { days: self.i64()? }),
            LOCAL_TIME => Value::LocalTime(LocalTime { nanos: self.i64()? }),
            TIME => Value::Time(Time {
                nanos: self.i64()?,
                offset_seconds: self.i32()?,
            }),
            LOCAL_DATE_TIME => Value::LocalDateTime(LocalDateTime {
                seconds: self.i64()?,
                nanos: self.i64()? as u32,
            }),
            DATE_TIME => {
                let seconds = self.i64()?;
                let nanos = self.i64()? as u32;
                let offset_seconds = self.i32()?;
                let zone = self.str()?;
                Value::DateTime(DateTime {
                    seconds,
                    nanos,
                    offset_seconds,
                    zone: (!zone.is_empty()).then(|| zone.into()),
                })
            }
            DURATION => Value::Duration(Duration {
                months: self.i64()?,
                days: self.i64()?,
                seconds: self.i64()?,
                nanos: self.i32()?,
            }),
            tag => return Err(format!("unknown value tag {tag}")),
        })
    }
}

/// Decodes one value that fills `bytes` exactly.
pub fn decode(bytes: &[u8]) -> Result<Value, String> {
    let mut reader = Reader { bytes, pos: 0 };
    let value = reader.value(0)?;
    if reader.pos != bytes.len() {
        return Err("trailing bytes after value".into());
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            any::<f64>()
                .prop_filter("NaN != NaN", |x| !x.is_nan())
                .prop_map(Value::Float),
            ".*".prop_map(Value::String),
            any::<i32>().prop_map(|d| Value::Date(Date { days: d as i64 })),
            (any::<i64>(), any::<i64>(), any::<i64>(), any::<i32>()).prop_map(|(m, d, s, n)| {
                Value::Duration(Duration {
                    months: m,
                    days: d,
                    seconds: s,
                    nanos: n,
                })
            }),
            (any::<i64>(), 0u32..1_000_000_000, -64800i32..64800).prop_map(|(s, n, o)| {
                Value::DateTime(DateTime {
                    seconds: s,
                    nanos: n,
                    offset_seconds: o,
                    zone: None,
                })
            }),
        ];
        leaf.prop_recursive(4, 32, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::List),
                prop::collection::btree_map(".*", inner, 0..8).prop_map(Value::Map),
            ]
        })
    }

    proptest! {
        #[test]
        fn roundtrip(v in arb_value()) {
            let mut out = Vec::new();
            encode(&v, &mut out);
            prop_assert_eq!(decode(&out).unwrap(), v);
        }

        #[test]
        fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&bytes);
        }
    }

    #[test]
    fn huge_lengths_are_rejected() {
        let mut out = vec![LIST];
        put_varint(&mut out, u64::MAX / 2);
        assert!(decode(&out).is_err());
    }
}
