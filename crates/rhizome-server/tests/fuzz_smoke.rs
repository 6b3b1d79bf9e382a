//! Stable-Rust fuzz smoke of everything that reads client bytes: random and
//! mutated input through the chunk decoder, PackStream, message parsing,
//! parameter conversion and a live session. Nothing may panic or hang, and
//! no single allocation may be driven by a declared length beyond the
//! input's own size (checked with a measuring allocator).

use rhizome_server::framing::{write_message, ChunkDecoder};
use rhizome_server::packstream::{decode, map, PackValue as P};
use rhizome_server::{handshake, message, values};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Records the largest allocation made while a thread is measuring.
struct Measuring;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Measuring {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MEASURING.with(Cell::get) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if MEASURING.with(Cell::get) {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Measuring = Measuring;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Valid messages to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let structs = [
        P::Struct(
            0x01,
            vec![map([("user_agent", "x/1".into()), ("routing", map([]))])],
        ),
        P::Struct(
            0x6A,
            vec![map([
                ("scheme", "basic".into()),
                ("principal", "neo4j".into()),
            ])],
        ),
        P::Struct(
            0x10,
            vec![
                "RETURN $a, $b".into(),
                map([
                    (
                        "a",
                        P::List(vec![1.into(), P::Float(2.5), P::Null, "s".into()]),
                    ),
                    (
                        "b",
                        P::Struct(0x49, vec![1000.into(), 5.into(), 3600.into()]),
                    ),
                    (
                        "c",
                        P::Struct(0x69, vec![1000.into(), 5.into(), "Europe/Paris".into()]),
                    ),
                    (
                        "d",
                        P::Struct(0x45, vec![1.into(), 2.into(), 3.into(), 4.into()]),
                    ),
                ]),
                map([("db", "neo4j".into())]),
            ],
        ),
        P::Struct(
            0x10,
            vec![
                "UNWIND range(1, 3) AS i RETURN i".into(),
                map([("e", P::Bytes(vec![1]))]),
            ],
        ),
        P::Struct(
            0x10,
            vec!["UNWIND range(1, 3) AS i RETURN i".into(), map([])],
        ),
        P::Struct(0x3F, vec![map([("n", 1000.into()), ("qid", (-1).into())])]),
        P::Struct(0x2F, vec![map([("n", (-1).into())])]),
        P::Struct(0x11, vec![map([("tx_timeout", 5000.into())])]),
        P::Struct(
            0x66,
            vec![map([]), P::List(vec![]), map([("db", "neo4j".into())])],
        ),
        P::Struct(0x0F, vec![]),
        P::Struct(0x12, vec![]),
    ];
    structs
        .iter()
        .map(|s| {
            let mut out = Vec::new();
            s.encode(&mut out);
            out
        })
        .collect()
}

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(5) {
            0 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes[i] = rng.next() as u8;
            }
            1 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes.truncate(i);
            }
            2 => {
                let i = rng.below(bytes.len() + 1);
                let n = 1 + rng.below(8);
                let extra = rng.bytes(n);
                bytes.splice(i..i, extra);
            }
            3 if !bytes.is_empty() => {
                // A size marker declaring a huge length.
                let i = rng.below(bytes.len());
                let marker = [0xD2, 0xD6, 0xDA, 0xCE][rng.below(4)];
                bytes.splice(i..i, [marker, 0x7F, 0xFF, 0xFF, 0xFF]);
            }
            _ => {
                let n = rng.below(4);
                bytes.extend(rng.bytes(n))
            }
        }
    }
    bytes
}

/// Every decoder on `bytes`; returns the largest allocation it made.
fn decode_everything(bytes: &[u8]) -> usize {
    LARGEST.store(0, Ordering::Relaxed);
    MEASURING.with(|m| m.set(true));
    if let Ok(value) = decode(bytes) {
        let mut out = Vec::new();
        value.encode(&mut out);
        assert!(decode(&out).is_ok(), "re-encoded value must decode");
    }
    if let Ok(message::Request::Run { params, .. }) = message::parse(bytes) {
        let _ = values::parameters(params);
    }
    let mut decoder = ChunkDecoder::new(1024);
    let mut rest = bytes;
    while let Ok((used, Some(m))) = decoder.decode(rest) {
        assert!(m.len() <= 1024);
        rest = &rest[used..];
    }
    if bytes.len() >= handshake::HANDSHAKE_LEN {
        let mut opening = [0u8; handshake::HANDSHAKE_LEN];
        opening.copy_from_slice(&bytes[..handshake::HANDSHAKE_LEN]);
        let _ = handshake::parse(&opening);
    }
    MEASURING.with(|m| m.set(false));
    LARGEST.load(Ordering::Relaxed)
}

#[test]
fn random_and_mutated_bytes_never_panic_nor_allocate_beyond_their_size() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let seeds = seeds();
    for round in 0..20_000 {
        let bytes = if round % 4 == 0 {
            let n = rng.below(64);
            rng.bytes(n)
        } else {
            {
                let i = rng.below(seeds.len());
                mutate(&mut rng, &seeds[i])
            }
        };
        let largest = decode_everything(&bytes);
        // Values hold at most one item per input byte; each item is at most
        // a few machine words, plus the fixed buffers of the decoders.
        let bound = 64 * bytes.len() + 4096;
        assert!(
            largest <= bound,
            "{largest} bytes allocated for a {}-byte input {bytes:02X?}",
            bytes.len()
        );
    }
}

#[test]
fn a_huge_declared_chunk_allocates_nothing_up_front() {
    let mut wire = Vec::new();
    write_message(&mut wire, &[0xB0, 0x0F]);
    wire.extend_from_slice(&[0xFF, 0xFF, 1, 2, 3]);
    let mut decoder = ChunkDecoder::new(1 << 20);
    LARGEST.store(0, Ordering::Relaxed);
    MEASURING.with(|m| m.set(true));
    let (used, first) = decoder.decode(&wire).unwrap();
    let (_, second) = decoder.decode(&wire[used..]).unwrap();
    MEASURING.with(|m| m.set(false));
    assert_eq!(first, Some(vec![0xB0, 0x0F]));
    assert_eq!(second, None, "waits for the rest of the chunk");
    assert!(LARGEST.load(Ordering::Relaxed) < 1024);
}

/// Mutated messages through a live session: every response is well
/// formed and the session never panics.
#[tokio::test]
async fn mutated_messages_through_a_live_session() {
    use rhizome_server::registry::Registry;
    use rhizome_server::session::{Flow, Interrupt, Session, SessionConfig};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = rhizome_engine::Engine::open(&db).unwrap();
    let registry = Arc::new(Registry::single("neo4j", engine));
    let seeds = seeds();
    let mut rng = Rng(42);
    // A session past HELLO and LOGON, so mutated requests reach every state.
    let new_session = || async {
        let mut session = Session::new(
            handshake::Version { major: 5, minor: 4 },
            registry.clone(),
            Arc::new(SessionConfig::default()),
            Arc::new(Interrupt::default()),
            "bolt-fuzz".into(),
        );
        for opening in &seeds[..2] {
            session.handle(opening, &mut Vec::new()).await.unwrap();
        }
        session
    };
    let mut session = new_session().await;
    let mut states = std::collections::HashSet::new();
    for round in 0..600 {
        let seed = &seeds[rng.below(seeds.len())];
        let bytes = if round % 3 == 0 {
            seed.clone()
        } else {
            mutate(&mut rng, seed)
        };
        let mut out = Vec::new();
        let flow = session.handle(&bytes, &mut out).await.unwrap();
        let mut decoder = ChunkDecoder::new(usize::MAX);
        let mut rest = &out[..];
        loop {
            let (used, m) = decoder.decode(rest).unwrap();
            rest = &rest[used..];
            let Some(m) = m else { break };
            assert!(matches!(
                decode(&m),
                Ok(P::Struct(0x70 | 0x71 | 0x7E | 0x7F, _))
            ));
        }
        assert!(rest.is_empty());
        states.insert(format!("{:?}", session.state()));
        if flow == Flow::Close {
            session = new_session().await;
        }
    }
    for state in ["Ready", "Streaming", "TxReady", "Failed"] {
        assert!(states.contains(state), "{state} never reached: {states:?}");
    }
}
