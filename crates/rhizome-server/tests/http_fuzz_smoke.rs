//! Stable-Rust fuzz smoke of the HTTP request decoding: random bytes,
//! mutations of valid bodies and deep nesting through the body decoder
//! (plain and typed parameters) and the Authorization header parser.
//! Nothing may panic.

use rhizome_server::http::{auth, request};

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SEEDS: &[&str] = &[
    r#"{"statement": "RETURN $x", "parameters": {"x": 1}}"#,
    r#"{"statement": "RETURN $x", "parameters": {"x": {"$type": "Integer", "_value": "12"}}}"#,
    r#"{"statement": "RETURN 1", "includeCounters": true, "bookmarks": ["b"], "accessMode": "WRITE"}"#,
    r#"{"statement": "x", "parameters": {"d": {"$type": "DateTime", "_value": "2024-01-01T00:00:00[Europe/Paris]"},
        "l": {"$type": "List", "_value": [{"$type": "Duration", "_value": "P1Y"}, {"$type": "Float", "_value": "-Infinity"}]}}}"#,
    r#"{"statement": "x", "parameters": {"m": {"$type": "Map", "_value": {"a": {"$type": "LocalTime", "_value": "12:00"}}}}}"#,
];

fn decode_all(bytes: &[u8]) {
    for typed in [false, true] {
        for required in [false, true] {
            let _ = request::decode(bytes, typed, required);
        }
    }
}

#[test]
fn random_and_mutated_bodies_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let len = rng.below(64);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        decode_all(&bytes);
    }
    let alphabet = b"{}[]\":,$_0123456789.-eE truefalsnul\\\"Tvalue";
    for seed in SEEDS {
        assert!(
            request::decode(seed.as_bytes(), true, true).is_ok(),
            "{seed}"
        );
        for _ in 0..2000 {
            let mut bytes = seed.as_bytes().to_vec();
            for _ in 0..1 + rng.below(4) {
                match rng.below(3) {
                    0 if !bytes.is_empty() => {
                        let i = rng.below(bytes.len());
                        bytes[i] = alphabet[rng.below(alphabet.len())];
                    }
                    1 if !bytes.is_empty() => {
                        let i = rng.below(bytes.len());
                        bytes.remove(i);
                    }
                    _ => {
                        let i = rng.below(bytes.len() + 1);
                        bytes.insert(i, alphabet[rng.below(alphabet.len())]);
                    }
                }
            }
            decode_all(&bytes);
        }
    }
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    for depth in [100usize, 1_000, 100_000] {
        let body = format!(
            r#"{{"statement": "RETURN $x", "parameters": {{"x": {}1{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        decode_all(body.as_bytes());
        let typed = format!(
            r#"{{"statement": "RETURN $x", "parameters": {{"x": {}null{}}}}}"#,
            r#"{"$type": "List", "_value": ["#.repeat(depth),
            "]}".repeat(depth)
        );
        decode_all(typed.as_bytes());
    }
}

#[test]
fn authorization_headers_never_panic() {
    let mut rng = Rng(42);
    let alphabet = "Basic Bearer bmVvNGo6eA== :=é└─├│ (a:L)-[r]->(b) AS x";
    let chars: Vec<char> = alphabet.chars().collect();
    for _ in 0..5000 {
        let len = rng.below(40);
        let text: String = (0..len).map(|_| chars[rng.below(chars.len())]).collect();
        let _ = auth::parse_header(&text);
    }
}
