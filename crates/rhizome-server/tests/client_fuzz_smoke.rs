//! Stable-Rust fuzz smoke of the client's decoding: a valid server
//! transcript (handshake answer, HELLO and LOGON answers, a result with a
//! node, a path and a date) randomly truncated and mutated, fed to the
//! client as a server's answers. Nothing may panic, and every run ends
//! (the transcript's end is an end of file). The libFuzzer target
//! `fuzz/fuzz_targets/client.rs` does the same without a seed.

use rhizome_server::client::records::Entities;
use rhizome_server::client::{Auth, BoltClient};
use rhizome_server::message::{record_header, success};
use rhizome_server::packstream::{map, PackValue as P};
use std::io::{Cursor, Read, Write};

struct Replay(Cursor<Vec<u8>>);

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Replay {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn node(id: i64) -> P {
    P::Struct(
        0x4E,
        vec![
            id.into(),
            P::List(vec!["L".into()]),
            map([("k", id.into())]),
            format!("n:{id}").into(),
        ],
    )
}

fn transcript() -> Vec<u8> {
    let mut out = vec![0, 0, 4, 5];
    success(&mut out, &map([("server", "Neo4j/5.26.0".into())]));
    success(&mut out, &map([]));
    success(
        &mut out,
        &map([("fields", P::List(vec!["a".into(), "b".into(), "c".into()]))]),
    );
    let path = P::Struct(
        0x50,
        vec![
            P::List(vec![node(1), node(2)]),
            P::List(vec![P::Struct(0x72, vec![9.into(), "R".into(), map([])])]),
            P::List(vec![1.into(), 1.into()]),
        ],
    );
    for _ in 0..3 {
        let mut body = Vec::new();
        record_header(&mut body, 3);
        node(1).encode(&mut body);
        path.encode(&mut body);
        P::Struct(0x44, vec![19000.into()]).encode(&mut body);
        rhizome_server::framing::write_message(&mut out, &body);
    }
    success(&mut out, &map([("type", "r".into())]));
    out
}

/// Runs the client over `answers`; the number of records it decoded.
fn drive(answers: Vec<u8>) -> usize {
    let Ok(mut client) = BoltClient::over(Replay(Cursor::new(answers)), &Auth::None) else {
        return 0;
    };
    let Ok(result) = client.query("RETURN 1", &Default::default()) else {
        return 0;
    };
    let mut entities = Entities::default();
    result
        .records
        .into_iter()
        .filter(|r| entities.record(r.clone()).is_ok())
        .count()
}

#[test]
fn the_seed_transcript_decodes_whole() {
    assert_eq!(drive(transcript()), 3);
}

#[test]
fn truncated_and_mutated_transcripts_never_panic() {
    let seed = transcript();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    for cut in 0..seed.len() {
        drive(seed[..cut].to_vec());
    }
    for _ in 0..20_000 {
        let mut bytes = seed.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % bytes.len() as u64) as usize;
            match next() % 3 {
                0 => bytes[i] = next() as u8,
                1 => bytes[i] ^= 1 << (next() % 8),
                _ => {
                    bytes.insert(i, next() as u8);
                }
            }
        }
        drive(bytes);
    }
}
