//! `timestamp()`, `randomUUID()` and the random source behind `rand()`.

use rhizome_common::Value;
use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

thread_local! {
    static RNG: Cell<u64> = Cell::new({
        let mut h = RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        h.finish() | 1
    });
}

/// 64 random bits (xorshift64*, seeded per thread from the OS hasher keys
/// and the clock; not cryptographic).
pub(crate) fn random_u64() -> u64 {
    RNG.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

/// The Cypher type of a value without `NOT NULL`, element types included
/// for lists.
fn type_of(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::List(items) => {
            let mut inner: Option<String> = None;
            for item in items.iter().filter(|i| !i.is_null()) {
                let t = type_of(item) + " NOT NULL";
                inner = match inner {
                    None => Some(t),
                    Some(prev) if prev == t => Some(prev),
                    Some(_) => Some("ANY".to_string()),
                };
            }
            let inner = match (inner, items.iter().any(Value::is_null)) {
                (None, _) => "NOTHING".to_string(),
                (Some(t), true) if t != "ANY" => t.trim_end_matches(" NOT NULL").to_string(),
                (Some(t), _) => t,
            };
            format!("LIST<{inner}>")
        }
        Value::Map(_) => "MAP".to_string(),
        other => other.type_name().to_string(),
    }
}

/// `valueType(x)`: the type as Neo4j 5 names it, e.g. `INTEGER NOT NULL`,
/// `LIST<STRING NOT NULL> NOT NULL`, `NULL`.
pub fn value_type(v: &Value) -> Value {
    Value::String(match v {
        Value::Null => "NULL".to_string(),
        other => type_of(other) + " NOT NULL",
    })
}

/// `timestamp()`: milliseconds since the Unix epoch.
pub fn timestamp() -> Value {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    Value::Int(ms)
}

/// `randomUUID()`: a random (version 4) UUID string.
pub fn random_uuid() -> Value {
    let (a, b) = (random_u64(), random_u64());
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Value::String(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}
